/* SYCL / Level Zero queue plugin: points as host-visible events (Level Zero has no stream
 * memory operations).  A signal is a barrier that signals an event, reached() polls those in
 * order; a wait is a barrier on an event that release() signals from the host.  Events are
 * reset and reused once the queue has passed them. */
#include "sycl_internal.hpp"

#include <algorithm>

namespace {

/* (int32_t)(a - b) >= 0: a is b or later (point numbers wrap). */
inline bool sycl_serial_ge(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }

/* The watermark of release() only covers waits appended within this distance after it, so a
 * release older than 2^31 points cannot pass for a newer one. */
constexpr uint32_t SYCL_RELEASE_WINDOW = 1u << 30;

/* Takes a free event, growing the pools when there is none. */
ze_result_t sycl_event_take(weft_queue_t *q, ze_event_handle_t *ev)
{
    for (;;) {
        {
            std::lock_guard<std::mutex> g(q->lock);
            if (!q->events_free.empty()) {
                *ev = q->events_free.back();
                q->events_free.pop_back();
                return ZE_RESULT_SUCCESS;
            }
        }
        ze_result_t r = sycl_events_grow(q);
        if (r != ZE_RESULT_SUCCESS) return r;
    }
}

/* Caller holds q->lock.  Capacity for every event is reserved, so this cannot throw. */
void sycl_event_put_locked(weft_queue_t *q, ze_event_handle_t ev) { q->events_free.push_back(ev); }

/* Caller holds q->lock: the event was never handed to the device (or the device is done with
 * it); it may be signalled, so reset it before reuse. */
void sycl_event_recycle_locked(weft_queue_t *q, ze_event_handle_t ev)
{
    if (zeEventHostReset(ev) == ZE_RESULT_SUCCESS) sycl_event_put_locked(q, ev);
    /* else: left out of the free list; destroyed at detach with the rest */
}

/* Removes the point carrying ev from v (unordered); true when found. */
bool sycl_points_remove(std::vector<sycl_point> &v, ze_event_handle_t ev)
{
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i].event != ev) continue;
        v[i] = v.back();
        v.pop_back();
        return true;
    }
    return false;
}

/* Caller holds q->lock: forget a release watermark that new points have left far behind. */
void sycl_release_window_locked(weft_queue_t *q, uint32_t value)
{
    if (q->released_valid && value - q->released_value >= SYCL_RELEASE_WINDOW)
        q->released_valid = false;
}

int sycl_append_failed(weft_queue_t *q, const char *what, uint32_t value, ze_result_t r)
{
    int rc = sycl_result_to_plugin(r);
    if (rc != WEFT_PLUGIN_ERR_AGAIN)
        sycl_log(q->rt, WEFT_LOG_ERROR, "%s %u: %s (0x%x)", what, (unsigned)value,
                 sycl_result_name(r), (unsigned)r);
    return rc;
}

} // namespace

ze_result_t sycl_events_grow(weft_queue_t *q)
{
    if (q->pools.size() >= SYCL_POOLS_MAX) return ZE_RESULT_NOT_READY;
    try {
        q->pools.reserve(q->pools.size() + 1);
        q->events_all.reserve(q->events_all.size() + SYCL_POOL_EVENTS);
        /* Every event can be on any one list at once: pushes under the lock never allocate. */
        std::lock_guard<std::mutex> g(q->lock);
        size_t total = q->events_all.size() + SYCL_POOL_EVENTS;
        q->events_free.reserve(total);
        q->waits.reserve(total);
        q->waits_released.reserve(total);
    } catch (...) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    ze_event_pool_desc_t pd{};
    pd.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
    pd.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
    pd.count = SYCL_POOL_EVENTS;
    ze_event_pool_handle_t pool = nullptr;
    /* No device list: the events are usable by every device of the context (an immediate
     * list's device is unknown under Level Zero 1.4). */
    ze_result_t r = zeEventPoolCreate(q->context, &pd, 0, nullptr, &pool);
    if (r != ZE_RESULT_SUCCESS) return r;
    ze_event_handle_t events[SYCL_POOL_EVENTS];
    for (uint32_t i = 0; i < SYCL_POOL_EVENTS; ++i) {
        ze_event_desc_t ed{};
        ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
        ed.index = i;
        /* Host scope both ways: copies before a signal are visible to the host when it sees
         * the event, host writes before a release are visible to the device after the wait. */
        ed.signal = ZE_EVENT_SCOPE_FLAG_HOST;
        ed.wait = ZE_EVENT_SCOPE_FLAG_HOST;
        r = zeEventCreate(pool, &ed, &events[i]);
        if (r != ZE_RESULT_SUCCESS) {
            while (i > 0) zeEventDestroy(events[--i]);
            zeEventPoolDestroy(pool);
            return r;
        }
    }
    q->pools.push_back(pool);
    q->events_all.insert(q->events_all.end(), events, events + SYCL_POOL_EVENTS);
    std::lock_guard<std::mutex> g(q->lock);
    for (ze_event_handle_t ev : events) sycl_event_put_locked(q, ev);
    return ZE_RESULT_SUCCESS;
}

void sycl_events_destroy(weft_queue_t *q)
{
    for (ze_event_handle_t ev : q->events_all) zeEventDestroy(ev);
    for (ze_event_pool_handle_t p : q->pools) zeEventPoolDestroy(p);
    q->events_all.clear();
    q->pools.clear();
}

