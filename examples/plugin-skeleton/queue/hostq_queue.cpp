// hostq queues: creation, the worker thread, enqueueing, synchronization.
#include "hostq_internal.hpp"

#include <chrono>
#include <cstring>
#include <new>
#include <unordered_set>

namespace {

struct hostq_registry {
    std::mutex lock;
    std::unordered_set<const hostq *> live;
};

// Never destroyed: worker threads and atexit handlers may still look queues up at exit.
hostq_registry &registry() {
    static auto *r = new hostq_registry;
    return *r;
}

void hostq_op_run(const hostq_op &op) {
    switch (op.kind) {
        case hostq_op_kind::call: op.fn(op.arg); break;
        case hostq_op_kind::copy:
            if (op.n) memmove(op.dst, op.src, op.n);  // overlap is the caller's bug; stay defined anyway
            break;
        case hostq_op_kind::write32:
            __atomic_store_n(op.addr, op.value, __ATOMIC_RELEASE);
            hostq_mem_event_signal();
            break;
        case hostq_op_kind::wait32: hostq_wait_execute(op.addr, op.value); break;
    }
}

void hostq_worker_main(hostq *q) {
    std::unique_lock<std::mutex> l(q->lock);
    for (;;) {
        q->work_cv.wait(l, [q] { return !q->ops.empty() || q->stopping; });
        if (q->ops.empty()) break;  // stopping, and everything enqueued has run
        hostq_op op = q->ops.front();
        q->ops.pop_front();
        q->busy = true;
        unsigned delay = q->delay_us;
        l.unlock();
        if (delay) std::this_thread::sleep_for(std::chrono::microseconds(delay));
        hostq_op_run(op);
        l.lock();
        q->busy = false;
        q->executed++;
        if (q->ops.empty()) q->idle_cv.notify_all();
    }
}

int hostq_enqueue(hostq_t *q, const hostq_op &op) {
    if (!hostq_registry_contains(q)) return HOSTQ_ERR_INVALID;
    try {
        std::lock_guard<std::mutex> g(q->lock);
        q->ops.push_back(op);
    } catch (const std::bad_alloc &) {
        return HOSTQ_ERR_NOMEM;
    }
    q->work_cv.notify_one();
    return HOSTQ_OK;
}

}  // namespace

bool hostq_registry_contains(const hostq *q) {
    if (!q) return false;
    hostq_registry &r = registry();
    std::lock_guard<std::mutex> g(r.lock);
    return r.live.count(q) != 0;
}

extern "C" {

int hostq_create(hostq_t **out) {
    if (!out) return HOSTQ_ERR_INVALID;
    *out = nullptr;
    auto *q = new (std::nothrow) hostq;
    if (!q) return HOSTQ_ERR_NOMEM;
    try {
        q->worker = std::thread(hostq_worker_main, q);
    } catch (...) {
        delete q;
        return HOSTQ_ERR_NOMEM;
    }
    try {
        hostq_registry &r = registry();
        std::lock_guard<std::mutex> g(r.lock);
        r.live.insert(q);
    } catch (...) {
        {
            std::lock_guard<std::mutex> g(q->lock);
            q->stopping = true;
        }
        q->work_cv.notify_one();
        q->worker.join();
        delete q;
        return HOSTQ_ERR_NOMEM;
    }
    *out = q;
    return HOSTQ_OK;
}

int hostq_destroy(hostq_t *q) {
    {
        hostq_registry &r = registry();
        std::lock_guard<std::mutex> g(r.lock);
        if (!r.live.count(q)) return HOSTQ_ERR_INVALID;
        // Joining itself would hang: refuse, as CUDA refuses stream calls from callbacks.
        if (q->worker.get_id() == std::this_thread::get_id()) return HOSTQ_ERR_DEADLOCK;
        r.live.erase(q);  // from now on new operations are refused
    }
    {
        std::lock_guard<std::mutex> g(q->lock);
        q->stopping = true;
    }
    q->work_cv.notify_one();
    q->worker.join();  // the worker drains what was enqueued before it exits
    delete q;
    return HOSTQ_OK;
}

int hostq_is_valid(const hostq_t *q) { return hostq_registry_contains(q) ? 1 : 0; }

int hostq_synchronize_timeout(hostq_t *q, uint64_t timeout_us) {
    if (!hostq_registry_contains(q)) return HOSTQ_ERR_INVALID;
    if (q->worker.get_id() == std::this_thread::get_id()) return HOSTQ_ERR_DEADLOCK;
    std::unique_lock<std::mutex> l(q->lock);
    auto idle = [q] { return q->ops.empty() && !q->busy; };
    if (timeout_us == UINT64_MAX) {
        q->idle_cv.wait(l, idle);
        return HOSTQ_OK;
    }
    return q->idle_cv.wait_for(l, std::chrono::microseconds(timeout_us), idle) ? HOSTQ_OK : HOSTQ_ERR_TIMEOUT;
}

int hostq_synchronize(hostq_t *q) { return hostq_synchronize_timeout(q, UINT64_MAX); }

int hostq_query(const hostq_t *cq) {
    if (!hostq_registry_contains(cq)) return HOSTQ_ERR_INVALID;
    auto *q = const_cast<hostq_t *>(cq);
    std::lock_guard<std::mutex> g(q->lock);
    return q->ops.empty() && !q->busy ? HOSTQ_OK : HOSTQ_ERR_BUSY;
}

int hostq_launch(hostq_t *q, void (*fn)(void *), void *arg) {
    if (!fn) return HOSTQ_ERR_INVALID;
    return hostq_enqueue(q, {hostq_op_kind::call, fn, arg, nullptr, nullptr, 0, nullptr, 0});
}

int hostq_launch_host_func(hostq_t *q, void (*fn)(void *), void *arg) { return hostq_launch(q, fn, arg); }

int hostq_memcpy_async(hostq_t *q, void *dst, const void *src, size_t n) {
    if (n && (!dst || !src)) return HOSTQ_ERR_INVALID;
    return hostq_enqueue(q, {hostq_op_kind::copy, nullptr, nullptr, dst, src, n, nullptr, 0});
}

int hostq_write_value32(hostq_t *q, volatile uint32_t *addr, uint32_t v) {
    if (!addr) return HOSTQ_ERR_INVALID;
    return hostq_enqueue(q, {hostq_op_kind::write32, nullptr, nullptr, nullptr, nullptr, 0, addr, v});
}

int hostq_wait_value32(hostq_t *q, volatile uint32_t *addr, uint32_t v) {
    if (!addr) return HOSTQ_ERR_INVALID;
    return hostq_enqueue(q, {hostq_op_kind::wait32, nullptr, nullptr, nullptr, nullptr, 0, addr, v});
}

int hostq_notify(hostq_t *q) {
    if (!hostq_registry_contains(q)) return HOSTQ_ERR_INVALID;
    hostq_mem_event_signal();
    return HOSTQ_OK;
}

uint64_t hostq_ops_executed(const hostq_t *cq) {
    if (!hostq_registry_contains(cq)) return 0;
    auto *q = const_cast<hostq_t *>(cq);
    std::lock_guard<std::mutex> g(q->lock);
    return q->executed;
}

int hostq_set_delay_us(hostq_t *q, unsigned us) {
    if (!hostq_registry_contains(q)) return HOSTQ_ERR_INVALID;
    std::lock_guard<std::mutex> g(q->lock);
    q->delay_us = us;
    return HOSTQ_OK;
}

}  // extern "C"
