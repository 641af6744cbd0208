// What the core gives plugins: the host services (log, init hints) and the mapping of their
// return codes to WEFT_ERR_* codes.
#pragma once
#include <map>
#include <string>

#include "weft/plugin.h"

namespace weft {

// The info given to weft_init_info, plus weft_rank/weft_size, that plugins read as hints.
std::map<std::string, std::string> &plugin_hints();

// Services given to plugins (log, init hints).
const weft_plugin_host_t *plugin_host();

// Maps a plugin return code to a WEFT_ERR_* code.
int plugin_error(int plugin_code);

}  // namespace weft
