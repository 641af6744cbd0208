// Pieces of main() for gtest programs run in every process of a job.
//
//   failures_only(rank)   on ranks other than 0, gtest prints only failures, each prefixed with
//                         the rank, so that a job of 8 processes stays readable
//   finalize_watched()    weft_finalize under the watchdog (30 s), which then stops
#pragma once
#include <gtest/gtest.h>

#include <cstdio>

#include "watchdog.hpp"
#include "weft/weft.h"

namespace harness {

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

// Replaces gtest's printer by failure_printer (call after InitGoogleTest, on ranks other than 0).
inline void failures_only(int rank) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new failure_printer(rank));
}

inline int finalize_watched() {
    watchdog::get().arm("weft_finalize", 30);
    int rc = weft_finalize();
    watchdog::get().disarm();
    watchdog::get().stop();
    return rc;
}

}  // namespace harness
