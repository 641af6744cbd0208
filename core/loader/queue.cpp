// Queue plugins: discovery (libweft-queue-<name>.so on the plugin path), lazy opening, and the
// attachment of a native queue named by a stream's info.
#include "loader/queue.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/error.hpp"
#include "base/hex.hpp"
#include "loader/plugin_host.hpp"
#include "base/finalize_hooks.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

constexpr const char *queue_prefix = "queue-";

struct registry {
    std::mutex mutex;
    // By plugin name (without "queue-"); a plugin that failed to load or open is kept with its
    // reason so that every later stream gets the same answer without reloading it.
    std::map<std::string, std::unique_ptr<queue_plugin>> open;
    struct failure {
        std::string why;
        bool no_device = false;
        std::vector<std::string> types;  // known when it loaded but did not open
    };
    std::map<std::string, failure> failed;
};

registry &reg() {
    static registry r;
    return r;
}

bool decodes(const weft_queue_ops_v1_t *ops, const std::string &type) {
    for (const char *const *t = ops->types; t != nullptr && *t != nullptr; ++t)
        if (type == *t) return true;
    return false;
}

// The plugin that normally decodes a type, for messages when it cannot be loaded.
const char *usual_plugin(const std::string &type) {
    if (type == "cudaStream_t" || type == "CUstream") return "cuda";
    if (type == "hipStream_t") return "hip";
    if (type.rfind("ze_", 0) == 0 || type == "sycl::queue") return "sycl";
    return nullptr;
}

struct hex_reader {
    const std::map<std::string, std::string> *hints;
};

int read_hex(void *ctx, const char *key, void *buf, size_t size) {
    auto *r = static_cast<hex_reader *>(ctx);
    if (key == nullptr || buf == nullptr) return WEFT_PLUGIN_ERR_INVALID;
    auto it = r->hints->find(key);
    if (it == r->hints->end()) return WEFT_PLUGIN_ERR_NOT_FOUND;
    std::vector<uint8_t> bytes;
    bool over = false;
    if (!hex_decode_max(it->second, bytes, nullptr, size, &over) || bytes.size() != size) return WEFT_PLUGIN_ERR_INVALID;
    std::memcpy(buf, bytes.data(), size);
    return WEFT_PLUGIN_OK;
}

// Loads and opens queue plugin `f` (caller holds the registry lock).  nullptr on failure, with
// the failure recorded in the registry.
queue_plugin *open_plugin(const plugin_file &f) {
    registry &r = reg();
    std::string name = f.name.substr(std::strlen(queue_prefix));
    if (auto it = r.open.find(name); it != r.open.end()) return it->second.get();
    if (r.failed.count(name) != 0) return nullptr;
    registry::failure &bad = r.failed[name];
    auto p = std::make_unique<queue_plugin>();
    std::string reason;
    if (!loader_load(f, p->plugin, reason)) {
        // A queue plugin links its vendor runtime (libcuda.so.1, ...): on a machine without the
        // driver that library is what dlopen cannot find.
        bad.no_device = reason.find("cannot open shared object file") != std::string::npos;
        bad.why = f.path + ": " + reason + (bad.no_device ? " (the GPU driver is not installed: no device)" : "");
        return nullptr;
    }
    if (p->plugin.desc->kind != WEFT_PLUGIN_KIND_QUEUE || p->plugin.desc->abi_minor < 2) {
        bad.why = f.path + ": not a queue plugin of ABI 1.2 or later";
        return nullptr;
    }
    p->ops = static_cast<const weft_queue_ops_v1_t *>(p->plugin.desc->ops);
    for (const char *const *t = p->ops->types; t != nullptr && *t != nullptr; ++t) bad.types.push_back(*t);
    if (p->ops->init == nullptr || p->ops->attach == nullptr || p->ops->detach == nullptr ||
        p->ops->append_signal == nullptr || p->ops->append_wait == nullptr || p->ops->append_copy == nullptr ||
        p->ops->reached == nullptr || p->ops->release == nullptr || p->ops->mem_kind == nullptr ||
        p->ops->host_alloc == nullptr || p->ops->host_free == nullptr) {
        bad.why = f.path + ": its queue ops table is incomplete";
        return nullptr;
    }
    char text[512] = "";
    int rc = p->ops->init(plugin_host(), &p->runtime, text, sizeof text);
    if (rc != WEFT_PLUGIN_OK) {
        bad.no_device = rc == WEFT_PLUGIN_ERR_NO_DEVICE;
        bad.why = f.path + ": " + (text[0] ? text : "failed to open (code " + std::to_string(rc) + ")");
        return nullptr;
    }
    r.failed.erase(name);
    log(WEFT_LOG_INFO, "queue plugin %s %s opened (%s)", name.c_str(), p->plugin.desc->version, f.path.c_str());
    finalize_hook_add(queue_plugins_finalize, finalize_prio_queue_plugins);
    return (r.open[name] = std::move(p)).get();
}

}  // namespace

