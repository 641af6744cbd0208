// Tests of the hostq test runtime itself: ordering, waits, serial compare, memory kinds,
// destroy, handle validation, and that idle queues do not burn CPU.
#include "hostq.h"
#include "test_hostq_util.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <ctime>
#include <vector>

namespace {

using namespace std::chrono_literals;

struct hostq_runtime : ::testing::Test {
    hostq_t *q = nullptr;
    void SetUp() override { ASSERT_EQ(hostq_create(&q), HOSTQ_OK); }
    void TearDown() override {
        if (q) {
            EXPECT_TRUE(hostq_test_destroy(q)) << "queue still busy: leaked";
        }
    }
};

struct order_log {
    std::vector<int> seen;  // only the worker appends; read after synchronize
};
struct order_step {
    order_log *log;
    int id;
};
void order_append(void *arg) {
    auto *s = static_cast<order_step *>(arg);
    s->log->seen.push_back(s->id);
}

void atomic_inc(void *arg) { static_cast<std::atomic<int> *>(arg)->fetch_add(1); }

void atomic_set(void *arg) { static_cast<std::atomic<int> *>(arg)->store(1); }

void store_word(volatile uint32_t *w, uint32_t v) { __atomic_store_n(w, v, __ATOMIC_RELEASE); }

double cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Launches, host functions and copies run in the order enqueued, each exactly once; a delay
// per operation gives a reordering bug time to show.
TEST_F(hostq_runtime, LaunchesAndCopiesRunInOrder) {
    for (unsigned delay : {0u, 50u}) {
        ASSERT_EQ(hostq_set_delay_us(q, delay), HOSTQ_OK);
        uint64_t before = hostq_ops_executed(q);
        constexpr int n = 200;
        order_log log;
        std::vector<order_step> steps(n);
        std::vector<uint32_t> src(n), dst(n, 0xffffffffu);
        for (int i = 0; i < n; i++) {
            steps[i] = {&log, i};
            auto launch = i % 2 ? hostq_launch_host_func : hostq_launch;
            ASSERT_EQ(launch(q, order_append, &steps[i]), HOSTQ_OK);
            // The copy reads src[i] after the previous kernel ran: it records the log length.
            ASSERT_EQ(hostq_launch(
                          q,
                          [](void *a) {
                              auto *s = static_cast<order_step *>(a);
                              s->id = static_cast<int>(s->log->seen.size());
                          },
                          &steps[i]),
                      HOSTQ_OK);
            ASSERT_EQ(hostq_memcpy_async(q, &dst[i], &steps[i].id, sizeof(uint32_t)), HOSTQ_OK);
        }
        ASSERT_EQ(hostq_synchronize_timeout(q, hostq_test_sync_us), HOSTQ_OK);
        ASSERT_EQ(log.seen.size(), static_cast<size_t>(n));
        for (int i = 0; i < n; i++) {
            EXPECT_EQ(log.seen[i], i) << "delay " << delay;
            EXPECT_EQ(dst[i], static_cast<uint32_t>(i + 1)) << "copy " << i << " out of order";
        }
        EXPECT_EQ(hostq_ops_executed(q) - before, 3u * n);
        EXPECT_EQ(hostq_query(q), HOSTQ_OK);
    }
}

TEST_F(hostq_runtime, CopyBetweenMemoryKinds) {
    constexpr size_t n = 4096;
    std::vector<unsigned char> host(n), back(n, 0);
    for (size_t i = 0; i < n; i++) host[i] = static_cast<unsigned char>(i * 7 + 1);
    void *dev = hostq_malloc_device(n);
    void *pinned = hostq_malloc_host(n);
    ASSERT_NE(dev, nullptr);
    ASSERT_NE(pinned, nullptr);
    ASSERT_EQ(hostq_memcpy_async(q, dev, host.data(), n), HOSTQ_OK);
    ASSERT_EQ(hostq_memcpy_async(q, pinned, dev, n), HOSTQ_OK);
    ASSERT_EQ(hostq_memcpy_async(q, back.data(), pinned, n), HOSTQ_OK);
    ASSERT_EQ(hostq_memcpy_async(q, back.data(), nullptr, 0), HOSTQ_OK);  // empty: a no-op
    EXPECT_EQ(hostq_memcpy_async(q, back.data(), nullptr, 1), HOSTQ_ERR_INVALID);
    ASSERT_EQ(hostq_synchronize_timeout(q, hostq_test_sync_us), HOSTQ_OK);
    EXPECT_EQ(memcmp(host.data(), back.data(), n), 0);
    EXPECT_EQ(hostq_free_device(dev), HOSTQ_OK);
    EXPECT_EQ(hostq_free_host(pinned), HOSTQ_OK);
}

// A wait holds back everything after it until another thread writes the word.
TEST_F(hostq_runtime, WaitValueBlocksUntilWritten) {
    alignas(4) volatile uint32_t word = 0;
    std::atomic<int> after{0};
    ASSERT_EQ(hostq_wait_value32(q, &word, 5), HOSTQ_OK);
    ASSERT_EQ(hostq_launch(q, atomic_set, &after), HOSTQ_OK);
    // Negative checks: give a wrong implementation time to run past the wait.
    EXPECT_EQ(hostq_synchronize_timeout(q, 50 * 1000), HOSTQ_ERR_TIMEOUT);
    EXPECT_EQ(after.load(), 0);
    EXPECT_EQ(hostq_query(q), HOSTQ_ERR_BUSY);
    std::thread writer([&] {
        store_word(&word, 4);  // below the value: still blocked
        EXPECT_EQ(hostq_notify(q), HOSTQ_OK);
    });
    writer.join();
    EXPECT_EQ(hostq_synchronize_timeout(q, 50 * 1000), HOSTQ_ERR_TIMEOUT);
    EXPECT_EQ(after.load(), 0);
    writer = std::thread([&] {
        store_word(&word, 5);
        EXPECT_EQ(hostq_notify(q), HOSTQ_OK);
    });
    writer.join();
    ASSERT_EQ(hostq_synchronize_timeout(q, hostq_test_sync_us), HOSTQ_OK);
    EXPECT_EQ(after.load(), 1);
}

// Without hostq_notify the poll still sees the word (the backoff is bounded).
TEST_F(hostq_runtime, WaitValueSeesWriteWithoutNotify) {
    alignas(4) volatile uint32_t word = 0;
    std::atomic<int> after{0};
    ASSERT_EQ(hostq_wait_value32(q, &word, 1), HOSTQ_OK);
    ASSERT_EQ(hostq_launch(q, atomic_set, &after), HOSTQ_OK);
    EXPECT_EQ(hostq_synchronize_timeout(q, 20 * 1000), HOSTQ_ERR_TIMEOUT);
    store_word(&word, 7);
    ASSERT_EQ(hostq_synchronize_timeout(q, hostq_test_sync_us), HOSTQ_OK);
    EXPECT_EQ(after.load(), 1);
}

// Serial compare: 0x10 is "after" 0xFFFFFFF0 across the wrap, and not the other way round.
TEST_F(hostq_runtime, WaitValueComparesSeriallyAcrossWrap) {
    alignas(4) volatile uint32_t word = 0xFFFFFFF0u;
    std::atomic<int> after{0};
    ASSERT_EQ(hostq_wait_value32(q, &word, 0x10), HOSTQ_OK);  // >= with unsigned would pass
    ASSERT_EQ(hostq_launch(q, atomic_set, &after), HOSTQ_OK);
    EXPECT_EQ(hostq_synchronize_timeout(q, 50 * 1000), HOSTQ_ERR_TIMEOUT);
    EXPECT_EQ(after.load(), 0);
    store_word(&word, 0x10);
    ASSERT_EQ(hostq_notify(q), HOSTQ_OK);
    ASSERT_EQ(hostq_synchronize_timeout(q, hostq_test_sync_us), HOSTQ_OK);
    EXPECT_EQ(after.load(), 1);

    // The word (0x10) is past 0xFFFFFFF0 and past itself: neither wait blocks.
    ASSERT_EQ(hostq_wait_value32(q, &word, 0xFFFFFFF0u), HOSTQ_OK);
    ASSERT_EQ(hostq_wait_value32(q, &word, 0x10), HOSTQ_OK);
    EXPECT_EQ(hostq_synchronize_timeout(q, hostq_test_sync_us), HOSTQ_OK);
}

// One queue's write_value32 releases another queue's wait (woken without hostq_notify).
TEST_F(hostq_runtime, WriteValueOnOneQueueReleasesAnother) {
    hostq_t *q2 = nullptr;
    ASSERT_EQ(hostq_create(&q2), HOSTQ_OK);
    alignas(4) volatile uint32_t word = 0;
    std::atomic<int> after{0};
    ASSERT_EQ(hostq_wait_value32(q, &word, 3), HOSTQ_OK);
    ASSERT_EQ(hostq_launch(q, atomic_set, &after), HOSTQ_OK);
    ASSERT_EQ(hostq_set_delay_us(q2, 20 * 1000), HOSTQ_OK);  // the write comes later
    ASSERT_EQ(hostq_write_value32(q2, &word, 3), HOSTQ_OK);
    EXPECT_EQ(after.load(), 0);
    ASSERT_EQ(hostq_synchronize_timeout(q, hostq_test_sync_us), HOSTQ_OK);
    EXPECT_EQ(after.load(), 1);
    EXPECT_EQ(__atomic_load_n(&word, __ATOMIC_ACQUIRE), 3u);
    EXPECT_TRUE(hostq_test_destroy(q2)) << "queue still busy: leaked";
}

TEST(hostq_memory, PointerKinds) {
    constexpr size_t n = 1000;
    auto *dev = static_cast<char *>(hostq_malloc_device(n));
    auto *pinned = static_cast<char *>(hostq_malloc_host(n));
    ASSERT_NE(dev, nullptr);
    ASSERT_NE(pinned, nullptr);
    std::vector<char> plain(n);
    int stack_var = 0;
    EXPECT_EQ(hostq_pointer_kind(dev), HOSTQ_PTR_DEVICE);
    EXPECT_EQ(hostq_pointer_kind(dev + n - 1), HOSTQ_PTR_DEVICE);
    EXPECT_EQ(hostq_pointer_kind(dev + n), HOSTQ_PTR_HOST);  // one past the end
    EXPECT_EQ(hostq_pointer_kind(pinned), HOSTQ_PTR_PINNED);
    EXPECT_EQ(hostq_pointer_kind(pinned + n / 2), HOSTQ_PTR_PINNED);
    EXPECT_EQ(hostq_pointer_kind(plain.data()), HOSTQ_PTR_HOST);
    EXPECT_EQ(hostq_pointer_kind(&stack_var), HOSTQ_PTR_HOST);
    EXPECT_EQ(hostq_pointer_kind(nullptr), HOSTQ_PTR_HOST);
    // Frees check the kind and the start address.
    EXPECT_EQ(hostq_free_host(dev), HOSTQ_ERR_INVALID);
    EXPECT_EQ(hostq_free_device(pinned), HOSTQ_ERR_INVALID);
    EXPECT_EQ(hostq_free_device(dev + 1), HOSTQ_ERR_INVALID);
    EXPECT_EQ(hostq_free_device(plain.data()), HOSTQ_ERR_INVALID);
    EXPECT_EQ(hostq_free_device(nullptr), HOSTQ_OK);
    EXPECT_EQ(hostq_free_device(dev), HOSTQ_OK);
    EXPECT_EQ(hostq_free_host(pinned), HOSTQ_OK);
    EXPECT_EQ(hostq_free_device(dev), HOSTQ_ERR_INVALID);  // double free refused
    // A zero-byte allocation is still a distinct, known address.
    void *z = hostq_malloc_device(0);
    ASSERT_NE(z, nullptr);
    EXPECT_EQ(hostq_pointer_kind(z), HOSTQ_PTR_DEVICE);
    EXPECT_EQ(hostq_free_device(z), HOSTQ_OK);
}

TEST(hostq_memory, PointerKindsFromManyThreads) {
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 4; t++)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 500; i++) {
                bool dev = (i + t) % 2;
                void *p = dev ? hostq_malloc_device(64) : hostq_malloc_host(64);
                int want = dev ? HOSTQ_PTR_DEVICE : HOSTQ_PTR_PINNED;
                if (!p || hostq_pointer_kind(static_cast<char *>(p) + 63) != want) wrong++;
                if ((dev ? hostq_free_device(p) : hostq_free_host(p)) != HOSTQ_OK) wrong++;
            }
        });
    for (auto &th : threads) th.join();
    EXPECT_EQ(wrong.load(), 0);
}

