// weft-soak's watchdog.  Each thread (and the main thread, last) publishes what it is doing
// (doing(), report.hpp); a step that lasts longer than --watchdog seconds (times
// WEFT_TEST_TIME_SCALE) ends the job with every thread's step, exit status 3.  A thread marked
// idle never counts as stuck.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "watchdog.hpp"

namespace soak {

struct activity {
    std::mutex mu;
    char what[256] = "starting";
    std::atomic<uint64_t> changes{0};
    std::atomic<bool> idle{false};
};
extern std::vector<std::unique_ptr<activity>> g_activity;  // one per thread, then the main thread's
// constinit: no dynamic initializer, so uses in other files read the variable directly instead of
// through GCC's TLS wrapper; under UBSan, GCC 12 checked the wrapper's result with flags left over
// from the wrapper's own test and reported a null pointer in every run (soak.cpp, ASan phase).
extern thread_local constinit activity *tl_activity;

class watchdog {
  public:
    void start(double seconds);
    void stop() { thread_.stop(); }

  private:
    void check();
    [[noreturn]] void report(size_t stuck);
    double limit_ = 60;
    std::vector<uint64_t> seen_;
    std::vector<std::chrono::steady_clock::time_point> since_;
    harness::periodic_check thread_;
};

}  // namespace soak
