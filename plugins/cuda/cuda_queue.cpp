/* CUDA queue plugin: attaching a user's stream (checks, choice of the sync mechanism) and
 * detaching it (freeing what the plugin allocated, never the stream); streams of the plugin's
 * own for conformance tools (queue_create / queue_destroy). */
#include "cuda_internal.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <new>

namespace {

/* Whether the word a handle points to is mapped.  The driver dereferences a CUstream without
 * checking it: cuStreamGetCtx on 0xdead0000 died with SIGSEGV on an H200 (driver 580.159).
 * process_vm_readv on this very process reports an unmapped address as EFAULT instead of
 * faulting.  Where the call is refused (seccomp, ENOSYS) nothing can be told: the handle
 * passes.  A mapped address that is not a stream still reaches the driver. */
bool cuda_handle_mapped(const void *handle) {
    uintptr_t word = 0;
    struct iovec local = {&word, sizeof(word)};
    struct iovec remote = {const_cast<void *>(handle), sizeof(word)};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(sizeof(word))) return true;
    return errno != EFAULT;
}

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free,
              "the memory-operation words are plain 32-bit words the device writes and reads");

/* The two words sit in separate cache lines: the device writes one, the host the other. */
constexpr size_t cuda_words_bytes = 128;
constexpr size_t cuda_released_offset = 64;

/* Memory-operation mode: mapped pinned words.  Returns false with a reason when the device
 * cannot do it (the caller falls back to host functions).  The context is current.
 * 32-bit stream memory operations (cuStreamWriteValue32/WaitValue32, the v2 API the CUDA 12+
 * headers map them to) are supported on every device since CUDA 12, the v1 attribute
 * CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 being deprecated; what can be missing is the
 * mapping of host memory into the device's address space. */
bool cuda_memops_open(weft_queue *q, char *reason, size_t reason_len) {
    char err[160];
    int can_map = 0;
    CUresult r = cuDeviceGetAttribute(&can_map, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, q->dev);
    if (r != CUDA_SUCCESS || !can_map) {
        snprintf(reason, reason_len, "the device cannot map host memory");
        return false;
    }
    void *words = nullptr;
    r = cuMemHostAlloc(&words, cuda_words_bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    if (r != CUDA_SUCCESS) {
        snprintf(reason, reason_len, "cuMemHostAlloc: %s", cuda_error_text(r, err, sizeof(err)));
        return false;
    }
    auto *base = static_cast<char *>(words);
    auto *reached = new (base) std::atomic<uint32_t>(0);
    auto *released = new (base + cuda_released_offset) std::atomic<uint32_t>(0);
    CUdeviceptr reached_dev = 0, released_dev = 0;
    r = cuMemHostGetDevicePointer(&reached_dev, reached, 0);
    if (r == CUDA_SUCCESS) r = cuMemHostGetDevicePointer(&released_dev, released, 0);
    if (r != CUDA_SUCCESS) {
        snprintf(reason, reason_len, "cuMemHostGetDevicePointer: %s", cuda_error_text(r, err, sizeof(err)));
        cuMemFreeHost(words);
        return false;
    }
    q->words = words;
    q->reached_host = reached;
    q->released_host = released;
    q->reached_dev = reached_dev;
    q->released_dev = released_dev;
    return true;
}

/* Detach of a memory-operation queue whose last append was a wait: the device may still be
 * about to read the released word, so the words are freed once an event recorded now has
 * completed (checked at later attach/detach/finalize) rather than by waiting here, which
 * could hang the calling (progress) thread on later work of the stream. */
void cuda_memops_bury(weft_queue *q) {
    auto *e = new (std::nothrow) cuda_graveyard_entry{};
    CUevent ev = nullptr;
    CUresult r = e ? cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING) : CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS) {
        r = cuEventRecord(ev, q->stream);
        if (r != CUDA_SUCCESS) cuEventDestroy(ev);
    }
    if (r != CUDA_SUCCESS) {
        char err[160];
        cuda_log(q->rt, WEFT_LOG_WARN,
                 "%s: detach: cannot tell when the stream has passed its last wait (%s); its "
                 "pinned words are kept",
                 q->name, cuda_error_text(r, err, sizeof(err)));
        delete e;
        return;
    }
    e->ctx = q->ctx;
    e->done = ev;
    e->words = q->words;
    pthread_mutex_lock(&q->rt->lock);
    e->next = q->rt->graveyard;
    q->rt->graveyard = e;
    pthread_mutex_unlock(&q->rt->lock);
}

}  // namespace

