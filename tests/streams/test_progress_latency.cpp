// Idle progress threads must sleep, not spin.  4 processes x 2 threads on a small machine (the
// test machine has 2 cores): every thread has its own stream with a progress thread, i.e. 8
// application threads and 8 progress threads.  Thread t of rank p ping-pongs 8-byte messages
// with thread t of rank p^1.  If idle progress threads spun, each round trip would wait for
// scheduler ticks (milliseconds); sleeping on the fabric's wake-up keeps it in microseconds.
// The bound is the point of this test: the median round trip must stay below
// WEFT_TEST_RTT_BOUND_US (default 2000 us).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
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
                    if ((rc = weft_stream_send(&out, 8, WEFT_BYTE, peer, tag, m, t, t))) return fail("send: " + err(rc));
                    if ((rc = weft_stream_recv(&in, 8, WEFT_BYTE, peer, tag, m, t, t, WEFT_STATUS_IGNORE)))
                        return fail("recv: " + err(rc));
                } else {
                    if ((rc = weft_stream_recv(&in, 8, WEFT_BYTE, peer, tag, m, t, t, WEFT_STATUS_IGNORE)))
                        return fail("recv: " + err(rc));
                    if ((rc = weft_stream_send(&out, 8, WEFT_BYTE, peer, tag, m, t, t))) return fail("send: " + err(rc));
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
    double bound_us = 2000;
    if (const char *b = std::getenv("WEFT_TEST_RTT_BOUND_US")) bound_us = std::atof(b);

    std::vector<weft_stream> streams(nthreads, WEFT_STREAM_NULL);
    for (auto &s : streams) {
        int rc = weft_stream_create(WEFT_INFO_NULL, &s);
        ASSERT_EQ(rc, 0) << err(rc);
    }
    weft_comm m = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_comm_create_multiplex(WEFT_COMM_WORLD, nthreads, streams.data(), &m), 0) << detail();

    // Baseline without progress threads, for the report only: when it is slow as well, the
    // machine is loaded rather than the progress threads spinning.
    step("baseline ping-pong without progress threads");
    rtt_result base = ping_pong(m, 1);
    ASSERT_TRUE(base.errors.empty()) << base.errors.front();
    p2p_barrier();

    for (auto s : streams) ASSERT_EQ(weft_start_progress_thread(s), 0) << detail();
    p2p_barrier();  // every progress thread runs before anyone measures
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
            << "rank " << world_rank() << " thread " << t << ": median round trip in scheduler ticks; do idle progress "
            << "threads spin? (median without progress threads: " << base.median_us[t] << " us)";
    }
    std::fflush(stdout);
    ASSERT_EQ(weft_comm_free(&m), 0) << detail();
    for (auto &s : streams) ASSERT_EQ(weft_stream_free(&s), 0) << detail();
}

}  // namespace

STREAMS_TEST_MAIN("weft-test-streams-progress-latency", WEFT_THREAD_MULTIPLE)
