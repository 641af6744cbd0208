// The enqueue engine on the test-only host queue (tests/hostq: a serial queue run by a CPU
// thread, with "device" memory the host plugin reports as such, so device buffers are staged).
// Two processes; each test is collective.  Every program runs once per mechanism
// (WEFT_ENQUEUE=memops|hostfn) and per fabric.
#include <atomic>
#include <cstring>
#include <numeric>
#include <vector>

#include "hostq.h"
#include "streams_env.hpp"
#include "weft/weft.hpp"

using namespace streams_test;

namespace {

// The progress thread retires operations shortly after their queue passed them; until then
// the communicator is busy.
int free_when_retired(weft_comm *c) {
    int rc = WEFT_ERR_BUSY;
    for (int i = 0; i < 2000 && (rc = weft_comm_free(c)) == WEFT_ERR_BUSY; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return rc;
}

// A host queue attached to a stream, and the stream communicator over it.
class Enqueue : public collective_test {
  protected:
    hostq_t *q_ = nullptr;
    weft_stream s_ = WEFT_STREAM_NULL;
    weft_comm c_ = WEFT_COMM_NULL;
    int peer_ = -1;

    static int attach(hostq_t *q, weft_stream *s) {
        weft_info info;
        if (int rc = weft_info_create(&info)) return rc;
        weft_info_set(info, "type", "weft_hostq_t");
        weft_info_set_hex(info, "value", &q, sizeof q);
        int rc = weft_stream_create(info, s);
        weft_info_free(&info);
        return rc;
    }
    void SetUp() override {
        collective_test::SetUp();
        if (world_size() != 2) GTEST_SKIP() << "needs exactly 2 processes";
        peer_ = 1 - world_rank();
        ASSERT_EQ(hostq_create(&q_), 0);
        int rc = attach(q_, &s_);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        step("weft_stream_comm_create");
        rc = weft_stream_comm_create(WEFT_COMM_WORLD, s_, &c_);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    }
    void TearDown() override {
        step("tear down: synchronize, free");
        if (q_ != nullptr) {
            EXPECT_EQ(hostq_synchronize(q_), 0);
        }
        if (c_ != WEFT_COMM_NULL) {
            int rc = free_when_retired(&c_);
            EXPECT_EQ(rc, WEFT_SUCCESS) << err(rc);
        }
        if (s_ != WEFT_STREAM_NULL) {
            int rc = weft_stream_free(&s_);
            EXPECT_EQ(rc, WEFT_SUCCESS) << err(rc);
        }
        if (q_ != nullptr) hostq_destroy(q_);
        collective_test::TearDown();
    }
};

// A "kernel": fills n floats with a value, on the queue.
struct fill_args {
    float *p;
    size_t n;
    float v;
};
void fill_kernel(void *a) {
    auto *f = static_cast<fill_args *>(a);
    for (size_t i = 0; i < f->n; ++i) f->p[i] = f->v;
}
struct saxpy_args {
    float a;
    const float *x;
    float *y;
    size_t n;
};
void saxpy_kernel(void *v) {
    auto *s = static_cast<saxpy_args *>(v);
    for (size_t i = 0; i < s->n; ++i) s->y[i] = s->a * s->x[i] + s->y[i];
}

// MPICH's CUDA scenario: send/recv enqueue of 1M floats in device memory, then saxpy on the
// same queue; y = 2 * 1 + 2 = 4 everywhere.
TEST_F(Enqueue, SendRecvDeviceThenKernel) {
    constexpr size_t n = 1 << 20;
    auto *x = static_cast<float *>(hostq_malloc_device(n * sizeof(float)));
    auto *y = static_cast<float *>(hostq_malloc_device(n * sizeof(float)));
    ASSERT_NE(x, nullptr);
    ASSERT_NE(y, nullptr);
    fill_args fx{x, n, world_rank() == 0 ? 1.0f : 0.0f}, fy{y, n, 2.0f};
    saxpy_args sa{2.0f, x, y, n};
    ASSERT_EQ(hostq_launch(q_, fill_kernel, &fx), 0);
    ASSERT_EQ(hostq_launch(q_, fill_kernel, &fy), 0);
    weft_status st{};
    if (world_rank() == 0) {
        int rc = weft_send_enqueue(x, n, WEFT_FLOAT, 1, 7, c_);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    } else {
        int rc = weft_recv_enqueue(x, n, WEFT_FLOAT, 0, 7, c_, &st);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        ASSERT_EQ(hostq_launch(q_, saxpy_kernel, &sa), 0);
    }
    step("hostq_synchronize");
    ASSERT_EQ(hostq_synchronize(q_), 0);
    if (world_rank() == 1) {
        EXPECT_EQ(st.source, 0);
        EXPECT_EQ(st.tag, 7);
        EXPECT_EQ(st.error, WEFT_SUCCESS);
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i) bad += y[i] != 4.0f;
        EXPECT_EQ(bad, 0u) << "y[0] = " << y[0];
    }
    hostq_free_device(x);
    hostq_free_device(y);
}

// The operation starts only when the queue reaches it: a slow kernel writes the buffer first.
TEST_F(Enqueue, StartsWhenTheQueueGetsThere) {
    std::vector<int> buf(1000, -1);
    hostq_set_delay_us(q_, 20000);
    if (world_rank() == 0) {
        struct args { int *p; size_t n; } a{buf.data(), buf.size()};
        ASSERT_EQ(hostq_launch(q_, [](void *v) {
            auto *x = static_cast<args *>(v);
            for (size_t i = 0; i < x->n; ++i) x->p[i] = static_cast<int>(i);
        }, &a), 0);
        int rc = weft_send_enqueue(buf.data(), buf.size(), WEFT_INT, 1, 1, c_);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        ASSERT_EQ(hostq_synchronize(q_), 0);
    } else {
        int rc = weft_recv_enqueue(buf.data(), buf.size(), WEFT_INT, 0, 1, c_, WEFT_STATUS_IGNORE);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        // Returns before the message is there: the queue has not even started.
        ASSERT_EQ(hostq_synchronize(q_), 0);
        for (size_t i = 0; i < buf.size(); ++i) ASSERT_EQ(buf[i], static_cast<int>(i)) << i;
    }
    hostq_set_delay_us(q_, 0);
}

// isend_enqueue + wait_enqueue from host and pinned memory; the receiver uses the host path.
TEST_F(Enqueue, IsendWaitFromHostAndPinned) {
    constexpr size_t n = 4096;
    std::vector<double> host(n);
    auto *pinned = static_cast<double *>(hostq_malloc_host(n * sizeof(double)));
    ASSERT_NE(pinned, nullptr);
    if (world_rank() == 0) {
        std::iota(host.begin(), host.end(), 0.0);
        for (size_t i = 0; i < n; ++i) pinned[i] = -static_cast<double>(i);
        weft_request r[2];
        int rc = weft_isend_enqueue(host.data(), n, WEFT_DOUBLE, 1, 3, c_, &r[0]);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        rc = weft_isend_enqueue(pinned, n, WEFT_DOUBLE, 1, 4, c_, &r[1]);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        // Host completion calls refuse enqueued requests.
        EXPECT_EQ(weft_wait(&r[0], WEFT_STATUS_IGNORE), WEFT_ERR_REQUEST);
        EXPECT_NE(detail().find("weft_wait_enqueue"), std::string::npos) << detail();
        weft_status st{};
        rc = weft_wait_enqueue(&r[1], &st);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        EXPECT_EQ(r[1], WEFT_REQUEST_NULL);
        rc = weft_wait_enqueue(&r[0], WEFT_STATUS_IGNORE);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        ASSERT_EQ(hostq_synchronize(q_), 0);
    } else {
        std::vector<double> a(n), b(n);
        ASSERT_EQ(weft_recv(b.data(), n, WEFT_DOUBLE, 0, 4, c_, WEFT_STATUS_IGNORE), WEFT_SUCCESS) << detail();
        ASSERT_EQ(weft_recv(a.data(), n, WEFT_DOUBLE, 0, 3, c_, WEFT_STATUS_IGNORE), WEFT_SUCCESS) << detail();
        for (size_t i = 0; i < n; ++i) {
            ASSERT_EQ(a[i], static_cast<double>(i));
            ASSERT_EQ(b[i], -static_cast<double>(i));
        }
    }
    hostq_free_host(pinned);
}

// irecv_enqueue x 4 into device memory + waitall_enqueue; statuses are written before the
// queue goes on, so a kernel after the wait sees the data.
TEST_F(Enqueue, IrecvWaitallIntoDevice) {
    constexpr int k = 4;
    constexpr size_t n = 10000;
    if (world_rank() == 0) {
        std::vector<std::vector<int>> out(k, std::vector<int>(n));
        for (int j = 0; j < k; ++j) std::fill(out[j].begin(), out[j].end(), 100 + j);
        for (int j = k - 1; j >= 0; --j)
            ASSERT_EQ(weft_send(out[j].data(), n, WEFT_INT, 1, j, c_), WEFT_SUCCESS) << detail();
    } else {
        int *dev[k];
        weft_request r[k + 1];
        for (int j = 0; j < k; ++j) {
            dev[j] = static_cast<int *>(hostq_malloc_device(n * sizeof(int)));
            ASSERT_NE(dev[j], nullptr);
            int rc = weft_irecv_enqueue(dev[j], n, WEFT_INT, 0, j, c_, &r[j]);
            ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        }
        r[k] = WEFT_REQUEST_NULL;  // null entries are allowed and get an empty status
        weft_status st[k + 1];
        std::memset(st, 0xff, sizeof st);
        int rc = weft_waitall_enqueue(k + 1, r, st);
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
        for (int j = 0; j <= k; ++j) EXPECT_EQ(r[j], WEFT_REQUEST_NULL);
        std::atomic<long> sum{0};
        struct args { int **dev; size_t n; std::atomic<long> *sum; } a{dev, n, &sum};
        ASSERT_EQ(hostq_launch(q_, [](void *v) {
            auto *x = static_cast<args *>(v);
            long s = 0;
            for (int j = 0; j < k; ++j)
                for (size_t i = 0; i < x->n; ++i) s += x->dev[j][i];
            x->sum->store(s);
        }, &a), 0);
        ASSERT_EQ(hostq_synchronize(q_), 0);
        EXPECT_EQ(sum.load(), static_cast<long>(n) * (100 + 101 + 102 + 103));
        for (int j = 0; j < k; ++j) {
            EXPECT_EQ(st[j].source, 0);
            EXPECT_EQ(st[j].tag, j);
            EXPECT_EQ(st[j].error, WEFT_SUCCESS);
            hostq_free_device(dev[j]);
        }
        EXPECT_EQ(st[k].source, WEFT_ANY_SOURCE);
    }
}

// Collectives on device buffers: allreduce (and in place), bcast, barrier, allgather.
TEST_F(Enqueue, CollectivesOnDeviceBuffers) {
    constexpr size_t n = 3000;
    auto *a = static_cast<int *>(hostq_malloc_device(n * sizeof(int)));
    auto *b = static_cast<int *>(hostq_malloc_device(n * sizeof(int)));
    auto *g = static_cast<int *>(hostq_malloc_device(2 * n * sizeof(int)));
    for (size_t i = 0; i < n; ++i) a[i] = static_cast<int>(i) * (world_rank() + 1);  // before any enqueue: no race
    int rc = weft_allreduce_enqueue(a, b, n, WEFT_INT, WEFT_SUM, c_);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    rc = weft_allreduce_enqueue(WEFT_IN_PLACE, a, n, WEFT_INT, WEFT_MAX, c_);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    rc = weft_barrier_enqueue(c_);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    rc = weft_allgather_enqueue(b, n, WEFT_INT, g, n, WEFT_INT, c_);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    ASSERT_EQ(hostq_synchronize(q_), 0);
    for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(b[i], 3 * static_cast<int>(i)) << i;
        ASSERT_EQ(a[i], 2 * static_cast<int>(i)) << i;
        ASSERT_EQ(g[i], 3 * static_cast<int>(i)) << i;
        ASSERT_EQ(g[n + i], 3 * static_cast<int>(i)) << i;
    }
    if (world_rank() == 1) std::fill(a, a + n, 42);
    rc = weft_bcast_enqueue(a, n, WEFT_INT, 1, c_);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    ASSERT_EQ(hostq_synchronize(q_), 0);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], 42) << i;
    hostq_free_device(a);
    hostq_free_device(b);
    hostq_free_device(g);
}

