// The loader's introspection calls for tools (weft_query_plugin_path, weft_query_plugins,
// weft_query_fabric): weft-info uses them through libweft, so that it sees the plugins of the
// libweft it runs with.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/error.hpp"
#include "loader/loader.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

void quiet_log(int, const char *, const char *) {}
const char *no_hint(void *, const char *) { return nullptr; }
const weft_plugin_host_t g_quiet_host{sizeof(weft_plugin_host_t), quiet_log, no_hint, nullptr};

void copy_out(const std::string &text, char *out, size_t size) {
    if (size == 0) return;
    std::snprintf(out, size, "%s", text.c_str());
}

// Fills what loading and opening p tell; strings point into the storage arguments.
void report_loaded(const plugin_loaded &p, weft_plugin_report_t &r, std::string &why, std::string &types) {
    const weft_plugin_v1_t &d = *p.desc;
    r.kind = d.kind == WEFT_PLUGIN_KIND_FABRIC ? "fabric" : d.kind == WEFT_PLUGIN_KIND_QUEUE ? "queue" : "";
    r.version = d.version ? d.version : "";
    r.abi_major = d.abi_major;
    r.abi_minor = d.abi_minor;
    r.priority = d.priority;
    char reason[512] = "";
    if (d.kind == WEFT_PLUGIN_KIND_FABRIC) {
        weft_fabric_t *fabric = nullptr;
        if (p.fabric_ops.init(&g_quiet_host, &fabric, reason, sizeof reason) == WEFT_PLUGIN_OK && fabric) {
            weft_fabric_caps_t caps{};
            caps.struct_size = sizeof caps;
            p.fabric_ops.query(fabric, &caps);
            r.status = 1;
            r.eager_size = caps.eager_size;
            r.inject_size = caps.inject_size;
            r.max_message_size = caps.max_message_size;
            p.fabric_ops.finalize(fabric);
            return;
        }
    } else if (d.kind == WEFT_PLUGIN_KIND_QUEUE && d.abi_minor >= 2) {
        auto *ops = static_cast<const weft_queue_ops_v1_t *>(d.ops);
        for (const char *const *t = ops->types; t != nullptr && *t != nullptr; ++t)
            types += (types.empty() ? "" : " ") + std::string(*t);
        r.queue_types = types.c_str();
        weft_queue_runtime_t *runtime = nullptr;
        if (ops->init != nullptr && ops->init(&g_quiet_host, &runtime, reason, sizeof reason) == WEFT_PLUGIN_OK) {
            r.status = 1;
            if (ops->finalize != nullptr) ops->finalize(runtime);
            return;
        }
    }
    r.status = 0;
    why = reason[0] ? reason : "no reason given";
    r.why = why.c_str();
}

}  // namespace
}  // namespace weft

using namespace weft;

extern "C" int weft_query_plugin_path(char *path, size_t size) {
    if (path == nullptr && size != 0) return fail(WEFT_ERR_ARG, "weft_query_plugin_path: path must not be NULL");
    std::string text;
    for (const auto &d : loader_search_path()) text += (text.empty() ? "" : ":") + d;
    copy_out(text, path, size);
    return WEFT_SUCCESS;
}

extern "C" int weft_query_plugins(weft_plugin_report_fn fn, void *arg) {
    if (fn == nullptr) return fail(WEFT_ERR_ARG, "weft_query_plugins: fn must not be NULL");
    for (const auto &f : loader_scan()) {
        weft_plugin_report_t r{};
        r.struct_size = sizeof r;
        r.name = f.name.c_str();
        r.path = f.path.c_str();
        r.kind = r.version = r.why = r.queue_types = "";
        std::string why, types;
        plugin_loaded p;
        if (!loader_load(f, p, why)) {
            r.status = -1;
            r.why = why.c_str();
        } else {
            report_loaded(p, r, why, types);
        }
        fn(&r, arg);
    }
    return WEFT_SUCCESS;
}

extern "C" int weft_query_fabric(char *name, size_t size) {
    if (name == nullptr && size != 0) return fail(WEFT_ERR_ARG, "weft_query_fabric: name must not be NULL");
    const char *env = std::getenv("WEFT_FABRIC");
    fabric_preference pref;
    std::string why;
    if (!loader_parse_preference(env ? env : "", pref, why))
        return fail(WEFT_ERR_PLUGIN, "WEFT_FABRIC='%s' is invalid: %s", env, why.c_str());
    fabric_open chosen;
    if (int rc = loader_open_fabric(pref, "WEFT_FABRIC", &g_quiet_host, chosen)) return rc;
    copy_out(chosen.plugin.name, name, size);
    chosen.plugin.fabric_ops.finalize(chosen.fabric);
    return WEFT_SUCCESS;
}
