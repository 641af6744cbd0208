// HIP queue plugin: signal and wait points, in two modes.
//
// Memops: the stream writes 'reached' with hipStreamWriteValue32 and waits on 'released' with
// hipStreamWaitValue32, both words in host-mapped memory that the host reads and writes
// directly.  Hostfn: host callbacks (hipStreamAddCallback; HIP 5.2's library does not export
// hipLaunchHostFunc) store 'reached', or block until 'released' covers them; that needs no
// device support but holds a HIP runtime thread while a wait is pending, so memops are
// preferred where the device has them.
#include "hip_internal.hpp"

#include <cstdio>
#include <new>
#include <thread>

namespace {

static_assert(std::atomic_ref<uint32_t>::is_always_lock_free,
              "the device shares these words: host atomics must be plain loads and stores");

// 'released' sits on its own 8-byte slot with a zero word after it: ROCm's wait kernels may
// read it as a 64-bit value (the high half masked out by the 32-bit mask), which must stay
// inside the allocation.
enum { HIP_WORD_REACHED = 0, HIP_WORD_RELEASED = 2, HIP_WORDS = 4 };

std::atomic_ref<uint32_t> hip_word(weft_queue_t *q, int which)
{
    return std::atomic_ref<uint32_t>(q->words[which]);
}

// One appended callback: the queue and the point it stands for; the callback frees it.
struct hip_callback {
    weft_queue_t *q;
    uint32_t value;
};

void hip_signal_callback(hipStream_t, hipError_t, void *arg)
{
    auto *cb = static_cast<hip_callback *>(arg);
    weft_queue_t *q = cb->q;
    uint32_t value = cb->value;
    delete cb;
    // Signals execute in stream order, so plain stores keep 'reached' monotonic.
    q->hostfn_reached.store(value, std::memory_order_release);
    q->callbacks_pending.fetch_sub(1, std::memory_order_release); // last access to q
}

void hip_wait_callback(hipStream_t, hipError_t, void *arg)
{
    auto *cb = static_cast<hip_callback *>(arg);
    weft_queue_t *q = cb->q;
    uint32_t value = cb->value;
    delete cb;
    try {
        // Later work of the stream starts only when this callback returns.
        std::unique_lock<std::mutex> hold(q->lock);
        q->cond.wait(hold, [q, value] {
            return q->closing || hip_serial_ge(q->hostfn_released, value);
        });
    } catch (...) {
        // A failing mutex cannot happen in practice; never let it escape into HIP.
    }
    q->callbacks_pending.fetch_sub(1, std::memory_order_release); // last access to q
}

int hip_callback_append(weft_queue_t *q, hipStreamCallback_t fn, uint32_t value,
                        const char *call)
{
    auto *cb = new (std::nothrow) hip_callback{q, value};
    if (!cb)
        return WEFT_PLUGIN_ERR_NOMEM;
    q->callbacks_pending.fetch_add(1, std::memory_order_relaxed);
    hipError_t err = hipStreamAddCallback(q->stream, fn, cb, 0);
    if (err != hipSuccess) {
        q->callbacks_pending.fetch_sub(1, std::memory_order_relaxed);
        delete cb;
        return hip_call_failed(q, call, err);
    }
    return WEFT_PLUGIN_OK;
}

} // namespace

// Memops: the synchronization words.  May fall back to hostfn (q->sync, q->fallback).
int hip_sync_setup(weft_queue_t *q, char *why, size_t why_len)
{
    if (q->sync != WEFT_QUEUE_SYNC_MEMOPS)
        return WEFT_PLUGIN_OK;
    char text[160];
    void *host = nullptr;
    // Coherent (fine-grained): the stream's waits see host stores, and the host sees the
    // stream's writes, without cache flushes.
    hipError_t err = hipHostMalloc(&host, HIP_WORDS * sizeof(uint32_t),
                                   hipHostMallocMapped | hipHostMallocCoherent);
    if (err != hipSuccess) {
        hip_error_text(err, text, sizeof(text));
        snprintf(why, why_len, "hip: hipHostMalloc of the synchronization words: %s", text);
        return err == hipErrorOutOfMemory ? WEFT_PLUGIN_ERR_NOMEM : WEFT_PLUGIN_ERR_OTHER;
    }
    void *dev = nullptr;
    err = hipHostGetDevicePointer(&dev, host, 0);
    if (err != hipSuccess) {
        static_cast<void>(hipHostFree(host));
        hip_error_text(err, text, sizeof(text));
        snprintf(why, why_len, "hip: hipHostGetDevicePointer: %s", text);
        return WEFT_PLUGIN_ERR_OTHER;
    }
    q->words = static_cast<uint32_t *>(host);
    q->dev_words = static_cast<uint32_t *>(dev);
    for (int i = 0; i < HIP_WORDS; ++i)
        hip_word(q, i).store(0, std::memory_order_release);
    // ROCm waits on ordinary memory with a polling kernel, unless GPU_STREAMOPS_CP_WAIT=1
    // restricts waits to HSA signal memory: find out now with a wait that is already
    // satisfied (released >= 0), rather than fail at the first append_wait.
    err = hipStreamWaitValue32(q->stream, q->dev_words + HIP_WORD_RELEASED, 0,
                               hipStreamWaitValueGte, 0xFFFFFFFFu);
    if (err != hipSuccess) {
        static_cast<void>(hipGetLastError());
        hip_error_text(err, text, sizeof(text));
        hip_log(q->rt, WEFT_LOG_DEBUG, "hipStreamWaitValue32 on host memory: %s", text);
        // Nothing was appended, so the words are unused.
        static_cast<void>(hipHostFree(host));
        q->words = q->dev_words = nullptr;
        q->sync = WEFT_QUEUE_SYNC_HOSTFN;
        q->fallback = "hipStreamWaitValue32 refuses host memory (GPU_STREAMOPS_CP_WAIT?)";
    }
    return WEFT_PLUGIN_OK;
}