void cuda_graveyard_sweep(weft_queue_runtime *rt) {
    pthread_mutex_lock(&rt->lock);
    cuda_graveyard_entry **link = &rt->graveyard;
    while (cuda_graveyard_entry *e = *link) {
        cuda_ctx_scope scope(e->ctx);
        CUresult r = scope.status == CUDA_SUCCESS ? cuEventQuery(e->done) : scope.status;
        if (r == CUDA_ERROR_NOT_READY) {
            link = &e->next;
            continue;
        }
        /* Done, or the context is gone (its pinned memory went with it): drop the entry. */
        if (r == CUDA_SUCCESS) cuMemFreeHost(e->words);
        if (scope.status == CUDA_SUCCESS) cuEventDestroy(e->done);
        *link = e->next;
        delete e;
    }
    pthread_mutex_unlock(&rt->lock);
}

int cuda_queue_attach(weft_queue_runtime_t *rt, const weft_queue_attach_args_t *args, weft_queue_t **q_out,
                      int *sync_used, char *why, size_t why_len) {
    if (!rt || !args || !q_out) {
        cuda_why(why, why_len, "attach: missing argument");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    *q_out = nullptr;
    if (args->struct_size < offsetof(weft_queue_attach_args_t, sync) + sizeof(args->sync)) {
        cuda_why(why, why_len, "attach: arguments of an older ABI (struct_size %u)",
                 static_cast<unsigned>(args->struct_size));
        return WEFT_PLUGIN_ERR_INVALID;
    }
    const char *type = args->type;
    if (!type || (strcmp(type, "cudaStream_t") != 0 && strcmp(type, "CUstream") != 0)) {
        cuda_why(why, why_len, "type '%s' is neither cudaStream_t nor CUstream", type ? type : "(null)");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    if (!args->handle || args->handle_size != sizeof(CUstream)) {
        cuda_why(why, why_len, "a %s value is %zu bytes (a pointer), not %zu", type, sizeof(CUstream),
                 args->handle_size);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    int sync = args->sync;
    if (sync != WEFT_QUEUE_SYNC_MEMOPS && sync != WEFT_QUEUE_SYNC_HOSTFN) {
        cuda_why(why, why_len, "unknown sync mechanism %d", sync);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    CUstream stream;
    memcpy(&stream, args->handle, sizeof(stream));
    /* The special handles name a different stream depending on the calling thread or its
     * current context, while the core appends from other threads than the user's. */
    if (stream == nullptr || stream == CU_STREAM_LEGACY) {
        cuda_why(why, why_len, "the legacy default stream cannot be attached: create a stream");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    if (stream == CU_STREAM_PER_THREAD) {
        cuda_why(why, why_len, "the per-thread default stream cannot be attached: create a stream");
        return WEFT_PLUGIN_ERR_INVALID;
    }
    if (!cuda_handle_mapped(stream)) {
        cuda_why(why, why_len, "%s 0x%" PRIxPTR " is not a stream: no memory is mapped there", type,
                 reinterpret_cast<uintptr_t>(stream));
        return WEFT_PLUGIN_ERR_INVALID;
    }
    char err[160];
    CUcontext ctx = nullptr;
    /* A destroyed stream usually returns CUDA_ERROR_INVALID_HANDLE; other mapped memory that
     * was never a stream may still crash the driver: its API offers no better check. */
    CUresult r = cuStreamGetCtx(stream, &ctx);
    if (r != CUDA_SUCCESS || !ctx) {
        cuda_why(why, why_len, "%s 0x%" PRIxPTR ": cuStreamGetCtx: %s", type, reinterpret_cast<uintptr_t>(stream),
                 cuda_error_text(r, err, sizeof(err)));
        return WEFT_PLUGIN_ERR_INVALID;
    }
    cuda_ctx_scope scope(ctx);
    if (scope.status != CUDA_SUCCESS) {
        cuda_why(why, why_len, "%s 0x%" PRIxPTR ": cuCtxPushCurrent: %s", type, reinterpret_cast<uintptr_t>(stream),
                 cuda_error_text(scope.status, err, sizeof(err)));
        return cuda_result_to_plugin(scope.status);
    }
    CUdevice dev = 0;
    r = cuCtxGetDevice(&dev);
    if (r != CUDA_SUCCESS) {
        cuda_why(why, why_len, "%s 0x%" PRIxPTR ": cuCtxGetDevice: %s", type, reinterpret_cast<uintptr_t>(stream),
                 cuda_error_text(r, err, sizeof(err)));
        return cuda_result_to_plugin(r);
    }
    /* append_copy and mem_kind pass host pointers as CUdeviceptr. */
    int uva = 0;
    if (cuDeviceGetAttribute(&uva, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, dev) != CUDA_SUCCESS || !uva) {
        cuda_why(why, why_len, "CUDA device %d has no unified addressing", static_cast<int>(dev));
        return WEFT_PLUGIN_ERR_UNSUPPORTED;
    }

    auto *q = new (std::nothrow) weft_queue{};
    if (!q) {
        cuda_why(why, why_len, "out of memory");
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    q->rt = rt;
    q->stream = stream;
    q->ctx = ctx;
    q->dev = dev;
    snprintf(q->name, sizeof(q->name), "%s 0x%" PRIxPTR, type, reinterpret_cast<uintptr_t>(stream));
    char fallback[200] = "";
    if (sync == WEFT_QUEUE_SYNC_MEMOPS && !cuda_memops_open(q, fallback, sizeof(fallback)))
        sync = WEFT_QUEUE_SYNC_HOSTFN;
    if (sync == WEFT_QUEUE_SYNC_HOSTFN) {
        q->hf = cuda_hostfn_state_create();
        if (!q->hf) {
            delete q;
            cuda_why(why, why_len, "out of memory");
            return WEFT_PLUGIN_ERR_NOMEM;
        }
    }
    q->sync = sync;
    cuda_graveyard_sweep(rt);
    if (fallback[0])
        cuda_log(rt, WEFT_LOG_INFO, "%s (device %d): hostfn (memory operations unavailable: %s)", q->name,
                 static_cast<int>(dev), fallback);
    else
        cuda_log(rt, WEFT_LOG_INFO, "%s (device %d): %s", q->name, static_cast<int>(dev),
                 sync == WEFT_QUEUE_SYNC_MEMOPS ? "memops" : "hostfn");
    if (sync_used) *sync_used = sync;
    *q_out = q;
    return WEFT_PLUGIN_OK;
}

int cuda_queue_detach(weft_queue_t *q) {
    if (!q) return WEFT_PLUGIN_ERR_INVALID;
    weft_queue_runtime *rt = q->rt;
    if (q->hf) {
        /* Reference counting keeps the state alive for host functions still returning;
         * closing lets a wait the core never released go on rather than hang the stream. */
        pthread_mutex_lock(&q->hf->lock);
        bool unreleased = q->last_was_wait && !cuda_serial_ge(q->hf->released, q->last_wait);
        pthread_mutex_unlock(&q->hf->lock);
        if (unreleased)
            cuda_log(rt, WEFT_LOG_WARN, "%s: detached before its last wait (%u) was released", q->name, q->last_wait);
        cuda_hostfn_state_close(q->hf);
    }
    if (q->words) {
        if (q->last_was_wait && !cuda_serial_ge(q->released_host->load(std::memory_order_acquire), q->last_wait)) {
            cuda_log(rt, WEFT_LOG_WARN, "%s: detached before its last wait (%u) was released", q->name, q->last_wait);
            cuda_queue_release(q, q->last_wait);
        }
        cuda_ctx_scope scope(q->ctx);
        /* Without the context (the user destroyed it) its pinned memory is gone already.
         * After a signal the core saw reached, the stream no longer touches the words. */
        if (scope.status == CUDA_SUCCESS) {
            if (q->last_was_wait)
                cuda_memops_bury(q);
            else
                cuMemFreeHost(q->words);
        }
    }
    cuda_graveyard_sweep(rt);
    delete q;
    return WEFT_PLUGIN_OK;
}

/* ABI minor 3 (conformance tools; the core never calls these): a non-blocking stream on device
 * 0's primary context, whose handle bytes are the CUstream (a cudaStream_t is the same
 * pointer). */
int cuda_queue_create(weft_queue_runtime_t *rt, void *handle, size_t *size) {
    if (!rt || !handle || !size) return WEFT_PLUGIN_ERR_INVALID;
    if (*size < sizeof(CUstream)) {
        *size = sizeof(CUstream);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    auto *c = new (std::nothrow) cuda_created_stream{};
    if (!c) return WEFT_PLUGIN_ERR_NOMEM;
    char err[160];
    const char *call = "cuDeviceGet(0)";
    CUresult r = cuDeviceGet(&c->dev, 0);
    bool retained = false;
    if (r == CUDA_SUCCESS) {
        call = "cuDevicePrimaryCtxRetain";
        r = cuDevicePrimaryCtxRetain(&c->ctx, c->dev);
        retained = r == CUDA_SUCCESS;
    }
    if (r == CUDA_SUCCESS) {
        cuda_ctx_scope scope(c->ctx);
        call = "cuCtxPushCurrent";
        r = scope.status;
        if (r == CUDA_SUCCESS) {
            call = "cuStreamCreate";
            r = cuStreamCreate(&c->stream, CU_STREAM_NON_BLOCKING);
        }
    }
    if (r != CUDA_SUCCESS) {
        if (retained) cuDevicePrimaryCtxRelease(c->dev);
        cuda_log(rt, WEFT_LOG_WARN, "queue_create: %s: %s", call, cuda_error_text(r, err, sizeof(err)));
        delete c;
        return cuda_result_to_plugin(r);
    }
    pthread_mutex_lock(&rt->lock);
    c->next = rt->created;
    rt->created = c;
    pthread_mutex_unlock(&rt->lock);
    memcpy(handle, &c->stream, sizeof(c->stream));
    *size = sizeof(c->stream);
    cuda_log(rt, WEFT_LOG_DEBUG, "queue_create: CUstream %p on device 0", static_cast<void *>(c->stream));
    return WEFT_PLUGIN_OK;
}

/* Synchronizes and destroys a stream of queue_create (detached first); other handles are
 * refused, never destroyed. */
int cuda_queue_destroy(weft_queue_runtime_t *rt, const void *handle, size_t size) {
    if (!rt || !handle || size != sizeof(CUstream)) return WEFT_PLUGIN_ERR_INVALID;
    CUstream stream;
    memcpy(&stream, handle, sizeof(stream));
    pthread_mutex_lock(&rt->lock);
    cuda_created_stream *c = nullptr;
    for (cuda_created_stream **link = &rt->created; *link; link = &(*link)->next) {
        if ((*link)->stream == stream) {
            c = *link;
            *link = c->next;
            break;
        }
    }
    pthread_mutex_unlock(&rt->lock);
    if (!c) return WEFT_PLUGIN_ERR_INVALID;
    const char *call = "cuCtxPushCurrent";
    CUresult r;
    {
        cuda_ctx_scope scope(c->ctx);
        r = scope.status;
        if (r == CUDA_SUCCESS) {
            call = "cuStreamSynchronize";
            r = cuStreamSynchronize(stream);
        }
        if (r == CUDA_SUCCESS) {
            call = "cuStreamDestroy";
            r = cuStreamDestroy(stream);
        }
    }
    if (r != CUDA_SUCCESS) {
        char err[160];
        cuda_log(rt, WEFT_LOG_WARN, "queue_destroy of CUstream %p: %s: %s", static_cast<void *>(stream), call,
                 cuda_error_text(r, err, sizeof(err)));
        pthread_mutex_lock(&rt->lock); /* still ours: a later call may try again */
        c->next = rt->created;
        rt->created = c;
        pthread_mutex_unlock(&rt->lock);
        return cuda_result_to_plugin(r);
    }
    cuDevicePrimaryCtxRelease(c->dev);
    delete c;
    return WEFT_PLUGIN_OK;
}
