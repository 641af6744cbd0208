// Shared fixture for tests that run in every process of a job (started by weftrun or an MPI
// launcher).  Tests are collective: each process runs the same list in the same order.  Built on
// the shared harness (tests/common/); this suite runs without the watchdog.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>

#include "collective_test.hpp"
#include "weft/weft.h"
#include "weft_env.hpp"

namespace p2p_test {

using harness::p2p_barrier;
using harness::world_rank;
using harness::world_size;

// Initializes Weft once for the whole program and finalizes after the last test.
class environment : public ::testing::Environment {
  public:
    void SetUp() override {
        ASSERT_EQ(weft_init(nullptr, nullptr), WEFT_SUCCESS);
        // The launcher tests (tests/launch/run-under.sh) check this line.
        harness::runtime rt;
        ASSERT_TRUE(harness::runtime_info(rt));
        if (world_rank() == 0)
            std::printf("weft-test-p2p: %d processes, fabric=%s bootstrap=%s\n", world_size(), rt.fabric.c_str(),
                        rt.bootstrap.c_str());
    }
    void TearDown() override { ASSERT_EQ(weft_finalize(), WEFT_SUCCESS); }
};

// Every test starts and ends with all processes in step (the p2p barrier; the watchdog it arms
// never fires here: this program does not start it).
using collective_test = harness::collective_test<>;

}  // namespace p2p_test
