/* CUDA queue plugin: signals and waits between a stream and the host.
 *
 * Memory-operation mode: the stream writes `reached` (cuStreamWriteValue32, which fences the
 * stream's earlier writes first, so data copied to the host is visible once the host sees the
 * value) and waits on `released` (cuStreamWaitValue32 GEQ, documented as the cyclic compare
 * (int32_t)(*addr - value) >= 0 that points use).  Both words are mapped pinned host memory;
 * the host reads and writes them as lock-free std::atomic<uint32_t>, relying on the platform's
 * coherence between CPU caches and the device's reads and writes of pinned host memory (PCIe
 * snooping on x86, the coherent interconnect on Grace).
 *
 * Host-function mode: cuLaunchHostFunc runs a signal (store `reached`) or a wait (block on a
 * condition variable until released) on the driver's callback thread, in stream order.  A
 * blocking wait also holds back host functions of other streams that the driver serializes
 * with it; that is the mode's documented cost. */
#include "cuda_internal.hpp"

#include <new>

namespace {

/* What a queued host function needs; it owns one reference to the state. */
struct cuda_hostfn_rec {
    cuda_hostfn_state *st;
    uint32_t value;
};

void cuda_hostfn_unref(cuda_hostfn_state *st)
{
    if (st->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        pthread_cond_destroy(&st->cond);
        pthread_mutex_destroy(&st->lock);
        delete st;
    }
}

void CUDA_CB cuda_hostfn_signal(void *arg)
{
    auto *rec = static_cast<cuda_hostfn_rec *>(arg);
    cuda_hostfn_state *st = rec->st;
    uint32_t value = rec->value;
    delete rec;
    st->reached.store(value, std::memory_order_release);
    cuda_hostfn_unref(st);
}

void CUDA_CB cuda_hostfn_wait(void *arg)
{
    auto *rec = static_cast<cuda_hostfn_rec *>(arg);
    cuda_hostfn_state *st = rec->st;
    uint32_t value = rec->value;
    delete rec;
    pthread_mutex_lock(&st->lock);
    while (!st->closing && !cuda_serial_ge(st->released, value))
        pthread_cond_wait(&st->cond, &st->lock);
    pthread_mutex_unlock(&st->lock);
    cuda_hostfn_unref(st);
}

int cuda_hostfn_append(weft_queue *q, CUhostFn fn, uint32_t value, const char *what)
{
    auto *rec = new (std::nothrow) cuda_hostfn_rec{q->hf, value};
    if (!rec)
        return WEFT_PLUGIN_ERR_NOMEM;
    q->hf->refs.fetch_add(1, std::memory_order_relaxed);
    cuda_ctx_scope scope(q->ctx);
    CUresult r = scope.status;
    if (r == CUDA_SUCCESS)
        r = cuLaunchHostFunc(q->stream, fn, rec);
    if (r != CUDA_SUCCESS) {
        /* Not queued: the queue's own reference keeps the state, this one cannot be last. */
        delete rec;
        q->hf->refs.fetch_sub(1, std::memory_order_relaxed);
        return cuda_call_failed(q, what, r);
    }
    return WEFT_PLUGIN_OK;
}

} // namespace

cuda_hostfn_state *cuda_hostfn_state_create()
{
    auto *st = new (std::nothrow) cuda_hostfn_state;
    if (!st)
        return nullptr;
    st->reached.store(0, std::memory_order_relaxed);
    st->refs.store(1, std::memory_order_relaxed);
    pthread_mutex_init(&st->lock, nullptr);
    pthread_cond_init(&st->cond, nullptr);
    st->released = 0;
    st->closing = 0;
    return st;
}

void cuda_hostfn_state_close(cuda_hostfn_state *st)
{
    pthread_mutex_lock(&st->lock);
    st->closing = 1;
    pthread_cond_broadcast(&st->cond);
    pthread_mutex_unlock(&st->lock);
    cuda_hostfn_unref(st);
}

int cuda_queue_append_signal(weft_queue_t *q, uint32_t value)
{
    if (!q)
        return WEFT_PLUGIN_ERR_INVALID;
    int rc;
    if (q->hf) {
        rc = cuda_hostfn_append(q, cuda_hostfn_signal, value, "cuLaunchHostFunc (signal)");
    } else {
        cuda_ctx_scope scope(q->ctx);
        CUresult r = scope.status;
        if (r == CUDA_SUCCESS)
            r = cuStreamWriteValue32(q->stream, q->reached_dev, value,
                                     CU_STREAM_WRITE_VALUE_DEFAULT);
        rc = r == CUDA_SUCCESS ? WEFT_PLUGIN_OK : cuda_call_failed(q, "cuStreamWriteValue32", r);
    }
    if (rc == WEFT_PLUGIN_OK)
        q->last_was_wait = 0;
    return rc;
}

int cuda_queue_append_wait(weft_queue_t *q, uint32_t value)
{
    if (!q)
        return WEFT_PLUGIN_ERR_INVALID;
    int rc;
    if (q->hf) {
        rc = cuda_hostfn_append(q, cuda_hostfn_wait, value, "cuLaunchHostFunc (wait)");
    } else {
        cuda_ctx_scope scope(q->ctx);
        CUresult r = scope.status;
        if (r == CUDA_SUCCESS)
            r = cuStreamWaitValue32(q->stream, q->released_dev, value, CU_STREAM_WAIT_VALUE_GEQ);
        rc = r == CUDA_SUCCESS ? WEFT_PLUGIN_OK : cuda_call_failed(q, "cuStreamWaitValue32", r);
    }
    if (rc == WEFT_PLUGIN_OK) {
        q->last_was_wait = 1;
        q->last_wait = value;
    }
    return rc;
}

uint32_t cuda_queue_reached(weft_queue_t *q)
{
    if (!q)
        return 0;
    const std::atomic<uint32_t> &word = q->hf ? q->hf->reached : *q->reached_host;
    return word.load(std::memory_order_acquire);
}

int cuda_queue_release(weft_queue_t *q, uint32_t value)
{
    if (!q)
        return WEFT_PLUGIN_ERR_INVALID;
    if (q->hf) {
        /* Held only for short sections by waiting host functions (they sleep unlocked). */
        pthread_mutex_lock(&q->hf->lock);
        if (!cuda_serial_ge(q->hf->released, value)) {
            q->hf->released = value;
            pthread_cond_broadcast(&q->hf->cond);
        }
        pthread_mutex_unlock(&q->hf->lock);
        return WEFT_PLUGIN_OK;
    }
    /* Monotonic in serial order even if releases race; the successful CAS is a full barrier
     * on x86 and a release on others: staging data written before it is visible first. */
    std::atomic<uint32_t> &word = *q->released_host;
    uint32_t cur = word.load(std::memory_order_relaxed);
    while (!cuda_serial_ge(cur, value) &&
           !word.compare_exchange_weak(cur, value, std::memory_order_seq_cst,
                                       std::memory_order_relaxed)) {
    }
    return WEFT_PLUGIN_OK;
}
