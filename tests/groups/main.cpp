// main() of weft-test-groups: Weft initialized once (at WEFT_THREAD_MULTIPLE with
// --thread=multiple), the tests run in every process (rank 0
// prints gtest's output, the others only their failures), one exit status agreed on.
#include <cstdio>
#include <cstring>
#include <vector>

#include "groups_env.hpp"
#include "multiprocess_main.hpp"

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    int required = WEFT_THREAD_SINGLE, provided = -1;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--thread=multiple") == 0) required = WEFT_THREAD_MULTIPLE;
    if (int rc = weft_init_thread(&argc, &argv, required, &provided)) {
        std::fprintf(stderr, "weft-test-groups: weft_init_thread: %s\n", harness::err(rc).c_str());
        return 1;
    }
    const int rank = harness::world_rank(), size = harness::world_size();
    harness::watchdog::get().start(rank, "");
    if (rank != 0) harness::failures_only(rank);
    int failed = RUN_ALL_TESTS() != 0;

    // Every rank learns whether any failed (point-to-point: no collective under test).
    constexpr int tag = WEFT_TAG_UB - 1;
    harness::watchdog::get().arm("agreeing on the exit status", 60);
    int any = failed;
    if (rank == 0) {
        for (int i = 1; i < size; ++i) {
            int f = 0;
            weft_recv(&f, 1, WEFT_INT, i, tag, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE);
            any |= f;
        }
        for (int i = 1; i < size; ++i) weft_send(&any, 1, WEFT_INT, i, tag, WEFT_COMM_WORLD);
    } else {
        weft_send(&failed, 1, WEFT_INT, 0, tag, WEFT_COMM_WORLD);
        weft_recv(&any, 1, WEFT_INT, 0, tag, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE);
    }
    if (int rc = harness::finalize_watched()) {
        std::fprintf(stderr, "rank %d: weft_finalize: %s\n", rank, harness::err(rc).c_str());
        return 1;
    }
    return any ? 1 : 0;
}