gpu_queue::~gpu_queue() {
    if (q == nullptr) return;
    if (leaked) {
        log(WEFT_LOG_WARN, "a %s queue that never passed Weft's last point is left attached (its memory is leaked)",
            type.c_str());
        return;
    }
    staging_trim(0);
    ops->detach(q);
}

void *gpu_queue::staging_take(size_t bytes) {
    {
        std::lock_guard lock(staging_mutex);
        auto it = staging_free.lower_bound(bytes);
        // Reuse a buffer up to twice the size asked; a much larger one stays for a larger use.
        if (it != staging_free.end() && it->first / 2 <= bytes) {
            void *p = it->second;
            staging_free_bytes -= it->first;
            staging_free.erase(it);
            return p;
        }
    }
    void *p = nullptr;
    if (ops->host_alloc(q, bytes, &p) != WEFT_PLUGIN_OK) return nullptr;
    return p;
}

void gpu_queue::staging_give(void *p, size_t bytes) {
    std::lock_guard lock(staging_mutex);
    staging_free.emplace(bytes, p);
    staging_free_bytes += bytes;
}

void gpu_queue::staging_trim(size_t keep) {
    std::vector<void *> drop;
    {
        std::lock_guard lock(staging_mutex);
        while (staging_free_bytes > keep && !staging_free.empty()) {
            auto it = std::prev(staging_free.end());  // the largest first
            staging_free_bytes -= it->first;
            drop.push_back(it->second);
            staging_free.erase(it);
        }
    }
    for (void *p : drop) ops->host_free(q, p);
}

int queue_sync_requested(int &sync) {
    const char *e = std::getenv("WEFT_ENQUEUE");
    if (e == nullptr || *e == '\0' || std::strcmp(e, "memops") == 0) {
        sync = WEFT_QUEUE_SYNC_MEMOPS;
    } else if (std::strcmp(e, "hostfn") == 0) {
        sync = WEFT_QUEUE_SYNC_HOSTFN;
    } else {
        return fail(WEFT_ERR_ARG, "WEFT_ENQUEUE='%s' is not memops or hostfn", e);
    }
    return WEFT_SUCCESS;
}

