// hostq_wait_value32 on the worker: poll the word without spinning hot, woken early by
// hostq_notify and by every executed hostq_write_value32.
#include "hostq_internal.hpp"

#include <algorithm>
#include <chrono>
#include <sched.h>

namespace {

struct hostq_mem_event {
    std::mutex lock;
    std::condition_variable cv;
    uint64_t seq = 0;  // bumped on every notification
};

hostq_mem_event &mem_event() {
    static auto *e = new hostq_mem_event;  // never destroyed: workers may outlive statics
    return *e;
}

bool hostq_word_reached(volatile uint32_t *addr, uint32_t value) {
    return static_cast<int32_t>(__atomic_load_n(addr, __ATOMIC_ACQUIRE) - value) >= 0;
}

}  // namespace

void hostq_mem_event_signal() {
    hostq_mem_event &e = mem_event();
    {
        std::lock_guard<std::mutex> g(e.lock);
        e.seq++;
    }
    e.cv.notify_all();
}

void hostq_wait_execute(volatile uint32_t *addr, uint32_t value) {
    // A release that is already due costs no sleep.
    for (int i = 0; i < 16; i++) {
        if (hostq_word_reached(addr, value)) return;
        sched_yield();
    }
    // Then sleep with a backoff (20 us up to 200 us) so that a word written without a
    // notification (another thread storing to it directly) is still seen soon.  Reading
    // seq and the word under the lock means a notification that follows a store is never lost.
    hostq_mem_event &e = mem_event();
    auto backoff = std::chrono::microseconds(20);
    const auto backoff_max = std::chrono::microseconds(200);
    std::unique_lock<std::mutex> l(e.lock);
    for (;;) {
        uint64_t seen = e.seq;
        if (hostq_word_reached(addr, value)) return;
        e.cv.wait_for(l, backoff, [&] { return e.seq != seen; });
        if (backoff < backoff_max) backoff = std::min(backoff * 2, backoff_max);
    }
}
