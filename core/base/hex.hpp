// Hex encoding used by weft_info_set_hex/get_hex and for binary values in bootstrap keys.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

// Two lowercase hex digits per byte, in memory order.
std::string hex_encode(const void *data, size_t size);

// Decodes hex_encode's output; also accepts "[N]" (decimal N) for a run of N zero bytes, as
// MPICH 4.3 writes, and upper-case digits.  Returns false with a reason in *why (position and
// what was expected) for anything else.
bool hex_decode(std::string_view text, std::vector<uint8_t> &out, std::string *why);

// hex_decode with a cap on the decoded size, so that a hostile "[N]" fails before anything is
// allocated; *over_limit (may be null) tells that failure apart from malformed text.
bool hex_decode_max(std::string_view text, std::vector<uint8_t> &out, std::string *why, size_t max_size,
                    bool *over_limit);

}  // namespace weft
