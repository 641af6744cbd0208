/* Internal structures of the SYCL / Level Zero queue plugin.  Only api/weft/plugin.h and the
 * Level Zero core API (1.4 headers) are visible. */
#ifndef WEFT_SYCL_INTERNAL_HPP
#define WEFT_SYCL_INTERNAL_HPP

#include <weft/plugin.h>

#include <level_zero/ze_api.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#define SYCL_PLUGIN_NAME "sycl"

/* Events come in pools of this many; a queue grows up to SYCL_POOLS_MAX pools, then appends
 * return WEFT_PLUGIN_ERR_AGAIN until reached() recycles some. */
constexpr uint32_t SYCL_POOL_EVENTS = 256;
constexpr size_t SYCL_POOLS_MAX = 64;

struct weft_queue_runtime {
    const weft_plugin_host_t *host;
    /* queue_create (ABI minor 3, conformance tools): a context of the runtime's own on the
     * first GPU device, made at the first call, and the immediate lists made on it (attach
     * takes these without the info key weft_ze_context).  Guarded by created_lock. */
    std::mutex created_lock;
    ze_device_handle_t device = nullptr;
    ze_context_handle_t context = nullptr;
    uint32_t ordinal = 0; /* a compute command queue group of device */
    std::vector<ze_command_list_handle_t> created;
};

/* A point appended to the queue and the event that carries it. */
struct sycl_point {
    uint32_t value;
    ze_event_handle_t event;
};

/* A command list the plugin owns (command-queue mode): one per append call, executed at once,
 * reused once its fence says the queue has finished it. */
struct sycl_own_list {
    ze_command_list_handle_t list;
    ze_fence_handle_t fence;
};

enum sycl_queue_mode {
    SYCL_QUEUE_IMMEDIATE = 1, /* the user's immediate, in-order command list */
    SYCL_QUEUE_REGULAR = 2    /* the user's command queue: the plugin's own lists executed on it */
};

struct weft_queue {
    weft_queue_runtime *rt;
    sycl_queue_mode mode;
    ze_context_handle_t context;
    ze_device_handle_t device;       /* command-queue mode only; nullptr otherwise */
    ze_command_list_handle_t list;   /* immediate mode: the user's list */
    ze_command_queue_handle_t cq;    /* command-queue mode: the user's queue */
    uint32_t ordinal;                /* command-queue mode: the queue's group ordinal */

    /* Touched only by the appending thread (and detach): own lists and event pools. */
    std::vector<sycl_own_list> lists_free;
    std::deque<sycl_own_list> lists_busy;  /* in execution order */
    std::vector<ze_event_pool_handle_t> pools;
    std::vector<ze_event_handle_t> events_all;

    /* Shared by the appending thread and reached()/release() (the progress thread): guarded by
     * lock, held only around non-blocking calls (event query/reset/host-signal). */
    std::mutex lock;
    std::vector<ze_event_handle_t> events_free;
    std::deque<sycl_point> signals;          /* appended signals, in order */
    std::vector<sycl_point> waits;           /* appended waits not yet released */
    std::vector<sycl_point> waits_released;  /* host-signalled; recycled once passed */
    uint32_t reached_value;                /* last signal executed, 0 before the first */
    uint32_t released_value;               /* largest value given to release() */
    bool released_valid;                   /* released_value applies to new waits */
    bool failed_logged;                    /* an event query failed: logged once */
};

/* sycl_plugin.cpp */
const char *sycl_result_name(ze_result_t r);
/* Messages to Weft's log and failure reasons, through plugin.h's helpers. */
#define sycl_log(rt, level, ...) \
    weft_plugin_logf((rt) ? (rt)->host : nullptr, (level), SYCL_PLUGIN_NAME, __VA_ARGS__)
#define sycl_why(why, why_len, ...) \
    static_cast<void>(weft_plugin_whyf((why), (why_len), WEFT_PLUGIN_OK, __VA_ARGS__))
int sycl_result_to_plugin(ze_result_t r);

/* sycl_queue.cpp */
int sycl_queue_attach(weft_queue_runtime_t *rt, const weft_queue_attach_args_t *args,
                      weft_queue_t **q, int *sync_used, char *why, size_t why_len);
int sycl_queue_detach(weft_queue_t *q);
int sycl_queue_create(weft_queue_runtime_t *rt, void *handle, size_t *size);
int sycl_queue_destroy(weft_queue_runtime_t *rt, const void *handle, size_t size);
/* finalize: the runtime's own context, unless lists of queue_create are left. */
void sycl_created_release(weft_queue_runtime_t *rt);
/* One command appended to the queue: a signal barrier, a wait barrier or a copy. */
struct sycl_command {
    enum { SIGNAL, WAIT, COPY } kind;
    ze_event_handle_t event;
    void *dst;
    const void *src;
    size_t bytes;
};
/* Appends cmd to the user's immediate list, or records it in an own list executed at once. */
ze_result_t sycl_submit(weft_queue_t *q, const sycl_command &cmd);

/* sycl_sync.cpp */
/* Adds one event pool (SYCL_POOL_EVENTS events) to q's free events; ZE_RESULT_NOT_READY when q
 * already has SYCL_POOLS_MAX pools.  Appending thread (or attach) only. */
ze_result_t sycl_events_grow(weft_queue_t *q);
int sycl_queue_append_signal(weft_queue_t *q, uint32_t value);
int sycl_queue_append_wait(weft_queue_t *q, uint32_t value);
uint32_t sycl_queue_reached(weft_queue_t *q);
int sycl_queue_release(weft_queue_t *q, uint32_t value);
/* Destroys every event and pool of q (detach: nothing may still use them). */
void sycl_events_destroy(weft_queue_t *q);

/* sycl_mem.cpp */
int sycl_queue_append_copy(weft_queue_t *q, void *dst, const void *src, size_t bytes);
int sycl_queue_mem_kind(weft_queue_t *q, const void *ptr, weft_mem_kind_t *kind);
int sycl_queue_host_alloc(weft_queue_t *q, size_t bytes, void **ptr);
int sycl_queue_host_free(weft_queue_t *q, void *ptr);

#endif /* WEFT_SYCL_INTERNAL_HPP */
