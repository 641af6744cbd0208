/* hostq: a TEST-ONLY "vendor runtime" whose queues are serial queues run by a CPU thread.
 *
 * It stands in for a GPU runtime (CUDA streams, HIP streams, ...) so that Weft's enqueue engine
 * can be tested on machines without a GPU.  Each queue has a worker thread that runs the
 * enqueued operations one after the other, in order, and sleeps when there is nothing to run.
 * "Device" and "pinned" memory are ordinary memory recorded in an address registry, so that
 * pointer queries can report them and the engine's staging paths are exercised.
 *
 * Plain C; usable from C and C++.  Functions return HOSTQ_OK (0) or a negative HOSTQ_ERR_*. */
#ifndef HOSTQ_H
#define HOSTQ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HOSTQ_API __attribute__((visibility("default")))

enum {
    HOSTQ_OK = 0,
    HOSTQ_ERR_INVALID = -1, /* not a live queue, NULL argument, unknown pointer */
    HOSTQ_ERR_NOMEM = -2,
    HOSTQ_ERR_BUSY = -3,    /* hostq_query: operations are still pending */
    HOSTQ_ERR_TIMEOUT = -4, /* hostq_synchronize_timeout: not idle in time */
    HOSTQ_ERR_DEADLOCK = -5 /* synchronize/destroy called from the queue's own worker */
};

enum { HOSTQ_PTR_HOST = 0, HOSTQ_PTR_PINNED = 1, HOSTQ_PTR_DEVICE = 2 };

typedef struct hostq hostq_t; /* a serial queue run by its own thread */

/* Queues. */
HOSTQ_API int hostq_create(hostq_t **q);        /* starts the worker thread */
HOSTQ_API int hostq_destroy(hostq_t *q);        /* waits until everything enqueued has run */
HOSTQ_API int hostq_is_valid(const hostq_t *q); /* 1 for a live queue; never dereferences q */
HOSTQ_API int hostq_synchronize(hostq_t *q);    /* blocks until the queue is empty and idle */
/* As hostq_synchronize, but gives up after timeout_us with HOSTQ_ERR_TIMEOUT. */
HOSTQ_API int hostq_synchronize_timeout(hostq_t *q, uint64_t timeout_us);
HOSTQ_API int hostq_query(const hostq_t *q); /* HOSTQ_OK when idle, else HOSTQ_ERR_BUSY */

/* Operations, run in the order they were enqueued. */
HOSTQ_API int hostq_launch(hostq_t *q, void (*fn)(void *), void *arg); /* a "kernel" */
HOSTQ_API int hostq_launch_host_func(hostq_t *q, void (*fn)(void *), void *arg);
HOSTQ_API int hostq_memcpy_async(hostq_t *q, void *dst, const void *src, size_t n);
/* Atomically stores v (release order) into *addr, like cuStreamWriteValue32. */
HOSTQ_API int hostq_write_value32(hostq_t *q, volatile uint32_t *addr, uint32_t v);
/* Blocks the queue until (int32_t)(*addr - v) >= 0 (serial compare, like
 * CU_STREAM_WAIT_VALUE_GEQ on wrapping counters).  The word is polled with a backoff of up to
 * 200 us; hostq_notify, and every hostq_write_value32 executed, make waits re-check at once. */
HOSTQ_API int hostq_wait_value32(hostq_t *q, volatile uint32_t *addr, uint32_t v);
/* Wakes the pending waits (of every queue: memory is shared) to re-check their word now. */
HOSTQ_API int hostq_notify(hostq_t *q);

/* Memory.  The free functions return HOSTQ_ERR_INVALID (and free nothing) when p is not the
 * start of a live allocation of that kind; NULL is accepted and ignored. */
HOSTQ_API void *hostq_malloc_device(size_t n);
HOSTQ_API int hostq_free_device(void *p);
HOSTQ_API void *hostq_malloc_host(size_t n); /* "pinned" host memory */
HOSTQ_API int hostq_free_host(void *p);
/* HOSTQ_PTR_*: which allocation p points into (any byte of it); HOSTQ_PTR_HOST otherwise. */
HOSTQ_API int hostq_pointer_kind(const void *p);

/* For tests. */
HOSTQ_API uint64_t hostq_ops_executed(const hostq_t *q); /* 0 for a queue that is not live */
/* Fault injection: each operation run from now on first sleeps us microseconds. */
HOSTQ_API int hostq_set_delay_us(hostq_t *q, unsigned us);

#ifdef __cplusplus
}
#endif
#endif /* HOSTQ_H */
