// Point-to-point enqueued on a cudaStream_t (MPICH's CUDA scenario), 2 processes on device 0:
// send/recv into device memory followed by a kernel, isend/irecv + wait_enqueue from host,
// pinned and managed memory, irecv + waitall_enqueue of several requests on one queue.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gpu_env.hpp"
#include "gpu_kernels.cuh"

using namespace gpu_test;

namespace {

using GpuP2P = gpu_fixture;

// a. Rank 0 fills x = 1 with a kernel and sends it; rank 1 receives into x on its queue, then
// y = 2x + y (y = 2) on the same queue: every y is 4 only if the kernel ran after the data came.
TEST_F(GpuP2P, SendRecvDeviceThenSaxpy) {
    constexpr size_t n = size_t(1) << 20;
    constexpr int tag = 1;
    dev_buf<float> x(n), y(n);
    ASSERT_NE(x.get(), nullptr);
    ASSERT_NE(y.get(), nullptr);
    if (world_rank() == 0) {
        ASSERT_CUDA(fill(x.get(), n, 1.0f, cs_));
        step("weft_send_enqueue");
        int rc = weft_send_enqueue(x.get(), n, WEFT_FLOAT, 1, tag, c_);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        sync("send_enqueue");
    } else {
        weft_status st{};
        st.source = -5;
        ASSERT_CUDA(fill(x.get(), n, -100.0f, cs_));
        ASSERT_CUDA(fill(y.get(), n, 2.0f, cs_));
        step("weft_recv_enqueue");
        int rc = weft_recv_enqueue(x.get(), n, WEFT_FLOAT, 0, tag, c_, &st);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        ASSERT_CUDA(saxpy(n, 2.0f, x.get(), y.get(), cs_));
        sync("recv_enqueue + saxpy");
        EXPECT_EQ(mismatches(y.to_host(), n, [](size_t) { return 4.0f; }), "");
        EXPECT_EQ(st.source, 0);
        EXPECT_EQ(st.tag, tag);
        EXPECT_EQ(st.error, WEFT_SUCCESS);
        size_t count = 0;
        EXPECT_EQ(weft_get_count(&st, WEFT_FLOAT, &count), WEFT_SUCCESS);
        EXPECT_EQ(count, n);
    }
}

// b. Host buffers of three kinds.
enum class mem { pageable, pinned, managed };

struct host_case {
    mem kind;
    size_t n;
};

std::string host_case_name(const ::testing::TestParamInfo<host_case> &p) {
    const char *k = p.param.kind == mem::pageable ? "Pageable" : p.param.kind == mem::pinned ? "Pinned" : "Managed";
    return std::string(k) + std::to_string(p.param.n);
}

// Host-visible memory of one kind; pinned and managed memory are also visible to kernels.
class host_buf {
  public:
    host_buf(mem kind, size_t n) : kind_(kind) {
        size_t bytes = n * sizeof(int) + 1;
        cudaError_t e = cudaSuccess;
        switch (kind) {
            case mem::pageable: p_ = static_cast<int *>(std::malloc(bytes)); break;
            case mem::pinned: e = cudaMallocHost(&p_, bytes); break;
            case mem::managed: e = cudaMallocManaged(&p_, bytes); break;
        }
        if (e != cudaSuccess) p_ = nullptr;
    }
    ~host_buf() {
        if (p_ == nullptr) return;
        if (kind_ == mem::pageable)
            std::free(p_);
        else if (kind_ == mem::pinned)
            cudaFreeHost(p_);
        else
            cudaFree(p_);
    }
    host_buf(const host_buf &) = delete;
    host_buf &operator=(const host_buf &) = delete;
    int *get() const { return p_; }

