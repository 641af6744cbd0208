/* Queue plugins: copies in queue order between host and pinned memory (under both sync
 * modes), zero-byte copies, memory kinds and pinned allocations. */
#include "queue_harness.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <tuple>

namespace conformance {
namespace {

using namespace std::chrono_literals;

enum class CopyKind { host_to_host, host_to_pinned, pinned_to_host, pinned_to_pinned };

const char *copy_kind_name(CopyKind k) {
    switch (k) {
        case CopyKind::host_to_host: return "host_to_host";
        case CopyKind::host_to_pinned: return "host_to_pinned";
        case CopyKind::pinned_to_host: return "pinned_to_host";
        case CopyKind::pinned_to_pinned: return "pinned_to_pinned";
    }
    return "?";
}

bool src_pinned(CopyKind k) { return k == CopyKind::pinned_to_host || k == CopyKind::pinned_to_pinned; }

bool dst_pinned(CopyKind k) { return k == CopyKind::host_to_pinned || k == CopyKind::pinned_to_pinned; }

// ---------------------------------------------------------------------- copies -----------

class QueueCopies : public QueueTest, public ::testing::WithParamInterface<std::tuple<int, CopyKind>> {
  protected:
    void SetUp() override {
        QueueTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        tq_ = make_queue(std::get<0>(GetParam()));
        if (IsSkipped()) return;
        ASSERT_NE(tq_, nullptr);
    }
    uint8_t *buffer(size_t n, bool pinned) { return static_cast<uint8_t *>(alloc(*tq_, n, pinned)); }
    TestQueue *tq_ = nullptr;
};

/* Appends signal(s1), wait(w), copy, signal(s2) on a helper thread, as the core may append
 * while its progress thread releases.  Everything the helper touches is its own (shared_ptr),
 * so a helper stuck in the plugin can be left behind without touching freed memory. */
struct BehindWait {
    const weft_queue_ops_v1_t *o;
    weft_queue_t *q;
    uint32_t s1, w, s2;
    void *dst;
    const void *src;
    size_t n;
    std::atomic<bool> done{false};
    int rc[4] = {WEFT_PLUGIN_ERR_OTHER, WEFT_PLUGIN_ERR_OTHER, WEFT_PLUGIN_ERR_OTHER, WEFT_PLUGIN_ERR_OTHER};