// Detach: everything appended has executed, yet make sure that no wait can still hold the
// stream and that no callback can still touch the queue once it is freed.  False: the
// stream could not be synchronized (destroyed by the application?), so the stream may still
// use the queue's memory, which must then be kept.
bool hip_sync_teardown(weft_queue_t *q)
{
    if (q->sync == WEFT_QUEUE_SYNC_MEMOPS) {
        // All ones satisfies every >= wait: a wait the core never released cannot keep
        // reading the words after they are freed.
        hip_word(q, HIP_WORD_RELEASED).store(UINT32_MAX, std::memory_order_release);
    } else {
        try {
            std::lock_guard<std::mutex> hold(q->lock);
            q->closing = true;
        } catch (...) {
        }
        q->cond.notify_all();
    }
    hipError_t err = hipStreamSynchronize(q->stream);
    if (err != hipSuccess) {
        hip_call_failed(q, "detach: hipStreamSynchronize", err);
        static_cast<void>(hipGetLastError());
        return false;
    }
    // A callback may have published its value and not yet returned.
    while (q->callbacks_pending.load(std::memory_order_acquire) != 0)
        std::this_thread::yield();
    if (q->words) {
        static_cast<void>(hipHostFree(q->words));
        q->words = q->dev_words = nullptr;
    }
    return true;
}

int hip_queue_append_signal(weft_queue_t *q, uint32_t value)
{
    if (!q)
        return WEFT_PLUGIN_ERR_INVALID;
    hip_device_guard guard(q->device);
    if (guard.status() != hipSuccess)
        return hip_call_failed(q, "append_signal: hipSetDevice", guard.status());
    if (q->sync == WEFT_QUEUE_SYNC_HOSTFN)
        return hip_callback_append(q, hip_signal_callback, value,
                                   "append_signal: hipStreamAddCallback");
    hipError_t err = hipStreamWriteValue32(q->stream, q->dev_words + HIP_WORD_REACHED, value, 0);
    return err == hipSuccess ? WEFT_PLUGIN_OK
                             : hip_call_failed(q, "append_signal: hipStreamWriteValue32", err);
}

int hip_queue_append_wait(weft_queue_t *q, uint32_t value)
{
    if (!q)
        return WEFT_PLUGIN_ERR_INVALID;
    hip_device_guard guard(q->device);
    if (guard.status() != hipSuccess)
        return hip_call_failed(q, "append_wait: hipSetDevice", guard.status());
    if (q->sync == WEFT_QUEUE_SYNC_HOSTFN)
        return hip_callback_append(q, hip_wait_callback, value,
                                   "append_wait: hipStreamAddCallback");
    // hipStreamWaitValueGte is a plain unsigned *ptr >= value, not CUDA's cyclic compare:
    // released only grows (see hip_queue_release), which is right while the core's serial
    // numbers, starting at 1, have not wrapped, that is for the first 2^32 - 1 points of a
    // queue.  Past that a wait for a large value would see a small released word and stall.
    hipError_t err = hipStreamWaitValue32(q->stream, q->dev_words + HIP_WORD_RELEASED, value,
                                          hipStreamWaitValueGte, 0xFFFFFFFFu);
    return err == hipSuccess ? WEFT_PLUGIN_OK
                             : hip_call_failed(q, "append_wait: hipStreamWaitValue32", err);
}

uint32_t hip_queue_reached(weft_queue_t *q)
{
    if (!q)
        return 0;
    if (q->sync == WEFT_QUEUE_SYNC_HOSTFN)
        return q->hostfn_reached.load(std::memory_order_acquire);
    return hip_word(q, HIP_WORD_REACHED).load(std::memory_order_acquire);
}

int hip_queue_release(weft_queue_t *q, uint32_t value)
{
    if (!q)
        return WEFT_PLUGIN_ERR_INVALID;
    if (q->sync == WEFT_QUEUE_SYNC_MEMOPS) {
        // Store only newer values (serial order), so the word the stream compares with an
        // unsigned >= never goes back.  Release: data the host wrote before is visible first.
        auto word = hip_word(q, HIP_WORD_RELEASED);
        uint32_t current = word.load(std::memory_order_relaxed);
        while (static_cast<int32_t>(value - current) > 0 &&
               !word.compare_exchange_weak(current, value, std::memory_order_release,
                                           std::memory_order_relaxed)) {
        }
        return WEFT_PLUGIN_OK;
    }
    bool newer = false;
    try {
        // Held only briefly: waiting callbacks sleep on cond without it.
        std::lock_guard<std::mutex> hold(q->lock);
        if (static_cast<int32_t>(value - q->hostfn_released) > 0) {
            q->hostfn_released = value;
            newer = true;
        }
    } catch (...) {
        return WEFT_PLUGIN_ERR_OTHER;
    }
    if (newer)
        q->cond.notify_all();
    return WEFT_PLUGIN_OK;
}
