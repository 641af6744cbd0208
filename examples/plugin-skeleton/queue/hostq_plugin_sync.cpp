// hostq plugin: signals, waits and copies appended to a queue, and the host's reached/release.
// memops mode uses hostq_write_value32/hostq_wait_value32 on two words of the queue; hostfn
// mode runs host callbacks on the queue's worker instead.
#include "hostq_plugin_internal.hpp"

#include <new>

namespace {

struct hostq_plugin_point {
    weft_queue_t *q;
    uint32_t value;
};

void hostq_plugin_signal_cb(void *arg) {
    auto *p = static_cast<hostq_plugin_point *>(arg);
    weft_queue_t *q = p->q;
    uint32_t value = p->value;
    delete p;
    __atomic_store_n(&q->reached_word, value, __ATOMIC_RELEASE);
}

void hostq_plugin_wait_cb(void *arg) {
    auto *p = static_cast<hostq_plugin_point *>(arg);
    weft_queue_t *q = p->q;
    uint32_t value = p->value;
    delete p;
    std::unique_lock<std::mutex> l(q->lock);
    q->cv.wait(l, [&] { return hostq_plugin_serial_geq(__atomic_load_n(&q->released_word, __ATOMIC_ACQUIRE), value); });
}

int hostq_plugin_append_cb(weft_queue_t *q, void (*fn)(void *), uint32_t value) {
    auto *p = new (std::nothrow) hostq_plugin_point{q, value};
    if (!p) return WEFT_PLUGIN_ERR_NOMEM;
    int rc = hostq_launch_host_func(q->hq, fn, p);
    if (rc != HOSTQ_OK) delete p;
    return hostq_plugin_rc(rc);
}

}  // namespace

int hostq_plugin_append_signal(weft_queue_t *q, uint32_t value) {
    if (!q) return WEFT_PLUGIN_ERR_INVALID;
    int rc = q->sync == WEFT_QUEUE_SYNC_MEMOPS ? hostq_plugin_rc(hostq_write_value32(q->hq, &q->reached_word, value))
                                               : hostq_plugin_append_cb(q, hostq_plugin_signal_cb, value);
    if (rc == WEFT_PLUGIN_OK) {
        q->last_signal.store(value, std::memory_order_relaxed);
        q->signalled.store(true, std::memory_order_relaxed);
    }
    return rc;
}

int hostq_plugin_append_wait(weft_queue_t *q, uint32_t value) {
    if (!q) return WEFT_PLUGIN_ERR_INVALID;
    if (q->sync == WEFT_QUEUE_SYNC_MEMOPS) return hostq_plugin_rc(hostq_wait_value32(q->hq, &q->released_word, value));
    return hostq_plugin_append_cb(q, hostq_plugin_wait_cb, value);
}

int hostq_plugin_append_copy(weft_queue_t *q, void *dst, const void *src, size_t bytes) {
    if (!q) return WEFT_PLUGIN_ERR_INVALID;
    return hostq_plugin_rc(hostq_memcpy_async(q->hq, dst, src, bytes));
}

uint32_t hostq_plugin_reached(weft_queue_t *q) { return q ? __atomic_load_n(&q->reached_word, __ATOMIC_ACQUIRE) : 0; }

int hostq_plugin_release(weft_queue_t *q, uint32_t value) {
    if (!q) return WEFT_PLUGIN_ERR_INVALID;
    // Monotonic in serial order: a late, smaller release never takes a point back.
    uint32_t cur = __atomic_load_n(&q->released_word, __ATOMIC_RELAXED);
    while (static_cast<int32_t>(value - cur) > 0 &&
           !__atomic_compare_exchange_n(&q->released_word, &cur, value, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {}
    if (q->sync == WEFT_QUEUE_SYNC_MEMOPS) {
        hostq_notify(q->hq);  // the wait re-checks now instead of at its next poll
    } else {
        // Taking the lock orders this notification after a waiter's check (no lost wakeup);
        // it is held only for that check, so this does not block.
        { std::lock_guard<std::mutex> g(q->lock); }
        q->cv.notify_all();
    }
    return WEFT_PLUGIN_OK;
}
