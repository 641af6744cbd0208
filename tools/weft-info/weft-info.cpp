// weft-info: which plugins are installed, whether each opens (and why not), and which fabric
// weft_init would select with the current environment.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "error.hpp"
#include "loader.hpp"
#include "weft/weft.h"

namespace {

void quiet_log(int, const char *, const char *) {}
const char *no_hint(void *, const char *) { return nullptr; }

const char *kind_name(weft_plugin_kind_t kind) {
    return kind == WEFT_PLUGIN_KIND_FABRIC ? "fabric" : kind == WEFT_PLUGIN_KIND_QUEUE ? "queue" : "?";
}

}  // namespace

int main(int argc, char **argv) {
    if (argc > 1 && (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help"))) {
        std::printf("usage: weft-info\n  Lists Weft plugins on the search path (WEFT_PLUGIN_PATH, then <libdir>/weft),\n"
                    "  whether each opens on this machine, and the fabric weft_init would select\n"
                    "  (WEFT_FABRIC=a,b,^c sets the preference).\n");
        return 0;
    }
    weft_plugin_host_t host{sizeof(weft_plugin_host_t), quiet_log, no_hint, nullptr};
    std::string path;
    for (const auto &d : weft::loader_search_path()) path += (path.empty() ? "" : ":") + d;
    std::printf("Weft %d.%d.%d, plugin ABI %d.%d\nsearch path: %s\n\n", WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR,
                WEFT_VERSION_PATCH, WEFT_PLUGIN_ABI_MAJOR, WEFT_PLUGIN_ABI_MINOR, path.c_str());
    auto files = weft::loader_scan();
    if (files.empty()) std::printf("no plugins found\n");
    for (const auto &f : files) {
        weft::plugin_loaded p;
        std::string why;
        std::printf("%s\n  path:     %s\n", f.name.c_str(), f.path.c_str());
        if (!weft::loader_load(f, p, why)) {
            std::printf("  status:   cannot load: %s\n\n", why.c_str());
            continue;
        }
        std::printf("  kind:     %s\n  version:  %s\n  ABI:      %u.%u\n  priority: %d\n", kind_name(p.desc->kind),
                    p.desc->version ? p.desc->version : "", p.desc->abi_major, p.desc->abi_minor, p.desc->priority);
        if (p.desc->kind == WEFT_PLUGIN_KIND_FABRIC) {
            char reason[512] = "";
            weft_fabric_t *fabric = nullptr;
            if (p.fabric_ops.init(&host, &fabric, reason, sizeof reason) == WEFT_PLUGIN_OK && fabric) {
                weft_fabric_caps_t caps{};
                caps.struct_size = sizeof caps;
                p.fabric_ops.query(fabric, &caps);
                std::printf("  status:   opens (eager %zu B, inject %zu B, max message %zu B)\n", caps.eager_size,
                            caps.inject_size, caps.max_message_size);
                p.fabric_ops.finalize(fabric);
            } else {
                std::printf("  status:   does not open: %s\n", reason[0] ? reason : "no reason given");
            }
        } else if (p.desc->kind == WEFT_PLUGIN_KIND_QUEUE && p.desc->abi_minor >= 2) {
            auto *ops = static_cast<const weft_queue_ops_v1_t *>(p.desc->ops);
            std::printf("  types:   ");
            for (const char *const *t = ops->types; t != nullptr && *t != nullptr; ++t) std::printf(" %s", *t);
            char reason[512] = "";
            weft_queue_runtime_t *runtime = nullptr;
            if (ops->init != nullptr && ops->init(&host, &runtime, reason, sizeof reason) == WEFT_PLUGIN_OK) {
                std::printf("\n  status:   opens\n");
                if (ops->finalize != nullptr) ops->finalize(runtime);
            } else {
                std::printf("\n  status:   does not open: %s\n", reason[0] ? reason : "no reason given");
            }
        }
        std::printf("\n");
    }
    const char *env = std::getenv("WEFT_FABRIC");
    weft::fabric_preference pref;
    std::string why;
    if (!weft::loader_parse_preference(env ? env : "", pref, why)) {
        std::printf("WEFT_FABRIC='%s' is invalid: %s\n", env, why.c_str());
        return 1;
    }
    weft::fabric_open chosen;
    int rc = weft::loader_open_fabric(pref, "WEFT_FABRIC", &host, chosen);
    if (rc != 0) {
        std::printf("selected fabric: none\n  %s\n", weft::current_error_detail().c_str());
        return 1;
    }
    std::printf("selected fabric: %s (%s)\n", chosen.plugin.name.c_str(),
                env && *env ? "WEFT_FABRIC" : "highest priority that opens");
    chosen.plugin.fabric_ops.finalize(chosen.fabric);
    return 0;
}