int sycl_queue_append_signal(weft_queue_t *q, uint32_t value)
{
    if (!q) return WEFT_PLUGIN_ERR_INVALID;
    ze_event_handle_t ev = nullptr;
    ze_result_t r = sycl_event_take(q, &ev);
    if (r != ZE_RESULT_SUCCESS) return sycl_append_failed(q, "append_signal", value, r);
    /* Listed before it is appended: reached() sees it unsignalled until the queue gets there,
     * and a failed append can take it back (nobody else removes an unsignalled point). */
    {
        std::lock_guard<std::mutex> g(q->lock);
        sycl_release_window_locked(q, value);
        try {
            q->signals.push_back(sycl_point{value, ev});
        } catch (...) {
            sycl_event_put_locked(q, ev);
            return WEFT_PLUGIN_ERR_NOMEM;
        }
    }
    r = sycl_submit(q, sycl_command{sycl_command::SIGNAL, ev, nullptr, nullptr, 0});
    if (r != ZE_RESULT_SUCCESS) {
        std::lock_guard<std::mutex> g(q->lock);
        q->signals.pop_back();  // still the last one: only this thread appends
        sycl_event_put_locked(q, ev);
        return sycl_append_failed(q, "append_signal", value, r);
    }
    return WEFT_PLUGIN_OK;
}

int sycl_queue_append_wait(weft_queue_t *q, uint32_t value)
{
    if (!q) return WEFT_PLUGIN_ERR_INVALID;
    {
        /* Released already (release() may run before the wait is appended): nothing to wait
         * for. */
        std::lock_guard<std::mutex> g(q->lock);
        sycl_release_window_locked(q, value);
        if (q->released_valid && sycl_serial_ge(q->released_value, value)) return WEFT_PLUGIN_OK;
    }
    ze_event_handle_t ev = nullptr;
    ze_result_t r = sycl_event_take(q, &ev);
    if (r != ZE_RESULT_SUCCESS) return sycl_append_failed(q, "append_wait", value, r);
    {
        std::lock_guard<std::mutex> g(q->lock);
        if (q->released_valid && sycl_serial_ge(q->released_value, value)) {
            sycl_event_put_locked(q, ev);  // released while the event was taken
            return WEFT_PLUGIN_OK;
        }
        /* Listed before it is appended, so a release() from now on signals it (the barrier
         * then passes at once). */
        q->waits.push_back(sycl_point{value, ev});
    }
    r = sycl_submit(q, sycl_command{sycl_command::WAIT, ev, nullptr, nullptr, 0});
    if (r != ZE_RESULT_SUCCESS) {
        std::lock_guard<std::mutex> g(q->lock);
        if (sycl_points_remove(q->waits, ev) || sycl_points_remove(q->waits_released, ev))
            sycl_event_recycle_locked(q, ev);  // the device never saw it
        return sycl_append_failed(q, "append_wait", value, r);
    }
    return WEFT_PLUGIN_OK;
}

uint32_t sycl_queue_reached(weft_queue_t *q)
{
    if (!q) return 0;
    std::lock_guard<std::mutex> g(q->lock);
    /* Signals execute in order: stop at the first one not signalled. */
    while (!q->signals.empty()) {
        sycl_point p = q->signals.front();
        ze_result_t r = zeEventQueryStatus(p.event);
        if (r == ZE_RESULT_NOT_READY) break;
        if (r != ZE_RESULT_SUCCESS) {
            if (!q->failed_logged)
                sycl_log(q->rt, WEFT_LOG_ERROR, "reached: zeEventQueryStatus of point %u: %s "
                         "(0x%x); the queue makes no progress", (unsigned)p.value,
                         sycl_result_name(r), (unsigned)r);
            q->failed_logged = true;
            break;
        }
        q->signals.pop_front();
        q->reached_value = p.value;
        sycl_event_recycle_locked(q, p.event);
    }
    /* A released wait older than the reached signal has been passed by the device: its event
     * is free again. */
    for (size_t i = 0; i < q->waits_released.size();) {
        sycl_point p = q->waits_released[i];
        if ((int32_t)(q->reached_value - p.value) > 0) {
            q->waits_released[i] = q->waits_released.back();
            q->waits_released.pop_back();
            sycl_event_recycle_locked(q, p.event);
        } else {
            ++i;
        }
    }
    return q->reached_value;
}

int sycl_queue_release(weft_queue_t *q, uint32_t value)
{
    if (!q) return WEFT_PLUGIN_ERR_INVALID;
    std::lock_guard<std::mutex> g(q->lock);
    if (!q->released_valid || sycl_serial_ge(value, q->released_value)) {
        q->released_value = value;
        q->released_valid = true;
    }
    int rc = WEFT_PLUGIN_OK;
    for (size_t i = 0; i < q->waits.size();) {
        sycl_point p = q->waits[i];
        if (!sycl_serial_ge(value, p.value)) {
            ++i;
            continue;
        }
        ze_result_t r = zeEventHostSignal(p.event);
        if (r != ZE_RESULT_SUCCESS) {
            sycl_log(q->rt, WEFT_LOG_ERROR, "release %u: zeEventHostSignal: %s (0x%x)",
                     (unsigned)p.value, sycl_result_name(r), (unsigned)r);
            rc = sycl_result_to_plugin(r);
            ++i;
            continue;
        }
        q->waits[i] = q->waits.back();
        q->waits.pop_back();
        q->waits_released.push_back(p);  // capacity reserved: never allocates
    }
    return rc == WEFT_PLUGIN_ERR_AGAIN ? WEFT_PLUGIN_ERR_OTHER : rc;
}