// Many small round trips in a row, all on the queue: the order of points holds.
TEST_F(Enqueue, PingPongOnTheQueue) {
    constexpr int iters = 200;
    int *v = static_cast<int *>(hostq_malloc_device(sizeof(int)));
    *v = 0;
    struct inc {
        int *v;
    } arg{v};
    for (int i = 0; i < iters; ++i) {
        int rc;
        if ((i % 2 == 0) == (world_rank() == 0)) {
            rc = weft_send_enqueue(v, 1, WEFT_INT, peer_, i, c_);
        } else {
            rc = weft_recv_enqueue(v, 1, WEFT_INT, peer_, i, c_, WEFT_STATUS_IGNORE);
            if (rc == WEFT_SUCCESS) rc = hostq_launch(q_, [](void *p) { ++*static_cast<inc *>(p)->v; }, &arg);
        }
        ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    }
    ASSERT_EQ(hostq_synchronize(q_), 0);
    // The value went round, incremented at each receive: rank 0 received last.
    EXPECT_EQ(*v, world_rank() == 0 ? iters : iters - 1);
    hostq_free_device(v);
}

// The C++ layer: spans, errors as exceptions, and a dropped QueueRequest waits on its queue.
TEST_F(Enqueue, CxxLayer) {
    weft::Comm c(c_);
    std::vector<long> out(64), in(64, 0);
    std::iota(out.begin(), out.end(), 10L * world_rank());
    {
        weft::QueueRequest r = c.irecv_enqueue(in.data(), in.size(), WEFT_LONG, peer_, 9);
        c.send_enqueue(std::span<const long>(out), peer_, 9);
        EXPECT_TRUE(r.active());
    }  // the wait is enqueued here
    EXPECT_THROW(weft::Comm::world().barrier_enqueue(), weft::error);
    ASSERT_EQ(hostq_synchronize(q_), 0);
    for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(in[i], 10L * peer_ + static_cast<long>(i));
}

