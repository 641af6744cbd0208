// The enqueue progress thread: one thread serves every GPU queue.  It polls each queue's
// reached point, starts the operations the queue has reached, completes them, and releases the
// queue's waits in order.  It never calls into a runtime in a way that can block: appends and
// frees of pinned memory happen on user threads.
#include "enqueue/enqueue.hpp"
#include "base/finalize_hooks.hpp"

#include <sched.h>
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <thread>

#include "comm/comm.hpp"
#include "base/error.hpp"
#include "comm/stream.hpp"

namespace weft {
namespace {

struct engine {
    std::mutex mutex;  // queues, stop, work, and the thread's sleep
    std::condition_variable wake;
    std::vector<gpu_queue *> queues;
    std::thread thread;
    bool stop = false;
    bool work = false;  // set by enqueue_notify
};

// Never destroyed: a program that exits without weft_finalize must not meet a joinable thread
// in a static destructor (std::terminate).
engine &eng() {
    static engine *e = new engine;
    return *e;
}

int start_host_op(enqueue_op &op) {
    // Errors go to the operation's status, not to the program's error handlers.
    errhandler_internal_scope inner;
    switch (op.what) {
        case enqueue_op::kind::send: return weft_isend(op.sbuf, op.count, op.type, op.peer, op.tag, op.comm, &op.req);
        case enqueue_op::kind::recv: return weft_irecv(op.rbuf, op.count, op.type, op.peer, op.tag, op.comm, &op.req);
        case enqueue_op::kind::allreduce:
            return weft_iallreduce(op.sbuf, op.rbuf, op.count, op.type, op.op, op.comm, &op.req);
        case enqueue_op::kind::bcast: return weft_ibcast(op.rbuf, op.count, op.type, op.peer, op.comm, &op.req);
        case enqueue_op::kind::barrier: return weft_ibarrier(op.comm, &op.req);
        case enqueue_op::kind::allgather:
            return weft_iallgather(op.sbuf, op.count, op.type, op.rbuf, op.rcount, op.rtype, op.comm, &op.req);
        case enqueue_op::kind::wait: return WEFT_SUCCESS;
    }
    return WEFT_ERR_INTERNAL;
}

void complete(enqueue_op &op, int error, const weft_status *st) {
    op.completed = true;
    if (st != nullptr) op.result = *st;
    if (error != WEFT_SUCCESS) {
        op.result.error = error;
        log(WEFT_LOG_WARN, "an enqueued operation failed: %s", current_error_detail().c_str());
    }
    if (op.status != WEFT_STATUS_IGNORE) *op.status = op.result;
}

// Nothing left for the queue or the thread to do about op.
bool retirable(const enqueue_op &op, uint32_t reached) {
    return !op.keep && op.completed && (op.release == 0 || op.released) &&
        (op.done == 0 || point_reached(reached, op.done));
}

// One pass over a queue (caller holds q.mutex).  Returns true when something moved.
bool service(gpu_queue &q) {
    bool moved = false;
    uint32_t reached = q.ops->reached(q.q);
    for (auto &p : q.ops_list) {
        enqueue_op &op = *p;
        if (op.completed) continue;
        if (op.what == enqueue_op::kind::wait) {
            if (!std::all_of(op.deps.begin(), op.deps.end(), [](auto &d) { return d->completed; })) continue;
            int first_error = WEFT_SUCCESS;
            for (size_t i = 0; i < op.deps.size(); ++i) {
                if (op.statuses != WEFT_STATUSES_IGNORE) op.statuses[i] = op.deps[i]->result;
                if (first_error == WEFT_SUCCESS) first_error = op.deps[i]->result.error;
            }
            op.completed = true;
            op.result.error = first_error;
            moved = true;
            continue;
        }
        if (!op.started) {
            if (!point_reached(reached, op.start)) break;  // later ops start later still
            op.started = true;
            moved = true;
            weft_status empty{};
            int rc = start_host_op(op);
            log(WEFT_LOG_DEBUG, "enqueue: %s queue reached point %u: started operation %d (code %d)", q.type.c_str(),
                op.start, static_cast<int>(op.what), rc);
            if (rc != WEFT_SUCCESS) {
                complete(op, rc, &empty);
                continue;
            }
        }
        int flag = 0;
        weft_status st{};
        int rc;
        {
            errhandler_internal_scope inner;  // as in start_host_op
            rc = weft_test(&op.req, &flag, &st);
        }
        if (rc == WEFT_ERR_IN_STATUS) rc = st.error;
        if (flag || rc != WEFT_SUCCESS) {
            complete(op, rc, &st);
            moved = true;
        }
    }
    // Releases in queue order: a release lets every earlier wait go too.
    uint32_t release = 0;
    for (auto &p : q.ops_list) {
        if (p->release == 0 || p->released) continue;
        if (!p->completed) break;
        p->released = true;
        release = p->release;
    }
    if (release != 0) {
        log(WEFT_LOG_DEBUG, "enqueue: %s queue released up to point %u", q.type.c_str(), release);
        q.ops->release(q.q, release);
        moved = true;
    }
    // Retire what needs nothing more from the queue.  (Their staging goes back to the queue's
    // pool: no runtime call here.)
    reached = q.ops->reached(q.q);
    size_t before = q.ops_list.size();
    std::erase_if(q.ops_list, [&](auto &p) { return retirable(*p, reached); });
    return moved || q.ops_list.size() != before;
}

// Operations that still need the thread (kept ones only wait for the detach).
bool has_work(const gpu_queue &q) {
    return std::any_of(q.ops_list.begin(), q.ops_list.end(), [](auto &p) { return !p->keep; });
}

void progress_loop() {
    engine &e = eng();
    // Naps are the thread's idle state: without this, Linux's default 50 us timer slack makes
    // a 5 us nap last 60 us.
    prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    const auto spin = std::chrono::microseconds(g_enqueue_spin_us);
    auto last_moved = std::chrono::steady_clock::now();
    unsigned naps = 0;
    std::unique_lock lock(e.mutex);
    while (!e.stop) {
        e.work = false;
        bool busy = false, moved = false;
        for (gpu_queue *q : e.queues) {
            std::lock_guard ql(q->mutex);
            moved |= service(*q);
            busy |= has_work(*q);
        }
        if (moved) {
            last_moved = std::chrono::steady_clock::now();
            naps = 0;
            continue;
        }
        if (!busy) {
            // Nothing registered: sleep until an enqueue call or finalize wakes us.
            e.wake.wait(lock, [&] { return e.stop || e.work; });
            last_moved = std::chrono::steady_clock::now();
            naps = 0;
            continue;
        }
        // Operations wait for their queue or the network.  A GPU writes host memory without
        // telling anyone, so there is nothing to sleep on: poll, yielding, for the spin window
        // after the last movement (a pipeline's next point or a peer's answer usually comes
        // within it: one 8-byte round trip hands off four times), then in naps that grow to
        // 50 us, so that an idle wait costs little CPU.
        lock.unlock();
        if (std::chrono::steady_clock::now() - last_moved < spin) {
            sched_yield();
        } else {
            ++naps;
            std::this_thread::sleep_for(std::chrono::microseconds(std::min(50u, naps * 5)));
        }
        lock.lock();
    }
}

// Waits (bounded) until the queue has passed every point appended to it, so that detach frees
// nothing it still reads.  A trailing wait gets a signal after it to be seen passing.  Takes
// neither the engine's lock nor the list's while it waits.
bool queue_drained(gpu_queue &q, std::chrono::steady_clock::time_point deadline) {
    uint32_t target;
    {
        std::lock_guard al(q.append_mutex);
        if (q.last_point == 0) return true;
        if (!q.last_is_signal) {
            uint32_t p = q.next_point;
            if (q.ops->append_signal(q.q, p) != WEFT_PLUGIN_OK) return false;
            q.next_point = p + 1 == 0 ? 1 : p + 1;
            q.last_point = p;
            q.last_is_signal = true;
        }
        target = q.last_point;
    }
    while (!point_reached(q.ops->reached(q.q), target)) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return true;
}

}  // namespace

unsigned g_enqueue_spin_us = 1000;

enqueue_op::~enqueue_op() {
    if (counted != nullptr) counted->enqueued.n.fetch_sub(1);
    if (queue != nullptr && !queue->leaked)
        for (auto &[p, bytes] : staging) queue->staging_give(p, bytes);
}

// A program that exits without weft_finalize: stop the thread before static destructors tear
// down the streams it serves.  (Registered after the stream table was built, so it runs first.)
void stop_at_exit() {
    engine &e = eng();
    {
        std::lock_guard lock(e.mutex);
        e.stop = true;
    }
    e.wake.notify_one();
    if (e.thread.joinable()) e.thread.join();
}

void enqueue_install() {
    g_stream_queue_hooks.attach = enqueue_register;
    g_stream_queue_hooks.detach = enqueue_unregister;
    g_stream_queue_hooks.retire = enqueue_flush;
    finalize_hook_add(enqueue_finalize, finalize_prio_enqueue);
}

int enqueue_register(stream &s) {
    engine &e = eng();
    static const bool at_exit = std::atexit(stop_at_exit) == 0;
    (void)at_exit;
    std::lock_guard lock(e.mutex);
    if (!e.thread.joinable()) {
        e.stop = false;
        try {
            e.thread = std::thread(progress_loop);
        } catch (const std::system_error &x) {
            return fail(WEFT_ERR_NO_MEM, "weft_stream_create: cannot start the enqueue progress thread: %s", x.what());
        }
    }
    e.queues.push_back(s.queue.get());
    return WEFT_SUCCESS;
}

void enqueue_flush() {
    engine &e = eng();
    std::lock_guard lock(e.mutex);
    for (gpu_queue *q : e.queues) {
        std::lock_guard ql(q->mutex);
        service(*q);
    }
}

int enqueue_unregister(stream &s) {
    engine &e = eng();
    gpu_queue &q = *s.queue;
    {
        std::lock_guard lock(e.mutex);
        std::lock_guard ql(q.mutex);
        service(q);  // retire what the queue has passed, not only what the thread saw
        if (has_work(q))
            return fail(WEFT_ERR_BUSY,
                        "weft_stream_free: enqueued operations on the stream's GPU queue have not "
                        "finished; synchronize the queue first");
    }
    // Without the engine's lock: the thread goes on serving the other queues meanwhile.
    if (!queue_drained(q, std::chrono::steady_clock::now() + std::chrono::seconds(10)))
        return fail(WEFT_ERR_BUSY,
                    "weft_stream_free: the stream's GPU queue has not reached Weft's last point within "
                    "10 s; synchronize the queue first");
    std::lock_guard lock(e.mutex);
    {
        std::lock_guard ql(q.mutex);
        q.ops_list.clear();  // kept operations, which the queue has now passed
    }
    std::erase(e.queues, &q);
    return WEFT_SUCCESS;
}

void enqueue_notify() {
    engine &e = eng();
    {
        std::lock_guard lock(e.mutex);
        e.work = true;
    }
    e.wake.notify_one();
}

void enqueue_finalize() {
    engine &e = eng();
    enqueue_requests_clear();
    // Operations still registered finish if their queues get there; a queue that never will
    // (the program did not synchronize it) must not hang finalize.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
        bool left = false;
        {
            std::lock_guard lock(e.mutex);
            for (gpu_queue *q : e.queues) {
                std::lock_guard ql(q->mutex);
                left |= has_work(*q);
            }
        }
        if (!left) break;
        if (std::chrono::steady_clock::now() > deadline) {
            log(WEFT_LOG_WARN, "weft_finalize: enqueued operations that their GPU queues never reached are dropped");
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    {
        std::lock_guard lock(e.mutex);
        e.stop = true;
    }
    e.wake.notify_one();
    if (e.thread.joinable()) e.thread.join();
    // Let every queue past all of Weft's waits, and wait (bounded) until it got there, before
    // anything it reads is freed: the staging of the operations dropped here, then, at detach,
    // the plugin's own memory.  A queue that does not get there keeps both (leaked).
    for (gpu_queue *q : e.queues) {
        uint32_t last;
        {
            std::lock_guard al(q->append_mutex);
            last = q->last_point;
        }
        if (last != 0) q->ops->release(q->q, last);
        bool passed = queue_drained(*q, std::chrono::steady_clock::now() + std::chrono::seconds(5));
        std::lock_guard ql(q->mutex);
        if (!passed) {
            q->leaked = true;
            log(WEFT_LOG_WARN,
                "weft_finalize: a GPU queue (%s) did not reach Weft's last point within 5 s; its "
                "memory is leaked rather than freed while it may still be read",
                q->type.c_str());
        }
        q->ops_list.clear();
    }
    e.queues.clear();
}

}  // namespace weft
