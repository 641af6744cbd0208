/* Queue plugins: the descriptor, init, attach refusals, NULL arguments, and points (signals
 * and waits) under both synchronization modes, wraparound, a concurrent progress thread,
 * detach and two queues at once. */
#include "queue_harness.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

namespace conformance {
namespace {

using namespace std::chrono_literals;

// ------------------------------------------------------------ descriptor and init ---------

TEST(QueuePlugin, DescriptorIsComplete) {
    require_queue_plugin();
    if (IsSkipped() || HasFatalFailure()) return;
    const LoadedQueuePlugin &p = queue_plugin();
    const weft_plugin_v1_t &d = *p.desc;
    EXPECT_EQ(d.abi_major, static_cast<uint32_t>(WEFT_PLUGIN_ABI_MAJOR));
    EXPECT_GE(d.abi_minor, 2u) << "queue plugins came with ABI 1.2";
    EXPECT_EQ(d.kind, WEFT_PLUGIN_KIND_QUEUE);
    ASSERT_NE(d.name, nullptr);
    EXPECT_GT(strlen(d.name), 0u);
    ASSERT_NE(d.version, nullptr);
    EXPECT_GT(strlen(d.version), 0u);
    const weft_queue_ops_v1_t &o = p.ops;
    ASSERT_NE(o.types, nullptr) << "types must be a NULL-terminated list";
    size_t n = 0;
    while (n < 64 && o.types[n] != nullptr) {
        EXPECT_GT(strlen(o.types[n]), 0u) << "types[" << n << "] is empty";
        ++n;
    }
    EXPECT_GT(n, 0u) << "types is empty: no info \"type\" selects this plugin";
    EXPECT_LT(n, 64u) << "types is not NULL-terminated (or absurdly long)";
    for (auto [fn, what] : {std::pair<const void *, const char *>{(const void *)o.init, "init"},
                            {(const void *)o.finalize, "finalize"},
                            {(const void *)o.attach, "attach"},
                            {(const void *)o.detach, "detach"},
                            {(const void *)o.append_signal, "append_signal"},
                            {(const void *)o.append_wait, "append_wait"},
                            {(const void *)o.append_copy, "append_copy"},
                            {(const void *)o.reached, "reached"},
                            {(const void *)o.release, "release"},
                            {(const void *)o.mem_kind, "mem_kind"},
                            {(const void *)o.host_alloc, "host_alloc"},
                            {(const void *)o.host_free, "host_free"}})
        EXPECT_NE(fn, nullptr) << "mandatory operation " << what << " is NULL";
    EXPECT_EQ(o.queue_create == nullptr, o.queue_destroy == nullptr) << "queue_create and queue_destroy come as a pair";
    RecordProperty("plugin", d.name);
    RecordProperty("version", d.version);
    printf("queue plugin %s %s, ABI %u.%u, first type %s%s\n", d.name, d.version, d.abi_major, d.abi_minor,
           n ? o.types[0] : "(none)", p.no_create.empty() ? "" : " (no queue_create: tests needing a queue skip)");
    /* Like every test, skipped (after the checks above) where the runtime has no device. */
    if (weft_queue_runtime_t *rt = open_runtime()) {
        EXPECT_EQ(o.finalize(rt), WEFT_PLUGIN_OK);
    }
}

TEST(QueuePlugin, InitFinalizeTwice) {
    require_queue_plugin();
    if (IsSkipped() || HasFatalFailure()) return;
    const weft_queue_ops_v1_t &o = queue_plugin().ops;
    for (int i = 0; i < 2; ++i) {
        weft_queue_runtime_t *rt = open_runtime();
        if (IsSkipped() || HasFailure()) return;
        ASSERT_NE(rt, nullptr);
        EXPECT_EQ(o.finalize(rt), WEFT_PLUGIN_OK) << "finalize #" << i + 1;
    }
    /* Two runtimes open at once are not required (the core opens one per process). */
}

// ------------------------------------------------------------------- refusals ------------

using QueueAttach = QueueTest;

TEST_F(QueueAttach, WrongHandleSizeIsRefused) {
    TestQueue *tq = create_queue();
    if (!tq) return;
    const std::vector<uint8_t> &h = tq->handle;
    std::vector<uint8_t> longer(h);
    longer.push_back(0);
    struct Try {
        const void *bytes;
        size_t size;
    };
    for (Try t : {Try{h.data(), h.size() - 1}, Try{longer.data(), longer.size()}, Try{h.data(), size_t{0}}}) {
        weft_queue_t *q = nullptr;
        int used = 0;
        char why[512] = "";
        int rc = attach_raw(ops().types[0], t.bytes, t.size, WEFT_QUEUE_SYNC_MEMOPS, &q, &used, why, sizeof(why));
        EXPECT_NE(rc, WEFT_PLUGIN_OK) << "a " << t.size << "-byte handle (it is " << h.size() << " bytes) was accepted";
        if (rc == WEFT_PLUGIN_OK) {
            ops().detach(q);
            continue;
        }
        EXPECT_GT(strlen(why), 0u) << "refused (code " << rc << ") without a reason in why";
    }
    /* The refusals left the native queue usable. */
    char why[512] = "";
    ASSERT_EQ(attach(*tq, WEFT_QUEUE_SYNC_MEMOPS, why, sizeof(why)), WEFT_PLUGIN_OK) << why;
    uint32_t s = add_signal(*tq);
    EXPECT_TRUE(wait_reached(*tq, s));
}

TEST_F(QueueAttach, UnknownTypeIsRefused) {
    TestQueue *tq = create_queue();
    if (!tq) return;
    for (const char *type : {"weft_conformance_no_such_type", static_cast<const char *>(nullptr)}) {
        weft_queue_t *q = nullptr;
        int used = 0;
        char why[512] = "";
        int rc =
            attach_raw(type, tq->handle.data(), tq->handle.size(), WEFT_QUEUE_SYNC_MEMOPS, &q, &used, why, sizeof(why));
        EXPECT_NE(rc, WEFT_PLUGIN_OK) << "type " << (type ? type : "NULL") << " was accepted";
        if (rc == WEFT_PLUGIN_OK) {
            ops().detach(q);
            continue;
        }
        EXPECT_GT(strlen(why), 0u) << "type " << (type ? type : "NULL") << " refused (code " << rc
                                   << ") without a reason in why";
    }
}

/* plugin.h: "it never aborts the process, whatever it was passed (NULL handles give
 * ERR_INVALID)".  A queue is used where one can be made; the rest runs without. */
TEST_F(QueueAttach, NullArgumentsAreInvalid) {
    const weft_queue_ops_v1_t &o = ops();
    char why[512] = "";
    EXPECT_EQ(o.init(queue_host(), nullptr, why, sizeof(why)), WEFT_PLUGIN_ERR_INVALID)
        << "init without a runtime pointer";
    EXPECT_EQ(o.finalize(nullptr), WEFT_PLUGIN_ERR_INVALID) << "finalize(NULL)";

    uint8_t zeros[sizeof(void *)] = {};
    weft_queue_attach_args_t args{};
    args.struct_size = sizeof(args);
    args.type = o.types[0];
    args.handle = zeros;
    args.handle_size = sizeof(zeros);
    args.sync = WEFT_QUEUE_SYNC_MEMOPS;
    args.get_hex = [](void *, const char *, void *, size_t) { return int{WEFT_PLUGIN_ERR_NOT_FOUND}; };
    weft_queue_t *q = nullptr;
    int used = 0;
    EXPECT_EQ(o.attach(nullptr, &args, &q, &used, why, sizeof(why)), WEFT_PLUGIN_ERR_INVALID)
        << "attach without a runtime";
    EXPECT_EQ(o.attach(rt_, nullptr, &q, &used, why, sizeof(why)), WEFT_PLUGIN_ERR_INVALID)
        << "attach without arguments";
    EXPECT_EQ(o.attach(rt_, &args, nullptr, &used, why, sizeof(why)), WEFT_PLUGIN_ERR_INVALID)
        << "attach without a queue pointer";

    uint64_t word = 0;
    void *p = nullptr;
    weft_mem_kind_t kind;
    EXPECT_EQ(o.detach(nullptr), WEFT_PLUGIN_ERR_INVALID) << "detach(NULL)";
    EXPECT_EQ(o.append_signal(nullptr, 1), WEFT_PLUGIN_ERR_INVALID) << "append_signal(NULL)";
    EXPECT_EQ(o.append_wait(nullptr, 1), WEFT_PLUGIN_ERR_INVALID) << "append_wait(NULL)";
    EXPECT_EQ(o.append_copy(nullptr, &word, &word, sizeof(word)), WEFT_PLUGIN_ERR_INVALID) << "append_copy(NULL queue)";
    EXPECT_EQ(o.release(nullptr, 1), WEFT_PLUGIN_ERR_INVALID) << "release(NULL)";
    (void)o.reached(nullptr); /* returns a value, not a code: it only must not crash */
    EXPECT_EQ(o.mem_kind(nullptr, &word, &kind), WEFT_PLUGIN_ERR_INVALID) << "mem_kind(NULL)";
    EXPECT_EQ(o.host_alloc(nullptr, 64, &p), WEFT_PLUGIN_ERR_INVALID) << "host_alloc(NULL)";
    EXPECT_EQ(o.host_free(nullptr, &word), WEFT_PLUGIN_ERR_INVALID) << "host_free(NULL)";

    if (o.queue_create) {
        uint8_t buf[256];
        size_t size = sizeof(buf);
        EXPECT_EQ(o.queue_create(nullptr, buf, &size), WEFT_PLUGIN_ERR_INVALID);
        EXPECT_EQ(o.queue_create(rt_, nullptr, &size), WEFT_PLUGIN_ERR_INVALID);
        EXPECT_EQ(o.queue_create(rt_, buf, nullptr), WEFT_PLUGIN_ERR_INVALID);
        EXPECT_EQ(o.queue_destroy(nullptr, buf, sizeof(void *)), WEFT_PLUGIN_ERR_INVALID);
        EXPECT_EQ(o.queue_destroy(rt_, nullptr, sizeof(void *)), WEFT_PLUGIN_ERR_INVALID);
    }
    if (!queue_plugin().no_create.empty()) return; /* the rest needs a queue; what ran above still counts */

    /* A handle too small for queue_create: refused, or at least nothing written past it. */
    if (o.queue_create) {
        uint8_t one[1 + 16];
        memset(one, 0xa5, sizeof(one));
        size_t size = 1;
        int rc = o.queue_create(rt_, one, &size);
        EXPECT_NE(rc, WEFT_PLUGIN_OK) << "queue_create wrote a handle into a 1-byte buffer";
        for (size_t i = 1; i < sizeof(one); ++i)
            ASSERT_EQ(one[i], 0xa5) << "queue_create wrote byte " << i << " past its capacity";
        if (rc == WEFT_PLUGIN_OK) o.queue_destroy(rt_, one, size);
    }
    TestQueue *tq = make_queue();
    if (!tq) return;
    EXPECT_EQ(o.mem_kind(tq->q, &word, nullptr), WEFT_PLUGIN_ERR_INVALID) << "mem_kind, kind NULL";
    EXPECT_EQ(o.host_alloc(tq->q, 64, nullptr), WEFT_PLUGIN_ERR_INVALID) << "host_alloc, ptr NULL";
    /* A copy from or to NULL is refused at append time, not run (where it would crash). */
    EXPECT_NE(o.append_copy(tq->q, nullptr, &word, sizeof(word)), WEFT_PLUGIN_OK) << "append_copy to NULL";
    EXPECT_NE(o.append_copy(tq->q, &word, nullptr, sizeof(word)), WEFT_PLUGIN_OK) << "append_copy from NULL";
    /* The queue still works. */
    uint32_t s = add_signal(*tq);
    EXPECT_TRUE(wait_reached(*tq, s));
}

// ---------------------------------------------------------------------- points -----------

class QueuePoints : public QueueSyncOneQueueTest {};

TEST_P(QueuePoints, AttachReportsTheSyncUsed) {
    EXPECT_TRUE(tq_->sync_used == WEFT_QUEUE_SYNC_MEMOPS || tq_->sync_used == WEFT_QUEUE_SYNC_HOSTFN)
        << "*sync_used " << tq_->sync_used;
    if (GetParam() == WEFT_QUEUE_SYNC_HOSTFN && tq_->sync_used != WEFT_QUEUE_SYNC_HOSTFN)
        printf("note: hostfn requested, %s used (the plugin lacks host functions)\n", sync_name(tq_->sync_used));
    RecordProperty("sync_used", sync_name(tq_->sync_used));
    /* The mechanism reported is the one that works: a signal and a wait go through. */
    ASSERT_TRUE(pass_one_wait(*tq_));
}

TEST_P(QueuePoints, SignalsAreReachedInOrder) {
    EXPECT_EQ(reached(*tq_), 0u) << "reached() must be 0 before the first signal";
    constexpr uint32_t count = 200;
    for (uint32_t i = 0; i < count; ++i) ASSERT_EQ(signal(*tq_, take(*tq_)), WEFT_PLUGIN_OK) << "append_signal #" << i;
    /* Every value seen is one of the signals (1..count), never going back (reached() checks). */
    auto deadline = std::chrono::steady_clock::now() + queue_deadline;
    uint32_t r;
    while ((r = reached(*tq_)) != count) {
        ASSERT_LE(r, count) << "reached() is not the value of a signal appended";
        ASSERT_LT(std::chrono::steady_clock::now(), deadline)
            << "the last signal was not reached in time (reached() is " << r << ")";
        std::this_thread::yield();
    }
    std::this_thread::sleep_for(5ms);
    EXPECT_EQ(reached(*tq_), count) << "reached() moved after the last signal";
}

TEST_P(QueuePoints, WaitStopsTheQueue) {
    uint32_t s1 = add_signal(*tq_);
    uint32_t w = add_wait(*tq_);
    uint32_t s2 = add_signal(*tq_);
    ASSERT_TRUE(wait_reached(*tq_, s1));
    EXPECT_TRUE(stays_before(*tq_, s2, 50ms))
        << "signal " << s2 << " after wait " << w << " was reached before the wait was released";
    EXPECT_EQ(reached(*tq_), s1);
    release(*tq_, w);
    ASSERT_TRUE(wait_reached(*tq_, s2));
    EXPECT_EQ(reached(*tq_), s2);
}

TEST_P(QueuePoints, EarlyReleaseDoesNotStopTheQueue) {
    /* Released before anything was appended. */
    uint32_t s1 = take(*tq_), w1 = take(*tq_), s2 = take(*tq_);
    release(*tq_, w1);
    ASSERT_EQ(signal(*tq_, s1), WEFT_PLUGIN_OK);
    ASSERT_EQ(wait(*tq_, w1), WEFT_PLUGIN_OK);
    ASSERT_EQ(signal(*tq_, s2), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait_reached(*tq_, s2)) << "a wait released before it was appended stopped the queue";
    /* Released after the signal before it was reached, before the wait was appended. */
    uint32_t s3 = add_signal(*tq_);
    uint32_t w2 = take(*tq_);
    ASSERT_TRUE(wait_reached(*tq_, s3));
    release(*tq_, w2);
    ASSERT_EQ(wait(*tq_, w2), WEFT_PLUGIN_OK);
    uint32_t s4 = add_signal(*tq_);
    ASSERT_TRUE(wait_reached(*tq_, s4)) << "a wait released before it was appended stopped the queue";
}

TEST_P(QueuePoints, ReleaseCoversEveryEarlierWait) {
    uint32_t s1 = add_signal(*tq_);
    uint32_t w1 = add_wait(*tq_);
    uint32_t w2 = add_wait(*tq_);
    uint32_t s2 = add_signal(*tq_);
    uint32_t w3 = add_wait(*tq_);
    uint32_t s3 = add_signal(*tq_);
    ASSERT_TRUE(wait_reached(*tq_, s1));
    EXPECT_TRUE(stays_before(*tq_, s2, 20ms)) << "waits " << w1 << " and " << w2 << " let the queue go";
    release(*tq_, w2); /* covers w1 too */
    ASSERT_TRUE(wait_reached(*tq_, s2)) << "release(" << w2 << ") did not cover wait " << w1;
    EXPECT_TRUE(stays_before(*tq_, s3, 20ms)) << "release(" << w2 << ") let wait " << w3 << " go";
    release(*tq_, w1); /* an older value: must not undo or extend anything */
    EXPECT_TRUE(stays_before(*tq_, s3, 20ms)) << "a stale release(" << w1 << ") let wait " << w3 << " go";
    release(*tq_, w3);
    ASSERT_TRUE(wait_reached(*tq_, s3));
    EXPECT_EQ(reached(*tq_), s3);
    /* Releases are monotonic: an older value after a newer one takes nothing back, even for
     * waits appended later. */
    uint32_t w4 = take(*tq_), w5 = take(*tq_);
    release(*tq_, w5);
    release(*tq_, w3);
    ASSERT_EQ(wait(*tq_, w4), WEFT_PLUGIN_OK);
    ASSERT_EQ(wait(*tq_, w5), WEFT_PLUGIN_OK);
    uint32_t s5 = add_signal(*tq_);
    ASSERT_TRUE(wait_reached(*tq_, s5)) << "release(" << w3 << ") after release(" << w5
                                        << ") took back the release of waits " << w4 << ", " << w5;
}

/* Serial numbers wrap: the queue is brought near 2^32 in steps of less than 2^30 (each step a
 * released wait and a signal), then points cross 0 (skipped, as the core skips it) one pair at
 * a time, each wait checked to stop the queue. */
TEST_P(QueuePoints, SerialNumbersWrap) {
    constexpr uint32_t target = 0xFFFFFFF0u, step = 0x30000000u;
    while (tq_->next != target) {
        uint32_t remaining = target - tq_->next;
        ASSERT_GE(remaining, 2u);
        uint32_t w = tq_->next + std::min(remaining - 2, step);
        tq_->next = w;
        ASSERT_EQ(wait(*tq_, take(*tq_)), WEFT_PLUGIN_OK) << "append_wait(" << w << ")";
        uint32_t s = add_signal(*tq_);
        release(*tq_, w);
        ASSERT_TRUE(wait_reached(*tq_, s)) << "climbing to " << target;
        ASSERT_EQ(reached(*tq_), s);
    }
    uint32_t s = add_signal(*tq_);
    bool crossed = false;
    for (int i = 0; i < 20; ++i) {
        uint32_t w = add_wait(*tq_);
        uint32_t s2 = add_signal(*tq_);
        ASSERT_TRUE(wait_reached(*tq_, s));
        EXPECT_TRUE(stays_before(*tq_, s2, 5ms))
            << "signal " << s2 << " was reached while wait " << w << " was not released";
        release(*tq_, w);
        ASSERT_TRUE(wait_reached(*tq_, s2));
        EXPECT_EQ(reached(*tq_), s2);
        crossed = crossed || s2 < s;
        s = s2;
    }
    EXPECT_TRUE(crossed) << "the test did not cross 0";
    EXPECT_LT(s, 0x100u);
}

/* The core's shape: this thread appends 10 000 points while another polls reached() and
 * releases each wait once the signal before it was reached (often before the wait is
 * appended). */
TEST_P(QueuePoints, ConcurrentReachedAndRelease) {
    constexpr uint32_t pairs = 5000;
    constexpr uint32_t last = 2 * pairs + 1; /* signals are odd, waits even */
    weft_queue_t *q = tq_->q;
    const weft_queue_ops_v1_t *o = &ops();
    std::atomic<bool> stop{false};
    std::atomic<int> bad_value{0}, went_back{0}, release_failed{0};
    std::atomic<uint32_t> seen{0};
    std::thread progress([&] {
        uint32_t prev = 0;
        auto deadline = std::chrono::steady_clock::now() + 3 * queue_deadline;
        unsigned spins = 0;
        while (!stop.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < deadline) {
            uint32_t r = o->reached(q);
            if (r != 0 && (r % 2 == 0 || r > last)) bad_value.fetch_add(1);
            if (!serial_ge(r, prev)) went_back.fetch_add(1);
            if (r != prev) {
                if (r % 2 == 1 && o->release(q, r + 1) != WEFT_PLUGIN_OK) release_failed.fetch_add(1);
                prev = r;
                seen.store(r);
                spins = 0;
            }
            if (r == last) return;
            if (++spins % 64 == 0)
                std::this_thread::sleep_for(std::chrono::microseconds(20));
            else
                std::this_thread::yield();
        }
    });
    help_reached_ = false; /* the progress thread is the only one calling reached() */
    bool appended = true;
    for (uint32_t k = 1; k <= pairs && appended; ++k) {
        int rc = signal(*tq_, 2 * k - 1);
        EXPECT_EQ(rc, WEFT_PLUGIN_OK) << "append_signal(" << 2 * k - 1 << ")";
        int rc2 = rc == WEFT_PLUGIN_OK ? wait(*tq_, 2 * k) : rc;
        EXPECT_EQ(rc2, WEFT_PLUGIN_OK) << "append_wait(" << 2 * k << ")";
        appended = rc == WEFT_PLUGIN_OK && rc2 == WEFT_PLUGIN_OK;
    }
    if (appended) {
        EXPECT_EQ(signal(*tq_, last), WEFT_PLUGIN_OK);
        tq_->next = last + 1;
    } else {
        stop = true;
    }
    progress.join();
    help_reached_ = true;
    if (!appended) {
        /* Let TearDown release what went in: numbers follow the last append. */
        tq_->next = std::max(tq_->last_signal, tq_->last_wait) + 1;
        return;
    }
    tq_->seen = seen.load();
    EXPECT_EQ(bad_value.load(), 0) << "reached() returned values that are not signals appended";
    EXPECT_EQ(went_back.load(), 0) << "reached() went back";
    EXPECT_EQ(release_failed.load(), 0) << "release() failed";
    EXPECT_EQ(seen.load(), last) << "the progress thread gave up (deadline) at point " << seen.load();
    ASSERT_TRUE(wait_reached(*tq_, last));
}

/* detach never destroys the native queue: it can be attached again, and work goes on. */
TEST_P(QueuePoints, DetachLeavesTheNativeQueue) {
    ASSERT_TRUE(pass_one_wait(*tq_));
    detach(*tq_);
    char why[512] = "";
    ASSERT_EQ(attach(*tq_, GetParam(), why, sizeof(why)), WEFT_PLUGIN_OK) << "attach again after detach: " << why;
    tq_->next = 1; /* a new attachment numbers its points from 1, as the core does */
    tq_->last_signal = tq_->last_wait = 0;
    tq_->any_wait = false;
    tq_->tail_is_signal = true;
    EXPECT_EQ(reached(*tq_), 0u) << "a new attachment starts at 0";
    uint32_t s3 = add_signal(*tq_);
    uint32_t w2 = add_wait(*tq_);
    uint32_t s4 = add_signal(*tq_);
    ASSERT_TRUE(wait_reached(*tq_, s3));
    EXPECT_TRUE(stays_before(*tq_, s4, 20ms));
    release(*tq_, w2);
    ASSERT_TRUE(wait_reached(*tq_, s4));
    detach(*tq_);
    destroy(*tq_);
}

INSTANTIATE_TEST_SUITE_P(QueueSync, QueuePoints, ::testing::Values(WEFT_QUEUE_SYNC_MEMOPS, WEFT_QUEUE_SYNC_HOSTFN),
                         sync_param_name);

// ------------------------------------------------------------------ lifecycle ------------

using QueueLifecycle = QueueTest;

/* A wait that stops one queue does not stop another.  Memory operations only: in hostfn mode
 * a runtime may run every queue's host callbacks on one thread (CUDA documents it), so a
 * blocked wait callback may hold back other queues. */
TEST_F(QueueLifecycle, TwoQueuesAreIndependent) {
    TestQueue *a = make_queue(WEFT_QUEUE_SYNC_MEMOPS);
    if (!a) return;
    TestQueue *b = make_queue(WEFT_QUEUE_SYNC_MEMOPS);
    if (!b) return;
    if (a->sync_used != WEFT_QUEUE_SYNC_MEMOPS || b->sync_used != WEFT_QUEUE_SYNC_MEMOPS)
        GTEST_SKIP() << "the plugin uses hostfn here (memops unsupported): queues need not be "
                        "independent with host callbacks";
    uint32_t a1 = add_signal(*a);
    uint32_t aw = add_wait(*a);
    uint32_t a2 = add_signal(*a);
    ASSERT_TRUE(wait_reached(*a, a1));
    /* b numbers its own points from 1, as the core does per queue. */
    for (int i = 0; i < 10; ++i) {
        uint32_t b1 = add_signal(*b);
        uint32_t bw = add_wait(*b);
        uint32_t b2 = add_signal(*b);
        ASSERT_TRUE(wait_reached(*b, b1)) << "queue b is held up by a's wait";
        release(*b, bw);
        ASSERT_TRUE(wait_reached(*b, b2)) << "queue b is held up by a's wait";
    }
    EXPECT_EQ(reached(*a), a1) << "queue a went past its wait, or b's release reached a";
    release(*a, aw);
    ASSERT_TRUE(wait_reached(*a, a2));
}

/* init, a queue's whole life, finalize; twice. */
TEST_F(QueueLifecycle, RuntimeReopensWithQueues) {
    for (int round = 0; round < 2; ++round) {
        TestQueue *tq = make_queue();
        if (!tq) return;
        uint32_t s = add_signal(*tq);
        uint32_t w = add_wait(*tq);
        uint32_t s2 = add_signal(*tq);
        ASSERT_TRUE(wait_reached(*tq, s));
        release(*tq, w);
        ASSERT_TRUE(wait_reached(*tq, s2));
        ASSERT_TRUE(finish(*tq)) << "round " << round;
        queues_.clear();
        reopen_runtime();
        if (HasFatalFailure()) return;
    }
}

}  // namespace
}  // namespace conformance