// Misuse: an enqueue call on a communicator without a GPU queue, requests of two queues in one
// waitall, and a stream whose queue still has work.
TEST_F(Enqueue, Misuse) {
    int x = 0;
    int rc = weft_send_enqueue(&x, 1, WEFT_INT, peer_, 0, WEFT_COMM_WORLD);
    EXPECT_EQ(rc, WEFT_ERR_STREAM);
    EXPECT_NE(detail().find("no GPU queue"), std::string::npos) << detail();
    EXPECT_EQ(weft_barrier_enqueue(WEFT_COMM_WORLD), WEFT_ERR_STREAM);
    EXPECT_EQ(weft_send_enqueue(&x, 1, WEFT_INT, 5, 0, c_), WEFT_ERR_RANK);
    EXPECT_EQ(weft_recv_enqueue(&x, 1, WEFT_INT, peer_, -5, c_, WEFT_STATUS_IGNORE), WEFT_ERR_TAG);
    EXPECT_EQ(weft_isend_enqueue(&x, 1, WEFT_INT, peer_, 0, c_, nullptr), WEFT_ERR_ARG);

    // A second queue and stream: requests may not be mixed.
    hostq_t *q2 = nullptr;
    ASSERT_EQ(hostq_create(&q2), 0);
    weft_stream s2 = WEFT_STREAM_NULL;
    rc = attach(q2, &s2);
    ASSERT_EQ(rc, WEFT_SUCCESS) << err(rc);
    weft_comm c2 = WEFT_COMM_NULL;
    ASSERT_EQ(weft_stream_comm_create(WEFT_COMM_WORLD, s2, &c2), WEFT_SUCCESS) << detail();
    int y = 0, z = 0;
    weft_request r[2];
    ASSERT_EQ(weft_irecv_enqueue(&y, 1, WEFT_INT, peer_, 1, c_, &r[0]), WEFT_SUCCESS) << detail();
    ASSERT_EQ(weft_irecv_enqueue(&z, 1, WEFT_INT, peer_, 2, c2, &r[1]), WEFT_SUCCESS) << detail();
    EXPECT_EQ(weft_waitall_enqueue(2, r, WEFT_STATUSES_IGNORE), WEFT_ERR_REQUEST);
    EXPECT_NE(detail().find("another GPU queue"), std::string::npos) << detail();
    int one = 1, two = 2;
    ASSERT_EQ(weft_send(&one, 1, WEFT_INT, peer_, 1, c_), WEFT_SUCCESS) << detail();
    ASSERT_EQ(weft_send(&two, 1, WEFT_INT, peer_, 2, c2), WEFT_SUCCESS) << detail();
    ASSERT_EQ(weft_wait_enqueue(&r[0], WEFT_STATUS_IGNORE), WEFT_SUCCESS) << detail();
    ASSERT_EQ(weft_wait_enqueue(&r[1], WEFT_STATUS_IGNORE), WEFT_SUCCESS) << detail();

    // A blocked queue: its communicator cannot be freed while an operation is registered.
    std::atomic<bool> go{false};
    ASSERT_EQ(hostq_launch(q2, [](void *p) {
        while (!static_cast<std::atomic<bool> *>(p)->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }, &go), 0);
    int w = 0, three = 3;
    ASSERT_EQ(weft_recv_enqueue(&w, 1, WEFT_INT, peer_, 3, c2, WEFT_STATUS_IGNORE), WEFT_SUCCESS) << detail();
    ASSERT_EQ(weft_send(&three, 1, WEFT_INT, peer_, 3, c2), WEFT_SUCCESS) << detail();
    rc = weft_comm_free(&c2);
    EXPECT_EQ(rc, WEFT_ERR_BUSY) << err(rc);
    EXPECT_NE(detail().find("enqueued"), std::string::npos) << detail();
    EXPECT_NE(c2, WEFT_COMM_NULL);
    go.store(true);
    ASSERT_EQ(hostq_synchronize(q2), 0);
    ASSERT_EQ(hostq_synchronize(q_), 0);
    EXPECT_EQ(y, 1);
    EXPECT_EQ(z, 2);
    EXPECT_EQ(w, 3);
    // The progress thread retires the operations soon after the queue passed them.
    step("free the second communicator and stream");
    rc = free_when_retired(&c2);
    EXPECT_EQ(rc, WEFT_SUCCESS) << err(rc);
    rc = weft_stream_free(&s2);
    EXPECT_EQ(rc, WEFT_SUCCESS) << err(rc);
    hostq_destroy(q2);
}

}  // namespace

STREAMS_TEST_MAIN("enqueue", WEFT_THREAD_SINGLE)
