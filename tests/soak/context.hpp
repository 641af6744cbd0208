// A thread's objects (its stream, stream communicator sc_t, conventional dup cc_t, PGAS kernel
// and counters), the multiplex communicator mc, and waiting: every wait progresses the thread's
// own stream, which also runs its kernel's handlers.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>

#include "pgas.hpp"
#include "stats.hpp"
#include "weft/weft.h"

namespace soak {

struct thread_ctx {
    int t = 0;
    weft_stream s = WEFT_STREAM_NULL;
    weft_comm sc = WEFT_COMM_NULL, cc = WEFT_COMM_NULL;
    kernel_state ks;
    stats st;
    uint64_t exp_handled = 0;  // user-handler requests sent to this kernel in the rounds so far
    uint64_t exp_counter = 0;  // counter increments not yet waited for
    uint32_t final_round = 0;
    double seconds = 0;
};
extern weft_comm g_mc;
extern std::chrono::steady_clock::time_point g_start;

// One weft_stream_progress on the thread's stream.
void progress(thread_ctx &T);
// Progresses the thread's kernel until done().
void spin_until(thread_ctx &T, const std::function<bool()> &done);

// The threads of one process meet here (each progressing its own stream meanwhile) and combine
// a flag.
struct proc_barrier {
    std::mutex mu;
    int arrived = 0;
    bool acc = false;
    bool result[2] = {false, false};
    std::atomic<uint64_t> gen{0};
    bool arrive(thread_ctx &T, bool flag);
};
extern proc_barrier g_pbar;

}  // namespace soak
