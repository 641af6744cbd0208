// gtest suites run in every process of a job are collective: every process runs the same tests
// in the same order, and each test starts and ends with all processes in step, on a barrier of
// point-to-point messages (so that a broken collective cannot hide other failures), under the
// watchdog.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "watchdog.hpp"
#include "weft/weft.h"
#include "weft_env.hpp"

namespace harness {

// A barrier of point-to-point messages on WEFT_COMM_WORLD, on a tag no test uses.
inline void p2p_barrier() {
    constexpr int tag = WEFT_TAG_UB;
    char token = 0;
    const int r = world_rank(), n = world_size();
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

// "Suite.Test" of the running test ("?" outside one).
inline std::string current_test_name() {
    const ::testing::TestInfo *t = ::testing::UnitTest::GetInstance()->current_test_info();
    return t ? std::string(t->test_suite_name()) + "." + t->name() : "?";
}

// The base of a collective test: the watchdog armed for limit_s() seconds (times
// WEFT_TEST_TIME_SCALE), and a p2p barrier before and after the test body.
template <class Base = ::testing::Test>
class collective_test : public Base {
  protected:
    virtual double limit_s() const { return 30; }
    void SetUp() override {
        watchdog::get().arm(current_test_name(), limit_s());
        step("p2p barrier before the test");
        p2p_barrier();
        step("test body");
    }
    void TearDown() override {
        step("p2p barrier after the test");
        p2p_barrier();
        watchdog::get().disarm();
    }
};

}  // namespace harness
