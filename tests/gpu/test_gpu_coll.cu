// Collectives enqueued on a cudaStream_t, 2 processes on device 0, device buffers:
// allreduce (SUM on float, MINLOC on WEFT_FLOAT_INT; each also in place), bcast from each
// root, barrier (the queue waits for the slower process), allgather.
#include <chrono>
#include <string>
#include <vector>

#include "gpu_env.hpp"
#include "gpu_kernels.cuh"

using namespace gpu_test;

namespace {

class AllreduceSum : public gpu_fixture, public ::testing::WithParamInterface<bool> {};

// Each process gives (rank + 1) * (i % 100); a kernel after the allreduce adds 0.5, so the
// result is 3 * (i % 100) + 0.5 only if it ran after the reduction completed.
TEST_P(AllreduceSum, Float) {
    const bool in_place = GetParam();
    constexpr size_t n = 65536;
    dev_buf<float> send(n), recv(n);
    ASSERT_NE(send.get(), nullptr);
    ASSERT_NE(recv.get(), nullptr);
    float *contrib = in_place ? recv.get() : send.get();
    if (!in_place) ASSERT_CUDA(fill(recv.get(), n, -1.0f, cs_));
    ASSERT_CUDA(ramp(contrib, n, float(world_rank() + 1), 100, 0.0f, cs_));
    step("weft_allreduce_enqueue");
    int rc = weft_allreduce_enqueue(in_place ? WEFT_IN_PLACE : send.get(), recv.get(), n, WEFT_FLOAT, WEFT_SUM, c_);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    ASSERT_CUDA(add(recv.get(), n, 0.5f, cs_));
    sync("allreduce_enqueue");
    EXPECT_EQ(mismatches(recv.to_host(), n, [](size_t i) { return 3.0f * float(i % 100) + 0.5f; }), "");
}
INSTANTIATE_TEST_SUITE_P(Gpu, AllreduceSum, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &p) { return p.param ? "InPlace" : "Buffers"; });

// WEFT_FLOAT_INT as the C struct lays it out.
struct float_int {
    float v;
    int i;
};

class AllreduceMinloc : public gpu_fixture, public ::testing::WithParamInterface<bool> {};

// Rank r gives value (j + 2r) % 5 at index r: the minimum with the lower rank on ties.
TEST_P(AllreduceMinloc, FloatInt) {
    const bool in_place = GetParam();
    constexpr size_t n = 4096;
    auto value = [](int r, size_t j) { return float((j + 2 * size_t(r)) % 5); };
    std::vector<float_int> mine(n);
    for (size_t j = 0; j < n; ++j) mine[j] = {value(world_rank(), j), world_rank()};
    dev_buf<float_int> send(n), recv(n);
    ASSERT_NE(send.get(), nullptr);
    ASSERT_NE(recv.get(), nullptr);
    float_int *contrib = in_place ? recv.get() : send.get();
    // On the queue: a plain cudaMemcpy from pageable memory may return before its DMA ends, and
    // the legacy stream does not order against the non-blocking queue.
    ASSERT_CUDA(cudaMemcpyAsync(contrib, mine.data(), n * sizeof(float_int), cudaMemcpyHostToDevice, cs_));
    if (!in_place) ASSERT_CUDA(cudaMemsetAsync(recv.get(), 0xff, n * sizeof(float_int), cs_));
    step("weft_allreduce_enqueue MINLOC");
    int rc = weft_allreduce_enqueue(in_place ? WEFT_IN_PLACE : send.get(), recv.get(), n, WEFT_FLOAT_INT, WEFT_MINLOC,
                                    c_);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    sync("allreduce_enqueue MINLOC");
    std::vector<float_int> got = recv.to_host();
    ASSERT_EQ(got.size(), n);
    size_t bad = 0, first = 0;
    for (size_t j = 0; j < n; ++j) {
        float v0 = value(0, j), v1 = value(1, j);
        float_int want = v1 < v0 ? float_int{v1, 1} : float_int{v0, 0};
        if ((got[j].v != want.v || got[j].i != want.i) && bad++ == 0) first = j;
    }
    EXPECT_EQ(bad, 0u) << "first wrong at " << first << ": got (" << got[first].v << ", " << got[first].i << ")";
}
INSTANTIATE_TEST_SUITE_P(Gpu, AllreduceMinloc, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &p) { return p.param ? "InPlace" : "Buffers"; });

using GpuColl = gpu_fixture;

// Two broadcasts queued back to back, from root 0 and from root 1, before one synchronization.
TEST_F(GpuColl, BcastEachRoot) {
    constexpr size_t n = 262144;
    dev_buf<float> b0(n), b1(n);
    ASSERT_NE(b0.get(), nullptr);
    ASSERT_NE(b1.get(), nullptr);
    dev_buf<float> *bufs[2] = {&b0, &b1};
    for (int root = 0; root < 2; ++root) {
        if (world_rank() == root)
            ASSERT_CUDA(ramp(bufs[root]->get(), n, 0.5f, n + 1, float(1000 * root), cs_));
        else
            ASSERT_CUDA(fill(bufs[root]->get(), n, -1.0f, cs_));
        step("weft_bcast_enqueue root %d", root);
        int rc = weft_bcast_enqueue(bufs[root]->get(), n, WEFT_FLOAT, root, c_);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    }
    sync("bcast_enqueue x2");
    for (int root = 0; root < 2; ++root)
        EXPECT_EQ(mismatches(bufs[root]->to_host(), n, [&](size_t i) { return 0.5f * float(i) + float(1000 * root); }),
                  "")
            << "root " << root;
}

// Rank 0's queue spins 300 ms before its barrier; rank 1's queue must not pass the barrier
// before that, so its synchronization takes at least about as long.
TEST_F(GpuColl, BarrierWaitsForSlowerQueue) {
    constexpr unsigned long long delay_ns = 300ull * 1000 * 1000;
    p2p_barrier();  // start together
    auto t0 = std::chrono::steady_clock::now();
    if (world_rank() == 0) ASSERT_CUDA(spin(delay_ns, cs_));
    step("weft_barrier_enqueue x2");
    int rc = weft_barrier_enqueue(c_);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    rc = weft_barrier_enqueue(c_);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    sync("barrier_enqueue");
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (world_rank() == 1) EXPECT_GE(s, 0.2) << "rank 1's queue passed the barrier while rank 0's was still busy";
}

// Each process gives n ints j + 100000 * rank; everyone gets both blocks in rank order.
TEST_F(GpuColl, Allgather) {
    constexpr size_t n = 1000;
    dev_buf<int> send(n), recv(2 * n);
    ASSERT_NE(send.get(), nullptr);
    ASSERT_NE(recv.get(), nullptr);
    ASSERT_CUDA(ramp(send.get(), n, 1, n + 1, 100000 * world_rank(), cs_));
    ASSERT_CUDA(fill(recv.get(), 2 * n, -1, cs_));
    step("weft_allgather_enqueue");
    int rc = weft_allgather_enqueue(send.get(), n, WEFT_INT, recv.get(), n, WEFT_INT, c_);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    sync("allgather_enqueue");
    EXPECT_EQ(mismatches(recv.to_host(), 2 * n, [](size_t i) { return int(i % n) + 100000 * int(i / n); }), "");
}

}  // namespace

GPU_TEST_MAIN("gpu.coll")
