// Shared helpers for the GPU enqueue tests: 2 processes on CUDA device 0, each with a
// cudaStream_t attached to a Weft stream communicator.  Built on the stream tests' helpers
// (tests/streams/streams_env.hpp: err, collective_test) and the shared harness (tests/common/:
// watchdog, step, p2p_barrier).
//
// Without a usable device every test skips with the CUDA error as its reason, after the same
// weft_init and before any enqueue call, so both processes still finalize together; a program
// whose tests all skipped exits 77 (ctest's SKIP_RETURN_CODE).
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "streams_env.hpp"

namespace gpu_test {
using namespace streams_test;

#define ASSERT_CUDA(x)                                                                                   \
    do {                                                                                                 \
        cudaError_t e_ = (x);                                                                            \
        ASSERT_EQ(e_, cudaSuccess) << "rank " << world_rank() << ": " #x ": " << cudaGetErrorString(e_); \
    } while (0)
#define EXPECT_CUDA(x)                                                                                   \
    do {                                                                                                 \
        cudaError_t e_ = (x);                                                                            \
        EXPECT_EQ(e_, cudaSuccess) << "rank " << world_rank() << ": " #x ": " << cudaGetErrorString(e_); \
    } while (0)

// Why no test can run ("" when they can); decided once, agreed by every process.
inline std::string &skip_reason() {
    static std::string why;
    return why;
}

// Why this process cannot use device 0, or "" when it can.
inline std::string local_device_problem() {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) return std::string("no CUDA device: cudaGetDeviceCount: ") + cudaGetErrorString(e);
    if (n == 0) return "no CUDA device: cudaGetDeviceCount found 0 devices";
    e = cudaSetDevice(0);
    // Create the context now, so that its cost and its failures are not a test's.
    if (e == cudaSuccess) e = cudaFree(nullptr);
    if (e != cudaSuccess) return std::string("CUDA device 0 unusable: ") + cudaGetErrorString(e);
    return "";
}

inline std::string device_name() {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "?";
    return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ")";
}

inline const char *mechanism() {
    const char *m = std::getenv("WEFT_ENQUEUE");
    return m && *m ? m : "default (memops)";
}

// weft_stream_create on a cudaStream_t, as with MPICH: info "type" and hex "value".
inline int gpu_stream_create(cudaStream_t cs, weft_stream *s) {
    weft_info info = WEFT_INFO_NULL;
    int rc = weft_info_create(&info);
    if (rc) return rc;
    rc = weft_info_set(info, "type", "cudaStream_t");
    if (rc == 0) rc = weft_info_set_hex(info, "value", &cs, sizeof cs);
    if (rc == 0) rc = weft_stream_create(info, s);
    weft_info_free(&info);
    return rc;
}

// Weft for the whole program (the stream tests' environment, which also finalizes); also
// decides, with every process, whether the device is usable.
class environment : public streams_test::environment {
  public:
    using streams_test::environment::environment;
    void SetUp() override {
        init();
        if (::testing::Test::HasFatalFailure()) return;
        std::string mine = local_device_problem();
        // Every process must skip or run together: a test half skipped would hang its peer.
        int ok = mine.empty() ? 1 : 0, all_ok = 0;
        ASSERT_EQ(weft_allreduce(&ok, &all_ok, 1, WEFT_INT, WEFT_MIN, WEFT_COMM_WORLD), WEFT_SUCCESS) << detail();
        if (!mine.empty())
            skip_reason() = mine;
        else if (!all_ok)
            skip_reason() = "another process has no usable CUDA device (see its output)";
        if (world_rank() == 0) {
            std::printf("%s: %d processes, WEFT_ENQUEUE=%s, device 0: %s\n", name_, world_size(), mechanism(),
                        skip_reason().empty() ? device_name().c_str() : skip_reason().c_str());
            std::fflush(stdout);
        }
    }
};

