// Job-level helpers of the PGAS conformance suite, on the shared harness (tests/common/): the
// process's rank, error text, the watchdog, the p2p barrier on WEFT_COMM_WORLD (so that the
// harness does not depend on weft_pgas_barrier, which is under test) and the gtest main.  Every
// process runs the same tests in the same order (the PGAS calls under test are collective), so
// each test starts and ends with all processes in step.
//
// The watchdog turns a hang (a lost message, a reply never counted, a barrier that never
// returns) into a failure that names the rank, the test and the step it was in; the limit
// decides nothing about correctness.
#pragma once
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "collective_test.hpp"
#include "error_detail.hpp"
#include "multiprocess_main.hpp"
#include "watchdog.hpp"
#include "weft/weft.h"
#include "weft_env.hpp"

namespace pgas_test {

using harness::current_test_name;
using harness::detail;
using harness::err;
using harness::p2p_barrier;
using harness::step;
using harness::watchdog;
using harness::world_rank;
using harness::world_size;

// ---------------------------------------------------------------- main

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
        harness::runtime rt;
        harness::runtime_info(rt);
        std::printf("%s: %d processes, fabric=%s bootstrap=%s thread level=%d\n", name, world_size(),
                    rt.fabric.c_str(), rt.bootstrap.c_str(), provided);
        std::fflush(stdout);
    } else {
        harness::failures_only(rank);
    }
    if (level == WEFT_THREAD_MULTIPLE && provided < WEFT_THREAD_MULTIPLE) {
        std::fprintf(stderr, "rank %d: %s needs WEFT_THREAD_MULTIPLE, got level %d\n", rank, name, provided);
        return 1;
    }
    int result = RUN_ALL_TESTS();
    rc = harness::finalize_watched();
    if (rc != WEFT_SUCCESS) {
        std::fprintf(stderr, "rank %d: weft_finalize: code %d\n", rank, rc);
        return 1;
    }
    return result;
}

}  // namespace pgas_test
