// Job-level helpers of the PGAS conformance suite: the process's rank, error text, a watchdog,
// a point-to-point barrier on WEFT_COMM_WORLD and the gtest main.  Every process runs the same
// tests in the same order (the PGAS calls under test are collective), so each test starts and
// ends with all processes in step.
//
// The watchdog turns a hang (a lost message, a reply never counted, a barrier that never
// returns) into a failure that names the rank, the test and the step it was in; the limit
// decides nothing about correctness.
#pragma once
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "weft/weft.h"

namespace pgas_test {

inline int world_rank() {
    int r = -1;
    weft_comm_rank(WEFT_COMM_WORLD, &r);
    return r;
}
inline int world_size() {
    int s = -1;
    weft_comm_size(WEFT_COMM_WORLD, &s);
    return s;
}

// The detailed message of the calling thread's last error.
inline std::string detail() {
    char buf[WEFT_MAX_ERROR_STRING] = "";
    size_t len = 0;
    weft_error_detail(buf, &len);
    return buf;
}

// "code N (text), detail: ..." for assertion messages.
inline std::string err(int code) {
    char text[WEFT_MAX_ERROR_STRING] = "";
    size_t len = 0;
    weft_error_string(code, text, &len);
    return "code " + std::to_string(code) + " (" + text + "), detail: \"" + detail() + "\"";
}

// ---------------------------------------------------------------- watchdog

class watchdog {
  public:
    static watchdog &get() {
        static watchdog w;
        return w;
    }
    void arm(const std::string &test, double seconds) {
        // Sanitizer runs are several times slower: WEFT_TEST_TIME_SCALE stretches every limit.
        static const double scale = [] {
            const char *v = std::getenv("WEFT_TEST_TIME_SCALE");
            double f = v ? std::atof(v) : 1.0;
            return f >= 1.0 ? f : 1.0;
        }();
        std::lock_guard<std::mutex> g(mu_);
        test_ = test;
        step_ = "start";
        deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                           std::chrono::duration<double>(seconds * scale));
        armed_ = true;
    }
    void disarm() {
        std::lock_guard<std::mutex> g(mu_);
        armed_ = false;
    }
    void step(const std::string &s) {
        std::lock_guard<std::mutex> g(mu_);
        step_ = s;
    }
    void start(int rank) {
        rank_ = rank;
        if (thread_.joinable()) return;
        thread_ = std::thread([this] { loop(); });
    }
    void stop() {
        {
            std::lock_guard<std::mutex> g(mu_);
            quit_ = true;
            cv_.notify_all();
        }
        if (thread_.joinable()) thread_.join();
    }

  private:
    void loop() {
        std::unique_lock<std::mutex> lk(mu_);
        while (!quit_) {
            cv_.wait_for(lk, std::chrono::milliseconds(200));
            if (armed_ && std::chrono::steady_clock::now() > deadline_) {
                std::fprintf(stderr, "\n*** rank %d: watchdog: %s still running after its limit; last step: %s\n", rank_,
                             test_.c_str(), step_.c_str());
                std::fflush(stderr);
                std::fflush(stdout);
                ::_exit(86);
            }
        }
    }
    std::mutex mu_;
    std::condition_variable cv_;
    std::thread thread_;
    std::string test_, step_;
    std::chrono::steady_clock::time_point deadline_{};
    bool armed_ = false, quit_ = false;
    int rank_ = -1;
};

// Announces the current step (printed if the watchdog fires).  With several kernel threads the
// last one to announce wins, which is enough to locate a hang.
inline void step(const char *fmt, ...) {
    char buf[320];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    watchdog::get().step(buf);
}

// A barrier of point-to-point messages on WEFT_COMM_WORLD, on a tag no test uses, so that the
// harness does not depend on weft_pgas_barrier (which is under test).
inline void p2p_barrier() {
    constexpr int tag = WEFT_TAG_UB;
    char token = 0;
    int r = world_rank(), n = world_size();
    if (n <= 1) return;
    if (r == 0) {
        for (int i = 1; i < n; ++i)
            ASSERT_EQ(weft_recv(&token, 1, WEFT_CHAR, WEFT_ANY_SOURCE, tag, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
        for (int i = 1; i < n; ++i) ASSERT_EQ(weft_send(&token, 1, WEFT_CHAR, i, tag, WEFT_COMM_WORLD), 0);
    } else {
        ASSERT_EQ(weft_send(&token, 1, WEFT_CHAR, 0, tag, WEFT_COMM_WORLD), 0);
        ASSERT_EQ(weft_recv(&token, 1, WEFT_CHAR, 0, tag, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
    }
}

inline std::string current_test_name() {
    const ::testing::TestInfo *t = ::testing::UnitTest::GetInstance()->current_test_info();
    return t ? std::string(t->test_suite_name()) + "." + t->name() : "?";
}

// ---------------------------------------------------------------- main

// Ranks other than 0 print only their failures, prefixed with the rank.
class failure_printer : public ::testing::EmptyTestEventListener {
  public:
    explicit failure_printer(int rank) : rank_(rank) {}
    void OnTestPartResult(const ::testing::TestPartResult &r) override {
        if (!r.failed()) return;
        std::fprintf(stdout, "[rank %d] %s:%d: Failure\n%s\n", rank_, r.file_name() ? r.file_name() : "?",
                     r.line_number(), r.message());
        std::fflush(stdout);
    }
    void OnTestEnd(const ::testing::TestInfo &t) override {
        if (t.result()->Failed()) {
            std::fprintf(stdout, "[rank %d] [  FAILED  ] %s.%s\n", rank_, t.test_suite_name(), t.name());
            std::fflush(stdout);
        }
    }

  private:
    int rank_;
};

inline int run_main(const char *name, int argc, char **argv, int level) {
    ::testing::InitGoogleTest(&argc, argv);
    int provided = -1;
    int rc = weft_init_thread(&argc, &argv, level, &provided);
    if (rc != WEFT_SUCCESS) {
        std::fprintf(stderr, "%s: weft_init_thread: %s\n", name, err(rc).c_str());
        return 1;
    }
    const int rank = world_rank();
    watchdog::get().start(rank);
    if (rank == 0) {
        weft_info info;
        char boot[64] = "?", fabric[64] = "?";
        int flag = 0;
        if (weft_get_runtime_info(&info) == 0) {
            weft_info_get(info, "bootstrap", sizeof boot - 1, boot, &flag);
            weft_info_get(info, "fabric", sizeof fabric - 1, fabric, &flag);
            weft_info_free(&info);
        }
        std::printf("%s: %d processes, fabric=%s bootstrap=%s thread level=%d\n", name, world_size(), fabric, boot,
                    provided);
        std::fflush(stdout);
    } else {
        auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release(listeners.default_result_printer());
        listeners.Append(new failure_printer(rank));
    }
    if (level == WEFT_THREAD_MULTIPLE && provided < WEFT_THREAD_MULTIPLE) {
        std::fprintf(stderr, "rank %d: %s needs WEFT_THREAD_MULTIPLE, got level %d\n", rank, name, provided);
        return 1;
    }
    int result = RUN_ALL_TESTS();
    watchdog::get().arm("weft_finalize", 30);
    rc = weft_finalize();
    watchdog::get().disarm();
    watchdog::get().stop();
    if (rc != WEFT_SUCCESS) {
        std::fprintf(stderr, "rank %d: weft_finalize: code %d\n", rank, rc);
        return 1;
    }
    return result;
}

}  // namespace pgas_test
