// The hostq queue plugin (libweft-queue-hostq.so, tests only): shared structures of its files.
#pragma once

#include "hostq.h"
#include <weft/plugin.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#define HOSTQ_PLUGIN_NAME "hostq"

struct weft_queue_runtime {
    const weft_plugin_host_t *host;  // valid until finalize
    // queue_create's queues (ABI minor 3), so that queue_destroy never destroys a queue it
    // did not make (a user's, or a stale handle).
    std::mutex created_lock;
    std::vector<hostq_t *> created;
};

struct weft_queue {
    weft_queue_runtime_t *rt;
    hostq_t *hq;  // the user's queue: never destroyed here
    int sync;     // WEFT_QUEUE_SYNC_*
    // Serial numbers, accessed only with __atomic builtins: reached_word is written by the
    // queue (write_value32 or a host callback), released_word by release() on the host.
    alignas(64) uint32_t reached_word = 0;
    alignas(64) uint32_t released_word = 0;
    // hostfn mode: wait callbacks sleep on cv until released_word reaches their value.
    std::mutex lock;
    std::condition_variable cv;
    // Diagnostics for detach: the last signal appended (only the appending thread writes).
    std::atomic<uint32_t> last_signal{0};
    std::atomic<bool> signalled{false};
};

// (int32_t)(a - b) >= 0: serial-number order, safe across wraparound.
inline bool hostq_plugin_serial_geq(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) >= 0; }

int hostq_plugin_rc(int hostq_rc);  // HOSTQ_* -> WEFT_PLUGIN_*
// Messages go through plugin.h's weft_plugin_logf(rt->host, level, HOSTQ_PLUGIN_NAME, ...).

// hostq_plugin_sync.cpp: the points and copies.
int hostq_plugin_append_signal(weft_queue_t *q, uint32_t value);
int hostq_plugin_append_wait(weft_queue_t *q, uint32_t value);
int hostq_plugin_append_copy(weft_queue_t *q, void *dst, const void *src, size_t bytes);
uint32_t hostq_plugin_reached(weft_queue_t *q);
int hostq_plugin_release(weft_queue_t *q, uint32_t value);
