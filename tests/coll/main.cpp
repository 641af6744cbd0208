// main() of weft-test-coll: initializes Weft once (at the thread level asked for with
// --thread=multiple), runs the tests in every process, and agrees on one exit status.
//
// Rank 0 prints gtest's usual output; the other ranks print only their failures (each prefixed
// with the rank), so a job of 8 processes stays readable.
#include <cstdio>
#include <cstring>

#include "coll_env.hpp"
#include "multiprocess_main.hpp"

namespace {

using namespace coll_test;

// Every rank learns which ranks failed (point-to-point on WEFT_COMM_WORLD, no collective).
std::vector<int> failed_ranks(int failed) {
    constexpr int tag = WEFT_TAG_UB - 1;
    int r = world_rank(), n = world_size();
    std::vector<int> all(n, 0);
    all[r] = failed;
    if (r == 0) {
        for (int i = 1; i < n; ++i) weft_recv(&all[i], 1, WEFT_INT, i, tag, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE);
        for (int i = 1; i < n; ++i) weft_send(all.data(), n, WEFT_INT, i, tag, WEFT_COMM_WORLD);
    } else {
        weft_send(&failed, 1, WEFT_INT, 0, tag, WEFT_COMM_WORLD);
        weft_recv(all.data(), n, WEFT_INT, 0, tag, WEFT_COMM_WORLD, WEFT_STATUS_IGNORE);
    }
    std::vector<int> out;
    for (int i = 0; i < n; ++i)
        if (all[i]) out.push_back(i);
    return out;
}

}  // namespace

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    int required = WEFT_THREAD_SINGLE;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--thread=multiple") == 0) required = WEFT_THREAD_MULTIPLE;

    int provided = -1;
    int rc = weft_init_thread(&argc, &argv, required, &provided);
    if (rc != WEFT_SUCCESS) {
        std::fprintf(stderr, "weft-test-coll: weft_init_thread: %s\n", err(rc).c_str());
        return 1;
    }
    provided_level() = provided;
    const int rank = world_rank(), size = world_size();
    watchdog::get().start(rank, " (set " + alg_set() + ")");

    if (rank == 0) {
        harness::runtime rt;
        harness::runtime_info(rt);
        std::printf("weft-test-coll: %d processes, fabric=%s bootstrap=%s thread level=%d, algorithm set %s:", size,
                    rt.fabric.c_str(), rt.bootstrap.c_str(), provided, alg_set().c_str());
        static const char *names[] = {"BARRIER",
                                      "BCAST",
                                      "REDUCE",
                                      "ALLREDUCE",
                                      "GATHER",
                                      "GATHERV",
                                      "SCATTER",
                                      "SCATTERV",
                                      "ALLGATHER",
                                      "ALLGATHERV",
                                      "ALLTOALL",
                                      "ALLTOALLV",
                                      "REDUCE_SCATTER_BLOCK",
                                      "SCAN",
                                      "EXSCAN",
                                      "REDUCE_SCATTER",
                                      "ALLTOALLW"};
        bool any = false;
        for (const char *n : names) {
            std::string var = std::string("WEFT_COLL_") + n;
            if (const char *v = std::getenv(var.c_str())) {
                std::printf(" %s=%s", var.c_str(), v);
                any = true;
            }
        }
        std::printf("%s\n", any ? "" : " (none: automatic choice)");
        std::fflush(stdout);
    } else {
        harness::failures_only(rank);
    }

    int result = RUN_ALL_TESTS();

    watchdog::get().arm("agreeing on the exit status", 60);
    std::vector<int> failed = failed_ranks(result != 0);
    if (rank == 0 && !failed.empty()) {
        std::printf("weft-test-coll (set %s, %d processes): failures on rank(s)", alg_set().c_str(), size);
        for (int r : failed) std::printf(" %d", r);
        std::printf(" (see the [rank N] lines above)\n");
        std::fflush(stdout);
    }
    rc = harness::finalize_watched();
    if (rc != WEFT_SUCCESS) {
        std::fprintf(stderr, "rank %d: weft_finalize: code %d\n", rank, rc);
        return 1;
    }
    return failed.empty() ? 0 : 1;
}