// Every test: both processes in step (collective_test), a non-blocking cudaStream_t, its Weft
// stream and the stream communicator c_ over WEFT_COMM_WORLD.
class gpu_fixture : public collective_test {
  protected:
    cudaStream_t cs_ = nullptr;
    weft_stream s_ = WEFT_STREAM_NULL;
    weft_comm c_ = WEFT_COMM_NULL;
    int peer_ = -1;

    void SetUp() override {
        collective_test::SetUp();
        if (!skip_reason().empty()) GTEST_SKIP() << skip_reason();
        if (world_size() != 2) GTEST_SKIP() << "needs exactly 2 processes";
        peer_ = 1 - world_rank();
        // Non-blocking: the tests' own cudaMemcpy on the legacy stream never orders against it.
        ASSERT_CUDA(cudaStreamCreateWithFlags(&cs_, cudaStreamNonBlocking));
        step("weft_stream_create (cudaStream_t)");
        int rc = gpu_stream_create(cs_, &s_);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        step("weft_stream_comm_create");
        rc = weft_stream_comm_create(WEFT_COMM_WORLD, s_, &c_);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        step("test body");
    }
    void TearDown() override {
        step("tear down: cudaStreamSynchronize, free");
        if (cs_ != nullptr) EXPECT_CUDA(cudaStreamSynchronize(cs_));
        if (c_ != WEFT_COMM_NULL) EXPECT_EQ(weft_comm_free(&c_), WEFT_SUCCESS) << detail();
        if (s_ != WEFT_STREAM_NULL) EXPECT_EQ(weft_stream_free(&s_), WEFT_SUCCESS) << detail();
        if (cs_ != nullptr) EXPECT_CUDA(cudaStreamDestroy(cs_));
        cs_ = nullptr;
        collective_test::TearDown();
    }
    // The queue's end: every enqueued operation has completed once this returns.
    void sync(const char *what) {
        step("cudaStreamSynchronize after %s", what);
        ASSERT_CUDA(cudaStreamSynchronize(cs_));
        step("test body after %s", what);
    }
};

// Device memory freed at scope end.  Tests synchronize their stream before leaving the scope.
template <class T>
class dev_buf {
  public:
    explicit dev_buf(size_t n) : n_(n) {
        if (cudaMalloc(&p_, n * sizeof(T) + 1) != cudaSuccess) p_ = nullptr;
    }
    ~dev_buf() {
        if (p_) cudaFree(p_);
    }
    dev_buf(const dev_buf &) = delete;
    dev_buf &operator=(const dev_buf &) = delete;
    T *get() const { return p_; }
    size_t size() const { return n_; }
    std::vector<T> to_host() const {
        std::vector<T> h(n_);
        if (cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) h.clear();
        return h;
    }

  private:
    T *p_ = nullptr;
    size_t n_;
};

// The first mismatch of got[i] against want(i), and how many there are, for one message.
template <class T, class F>
std::string mismatches(const std::vector<T> &got, size_t n, F want) {
    if (got.size() != n) return "could not copy the result back (size " + std::to_string(got.size()) + ")";
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; ++i)
        if (!(got[i] == want(i)) && bad++ == 0) first = i;
    if (bad == 0) return "";
    return std::to_string(bad) + " of " + std::to_string(n) + " elements wrong; first at " + std::to_string(first) +
           ": got " + std::to_string(got[first]) + ", want " + std::to_string(want(first));
}

// main()'s status: 77 when every test that was to run skipped (ctest's SKIP_RETURN_CODE).
inline int exit_status(int gtest_rc) {
    const ::testing::UnitTest *u = ::testing::UnitTest::GetInstance();
    if (gtest_rc == 0 && u->test_to_run_count() > 0 && u->skipped_test_count() == u->test_to_run_count()) return 77;
    return gtest_rc;
}

}  // namespace gpu_test

#define GPU_TEST_MAIN(NAME)                                                       \
    int main(int argc, char **argv) {                                             \
        ::testing::InitGoogleTest(&argc, argv);                                   \
        streams_test::parse_args(&argc, argv);                                    \
        ::testing::AddGlobalTestEnvironment(new gpu_test::environment(NAME));     \
        return gpu_test::exit_status(RUN_ALL_TESTS());                            \
    }
