// hostq queue plugin (tests only): opens the hostq runtime, attaches weft_hostq_t queues,
// answers memory queries, creates queues for conformance tools, and exports the
// weft_plugin_v1 descriptor.  It is also the queue plugin skeleton: a plugin for a real GPU
// runtime has the same shape (see plugins/cuda for one).
#include "hostq_plugin_internal.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

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

namespace {

const char *const hostq_plugin_types[] = {"weft_hostq_t", nullptr};

int hostq_plugin_init(const weft_plugin_host_t *host, weft_queue_runtime_t **rt, char *why,
                      size_t why_len)
{
    if (!rt)
        return WEFT_PLUGIN_ERR_INVALID;
    *rt = nullptr;
    // Lets tests reach the core's "no device" path on a machine where hostq always works.
    // A real runtime returns WEFT_PLUGIN_ERR_NO_DEVICE when its driver or device is missing.
    if (getenv("WEFT_HOSTQ_NO_DEVICE"))
        return weft_plugin_whyf(why, why_len, WEFT_PLUGIN_ERR_NO_DEVICE,
                                "no hostq device (WEFT_HOSTQ_NO_DEVICE is set)");
    auto *r = new (std::nothrow) weft_queue_runtime;
    if (!r)
        return weft_plugin_whyf(why, why_len, WEFT_PLUGIN_ERR_NOMEM, "hostq: out of memory");
    r->host = host;
    *rt = r;
    return WEFT_PLUGIN_OK;
}

int hostq_plugin_finalize(weft_queue_runtime_t *rt)
{
    if (!rt)
        return WEFT_PLUGIN_ERR_INVALID;
    // Queues that queue_create made and nobody destroyed stay alive (destroying them could
    // wait forever on a stalled queue): the caller's leak, reported here.
    if (!rt->created.empty())
        weft_plugin_logf(rt->host, WEFT_LOG_WARN, HOSTQ_PLUGIN_NAME,
                         "finalize: %zu queue(s) from queue_create were not destroyed",
                         rt->created.size());
    delete rt;
    return WEFT_PLUGIN_OK;
}

const char *hostq_plugin_sync_name(int sync)
{
    return sync == WEFT_QUEUE_SYNC_MEMOPS ? "memops" : "hostfn";
}

// Decodes the handle (a hostq_t* value) and checks it; the queue stays the user's.
int hostq_plugin_attach(weft_queue_runtime_t *rt, const weft_queue_attach_args_t *args,
                        weft_queue_t **q, int *sync_used, char *why, size_t why_len)
{
    if (!rt || !args || !q || !sync_used ||
        args->struct_size < offsetof(weft_queue_attach_args_t, sync) + sizeof(args->sync))
        return weft_plugin_whyf(why, why_len, WEFT_PLUGIN_ERR_INVALID,
                                "hostq: attach called with missing arguments");
    if (!args->type || strcmp(args->type, hostq_plugin_types[0]) != 0)
        return weft_plugin_whyf(why, why_len, WEFT_PLUGIN_ERR_INVALID,
                                "hostq: type '%s' is not %s", args->type ? args->type : "(null)",
                                hostq_plugin_types[0]);
    if (!args->handle || args->handle_size != sizeof(hostq_t *))
        return weft_plugin_whyf(why, why_len, WEFT_PLUGIN_ERR_INVALID,
                                "hostq: a %s handle is %zu bytes (a hostq_t*), not %zu",
                                hostq_plugin_types[0], sizeof(hostq_t *), args->handle_size);
    hostq_t *hq;
    memcpy(&hq, args->handle, sizeof(hq));
    // A GPU runtime may crash on a garbage handle; hostq can check it without reading it.
    if (!hostq_is_valid(hq))
        return weft_plugin_whyf(why, why_len, WEFT_PLUGIN_ERR_INVALID,
                                "hostq 0x%" PRIxPTR ": not a live queue",
                                reinterpret_cast<uintptr_t>(hq));
    int sync = args->sync;
    if (sync != WEFT_QUEUE_SYNC_MEMOPS && sync != WEFT_QUEUE_SYNC_HOSTFN)
        return weft_plugin_whyf(why, why_len, WEFT_PLUGIN_ERR_INVALID,
                                "hostq: unknown sync mode %d", sync);
    // Lets tests reach the core's fallback path (a runtime without stream memory operations).
    bool forced = sync == WEFT_QUEUE_SYNC_MEMOPS && getenv("WEFT_HOSTQ_FORCE_HOSTFN");
    if (forced)
        sync = WEFT_QUEUE_SYNC_HOSTFN;
    auto *nq = new (std::nothrow) weft_queue;
    if (!nq)
        return weft_plugin_whyf(why, why_len, WEFT_PLUGIN_ERR_NOMEM, "hostq: out of memory");
    nq->rt = rt;
    nq->hq = hq;
    nq->sync = sync;
    *q = nq;
    *sync_used = sync;
    weft_plugin_logf(rt->host, WEFT_LOG_INFO, HOSTQ_PLUGIN_NAME,
                     "attached hostq 0x%" PRIxPTR " (sync %s%s)", reinterpret_cast<uintptr_t>(hq),
                     hostq_plugin_sync_name(sync),
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
        weft_plugin_logf(q->rt->host, WEFT_LOG_WARN, HOSTQ_PLUGIN_NAME,
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

int hostq_plugin_mem_kind(weft_queue_t *q, const void *ptr, weft_mem_kind_t *kind)
{
    if (!q || !kind)
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

int hostq_plugin_host_alloc(weft_queue_t *q, size_t bytes, void **ptr)
{
    if (!q || !ptr)
        return WEFT_PLUGIN_ERR_INVALID;
    *ptr = hostq_malloc_host(bytes);
    return *ptr ? WEFT_PLUGIN_OK : WEFT_PLUGIN_ERR_NOMEM;
}

int hostq_plugin_host_free(weft_queue_t *q, void *ptr)
{
    if (!q)
        return WEFT_PLUGIN_ERR_INVALID;
    return hostq_plugin_rc(hostq_free_host(ptr));
}

// ---- ABI minor 3: native queues for conformance tools (the core never calls these) ----

// A new queue of types[0]; its handle is the hostq_t* value, the bytes attach decodes.
int hostq_plugin_queue_create(weft_queue_runtime_t *rt, void *handle, size_t *size)
{
    if (!rt || !handle || !size)
        return WEFT_PLUGIN_ERR_INVALID;
    if (*size < sizeof(hostq_t *)) {
        *size = sizeof(hostq_t *);  // what it takes
        return WEFT_PLUGIN_ERR_INVALID;
    }
    hostq_t *hq = nullptr;
    int rc = hostq_plugin_rc(hostq_create(&hq));
    if (rc != WEFT_PLUGIN_OK)
        return rc;
    try {
        std::lock_guard<std::mutex> g(rt->created_lock);
        rt->created.push_back(hq);
    } catch (...) {
        hostq_destroy(hq);  // nothing was appended: returns at once
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    memcpy(handle, &hq, sizeof(hq));
    *size = sizeof(hq);
    weft_plugin_logf(rt->host, WEFT_LOG_DEBUG, HOSTQ_PLUGIN_NAME, "created hostq 0x%" PRIxPTR,
                     reinterpret_cast<uintptr_t>(hq));
    return WEFT_PLUGIN_OK;
}

// How long queue_destroy waits for a queue's work.  A GPU plugin would synchronize its stream
// without a limit; hostq is a test runtime, so a queue stalled on a wait nobody releases makes
// queue_destroy fail (and keep the queue) rather than hang the test.
constexpr uint64_t hostq_plugin_destroy_wait_us = 10 * 1000 * 1000;

// Waits until everything appended to a queue of queue_create has run, then destroys it.
int hostq_plugin_queue_destroy(weft_queue_runtime_t *rt, const void *handle, size_t size)
{
    if (!rt || !handle || size != sizeof(hostq_t *))
        return WEFT_PLUGIN_ERR_INVALID;
    hostq_t *hq;
    memcpy(&hq, handle, sizeof(hq));
    {
        std::lock_guard<std::mutex> g(rt->created_lock);
        if (std::find(rt->created.begin(), rt->created.end(), hq) == rt->created.end())
            return WEFT_PLUGIN_ERR_INVALID;  // not one of ours, or destroyed already
    }
    int rc = hostq_synchronize_timeout(hq, hostq_plugin_destroy_wait_us);
    if (rc == HOSTQ_ERR_TIMEOUT) {
        weft_plugin_logf(rt->host, WEFT_LOG_WARN, HOSTQ_PLUGIN_NAME,
                         "queue_destroy: hostq 0x%" PRIxPTR " still has work after %u s (a wait "
                         "that was never released?): not destroyed",
                         reinterpret_cast<uintptr_t>(hq),
                         static_cast<unsigned>(hostq_plugin_destroy_wait_us / 1000000));
        return WEFT_PLUGIN_ERR_AGAIN;
    }
    if (rc == HOSTQ_OK)
        rc = hostq_destroy(hq);  // also runs what a detach queued behind the last point
    if (rc != HOSTQ_OK)
        return hostq_plugin_rc(rc);
    std::lock_guard<std::mutex> g(rt->created_lock);
    rt->created.erase(std::find(rt->created.begin(), rt->created.end(), hq));
    return WEFT_PLUGIN_OK;
}

const weft_queue_ops_v1_t hostq_plugin_ops = {
    .types = hostq_plugin_types,
    .init = hostq_plugin_init,
    .finalize = hostq_plugin_finalize,
    .attach = hostq_plugin_attach,
    .detach = hostq_plugin_detach,
    .append_signal = hostq_plugin_append_signal,
    .append_wait = hostq_plugin_append_wait,
    .append_copy = hostq_plugin_append_copy,
    .reached = hostq_plugin_reached,
    .release = hostq_plugin_release,
    .mem_kind = hostq_plugin_mem_kind,
    .host_alloc = hostq_plugin_host_alloc,
    .host_free = hostq_plugin_host_free,
    // ABI minor 3 (optional; NULL where a runtime cannot create queues on its own).
    .queue_create = hostq_plugin_queue_create,
    .queue_destroy = hostq_plugin_queue_destroy,
};

} // namespace

extern "C" {
__attribute__((visibility("default"))) extern const weft_plugin_v1_t weft_plugin_v1;
const weft_plugin_v1_t weft_plugin_v1 = {
    WEFT_PLUGIN_ABI_MAJOR, WEFT_PLUGIN_ABI_MINOR, WEFT_PLUGIN_KIND_QUEUE, HOSTQ_PLUGIN_NAME,
    "1.0 (hostq test runtime)", 0, &hostq_plugin_ops,
};
}
