// hostq queue plugin (tests only): opens the hostq runtime, attaches weft_hostq_t queues,
// answers memory queries, and exports the weft_plugin_v1 descriptor.
#include "hostq_plugin_internal.hpp"

#include <cinttypes>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#define HOSTQ_PLUGIN_NAME "hostq"

int hostq_plugin_rc(int hostq_rc)
{
    switch (hostq_rc) {
    case HOSTQ_OK:
        return WEFT_PLUGIN_OK;
    case HOSTQ_ERR_INVALID:
        return WEFT_PLUGIN_ERR_INVALID;
    case HOSTQ_ERR_NOMEM:
        return WEFT_PLUGIN_ERR_NOMEM;
    case HOSTQ_ERR_BUSY:
        return WEFT_PLUGIN_ERR_AGAIN;
    default:
        return WEFT_PLUGIN_ERR_OTHER;
    }
}

void hostq_plugin_log(weft_queue_runtime_t *rt, int level, const char *fmt, ...)
{
    const weft_plugin_host_t *host = rt ? rt->host : nullptr;
    if (!host || host->struct_size < offsetof(weft_plugin_host_t, log) + sizeof(host->log) ||
        !host->log)
        return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    host->log(level, HOSTQ_PLUGIN_NAME, line);
}

namespace {

const char *const hostq_plugin_types[] = {"weft_hostq_t", nullptr};

int hostq_plugin_init(const weft_plugin_host_t *host, weft_queue_runtime_t **rt, char *why,
                      size_t why_len)
{
    if (!rt)
        return WEFT_PLUGIN_ERR_INVALID;
    *rt = nullptr;
    // Lets tests reach the core's "no device" path on a machine where hostq always works.
    if (getenv("WEFT_HOSTQ_NO_DEVICE")) {
        if (why && why_len)
            snprintf(why, why_len, "no hostq device (WEFT_HOSTQ_NO_DEVICE is set)");
        return WEFT_PLUGIN_ERR_NO_DEVICE;
    }
    auto *r = new (std::nothrow) weft_queue_runtime{host};
    if (!r)
        return WEFT_PLUGIN_ERR_NOMEM;
    *rt = r;
    return WEFT_PLUGIN_OK;
}

int hostq_plugin_finalize(weft_queue_runtime_t *rt)
{
    delete rt;
    return WEFT_PLUGIN_OK;
}

int hostq_plugin_refuse(char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int hostq_plugin_refuse(char *why, size_t why_len, const char *fmt, ...)
{
    if (why && why_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_len, fmt, ap);
        va_end(ap);
    }
    return WEFT_PLUGIN_ERR_INVALID;
}

const char *hostq_plugin_sync_name(int sync)
{
    return sync == WEFT_QUEUE_SYNC_MEMOPS ? "memops" : "hostfn";
}

int hostq_plugin_attach(weft_queue_runtime_t *rt, const weft_queue_attach_args_t *args,
                        weft_queue_t **q, int *sync_used, char *why, size_t why_len)
{
    if (!rt || !args || !q || !sync_used ||
        args->struct_size < offsetof(weft_queue_attach_args_t, sync) + sizeof(args->sync))
        return hostq_plugin_refuse(why, why_len, "hostq: attach called with missing arguments");
    if (!args->type || strcmp(args->type, hostq_plugin_types[0]) != 0)
        return hostq_plugin_refuse(why, why_len, "hostq: type '%s' is not %s",
                                   args->type ? args->type : "(null)", hostq_plugin_types[0]);
    if (!args->handle || args->handle_size != sizeof(hostq_t *))
        return hostq_plugin_refuse(why, why_len,
                                   "hostq: a %s handle is %zu bytes (a hostq_t*), not %zu",
                                   hostq_plugin_types[0], sizeof(hostq_t *), args->handle_size);
    hostq_t *hq;
    memcpy(&hq, args->handle, sizeof(hq));
    if (!hostq_is_valid(hq))
        return hostq_plugin_refuse(why, why_len, "hostq 0x%" PRIxPTR ": not a live queue",
                                   reinterpret_cast<uintptr_t>(hq));
    int sync = args->sync;
    if (sync != WEFT_QUEUE_SYNC_MEMOPS && sync != WEFT_QUEUE_SYNC_HOSTFN)
        return hostq_plugin_refuse(why, why_len, "hostq: unknown sync mode %d", sync);
    // Lets tests reach the core's fallback path (a runtime without stream memory operations).
    bool forced = sync == WEFT_QUEUE_SYNC_MEMOPS && getenv("WEFT_HOSTQ_FORCE_HOSTFN");
    if (forced)
        sync = WEFT_QUEUE_SYNC_HOSTFN;
    auto *nq = new (std::nothrow) weft_queue;
    if (!nq)
        return WEFT_PLUGIN_ERR_NOMEM;
    nq->rt = rt;
    nq->hq = hq;
    nq->sync = sync;
    *q = nq;
    *sync_used = sync;
    hostq_plugin_log(rt, WEFT_LOG_INFO, "attached hostq 0x%" PRIxPTR " (sync %s%s)",
                     reinterpret_cast<uintptr_t>(hq), hostq_plugin_sync_name(sync),
                     forced ? ", memops requested: WEFT_HOSTQ_FORCE_HOSTFN is set" : "");
    return WEFT_PLUGIN_OK;
}

void hostq_plugin_queue_free(void *arg)
{
    delete static_cast<weft_queue_t *>(arg);
}

int hostq_plugin_detach(weft_queue_t *q)
{
    if (!q)
        return WEFT_PLUGIN_ERR_INVALID;
    uint32_t reached = hostq_plugin_reached(q);
    uint32_t last = q->last_signal.load(std::memory_order_relaxed);
    if (q->signalled.load(std::memory_order_relaxed) && reached != last)
        hostq_plugin_log(q->rt, WEFT_LOG_WARN,
                         "detach of hostq 0x%" PRIxPTR " before its last signal %" PRIu32
                         " was reached (reached %" PRIu32 ")",
                         reinterpret_cast<uintptr_t>(q->hq), last, reached);
    // Operations still queued may name q's words (a wait, a callback finishing): free q from
    // the queue itself once they have run, as a GPU plugin frees memory after its stream
    // passed.  A queue already destroyed has run everything, so q is free to go now.
    if (hostq_launch_host_func(q->hq, hostq_plugin_queue_free, q) != HOSTQ_OK)
        delete q;
    return WEFT_PLUGIN_OK;
}

int hostq_plugin_mem_kind(weft_queue_t *, const void *ptr, weft_mem_kind_t *kind)
{
    if (!kind)
        return WEFT_PLUGIN_ERR_INVALID;
    switch (hostq_pointer_kind(ptr)) {
    case HOSTQ_PTR_DEVICE:
        *kind = WEFT_MEM_DEVICE;
        break;
    case HOSTQ_PTR_PINNED:
        *kind = WEFT_MEM_HOST_PINNED;
        break;
    default:
        *kind = WEFT_MEM_HOST;
        break;
    }
    return WEFT_PLUGIN_OK;
}

int hostq_plugin_host_alloc(weft_queue_t *, size_t bytes, void **ptr)
{
    if (!ptr)
        return WEFT_PLUGIN_ERR_INVALID;
    *ptr = hostq_malloc_host(bytes);
    return *ptr ? WEFT_PLUGIN_OK : WEFT_PLUGIN_ERR_NOMEM;
}

int hostq_plugin_host_free(weft_queue_t *, void *ptr)
{
    return hostq_plugin_rc(hostq_free_host(ptr));
}

const weft_queue_ops_v1_t hostq_plugin_ops = {
    hostq_plugin_types,         hostq_plugin_init,          hostq_plugin_finalize,
    hostq_plugin_attach,        hostq_plugin_detach,        hostq_plugin_append_signal,
    hostq_plugin_append_wait,   hostq_plugin_append_copy,   hostq_plugin_reached,
    hostq_plugin_release,       hostq_plugin_mem_kind,      hostq_plugin_host_alloc,
    hostq_plugin_host_free,
};

} // namespace

extern "C" {
__attribute__((visibility("default"))) extern const weft_plugin_v1_t weft_plugin_v1;
const weft_plugin_v1_t weft_plugin_v1 = {
    WEFT_PLUGIN_ABI_MAJOR, WEFT_PLUGIN_ABI_MINOR, WEFT_PLUGIN_KIND_QUEUE, HOSTQ_PLUGIN_NAME,
    "1.0 (hostq test runtime)", 0, &hostq_plugin_ops,
};
}
