// A stream is a serial context: two threads using one stream at the same time is a user
// error.  Builds configured with -DWEFT_STREAM_CHECKS=ON detect it and fail the offending call
// with WEFT_ERR_STREAM (nothing crashes, and the stream still works afterwards); other builds
// take no lock on the stream path and cannot detect it, so that test skips there.
// Serialized use from several threads (each handing the stream to the next) is valid in every
// build and must never be reported.
#include <atomic>
#include <barrier>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "streams_env.hpp"

using namespace streams_test;

namespace {

class ConcurrentUse : public collective_test {
  protected:
    weft_stream s_ = WEFT_STREAM_NULL;
    weft_comm c_ = WEFT_COMM_NULL;
    void SetUp() override {
        collective_test::SetUp();
        if (provided_level() != WEFT_THREAD_MULTIPLE)
            GTEST_SKIP() << "WEFT_THREAD_MULTIPLE not provided (got " << provided_level() << ")";
        int rc = weft_stream_create(WEFT_INFO_NULL, &s_);
        ASSERT_EQ(rc, 0) << err(rc);
        rc = weft_stream_comm_create(WEFT_COMM_SELF, s_, &c_);
        ASSERT_EQ(rc, 0) << err(rc);
    }
    void TearDown() override {
        if (c_ != WEFT_COMM_NULL) {
            EXPECT_EQ(weft_comm_free(&c_), 0) << detail();
        }
        if (s_ != WEFT_STREAM_NULL) {
            EXPECT_EQ(weft_stream_free(&s_), 0) << detail();
        }
        collective_test::TearDown();
    }
};

TEST_F(ConcurrentUse, TwoThreadsOnOneStreamAreDetected) {
#ifndef WEFT_STREAM_CHECKS
    GTEST_SKIP() << "stream checks are compiled only with -DWEFT_STREAM_CHECKS=ON";
#else
    constexpr long max_iterations = 1000000;
    std::atomic<bool> stop{false};
    std::atomic<long> detected{0};
    std::mutex mu;
    std::vector<std::string> other_errors;
    // What each thread left half done when a call was refused: sends to wait for, messages to
    // receive.  Finished by the main thread afterwards, as the stream's only user.
    std::vector<weft_request> left_sends[2];
    int owed_recvs[2] = {0, 0};
    std::barrier<> go(2);
    auto body = [&](int t) {
        const int tag = 10 + t;
        int v = t, w = -1;
        go.arrive_and_wait();
        for (long i = 0; i < max_iterations && !stop.load(std::memory_order_relaxed); ++i) {
            weft_request q = WEFT_REQUEST_NULL;
            int rc = weft_isend(&v, 1, WEFT_INT, 0, tag, c_, &q);
            if (rc == WEFT_ERR_STREAM) {
                ++detected;
                stop = true;
                break;
            }
            if (rc) {
                std::lock_guard<std::mutex> g(mu);
                other_errors.push_back("thread " + std::to_string(t) + " isend: " + err(rc));
                break;
            }
            rc = weft_recv(&w, 1, WEFT_INT, 0, tag, c_, WEFT_STATUS_IGNORE);
            if (rc == WEFT_ERR_STREAM) {
                ++detected;
                stop = true;
                ++owed_recvs[t];
            } else if (rc) {
                std::lock_guard<std::mutex> g(mu);
                other_errors.push_back("thread " + std::to_string(t) + " recv: " + err(rc));
                left_sends[t].push_back(q);
                break;
            }
            rc = weft_wait(&q, WEFT_STATUS_IGNORE);
            if (rc == WEFT_ERR_STREAM) {
                ++detected;
                stop = true;
            } else if (rc) {
                std::lock_guard<std::mutex> g(mu);
                other_errors.push_back("thread " + std::to_string(t) + " wait: " + err(rc));
            }
            if (q != WEFT_REQUEST_NULL) left_sends[t].push_back(q);
        }
    };
    step("two threads hammering one stream");
    std::thread a(body, 0), b(body, 1);
    a.join();
    b.join();
    EXPECT_GT(detected.load(), 0) << "two threads used one stream for up to " << max_iterations
                                  << " iterations each and no call failed with WEFT_ERR_STREAM";
    EXPECT_TRUE(other_errors.empty()) << other_errors.front();
    // The stream still works: finish what was left, then a clean round trip.
    step("draining after detection");
    for (int t = 0; t < 2; ++t) {
        for (int k = 0; k < owed_recvs[t]; ++k) {
            int w = -1;
            int rc = weft_recv(&w, 1, WEFT_INT, 0, 10 + t, c_, WEFT_STATUS_IGNORE);
            EXPECT_EQ(rc, 0) << "receive left by thread " << t << ": " << err(rc);
            EXPECT_EQ(w, t);
        }
        for (auto &q : left_sends[t]) EXPECT_EQ(weft_wait(&q, WEFT_STATUS_IGNORE), 0) << detail();
    }
    int v = 5, w = -1;
    weft_request q;
    ASSERT_EQ(weft_irecv(&w, 1, WEFT_INT, 0, 20, c_, &q), 0) << detail();
    ASSERT_EQ(weft_send(&v, 1, WEFT_INT, 0, 20, c_), 0) << detail();
    ASSERT_EQ(weft_wait(&q, WEFT_STATUS_IGNORE), 0) << detail();
    EXPECT_EQ(w, 5);
    int flag = 1;
    ASSERT_EQ(weft_iprobe(WEFT_ANY_SOURCE, WEFT_ANY_TAG, c_, &flag, WEFT_STATUS_IGNORE), 0) << detail();
    EXPECT_EQ(flag, 0) << "a message is left over on the stream communicator";
#endif
}

// Handing the stream from thread to thread (a mutex orders every use) is serial use.
TEST_F(ConcurrentUse, SerializedUseFromTwoThreadsIsAllowed) {
    constexpr int iterations = 2000;
    std::mutex turn;
    std::mutex mu;
    std::vector<std::string> errors;
    auto body = [&](int t) {
        const int tag = 30 + t;
        for (int i = 0; i < iterations; ++i) {
            std::lock_guard<std::mutex> g(turn);
            int v = i * 2 + t, w = -1;
            weft_request q;
            int rc = weft_isend(&v, 1, WEFT_INT, 0, tag, c_, &q);
            if (!rc) rc = weft_recv(&w, 1, WEFT_INT, 0, tag, c_, WEFT_STATUS_IGNORE);
            if (!rc) rc = weft_wait(&q, WEFT_STATUS_IGNORE);
            if (rc || w != v) {
                std::lock_guard<std::mutex> g2(mu);
                errors.push_back("thread " + std::to_string(t) + " iteration " + std::to_string(i) + ": " +
                                 (rc ? err(rc) : "got " + std::to_string(w)));
                return;
            }
        }
    };
    step("serialized use from two threads");
    std::thread a(body, 0), b(body, 1);
    a.join();
    b.join();
    EXPECT_TRUE(errors.empty()) << errors.front();
}

}  // namespace

STREAMS_TEST_MAIN("weft-test-streams-concurrent-use", WEFT_THREAD_MULTIPLE)
