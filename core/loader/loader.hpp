// Plugin discovery, loading and fabric selection (WEFT_PLUGIN_PATH, WEFT_FABRIC, info hints).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "weft/plugin.h"

namespace weft {

// One libweft-<name>.so found on the search path.
struct plugin_file {
    std::string name;  // from the file name: libweft-<name>.so
    std::string path;
};

// A plugin whose shared object was loaded and whose descriptor passed the ABI checks.
struct plugin_loaded {
    std::string name, path;
    void *dl = nullptr;
    const weft_plugin_v1_t *desc = nullptr;
    weft_fabric_ops_v1_t fabric_ops{};  // adapted to this core's minor version
};

// A fabric plugin after a successful init.
struct fabric_open {
    plugin_loaded plugin;
    weft_fabric_t *fabric = nullptr;
    weft_fabric_caps_t caps{};
};

// Directories searched, in order: WEFT_PLUGIN_PATH's entries, then <libdir>/weft next to
// libweft itself, then the configured install directory.
std::vector<std::string> loader_search_path();
// Every libweft-*.so on the search path; a name found twice keeps its first file.
std::vector<plugin_file> loader_scan();

// dlopen + descriptor checks.  On failure, returns false with the reason in why.
bool loader_load(const plugin_file &file, plugin_loaded &out, std::string &why);

// Ordered preference list "a,b,^c" as in WEFT_FABRIC.
struct fabric_preference {
    std::vector<std::string> include;  // in order; empty = every plugin by priority
    std::vector<std::string> exclude;
};
bool loader_parse_preference(const std::string &text, fabric_preference &out, std::string &why);

// Picks and opens the fabric: the first of include that opens, else (no include list) the
// highest-priority plugin that opens and is not excluded.  source names where the preference
// came from ("WEFT_FABRIC", "info key weft_fabric") for messages.  On failure returns
// WEFT_ERR_PLUGIN with a detail naming every plugin tried, why it failed, and the search path.
int loader_open_fabric(const fabric_preference &pref, const std::string &source, const weft_plugin_host_t *host,
                       fabric_open &out);

}  // namespace weft
