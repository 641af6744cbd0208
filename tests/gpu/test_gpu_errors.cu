// Enqueue errors that need a device: every enqueue call on a communicator without a GPU
// queue, waiting on the queue for a request that is not from it, and cudaStream_t values
// weft_stream_create must refuse without crashing.  GarbageStream runs as a ctest case of its
// own (gtest filter), so that a crash there is reported alone.
#include <cstdint>
#include <string>

#include "gpu_env.hpp"

using namespace gpu_test;

namespace {

using GpuErrors = gpu_fixture;

// Every enqueue call on comm fails with WEFT_ERR_STREAM and sends nothing.
void expect_no_queue(weft_comm comm, int peer, const char *what) {
    SCOPED_TRACE(what);
    int buf[4] = {0, 0, 0, 0}, out[8] = {0};
    weft_status st{};
    weft_request req = WEFT_REQUEST_NULL;
    EXPECT_EQ(weft_send_enqueue(buf, 1, WEFT_INT, peer, 0, comm), WEFT_ERR_STREAM) << detail();
    EXPECT_EQ(weft_recv_enqueue(buf, 1, WEFT_INT, peer, 0, comm, &st), WEFT_ERR_STREAM) << detail();
    EXPECT_EQ(weft_isend_enqueue(buf, 1, WEFT_INT, peer, 0, comm, &req), WEFT_ERR_STREAM) << detail();
    EXPECT_EQ(weft_irecv_enqueue(buf, 1, WEFT_INT, peer, 0, comm, &req), WEFT_ERR_STREAM) << detail();
    EXPECT_EQ(weft_allreduce_enqueue(buf, out, 1, WEFT_INT, WEFT_SUM, comm), WEFT_ERR_STREAM) << detail();
    EXPECT_EQ(weft_bcast_enqueue(buf, 1, WEFT_INT, 0, comm), WEFT_ERR_STREAM) << detail();
    EXPECT_EQ(weft_barrier_enqueue(comm), WEFT_ERR_STREAM) << detail();
    EXPECT_EQ(weft_allgather_enqueue(buf, 1, WEFT_INT, out, 1, WEFT_INT, comm), WEFT_ERR_STREAM) << detail();
}

TEST_F(GpuErrors, NoGpuQueue) {
    step("enqueue on WEFT_COMM_WORLD");
    expect_no_queue(WEFT_COMM_WORLD, peer_, "WEFT_COMM_WORLD");
    // A stream communicator on a CPU stream has no GPU queue either.
    weft_stream cpu = WEFT_STREAM_NULL;
    weft_comm cc = WEFT_COMM_NULL;
    int rc = weft_stream_create(WEFT_INFO_NULL, &cpu);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    step("weft_stream_comm_create (CPU stream)");
    rc = weft_stream_comm_create(WEFT_COMM_WORLD, cpu, &cc);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    step("enqueue on a CPU stream communicator");
    expect_no_queue(cc, peer_, "CPU stream communicator");
    EXPECT_EQ(weft_comm_free(&cc), WEFT_SUCCESS) << detail();
    EXPECT_EQ(weft_stream_free(&cpu), WEFT_SUCCESS) << detail();
}

// A request from weft_irecv belongs to no queue: wait_enqueue refuses it with
// WEFT_ERR_REQUEST, and the request then completes as usual with weft_wait.
TEST_F(GpuErrors, WaitEnqueueOnPlainRequest) {
    constexpr int tag = 7;
    int in = -1, out = 100 + world_rank();
    weft_request req = WEFT_REQUEST_NULL;
    int rc = weft_irecv(&in, 1, WEFT_INT, peer_, tag, WEFT_COMM_WORLD, &req);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    weft_request copy = req;
    rc = weft_wait_enqueue(&copy, WEFT_STATUS_IGNORE);
    EXPECT_EQ(rc, WEFT_ERR_REQUEST) << detail();
    weft_request two[2] = {req, req};
    rc = weft_waitall_enqueue(2, two, WEFT_STATUSES_IGNORE);
    EXPECT_EQ(rc, WEFT_ERR_REQUEST) << detail();
    step("weft_send + weft_wait of the plain request");
    rc = weft_send(&out, 1, WEFT_INT, peer_, tag, WEFT_COMM_WORLD);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    rc = weft_wait(&req, WEFT_STATUS_IGNORE);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    EXPECT_EQ(in, 100 + peer_);
}

// Values of the wrong size or type, or no value at all: refused, nothing created.
TEST_F(GpuErrors, BadStreamInfo) {
    // The value is read from here: the stream handle, then zeros (for the 16-byte case).
    struct {
        cudaStream_t cs;
        void *pad;
    } value = {cs_, nullptr};
    struct bad {
        const char *what;
        const char *type;
        size_t size;  // 0: no "value" key
    } cases[] = {
        {"4-byte value", "cudaStream_t", 4},
        {"16-byte value", "cudaStream_t", 16},
        {"no value", "cudaStream_t", 0},
        {"unknown type", "notAStream_t", sizeof(cudaStream_t)},
    };
    for (const bad &c : cases) {
        weft_stream s = WEFT_STREAM_NULL;
        weft_info info = WEFT_INFO_NULL;
        ASSERT_EQ(weft_info_create(&info), WEFT_SUCCESS);
        ASSERT_EQ(weft_info_set(info, "type", c.type), WEFT_SUCCESS);
        if (c.size > 0) ASSERT_EQ(weft_info_set_hex(info, "value", &value, c.size), WEFT_SUCCESS);
        int rc = weft_stream_create(info, &s);
        weft_info_free(&info);
        EXPECT_NE(rc, WEFT_SUCCESS) << c.what << " was accepted";
        if (rc == WEFT_SUCCESS) {
            weft_stream_free(&s);
        } else {
            EXPECT_EQ(s, WEFT_STREAM_NULL) << c.what;
            std::printf("rank %d: %s refused: %s\n", world_rank(), c.what, err(rc).c_str());
        }
    }
}

// A value that is no stream: refused with an error code, not a crash.
TEST_F(GpuErrors, GarbageStream) {
    weft_stream s = WEFT_STREAM_NULL;
    cudaStream_t garbage = reinterpret_cast<cudaStream_t>(uintptr_t(0xdead0000));
    step("weft_stream_create on a garbage cudaStream_t");
    int rc = gpu_stream_create(garbage, &s);
    EXPECT_NE(rc, WEFT_SUCCESS) << "a garbage cudaStream_t was accepted";
    if (rc == WEFT_SUCCESS)
        weft_stream_free(&s);
    else
        std::printf("rank %d: garbage cudaStream_t refused: %s\n", world_rank(), err(rc).c_str());
}

}  // namespace

GPU_TEST_MAIN("gpu.errors")
