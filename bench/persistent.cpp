// weft-bench-persistent: what a persistent collective saves per call (Google Benchmark).
//
//   weftrun -n 2 build/bin/weft-bench-persistent [--benchmark_filter=...]
//
// Two ranks (any number works), each pinned to its own CPU as the other benchmarks pin.  Per
// iteration, one collective on WEFT_COMM_WORLD:
//   Iallreduce/N        weft_iallreduce of N ints + weft_wait
//   AllreduceInit/N     weft_start of a request made once by weft_allreduce_init + weft_wait
//   Ibarrier            weft_ibarrier + weft_wait
//   BarrierInit         weft_start of weft_barrier_init's request + weft_wait
// and the "Post" variants time only the call that starts the collective (weft_iallreduce or
// weft_ibarrier against weft_start; manual time, the wait outside it): the work a persistent
// request does once at init instead of at every call.  Iteration counts are fixed, so that
// every rank runs each benchmark the same number of times (the collectives must match); rank 0
// prints, the others run silently.  With the wall clock too noisy (a shared machine), count
// instructions instead: run rank 0 under callgrind (bench/README.md) and divide the inclusive
// counts of weft_iallreduce, weft_start and request_finish by their calls.
// A benchmark program, not a test: it prints numbers and does not judge them.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"
#include "weft/weft.h"

namespace {

constexpr int64_t iterations = 20000;

void check(int rc, const char *what) {
    if (rc != WEFT_SUCCESS) {
        char text[WEFT_MAX_ERROR_STRING];
        size_t len = 0;
        weft_error_detail(text, &len);
        std::fprintf(stderr, "%s failed (%d): %s\n", what, rc, text);
        std::exit(1);
    }
}

void BM_Iallreduce(benchmark::State &state) {
    std::vector<int> in(static_cast<size_t>(state.range(0)), 1), out(in.size());
    for (auto _ : state) {
        weft_request r;
        check(weft_iallreduce(in.data(), out.data(), in.size(), WEFT_INT, WEFT_SUM, WEFT_COMM_WORLD, &r), "iallreduce");
        check(weft_wait(&r, WEFT_STATUS_IGNORE), "wait");
    }
}

void BM_AllreduceInit(benchmark::State &state) {
    std::vector<int> in(static_cast<size_t>(state.range(0)), 1), out(in.size());
    weft_request r;
    check(
        weft_allreduce_init(in.data(), out.data(), in.size(), WEFT_INT, WEFT_SUM, WEFT_COMM_WORLD, WEFT_INFO_NULL, &r),
        "allreduce_init");
    for (auto _ : state) {
        check(weft_start(&r), "start");
        check(weft_wait(&r, WEFT_STATUS_IGNORE), "wait");
    }
    check(weft_request_free(&r), "request_free");
}

void BM_Ibarrier(benchmark::State &state) {
    for (auto _ : state) {
        weft_request r;
        check(weft_ibarrier(WEFT_COMM_WORLD, &r), "ibarrier");
        check(weft_wait(&r, WEFT_STATUS_IGNORE), "wait");
    }
}

void BM_BarrierInit(benchmark::State &state) {
    weft_request r;
    check(weft_barrier_init(WEFT_COMM_WORLD, WEFT_INFO_NULL, &r), "barrier_init");
    for (auto _ : state) {
        check(weft_start(&r), "start");
        check(weft_wait(&r, WEFT_STATUS_IGNORE), "wait");
    }
    check(weft_request_free(&r), "request_free");
}

// The post alone: `post` starts the collective into r; only it is timed.
template <class Post>
void time_post(benchmark::State &state, weft_request &r, Post post) {
    using clock = std::chrono::steady_clock;
    for (auto _ : state) {
        auto t0 = clock::now();
        post();
        auto t1 = clock::now();
        check(weft_wait(&r, WEFT_STATUS_IGNORE), "wait");
        state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    }
}

void BM_IallreducePost(benchmark::State &state) {
    std::vector<int> in(static_cast<size_t>(state.range(0)), 1), out(in.size());
    weft_request r;
    time_post(state, r, [&] {
        check(weft_iallreduce(in.data(), out.data(), in.size(), WEFT_INT, WEFT_SUM, WEFT_COMM_WORLD, &r), "iallreduce");
    });
}

void BM_AllreduceInitPost(benchmark::State &state) {
    std::vector<int> in(static_cast<size_t>(state.range(0)), 1), out(in.size());
    weft_request r;
    check(
        weft_allreduce_init(in.data(), out.data(), in.size(), WEFT_INT, WEFT_SUM, WEFT_COMM_WORLD, WEFT_INFO_NULL, &r),
        "allreduce_init");
    time_post(state, r, [&] { check(weft_start(&r), "start"); });
    check(weft_request_free(&r), "request_free");
}

void BM_IbarrierPost(benchmark::State &state) {
    weft_request r;
    time_post(state, r, [&] { check(weft_ibarrier(WEFT_COMM_WORLD, &r), "ibarrier"); });
}

void BM_BarrierInitPost(benchmark::State &state) {
    weft_request r;
    check(weft_barrier_init(WEFT_COMM_WORLD, WEFT_INFO_NULL, &r), "barrier_init");
    time_post(state, r, [&] { check(weft_start(&r), "start"); });
    check(weft_request_free(&r), "request_free");
}

BENCHMARK(BM_Iallreduce)->Arg(8)->Arg(1024)->Iterations(iterations);
BENCHMARK(BM_AllreduceInit)->Arg(8)->Arg(1024)->Iterations(iterations);
BENCHMARK(BM_Ibarrier)->Iterations(iterations);
BENCHMARK(BM_BarrierInit)->Iterations(iterations);
BENCHMARK(BM_IallreducePost)->Arg(8)->Arg(1024)->Iterations(iterations)->UseManualTime();
BENCHMARK(BM_AllreduceInitPost)->Arg(8)->Arg(1024)->Iterations(iterations)->UseManualTime();
BENCHMARK(BM_IbarrierPost)->Iterations(iterations)->UseManualTime();
BENCHMARK(BM_BarrierInitPost)->Iterations(iterations)->UseManualTime();

// Ranks other than 0 run every benchmark (their peers need them) and print nothing.
class silent_reporter : public benchmark::BenchmarkReporter {
  public:
    bool ReportContext(const Context &) override { return true; }
    void ReportRuns(const std::vector<Run> &) override {}
};

}  // namespace

int main(int argc, char **argv) {
    check(weft_init(&argc, &argv), "weft_init");
    int rank = 0;
    weft_comm_rank(WEFT_COMM_WORLD, &rank);
    bench_pin(rank);
    benchmark::Initialize(&argc, argv);
    if (rank == 0) {
        benchmark::RunSpecifiedBenchmarks();
    } else {
        silent_reporter quiet;
        benchmark::RunSpecifiedBenchmarks(&quiet);
    }
    benchmark::Shutdown();
    check(weft_finalize(), "weft_finalize");
    return 0;
}