int queue_attach(const std::map<std::string, std::string> &hints, std::unique_ptr<gpu_queue> &out) {
    const std::string &type = hints.at("type");
    auto value = hints.find("value");
    if (value == hints.end())
        return fail(WEFT_ERR_INFO_VALUE, "weft_stream_create: info type '%s' needs the queue handle in info 'value' "
                    "(set it with weft_info_set_hex)", type.c_str());
    std::vector<uint8_t> handle;
    std::string why;
    bool over = false;
    if (!hex_decode_max(value->second, handle, &why, 64, &over))
        return fail(WEFT_ERR_INFO_VALUE, "weft_stream_create: info 'value' for type '%s' is not a hex-encoded handle: %s",
                    type.c_str(), over ? "longer than 64 bytes" : why.c_str());
    int sync;
    if (int rc = queue_sync_requested(sync)) return rc;

    registry &r = reg();
    std::lock_guard lock(r.mutex);
    queue_plugin *plugin = nullptr;
    std::vector<std::string> tried;
    bool no_device = false;
    for (const auto &f : loader_scan()) {
        if (f.name.rfind(queue_prefix, 0) != 0) continue;
        queue_plugin *p = open_plugin(f);
        if (p == nullptr) {
            // A failure explains the refusal when that plugin decodes the type (or, when it did
            // not even load, is the one that usually does).
            const registry::failure &bad = r.failed.at(f.name.substr(std::strlen(queue_prefix)));
            const char *usual = usual_plugin(type);
            bool relevant = bad.types.empty() ? usual != nullptr && f.name == std::string(queue_prefix) + usual
                                              : std::find(bad.types.begin(), bad.types.end(), type) != bad.types.end();
            if (relevant) {
                tried.push_back(bad.why);
                no_device |= bad.no_device;
            }
            continue;
        }
        if (decodes(p->ops, type)) {
            plugin = p;
            break;
        }
    }
    if (plugin == nullptr) {
        if (tried.empty()) {
            const char *usual = usual_plugin(type);
            return fail(WEFT_ERR_PLUGIN, "weft_stream_create: no queue plugin decodes info type '%s'%s%s%s; searched %s "
                        "(set WEFT_PLUGIN_PATH to add directories)", type.c_str(),
                        usual ? " (it is libweft-queue-" : "", usual ? usual : "", usual ? ".so's)" : "",
                        [] { std::string s; for (auto &d : loader_search_path()) s += (s.empty() ? "" : ":") + d; return s; }().c_str());
        }
        return fail(no_device ? WEFT_ERR_NO_DEVICE : WEFT_ERR_PLUGIN, "weft_stream_create: info type '%s': %s",
                    type.c_str(), tried.front().c_str());
    }

    auto gq = std::make_unique<gpu_queue>();
    gq->plugin = plugin;
    gq->ops = plugin->ops;
    gq->type = type;
    hex_reader reader{&hints};
    weft_queue_attach_args_t args{};
    args.struct_size = sizeof args;
    args.type = type.c_str();
    args.handle = handle.data();
    args.handle_size = handle.size();
    args.sync = sync;
    args.get_hex = read_hex;
    args.get_hex_ctx = &reader;
    char text[512] = "";
    int used = sync;
    int rc = plugin->ops->attach(plugin->runtime, &args, &gq->q, &used, text, sizeof text);
    if (rc != WEFT_PLUGIN_OK || gq->q == nullptr) {
        gq->q = nullptr;
        int code = rc == WEFT_PLUGIN_ERR_NO_DEVICE ? WEFT_ERR_NO_DEVICE
                   : rc == WEFT_PLUGIN_ERR_NOMEM   ? WEFT_ERR_NO_MEM
                                                   : WEFT_ERR_INFO_VALUE;
        return fail(code, "weft_stream_create: the %s queue plugin refused info type '%s': %s",
                    plugin->plugin.name.c_str() + std::strlen(queue_prefix), type.c_str(),
                    text[0] ? text : "no reason given");
    }
    gq->sync = used == WEFT_QUEUE_SYNC_HOSTFN ? WEFT_QUEUE_SYNC_HOSTFN : WEFT_QUEUE_SYNC_MEMOPS;
    out = std::move(gq);
    return WEFT_SUCCESS;
}

void queue_plugins_finalize() {
    registry &r = reg();
    std::lock_guard lock(r.mutex);
    for (auto &[name, p] : r.open)
        if (p->runtime != nullptr && p->ops->finalize != nullptr) p->ops->finalize(p->runtime);
    // The libraries stay loaded (RTLD_NODELETE), as fabric plugins do.
    r.open.clear();
    r.failed.clear();
}

}  // namespace weft