// Destroy returns only after everything enqueued has run.
TEST(hostq_queue, DestroyWaitsForEnqueuedWork) {
    hostq_t *q = nullptr;
    ASSERT_EQ(hostq_create(&q), HOSTQ_OK);
    ASSERT_EQ(hostq_set_delay_us(q, 2000), HOSTQ_OK);
    std::atomic<int> count{0};
    for (int i = 0; i < 20; i++) ASSERT_EQ(hostq_launch(q, atomic_inc, &count), HOSTQ_OK);
    EXPECT_LT(count.load(), 20);  // 40 ms of work cannot be done yet
    ASSERT_EQ(hostq_destroy(q), HOSTQ_OK);
    EXPECT_EQ(count.load(), 20);
    EXPECT_FALSE(hostq_is_valid(q));
}

// A garbage, NULL or destroyed handle is refused without being dereferenced.
TEST(hostq_queue, InvalidHandlesAreDetected) {
    hostq_t *q = nullptr;
    ASSERT_EQ(hostq_create(&q), HOSTQ_OK);
    EXPECT_TRUE(hostq_is_valid(q));
    ASSERT_EQ(hostq_destroy(q), HOSTQ_OK);
    uint32_t word = 0;
    int not_a_queue = 0;
    std::atomic<int> ran{0};
    for (hostq_t *bad : {static_cast<hostq_t *>(nullptr), q, reinterpret_cast<hostq_t *>(uintptr_t{0xdeadbeef}),
                         reinterpret_cast<hostq_t *>(&not_a_queue)}) {
        SCOPED_TRACE(reinterpret_cast<uintptr_t>(bad));
        EXPECT_FALSE(hostq_is_valid(bad));
        EXPECT_EQ(hostq_launch(bad, atomic_inc, &ran), HOSTQ_ERR_INVALID);
        EXPECT_EQ(hostq_launch_host_func(bad, atomic_inc, &ran), HOSTQ_ERR_INVALID);
        EXPECT_EQ(hostq_memcpy_async(bad, &word, &not_a_queue, 4), HOSTQ_ERR_INVALID);
        EXPECT_EQ(hostq_write_value32(bad, &word, 1), HOSTQ_ERR_INVALID);
        EXPECT_EQ(hostq_wait_value32(bad, &word, 1), HOSTQ_ERR_INVALID);
        EXPECT_EQ(hostq_synchronize(bad), HOSTQ_ERR_INVALID);
        EXPECT_EQ(hostq_query(bad), HOSTQ_ERR_INVALID);
        EXPECT_EQ(hostq_notify(bad), HOSTQ_ERR_INVALID);
        EXPECT_EQ(hostq_set_delay_us(bad, 1), HOSTQ_ERR_INVALID);
        EXPECT_EQ(hostq_ops_executed(bad), 0u);
        EXPECT_EQ(hostq_destroy(bad), HOSTQ_ERR_INVALID);
    }
    EXPECT_EQ(ran.load(), 0);
    EXPECT_EQ(word, 0u);
    EXPECT_EQ(not_a_queue, 0);
    EXPECT_EQ(hostq_create(nullptr), HOSTQ_ERR_INVALID);
}

