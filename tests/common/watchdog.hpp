// Watchdogs turn a hang into a precise failure instead of an anonymous ctest timeout: they name
// the rank, what was running and its last step, then end the process (the launcher then ends
// the job).  A limit decides nothing about correctness.
//
//   time_scale()    WEFT_TEST_TIME_SCALE (at least 1): sanitizer runs are several times slower,
//                   so every limit of the tests is multiplied by it.
//   periodic_check  a thread that runs a check every period until stopped; the watchdogs here
//                   and weft-soak's (tests/soak/soak_watchdog.hpp) are built on it.
//   watchdog        one deadline per process for the gtest suites: arm() it for a test (or a
//                   phase of main), announce steps with step(); past the deadline it prints
//                   "*** rank R: watchdog: WHAT still running after its limit; last step: S"
//                   and exits with status 86.  A program that never calls start() has no
//                   watchdog thread: arming it then does nothing.
#pragma once
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace harness {

inline double time_scale() {
    static const double scale = [] {
        const char *v = std::getenv("WEFT_TEST_TIME_SCALE");
        double f = v ? std::atof(v) : 1.0;
        return f >= 1.0 ? f : 1.0;
    }();
    return scale;
}

// Calls check() every period on a thread of its own, from start() until stop().
class periodic_check {
  public:
    ~periodic_check() { stop(); }
    void start(std::chrono::milliseconds period, std::function<void()> check) {
        if (thread_.joinable()) return;
        period_ = period;
        check_ = std::move(check);
        quit_ = false;  // no thread runs: no lock needed
        thread_ = std::thread([this] { loop(); });
    }
    void stop() {
        {
            std::lock_guard<std::mutex> g(mu_);
            quit_ = true;
        }
        cv_.notify_all();
        if (thread_.joinable()) thread_.join();
    }

  private:
    void loop() {
        std::unique_lock<std::mutex> lk(mu_);
        while (!cv_.wait_for(lk, period_, [this] { return quit_; })) {
            lk.unlock();
            check_();
            lk.lock();
        }
    }
    std::chrono::milliseconds period_{200};
    std::function<void()> check_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::thread thread_;
    bool quit_ = false;
};

class watchdog {
  public:
    static watchdog &get() {
        static watchdog w;
        return w;
    }
    // Starts the thread; `note` follows the rank in the report (" (set alg0)").
    void start(int rank, std::string note = "") {
        {
            std::lock_guard<std::mutex> g(mu_);
            rank_ = rank;
            note_ = std::move(note);
        }
        thread_.start(std::chrono::milliseconds(200), [this] { check(); });
    }
    void stop() { thread_.stop(); }
    // `what` (a test name, "weft_finalize") must end within seconds * time_scale().
    void arm(const std::string &what, double seconds) {
        std::lock_guard<std::mutex> g(mu_);
        what_ = what;
        step_ = "start";
        deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                           std::chrono::duration<double>(seconds * time_scale()));
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

  private:
    void check() {
        std::lock_guard<std::mutex> g(mu_);
        if (!armed_ || std::chrono::steady_clock::now() <= deadline_) return;
        std::fprintf(stderr, "\n*** rank %d%s: watchdog: %s still running after its limit; last step: %s\n", rank_,
                     note_.c_str(), what_.c_str(), step_.c_str());
        std::fflush(stderr);
        std::fflush(stdout);
        ::_exit(86);
    }
    std::mutex mu_;
    std::string what_, step_, note_;
    std::chrono::steady_clock::time_point deadline_{};
    bool armed_ = false;
    int rank_ = -1;
    periodic_check thread_;
};

// Announces the current step (printed if the watchdog fires).  With several threads the last one
// to announce wins, which is enough to locate a hang.
inline void step(const std::string &s) { watchdog::get().step(s); }
inline void step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline void step(const char *fmt, ...) {
    char buf[320];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    watchdog::get().step(buf);
}

}  // namespace harness
