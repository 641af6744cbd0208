// Shared helpers for the stream tests (MPIX Stream semantics).  Multi-process suites are
// collective: every process runs the same tests in the same order, and each test starts and
// ends with a barrier on WEFT_COMM_WORLD.
//
// A watchdog turns a hang into a precise failure: when one test runs longer than its limit it
// prints the test, the rank and the last step the test announced with step(), then ends the
// process (weftrun then ends the job).  The limit decides nothing about correctness; it only
// keeps a stuck job from becoming an anonymous ctest timeout.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "weft/weft.h"

namespace streams_test {

inline int rank() {
    int r = -1;
    weft_comm_rank(WEFT_COMM_WORLD, &r);
    return r;
}
inline int size() {
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

// "code N (text): detail" for assertion messages.
inline std::string err(int code) {
    char text[WEFT_MAX_ERROR_STRING] = "";
    size_t len = 0;
    weft_error_string(code, text, &len);
    return "rank " + std::to_string(rank()) + ": code " + std::to_string(code) + " (" + text + "), detail: " + detail();
}

// ---- watchdog ----
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
        seconds *= scale;
        std::lock_guard<std::mutex> g(mu_);
        test_ = test;
        step_ = "start";
        deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                            std::chrono::duration<double>(seconds));
        armed_ = true;
        cv_.notify_all();
    }
    void disarm() {
        std::lock_guard<std::mutex> g(mu_);
        armed_ = false;
    }
    void step(const std::string &s) {
        std::lock_guard<std::mutex> g(mu_);
        step_ = s;
    }
    void start() {
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
                std::fprintf(stderr, "\n*** rank %d: watchdog: test %s still running after its limit; last step: %s\n",
                             world_rank_cache, test_.c_str(), step_.c_str());
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

  public:
    int world_rank_cache = -1;
};

// Announces the current step of a test (printed if the watchdog fires).
inline void step(const char *fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    watchdog::get().step(buf);
}

// A barrier made of point-to-point messages on WEFT_COMM_WORLD, on a tag no test uses.
inline void barrier() {
    constexpr int tag = WEFT_TAG_UB;
    char token = 0;
    if (size() <= 1) return;
    if (rank() == 0) {
        for (int i = 1; i < size(); ++i)
            ASSERT_EQ(weft_recv(&token, 1, WEFT_CHAR, WEFT_ANY_SOURCE, tag, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
        for (int i = 1; i < size(); ++i) ASSERT_EQ(weft_send(&token, 1, WEFT_CHAR, i, tag, WEFT_COMM_WORLD), 0);
    } else {
        ASSERT_EQ(weft_send(&token, 1, WEFT_CHAR, 0, tag, WEFT_COMM_WORLD), 0);
        ASSERT_EQ(weft_recv(&token, 1, WEFT_CHAR, 0, tag, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE), 0);
    }
}

// Thread level asked for at init: tests pass --thread=multiple (or the suite asks for it).
inline int &required_level() {
    static int level = WEFT_THREAD_SINGLE;
    return level;
}
inline int &provided_level() {
    static int level = -1;
    return level;
}

// Removes "--thread=single|multiple" from argv (after gtest has taken its flags).
inline void parse_args(int *argc, char **argv) {
    int out = 1;
    for (int i = 1; i < *argc; ++i) {
        if (std::strcmp(argv[i], "--thread=multiple") == 0)
            required_level() = WEFT_THREAD_MULTIPLE;
        else if (std::strcmp(argv[i], "--thread=single") == 0)
            required_level() = WEFT_THREAD_SINGLE;
        else
            argv[out++] = argv[i];
    }
    *argc = out;
}

// Initializes Weft once for the program and finalizes after the last test.
class environment : public ::testing::Environment {
  public:
    explicit environment(const char *name) : name_(name) {}
    void SetUp() override {
        int provided = -1;
        int rc = weft_init_thread(nullptr, nullptr, required_level(), &provided);
        ASSERT_EQ(rc, WEFT_SUCCESS) << "weft_init_thread: " << detail();
        provided_level() = provided;
        watchdog::get().world_rank_cache = rank();
        watchdog::get().start();
        weft_info info;
        char boot[64] = "?", fabric[64] = "?";
        int flag = 0;
        ASSERT_EQ(weft_get_runtime_info(&info), WEFT_SUCCESS);
        weft_info_get(info, "bootstrap", sizeof boot - 1, boot, &flag);
        weft_info_get(info, "fabric", sizeof fabric - 1, fabric, &flag);
        weft_info_free(&info);
        if (rank() == 0) {
            const char *nv = std::getenv("WEFT_NUM_VCIS"), *cs = std::getenv("WEFT_THREAD_CS"),
                       *rv = std::getenv("WEFT_RESERVED_VCIS");
            std::printf("%s: %d processes, fabric=%s bootstrap=%s thread level=%d (asked %d) WEFT_NUM_VCIS=%s "
                        "WEFT_THREAD_CS=%s WEFT_RESERVED_VCIS=%s\n",
                        name_, size(), fabric, boot, provided, required_level(), nv ? nv : "-", cs ? cs : "-",
                        rv ? rv : "-");
            std::fflush(stdout);
        }
    }
    void TearDown() override {
        watchdog::get().arm("weft_finalize", 30);
        EXPECT_EQ(weft_finalize(), WEFT_SUCCESS) << detail();
        watchdog::get().disarm();
        watchdog::get().stop();
    }

  private:
    const char *name_;
};

inline std::string current_test_name() {
    const ::testing::TestInfo *t = ::testing::UnitTest::GetInstance()->current_test_info();
    return t ? std::string(t->test_suite_name()) + "." + t->name() : "?";
}

// Every test starts and ends with all processes in step, under the watchdog.
class collective_test : public ::testing::Test {
  protected:
    // Per-test limit in seconds; the whole program must stay well inside ctest's 120 s.
    virtual double limit_s() const { return 30; }
    void SetUp() override {
        watchdog::get().arm(current_test_name(), limit_s());
        step("barrier before the test");
        barrier();
        step("test body");
    }
    void TearDown() override {
        step("barrier after the test");
        barrier();
        watchdog::get().disarm();
    }
};

// Deterministic payload byte for message `seq` at position `i` from (rank, index).
inline unsigned char pattern(int from_rank, int from_idx, int seq, size_t i) {
    return static_cast<unsigned char>((from_rank * 131 + from_idx * 31 + seq * 7 + i * 13) & 0xff);
}

inline int stream_create(weft_stream *s, bool shared = false) {
    weft_info info = WEFT_INFO_NULL;
    if (shared) {
        if (int rc = weft_info_create(&info)) return rc;
        if (int rc = weft_info_set(info, "weft_shared_endpoint", "true")) return rc;
    }
    int rc = weft_stream_create(info, s);
    if (info != WEFT_INFO_NULL) weft_info_free(&info);
    return rc;
}

}  // namespace streams_test

// main() for a suite: gtest flags, then --thread=..., then the environment.
#define STREAMS_TEST_MAIN(NAME, DEFAULT_LEVEL)                                        \
    int main(int argc, char **argv) {                                                 \
        ::testing::InitGoogleTest(&argc, argv);                                       \
        streams_test::required_level() = (DEFAULT_LEVEL);                             \
        streams_test::parse_args(&argc, argv);                                        \
        ::testing::AddGlobalTestEnvironment(new streams_test::environment(NAME));     \
        return RUN_ALL_TESTS();                                                       \
    }