struct self_call {
    hostq_t *q;
    std::atomic<int> sync_rc{1}, destroy_rc{1};
};

// A queue's own operation cannot synchronize or destroy it (that would hang): refused.
TEST_F(hostq_runtime, SelfSynchronizeIsRefused) {
    self_call c;
    c.q = q;
    ASSERT_EQ(hostq_launch(
                  q,
                  [](void *a) {
                      auto *c = static_cast<self_call *>(a);
                      c->sync_rc = hostq_synchronize(c->q);
                      c->destroy_rc = hostq_destroy(c->q);
                  },
                  &c),
              HOSTQ_OK);
    ASSERT_EQ(hostq_synchronize_timeout(q, hostq_test_sync_us), HOSTQ_OK);
    EXPECT_EQ(c.sync_rc.load(), HOSTQ_ERR_DEADLOCK);
    EXPECT_EQ(c.destroy_rc.load(), HOSTQ_ERR_DEADLOCK);
    EXPECT_TRUE(hostq_is_valid(q));
}

// An idle worker sleeps, and a pending wait polls with sleeps rather than spinning.
TEST_F(hostq_runtime, IdleAndWaitingQueuesDoNotSpin) {
    double c0 = cpu_seconds();
    auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(200ms);
    double idle_cpu = cpu_seconds() - c0;
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(idle_cpu, 0.2 * wall) << "an idle queue uses CPU";

    alignas(4) volatile uint32_t word = 0;
    ASSERT_EQ(hostq_wait_value32(q, &word, 1), HOSTQ_OK);
    std::this_thread::sleep_for(20ms);  // past the sched_yield phase
    c0 = cpu_seconds();
    t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(200ms);
    double wait_cpu = cpu_seconds() - c0;
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(wait_cpu, 0.5 * wall) << "a pending wait spins";
    EXPECT_EQ(hostq_query(q), HOSTQ_ERR_BUSY);
    store_word(&word, 1);
    ASSERT_EQ(hostq_notify(q), HOSTQ_OK);
    ASSERT_EQ(hostq_synchronize_timeout(q, hostq_test_sync_us), HOSTQ_OK);
}

}  // namespace