    template <class F>
    static int again(F &&f) {
        auto end = std::chrono::steady_clock::now() + queue_deadline;
        int r;
        while ((r = f()) == WEFT_PLUGIN_ERR_AGAIN && std::chrono::steady_clock::now() < end)
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        return r;
    }
    void run() {
        rc[0] = again([&] { return o->append_signal(q, s1); });
        if (rc[0] == WEFT_PLUGIN_OK) rc[1] = again([&] { return o->append_wait(q, w); });
        if (rc[1] == WEFT_PLUGIN_OK) rc[2] = again([&] { return o->append_copy(q, dst, src, n); });
        if (rc[2] == WEFT_PLUGIN_OK) rc[3] = again([&] { return o->append_signal(q, s2); });
        done.store(true);
    }
};

bool wait_flag(const std::atomic<bool> &flag, std::chrono::milliseconds d) {
    auto end = std::chrono::steady_clock::now() + d;
    while (!flag.load()) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return true;
}

/* Copies run where they were appended: after what came before them (a wait stops them), and
 * before the next signal (their data is there when it is reached). */
TEST_P(QueueCopies, RunInQueueOrder) {
    CopyKind kind = std::get<1>(GetParam());
    const bool sp = src_pinned(kind), dp = dst_pinned(kind);
    const size_t n = 64 * 1024 + 3;
    uint8_t *src = buffer(n, sp), *src2 = buffer(n, sp), *dst = buffer(n, dp);
    ASSERT_TRUE(src && src2 && dst);

    /* 1. Between two signals: the data is there once the second is reached. */
    queue_fill(src, n, 1);
    queue_fill(dst, n, 100);
    add_signal(*tq_);
    ASSERT_EQ(copy(*tq_, dst, src, n), WEFT_PLUGIN_OK) << "append_copy " << copy_kind_name(kind);
    uint32_t s = add_signal(*tq_);
    ASSERT_TRUE(wait_reached(*tq_, s));
    ASSERT_EQ(queue_check(dst, n, 1), n) << "the copy before signal " << s
                                         << " had not (entirely) happened when it was reached";

    /* 2. Behind a wait: the copy waits for the release. */
    queue_fill(src2, n, 2);
    auto bw = std::make_shared<BehindWait>();
    bw->o = &ops();
    bw->q = tq_->q;
    bw->s1 = take(*tq_);
    bw->w = take(*tq_);
    bw->s2 = take(*tq_);
    bw->dst = dst;
    bw->src = src2;
    bw->n = n;
    std::thread([bw] { bw->run(); }).detach();
    bool appended = wait_flag(bw->done, 2s);
    if (appended) {
        ASSERT_TRUE(wait_reached(*tq_, bw->s1));
        EXPECT_TRUE(stays_before(*tq_, bw->s2, 50ms))
            << "signal " << bw->s2 << " was reached with wait " << bw->w << " not released";
        EXPECT_EQ(queue_check(dst, n, 1), n) << "the copy behind wait " << bw->w << " ran before the wait was released";
    } else {
        /* Allowed: appends may block (CUDA's copies of pageable memory wait for the copy; the
         * core only copies pinned memory).  Only the order after the release is checked. */
        printf("note: %s append_copy blocked while the queue was stopped by a wait\n", copy_kind_name(kind));
    }
    release(*tq_, bw->w);
    if (!wait_flag(bw->done, queue_deadline)) {
        ADD_FAILURE() << "the appends did not return within " << queue_deadline.count() << " ms of the release";
        tq_->stuck = true; /* leaks the queue, its buffers and the runtime: never freed under it */
        leak_runtime_ = true;
        return;
    }
    /* The bookkeeping TearDown needs, for what went in. */
    if (bw->rc[0] == WEFT_PLUGIN_OK) tq_->last_signal = bw->s1;
    if (bw->rc[1] == WEFT_PLUGIN_OK) {
        tq_->last_wait = bw->w;
        tq_->any_wait = true;
        tq_->tail_is_signal = false;
    }
    if (bw->rc[3] == WEFT_PLUGIN_OK) {
        tq_->last_signal = bw->s2;
        tq_->tail_is_signal = true;
    }
    for (int i = 0; i < 4; ++i)
        ASSERT_EQ(bw->rc[i], WEFT_PLUGIN_OK) << "append #" << i << " of signal/wait/copy/signal";
    ASSERT_TRUE(wait_reached(*tq_, bw->s2));
    ASSERT_EQ(queue_check(dst, n, 2), n) << "the copy behind the wait had not happened when "
                                            "the signal after it was reached";

    /* 3. Copies that depend on each other: a chain through the other kind, and eight copies
     * to one place (the last one appended wins). */
    uint8_t *tmp = buffer(n, dp), *back = buffer(n, sp);
    const size_t chunk = 1024;
    uint8_t *many = buffer(8 * chunk, sp);
    ASSERT_TRUE(tmp && back && many);
    queue_fill(src, n, 3);
    queue_fill(tmp, n, 200);
    queue_fill(back, n, 201);
    for (int i = 0; i < 8; ++i) queue_fill(many + i * chunk, chunk, 10 + i);
    std::vector<uint8_t> expect(dst, dst + n);
    memcpy(expect.data(), many + 7 * chunk, chunk);
    ASSERT_EQ(copy(*tq_, tmp, src, n), WEFT_PLUGIN_OK);
    ASSERT_EQ(copy(*tq_, back, tmp, n), WEFT_PLUGIN_OK);
    for (int i = 0; i < 8; ++i) ASSERT_EQ(copy(*tq_, dst, many + i * chunk, chunk), WEFT_PLUGIN_OK);
    s = add_signal(*tq_);
    ASSERT_TRUE(wait_reached(*tq_, s));
    EXPECT_EQ(queue_check(tmp, n, 3), n) << "first copy of the chain";
    EXPECT_EQ(queue_check(back, n, 3), n) << "the second copy of the chain ran before the first";
    EXPECT_EQ(memcmp(dst, expect.data(), n), 0) << "eight copies to one place: the result is not the last one appended";
}

std::string copies_name(const ::testing::TestParamInfo<std::tuple<int, CopyKind>> &info) {
    return std::string(sync_name(std::get<0>(info.param))) + "_" + copy_kind_name(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(QueueSync, QueueCopies,
                         ::testing::Combine(::testing::Values(WEFT_QUEUE_SYNC_MEMOPS, WEFT_QUEUE_SYNC_HOSTFN),
                                            ::testing::Values(CopyKind::host_to_host, CopyKind::host_to_pinned,
                                                              CopyKind::pinned_to_host, CopyKind::pinned_to_pinned)),
                         copies_name);

class QueueCopyEdges : public QueueSyncOneQueueTest {};

/* A copy of 0 bytes is accepted and changes nothing; the queue goes on. */
TEST_P(QueueCopyEdges, ZeroBytes) {
    const size_t n = 256;
    auto *src = static_cast<uint8_t *>(alloc(*tq_, n, true));
    auto *dst = static_cast<uint8_t *>(alloc(*tq_, n, false));
    ASSERT_TRUE(src && dst);
    queue_fill(src, n, 5);
    queue_fill(dst, n, 6);
    uint32_t s1 = add_signal(*tq_);
    EXPECT_EQ(copy(*tq_, dst, src, 0), WEFT_PLUGIN_OK) << "append_copy of 0 bytes";
    EXPECT_EQ(copy(*tq_, src, dst, 0), WEFT_PLUGIN_OK) << "append_copy of 0 bytes";
    uint32_t s2 = add_signal(*tq_);
    ASSERT_TRUE(wait_reached(*tq_, s2));
    EXPECT_TRUE(serial_ge(s2, s1));
    EXPECT_EQ(queue_check(dst, n, 6), n) << "a 0-byte copy changed its destination";
    EXPECT_EQ(queue_check(src, n, 5), n) << "a 0-byte copy changed its destination";
    /* The queue still copies. */
    ASSERT_EQ(copy(*tq_, dst, src, n), WEFT_PLUGIN_OK);
    uint32_t s3 = add_signal(*tq_);
    ASSERT_TRUE(wait_reached(*tq_, s3));
    EXPECT_EQ(queue_check(dst, n, 5), n);
}

INSTANTIATE_TEST_SUITE_P(QueueSync, QueueCopyEdges, ::testing::Values(WEFT_QUEUE_SYNC_MEMOPS, WEFT_QUEUE_SYNC_HOSTFN),
                         sync_param_name);

// ---------------------------------------------------------------------- memory -----------

class QueueMemory : public QueueTest {
  protected:
    void SetUp() override {
        QueueTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        tq_ = make_queue(WEFT_QUEUE_SYNC_MEMOPS);
        if (IsSkipped()) return;
        ASSERT_NE(tq_, nullptr);
    }
    weft_mem_kind_t kind_of(const void *p) {
        weft_mem_kind_t k = static_cast<weft_mem_kind_t>(-1);
        EXPECT_EQ(ops().mem_kind(tq_->q, p, &k), WEFT_PLUGIN_OK) << "mem_kind(" << p << ")";
        return k;
    }
    TestQueue *tq_ = nullptr;
};

int g_static_word = 1;

TEST_F(QueueMemory, MallocIsHost) {
    const size_t n = 1 << 20;
    std::unique_ptr<uint8_t, decltype(&free)> heap(static_cast<uint8_t *>(malloc(n)), free);
    ASSERT_NE(heap, nullptr);
    memset(heap.get(), 1, n);
    int stack_word = 0;
    EXPECT_EQ(kind_of(heap.get()), WEFT_MEM_HOST) << "malloc'd memory";
    EXPECT_EQ(kind_of(heap.get() + n / 2), WEFT_MEM_HOST) << "inside malloc'd memory";
    EXPECT_EQ(kind_of(heap.get() + n - 1), WEFT_MEM_HOST) << "last byte of malloc'd memory";
    EXPECT_EQ(kind_of(&stack_word), WEFT_MEM_HOST) << "the stack";
    EXPECT_EQ(kind_of(&g_static_word), WEFT_MEM_HOST) << "static data";
}

TEST_F(QueueMemory, HostAllocIsPinned) {
    const size_t n = 4096;
    auto *p = static_cast<uint8_t *>(alloc(*tq_, n, true));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(kind_of(p), WEFT_MEM_HOST_PINNED) << "start of host_alloc'd memory";
    EXPECT_EQ(kind_of(p + 1), WEFT_MEM_HOST_PINNED) << "inside host_alloc'd memory";
    EXPECT_EQ(kind_of(p + n - 1), WEFT_MEM_HOST_PINNED) << "last byte of host_alloc'd memory";
    memset(p, 0x5a, n); /* host-accessible */
    EXPECT_EQ(free_now(p), WEFT_PLUGIN_OK) << "host_free";
}

TEST_F(QueueMemory, HostAllocSeveralSizes) {
    const size_t sizes[] = {1, 8, 4095, 4096, 65537, size_t{1} << 20, size_t{16} << 20};
    constexpr size_t count = sizeof(sizes) / sizeof(sizes[0]);
    uint8_t *p[count] = {};
    for (size_t i = 0; i < count; ++i) {
        p[i] = static_cast<uint8_t *>(alloc(*tq_, sizes[i], true));
        ASSERT_NE(p[i], nullptr) << "host_alloc(" << sizes[i] << ")";
        queue_fill(p[i], sizes[i], 300 + i);
    }
    /* Written all at once, read back afterwards: no allocation overlaps another. */
    for (size_t i = 0; i < count; ++i) {
        EXPECT_EQ(queue_check(p[i], sizes[i], 300 + i), sizes[i])
            << "host_alloc(" << sizes[i] << ") overlaps another allocation";
        EXPECT_EQ(kind_of(p[i]), WEFT_MEM_HOST_PINNED) << "host_alloc(" << sizes[i] << ")";
        EXPECT_EQ(kind_of(p[i] + sizes[i] - 1), WEFT_MEM_HOST_PINNED) << "last byte of host_alloc(" << sizes[i] << ")";
    }
    /* Freed out of order, then allocated again. */
    for (size_t i = 0; i < count; i += 2)
        EXPECT_EQ(free_now(p[i]), WEFT_PLUGIN_OK) << "host_free of " << sizes[i] << " bytes";
    for (size_t i = 1; i < count; i += 2)
        EXPECT_EQ(free_now(p[i]), WEFT_PLUGIN_OK) << "host_free of " << sizes[i] << " bytes";
    for (size_t i = 0; i < count; ++i) {
        void *again = alloc(*tq_, sizes[count - 1 - i], true);
        ASSERT_NE(again, nullptr) << "host_alloc after host_free";
        memset(again, 0xa5, sizes[count - 1 - i]);
    }
}

}  // namespace
}  // namespace conformance
