#include "context.hpp"

#include <sched.h>

#include "options.hpp"
#include "report.hpp"

namespace soak {

weft_comm g_mc = WEFT_COMM_NULL;
std::chrono::steady_clock::time_point g_start;
proc_barrier g_pbar;

void progress(thread_ctx &T) {
    int rc = weft_stream_progress(T.s);
    if (rc) fail("weft_stream_progress returned %s", weft_err(rc).c_str());
}

void spin_until(thread_ctx &T, const std::function<bool()> &done) {
    for (unsigned spins = 0; !done(); ++spins) {
        int rc = weft_pgas_progress(T.ks.k);
        if (rc) fail("weft_pgas_progress returned %s", weft_err(rc).c_str());
        if (spins > 64) sched_yield();
    }
}

bool proc_barrier::arrive(thread_ctx &T, bool flag) {
    uint64_t my;
    {
        std::lock_guard<std::mutex> g(mu);
        my = gen.load();
        acc = acc || flag;
        if (++arrived == g_threads) {
            result[my & 1] = acc;
            acc = false;
            arrived = 0;
            gen.store(my + 1, std::memory_order_release);
        }
    }
    spin_until(T, [&] { return gen.load(std::memory_order_acquire) != my; });
    std::lock_guard<std::mutex> g(mu);
    return result[my & 1];
}

}  // namespace soak
