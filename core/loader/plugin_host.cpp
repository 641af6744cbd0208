#include "loader/plugin_host.hpp"

#include "base/error.hpp"
#include "weft/weft.h"

namespace weft {

namespace {

void host_log(int level, const char *plugin, const char *message) {
    if (level < WEFT_LOG_ERROR) level = WEFT_LOG_ERROR;
    if (level > WEFT_LOG_DEBUG) level = WEFT_LOG_DEBUG;
    log(level, "%s: %s", plugin ? plugin : "plugin", message ? message : "");
}

const char *host_hint(void *ctx, const char *key) {
    auto *hints = static_cast<std::map<std::string, std::string> *>(ctx);
    if (key == nullptr) return nullptr;
    auto it = hints->find(key);
    return it == hints->end() ? nullptr : it->second.c_str();
}

}  // namespace

std::map<std::string, std::string> &plugin_hints() {
    static std::map<std::string, std::string> hints;
    return hints;
}

const weft_plugin_host_t *plugin_host() {
    static weft_plugin_host_t host{sizeof(weft_plugin_host_t), host_log, host_hint, &plugin_hints()};
    return &host;
}

int plugin_error(int plugin_code) {
    switch (plugin_code) {
        case WEFT_PLUGIN_OK: return WEFT_SUCCESS;
        case WEFT_PLUGIN_ERR_NOMEM: return WEFT_ERR_NO_MEM;
        case WEFT_PLUGIN_ERR_TRUNCATE: return WEFT_ERR_TRUNCATE;
        case WEFT_PLUGIN_ERR_UNSUPPORTED: return WEFT_ERR_UNSUPPORTED;
        case WEFT_PLUGIN_ERR_INVALID: return WEFT_ERR_ARG;
        case WEFT_PLUGIN_ERR_NO_DEVICE: return WEFT_ERR_NO_DEVICE;
        case WEFT_PLUGIN_ERR_PEER_FAILED:
        case WEFT_PLUGIN_ERR_UNREACHABLE: return WEFT_ERR_PROC_FAILED;
        default: return WEFT_ERR_FABRIC;
    }
}

}  // namespace weft
