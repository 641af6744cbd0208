// Idle progress threads must sleep, not spin, and must wake up when a message comes.
// 4 processes x 2 threads on a small machine (the test machine has 2 cores): every thread has
// its own stream with a progress thread, i.e. 8 application threads and 8 progress threads.
//  1. While the application threads sleep, each process must use little CPU: spinning progress
//     threads would take whatever share of the cores the scheduler gives them, however loaded
//     the machine is.  This is the check that does not depend on timing.
//  2. Thread t of rank p ping-pongs 8-byte messages with thread t of rank p^1 with progress
//     threads running.  A progress thread that missed the fabric's wake-up would leave round
//     trips at its 100 ms poll timeout: the median must stay below WEFT_TEST_RTT_BOUND_US
//     (default 50 ms).  The medians (a few hundred microseconds here, milliseconds on a loaded
//     machine) are printed next to those without progress threads; comparing them is
//     benchmark work (bench/), not a pass/fail test.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <sys/resource.h>
#include <string>
#include <thread>
#include <vector>

#include "streams_env.hpp"

using namespace streams_test;

namespace {

constexpr int nthreads = 2, warmup = 100, measured = 2000, tag = 1;

class ProgressLatency : public collective_test {
  protected:
    double limit_s() const override { return 90; }
};

struct rtt_result {
    std::vector<double> median_us = std::vector<double>(nthreads, 0), p90_us = std::vector<double>(nthreads, 0);
    std::vector<std::string> errors;
};

// Thread t ping-pongs with thread t of rank^1 on multiplex communicator m (index t both sides).
rtt_result ping_pong(weft_comm m, int tag) {
    const int peer = world_rank() ^ 1;
    rtt_result res;
    std::mutex mu;
    std::vector<std::thread> th;
    for (int t = 0; t < nthreads; ++t)
        th.emplace_back([&, t] {
            auto fail = [&](const std::string &what) {
                std::lock_guard<std::mutex> g(mu);
                res.errors.push_back("rank " + std::to_string(world_rank()) + " thread " + std::to_string(t) + ": " +
                                     what);
            };
            std::vector<double> rtt;
            rtt.reserve(measured);
            uint64_t out = 0, in = 0;
            for (int i = 0; i < warmup + measured; ++i) {
                out = (uint64_t(world_rank()) << 48) | (uint64_t(t) << 40) | uint64_t(i);
                const uint64_t want = (uint64_t(peer) << 48) | (uint64_t(t) << 40) | uint64_t(i);
                auto t0 = std::chrono::steady_clock::now();
                int rc;
                if (world_rank() < peer) {
                    if ((rc = weft_stream_send(&out, 8, WEFT_BYTE, peer, tag, m, t, t)))
                        return fail("send: " + err(rc));
                    if ((rc = weft_stream_recv(&in, 8, WEFT_BYTE, peer, tag, m, t, t, WEFT_STATUS_IGNORE)))
                        return fail("recv: " + err(rc));
                } else {
                    if ((rc = weft_stream_recv(&in, 8, WEFT_BYTE, peer, tag, m, t, t, WEFT_STATUS_IGNORE)))
                        return fail("recv: " + err(rc));
                    if ((rc = weft_stream_send(&out, 8, WEFT_BYTE, peer, tag, m, t, t)))
                        return fail("send: " + err(rc));
                }
                auto t1 = std::chrono::steady_clock::now();
                if (in != want) return fail("round " + std::to_string(i) + ": wrong message " + std::to_string(in));
                if (i >= warmup) rtt.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
            }
            std::sort(rtt.begin(), rtt.end());
            res.median_us[t] = rtt[rtt.size() / 2];
            res.p90_us[t] = rtt[rtt.size() * 9 / 10];
        });
    for (auto &x : th) x.join();
    return res;
}

TEST_F(ProgressLatency, MedianRoundTripWithProgressThreads) {
    if (provided_level() != WEFT_THREAD_MULTIPLE)
        GTEST_SKIP() << "WEFT_THREAD_MULTIPLE not provided (got " << provided_level() << ")";
    if (world_size() < 2 || world_size() % 2) GTEST_SKIP() << "needs an even number of processes";
    double bound_us = 50000;
    if (const char *b = std::getenv("WEFT_TEST_RTT_BOUND_US")) bound_us = std::atof(b);

    std::vector<weft_stream> streams(nthreads, WEFT_STREAM_NULL);
    for (auto &s : streams) {
        int rc = weft_stream_create(WEFT_INFO_NULL, &s);
        ASSERT_EQ(rc, 0) << err(rc);
    }
    weft_comm m = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, nthreads, streams.data(), &m), 0) << detail();

    // Baseline without progress threads, for the report only.
    step("baseline ping-pong without progress threads");
    rtt_result base = ping_pong(m, 1);
    ASSERT_TRUE(base.errors.empty()) << base.errors.front();
    p2p_barrier();

    for (auto s : streams) ASSERT_EQ(weft_start_progress_thread(s), 0) << detail();
    p2p_barrier();  // every progress thread runs before anyone measures

    step("idle with progress threads");
    auto cpu_s = [] {
        rusage ru{};
        getrusage(RUSAGE_SELF, &ru);
        return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    };
    const double idle_s = 0.3, cpu0 = cpu_s();
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));
    const double idle_cpu = cpu_s() - cpu0;
    std::printf("rank %d: %.1f ms of CPU in %.0f ms idle with %d progress threads\n", world_rank(), idle_cpu * 1e3,
                idle_s * 1e3, nthreads);
    EXPECT_LT(idle_cpu, 0.2 * idle_s) << "rank " << world_rank() << ": idle progress threads spin";
    p2p_barrier();

    step("ping-pong with progress threads");
    rtt_result res = ping_pong(m, 2);
    step("stopping progress threads");
    for (auto s : streams) EXPECT_EQ(weft_stop_progress_thread(s), 0) << detail();
    ASSERT_TRUE(res.errors.empty()) << res.errors.front();
    for (int t = 0; t < nthreads; ++t) {
        std::printf(
            "rank %d thread %d: 8-byte round trip, %d rounds: median %.1f us, p90 %.1f us with progress "
            "threads (bound %.0f us); without: median %.1f us, p90 %.1f us\n",
            world_rank(), t, measured, res.median_us[t], res.p90_us[t], bound_us, base.median_us[t], base.p90_us[t]);
        EXPECT_LT(res.median_us[t], bound_us)
            << "rank " << world_rank() << " thread " << t << ": median round trip near the progress threads' poll "
            << "timeout; do they miss the fabric's wake-up? (median without progress threads: " << base.median_us[t]
            << " us)";
    }
    std::fflush(stdout);
    ASSERT_EQ(weft_comm_free(&m), 0) << detail();
    for (auto &s : streams) ASSERT_EQ(weft_stream_free(&s), 0) << detail();
}

}  // namespace

STREAMS_TEST_MAIN("weft-test-streams-progress-latency", WEFT_THREAD_MULTIPLE)