  private:
    mem kind_;
    int *p_ = nullptr;
};

class IsendWait : public gpu_fixture, public ::testing::WithParamInterface<host_case> {};

// Both processes exchange n ints: irecv_enqueue from the peer, isend_enqueue to it, then
// wait_enqueue on each.  In pinned and managed memory a kernel before the send writes what is
// sent and a kernel after the receive's wait adds 1, so both must run in queue order.
TEST_P(IsendWait, Exchange) {
    const mem kind = GetParam().kind;
    const size_t n = GetParam().n;
    const bool kernels = kind != mem::pageable;
    constexpr int tag = 2;
    const int mine = 7 + 1000 * world_rank(), theirs = 7 + 1000 * peer_;
    host_buf sbuf(kind, n), rbuf(kind, n);
    ASSERT_NE(sbuf.get(), nullptr);
    ASSERT_NE(rbuf.get(), nullptr);
    for (size_t i = 0; i < n; ++i) rbuf.get()[i] = -1;
    if (kernels) {
        ASSERT_CUDA(ramp(sbuf.get(), n, 3, n + 1, mine, cs_));
    } else {
        for (size_t i = 0; i < n; ++i) sbuf.get()[i] = 3 * static_cast<int>(i) + mine;
    }
    weft_request rreq = WEFT_REQUEST_NULL, sreq = WEFT_REQUEST_NULL;
    step("weft_irecv_enqueue");
    int rc = weft_irecv_enqueue(rbuf.get(), n, WEFT_INT, peer_, tag, c_, &rreq);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    ASSERT_NE(rreq, WEFT_REQUEST_NULL);
    step("weft_isend_enqueue");
    rc = weft_isend_enqueue(sbuf.get(), n, WEFT_INT, peer_, tag, c_, &sreq);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    ASSERT_NE(sreq, WEFT_REQUEST_NULL);
    step("weft_wait_enqueue (send)");
    rc = weft_wait_enqueue(&sreq, WEFT_STATUS_IGNORE);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    EXPECT_EQ(sreq, WEFT_REQUEST_NULL);
    weft_status st{};
    st.source = -5;
    step("weft_wait_enqueue (recv)");
    rc = weft_wait_enqueue(&rreq, &st);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    EXPECT_EQ(rreq, WEFT_REQUEST_NULL);
    if (kernels) ASSERT_CUDA(add(rbuf.get(), n, 1, cs_));
    sync("isend/irecv/wait_enqueue");
    std::vector<int> got(rbuf.get(), rbuf.get() + n);
    const int plus = kernels ? 1 : 0;
    EXPECT_EQ(mismatches(got, n, [&](size_t i) { return 3 * static_cast<int>(i) + theirs + plus; }), "");
    EXPECT_EQ(st.source, peer_);
    EXPECT_EQ(st.tag, tag);
    size_t count = 0;
    EXPECT_EQ(weft_get_count(&st, WEFT_INT, &count), WEFT_SUCCESS);
    EXPECT_EQ(count, n);
}

// 16 ints go eagerly on every fabric; 256 Ki ints (1 MiB) take the large-message path.
INSTANTIATE_TEST_SUITE_P(Host, IsendWait,
                         ::testing::Values(host_case{mem::pageable, 16}, host_case{mem::pageable, 262144},
                                           host_case{mem::pinned, 16}, host_case{mem::pinned, 262144},
                                           host_case{mem::managed, 16}, host_case{mem::managed, 262144}),
                         host_case_name);

// c. Rank 0 sends four device buffers of different sizes and tags (isend_enqueue each, one
// waitall_enqueue); rank 1 posts the receives in the opposite tag order, waits for all with
// one waitall_enqueue, then adds 1 to each buffer on the queue.
TEST_F(GpuP2P, IrecvWaitallDevice) {
    constexpr int k = 4;
    const size_t sizes[k] = {1, 1000, 65536, size_t(1) << 20};
    const int tags[k] = {10, 11, 12, 13};
    std::vector<std::unique_ptr<dev_buf<int>>> bufs;
    for (int i = 0; i < k; ++i) {
        bufs.emplace_back(new dev_buf<int>(sizes[i]));
        ASSERT_NE(bufs.back()->get(), nullptr);
    }
    weft_request reqs[k];
    if (world_rank() == 0) {
        for (int i = 0; i < k; ++i) {
            ASSERT_CUDA(ramp(bufs[i]->get(), sizes[i], 5, sizes[i] + 1, tags[i], cs_));
            step("weft_isend_enqueue %d", i);
            int rc = weft_isend_enqueue(bufs[i]->get(), sizes[i], WEFT_INT, 1, tags[i], c_, &reqs[i]);
            ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        }
        step("weft_waitall_enqueue (sends)");
        int rc = weft_waitall_enqueue(k, reqs, WEFT_STATUSES_IGNORE);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        for (int i = 0; i < k; ++i) EXPECT_EQ(reqs[i], WEFT_REQUEST_NULL) << i;
        sync("isend_enqueue x4 + waitall_enqueue");
    } else {
        for (int i = k - 1; i >= 0; --i) {
            ASSERT_CUDA(fill(bufs[i]->get(), sizes[i], -1, cs_));
            step("weft_irecv_enqueue %d", i);
            int rc = weft_irecv_enqueue(bufs[i]->get(), sizes[i], WEFT_INT, 0, tags[i], c_, &reqs[i]);
            ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        }
        weft_status st[k];
        for (auto &s : st) s.source = s.tag = -5;
        step("weft_waitall_enqueue (receives)");
        int rc = weft_waitall_enqueue(k, reqs, st);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        for (int i = 0; i < k; ++i) EXPECT_EQ(reqs[i], WEFT_REQUEST_NULL) << i;
        for (int i = 0; i < k; ++i) ASSERT_CUDA(add(bufs[i]->get(), sizes[i], 1, cs_));
        sync("irecv_enqueue x4 + waitall_enqueue + kernels");
        for (int i = 0; i < k; ++i) {
            const int t = tags[i];
            EXPECT_EQ(mismatches(bufs[i]->to_host(), sizes[i], [&](size_t j) { return 5 * static_cast<int>(j) + t + 1; }),
                      "")
                << "message " << i << " (tag " << t << ")";
            EXPECT_EQ(st[i].source, 0) << i;
            EXPECT_EQ(st[i].tag, t) << i;
            size_t count = 0;
            EXPECT_EQ(weft_get_count(&st[i], WEFT_INT, &count), WEFT_SUCCESS);
            EXPECT_EQ(count, sizes[i]) << i;
        }
    }
}

}  // namespace

GPU_TEST_MAIN("gpu.p2p")
