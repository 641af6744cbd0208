// Info objects: ordered string key/value pairs.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include "weft/weft.h"

namespace weft {

// Value of key in info; nullopt when info is WEFT_INFO_NULL, invalid, or lacks the key.
std::optional<std::string> info_lookup(weft_info info, std::string_view key);

}  // namespace weft
