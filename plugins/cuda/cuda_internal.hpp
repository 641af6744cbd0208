/* Internal structures of the CUDA queue plugin.  Only api/weft/plugin.h and the CUDA driver
 * API (cuda.h) are visible; nothing here throws (pthread primitives, nothrow new). */
#ifndef WEFT_CUDA_INTERNAL_HPP
#define WEFT_CUDA_INTERNAL_HPP

#include <weft/plugin.h>

#include <cuda.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#define CUDA_PLUGIN_NAME "cuda"

/* Memory-operation words whose last device access may still be pending at detach (the last
 * append was a wait): freed once `done` (recorded at detach) has completed. */
struct cuda_graveyard_entry {
    CUcontext ctx;
    CUevent done;
    void *words;
    cuda_graveyard_entry *next;
};

/* A stream made by queue_create (ABI minor 3, conformance tools), on device 0's primary
 * context, which it holds retained until queue_destroy. */
struct cuda_created_stream {
    CUstream stream;
    CUdevice dev;
    CUcontext ctx;
    cuda_created_stream *next;
};

struct weft_queue_runtime {
    const weft_plugin_host_t *host; /* may be NULL when a test calls init without one */
    int driver_version;
    int device_count;
    pthread_mutex_t lock;           /* the graveyard and created: any thread may call */
    cuda_graveyard_entry *graveyard;
    cuda_created_stream *created;   /* queue_create's streams not yet destroyed */
};

/* Host-function mode's state.  Host functions still queued on the user's stream reference
 * it, so it is reference counted (the queue holds one, every queued host function one) and
 * outlives detach until the last host function has returned. */
struct cuda_hostfn_state {
    std::atomic<uint32_t> reached;  /* written by signal host functions */
    std::atomic<int> refs;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint32_t released;              /* under lock: the newest value given to release() */
    int closing;                    /* under lock: detached, waits must not block any more */
};

struct weft_queue {
    weft_queue_runtime *rt;
    CUstream stream;                /* the user's: never destroyed */
    CUcontext ctx;                  /* the stream's context, pushed around driver calls */
    CUdevice dev;
    int sync;                       /* WEFT_QUEUE_SYNC_* in use */
    /* Memory-operation mode: two 32-bit words of mapped pinned host memory. */
    void *words;                    /* cuMemHostAlloc base, NULL in host-function mode */
    std::atomic<uint32_t> *reached_host;  /* the queue writes it (cuStreamWriteValue32) */
    std::atomic<uint32_t> *released_host; /* the host writes it, the queue waits on it */
    CUdeviceptr reached_dev;
    CUdeviceptr released_dev;
    cuda_hostfn_state *hf;          /* host-function mode, NULL otherwise */
    /* Appending thread only (and detach after it): was the last append a wait, and which. */
    int last_was_wait;
    uint32_t last_wait;
    char name[40];                  /* "cudaStream_t 0x...", for messages */
};

/* Pushes a context on the calling thread for the scope's duration (core threads, e.g. the
 * progress thread, have no current context; a user thread may have another one). */
struct cuda_ctx_scope {
    CUresult status;
    explicit cuda_ctx_scope(CUcontext ctx) noexcept : status(cuCtxPushCurrent(ctx)) {}
    ~cuda_ctx_scope()
    {
        if (status == CUDA_SUCCESS) {
            CUcontext popped;
            cuCtxPopCurrent(&popped);
        }
    }
    cuda_ctx_scope(const cuda_ctx_scope &) = delete;
    cuda_ctx_scope &operator=(const cuda_ctx_scope &) = delete;
};

/* Serial-number order of points: a is at or after b. */
inline bool cuda_serial_ge(uint32_t a, uint32_t b)
{
    return static_cast<int32_t>(a - b) >= 0;
}

/* Messages to Weft's log and failure reasons, through plugin.h's helpers (rt not NULL). */
#define cuda_log(rt, level, ...) \
    weft_plugin_logf((rt)->host, (level), CUDA_PLUGIN_NAME, __VA_ARGS__)
#define cuda_why(why, why_len, ...) \
    static_cast<void>(weft_plugin_whyf((why), (why_len), WEFT_PLUGIN_OK, __VA_ARGS__))

/* cuda_plugin.cpp */
/* "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)" into buf. */
const char *cuda_error_text(CUresult r, char *buf, size_t len);
int cuda_result_to_plugin(CUresult r);
/* Logs "<queue>: <call>: <error>" as a warning and returns the plugin code for r. */
int cuda_call_failed(const weft_queue *q, const char *call, CUresult r);

/* cuda_queue.cpp */
int cuda_queue_attach(weft_queue_runtime_t *rt, const weft_queue_attach_args_t *args,
                      weft_queue_t **q, int *sync_used, char *why, size_t why_len);
int cuda_queue_detach(weft_queue_t *q);
void cuda_graveyard_sweep(weft_queue_runtime *rt);
int cuda_queue_create(weft_queue_runtime_t *rt, void *handle, size_t *size);
int cuda_queue_destroy(weft_queue_runtime_t *rt, const void *handle, size_t size);

/* cuda_sync.cpp */
cuda_hostfn_state *cuda_hostfn_state_create();
void cuda_hostfn_state_close(cuda_hostfn_state *st);
int cuda_queue_append_signal(weft_queue_t *q, uint32_t value);
int cuda_queue_append_wait(weft_queue_t *q, uint32_t value);
uint32_t cuda_queue_reached(weft_queue_t *q);
int cuda_queue_release(weft_queue_t *q, uint32_t value);

/* cuda_mem.cpp */
int cuda_queue_append_copy(weft_queue_t *q, void *dst, const void *src, size_t bytes);
int cuda_queue_mem_kind(weft_queue_t *q, const void *ptr, weft_mem_kind_t *kind);
int cuda_queue_host_alloc(weft_queue_t *q, size_t bytes, void **ptr);
int cuda_queue_host_free(weft_queue_t *q, void *ptr);

#endif /* WEFT_CUDA_INTERNAL_HPP */
