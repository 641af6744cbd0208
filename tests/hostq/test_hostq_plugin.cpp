// Tests of libweft-hostq.so through its ops table, loaded with dlopen as the core loads it:
// attach, points in both sync modes, copies, memory queries, and refused handles.
#include "hostq.h"
#include "test_hostq_util.hpp"

#include <weft/plugin.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;

std::mutex log_lock;
std::vector<std::string> log_lines;  // "<level> <plugin>: <message>"

void capture_log(int level, const char *plugin, const char *message) {
    std::lock_guard<std::mutex> g(log_lock);
    log_lines.push_back(std::to_string(level) + " " + plugin + ": " + message);
}

std::vector<std::string> take_log() {
    std::lock_guard<std::mutex> g(log_lock);
    return std::exchange(log_lines, {});
}

const weft_plugin_host_t test_host = {sizeof(weft_plugin_host_t), capture_log, nullptr, nullptr};

const weft_plugin_v1_t *load_plugin(std::string &why) {
    void *dl = dlopen(WEFT_HOSTQ_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!dl) {
        const char *e = dlerror();
        why = e ? e : "dlopen failed";
        return nullptr;
    }
    auto *d = static_cast<const weft_plugin_v1_t *>(dlsym(dl, WEFT_PLUGIN_SYMBOL));
    if (!d) why = "no " WEFT_PLUGIN_SYMBOL " symbol";
    return d;
}

struct hostq_plugin : ::testing::Test {
    const weft_plugin_v1_t *desc = nullptr;
    const weft_queue_ops_v1_t *ops = nullptr;
    weft_queue_runtime_t *rt = nullptr;
    hostq_t *hq = nullptr;
    char why[256] = "";

    void SetUp() override {
        unsetenv("WEFT_HOSTQ_NO_DEVICE");
        unsetenv("WEFT_HOSTQ_FORCE_HOSTFN");
        std::string err;
        desc = load_plugin(err);
        ASSERT_NE(desc, nullptr) << err;
        ops = static_cast<const weft_queue_ops_v1_t *>(desc->ops);
        ASSERT_NE(ops, nullptr);
        ASSERT_EQ(ops->init(&test_host, &rt, why, sizeof(why)), WEFT_PLUGIN_OK) << why;
        ASSERT_EQ(hostq_create(&hq), HOSTQ_OK);
        take_log();
    }
    void TearDown() override {
        unsetenv("WEFT_HOSTQ_FORCE_HOSTFN");
        if (hq) {
            EXPECT_TRUE(hostq_test_destroy(hq)) << "queue still busy: leaked";
        }
        if (rt) {
            EXPECT_EQ(ops->finalize(rt), WEFT_PLUGIN_OK);
        }
    }

    int attach(const void *handle, size_t size, int sync, weft_queue_t **q, int *used,
               const char *type = "weft_hostq_t") {
        weft_queue_attach_args_t a{};
        a.struct_size = sizeof(a);
        a.type = type;
        a.handle = handle;
        a.handle_size = size;
        a.sync = sync;
        why[0] = '\0';
        return ops->attach(rt, &a, q, used, why, sizeof(why));
    }
    int attach(weft_queue_t **q, int sync, int *used) { return attach(&hq, sizeof(hq), sync, q, used); }
};

TEST_F(hostq_plugin, Descriptor) {
    EXPECT_EQ(desc->abi_major, static_cast<uint32_t>(WEFT_PLUGIN_ABI_MAJOR));
    EXPECT_EQ(desc->abi_minor, static_cast<uint32_t>(WEFT_PLUGIN_ABI_MINOR));
    EXPECT_EQ(desc->kind, WEFT_PLUGIN_KIND_QUEUE);
    EXPECT_STREQ(desc->name, "hostq");
    EXPECT_EQ(desc->priority, 0);
    ASSERT_NE(ops->types, nullptr);
    EXPECT_STREQ(ops->types[0], "weft_hostq_t");
    EXPECT_EQ(ops->types[1], nullptr);
    for (auto fn :
         {(void *)ops->init, (void *)ops->finalize, (void *)ops->attach, (void *)ops->detach,
          (void *)ops->append_signal, (void *)ops->append_wait, (void *)ops->append_copy, (void *)ops->reached,
          (void *)ops->release, (void *)ops->mem_kind, (void *)ops->host_alloc, (void *)ops->host_free})
        EXPECT_NE(fn, nullptr);
}

TEST_F(hostq_plugin, InitRefusesWhenNoDeviceIsSet) {
    setenv("WEFT_HOSTQ_NO_DEVICE", "1", 1);
    weft_queue_runtime_t *rt2 = reinterpret_cast<weft_queue_runtime_t *>(uintptr_t{1});
    int rc = ops->init(&test_host, &rt2, why, sizeof(why));
    unsetenv("WEFT_HOSTQ_NO_DEVICE");
    EXPECT_EQ(rc, WEFT_PLUGIN_ERR_NO_DEVICE);
    EXPECT_STREQ(why, "no hostq device (WEFT_HOSTQ_NO_DEVICE is set)");
    EXPECT_EQ(rt2, nullptr);
}

struct flag_step {
    std::atomic<int> *flag;
};

// signal(1), wait(2), user kernel, copies through device memory, signal(3): runs up to the
// wait, stops there until release(2), then finishes; then detach frees from the queue.
void run_points_and_copies(hostq_plugin &f, int sync, int expect_used) {
    weft_queue_t *q = nullptr;
    int used = 0;
    ASSERT_EQ(f.attach(&q, sync, &used), WEFT_PLUGIN_OK) << f.why;
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(used, expect_used);
    auto log = take_log();
    ASSERT_EQ(log.size(), 1u);
    EXPECT_NE(log[0].find("2 hostq: attached hostq 0x"), std::string::npos) << log[0];
    EXPECT_NE(log[0].find(expect_used == WEFT_QUEUE_SYNC_MEMOPS ? "memops" : "hostfn"), std::string::npos) << log[0];

    const weft_queue_ops_v1_t *ops = f.ops;
    EXPECT_EQ(ops->reached(q), 0u);
    constexpr size_t n = 1024;
    std::vector<unsigned char> src(n), dst(n, 0);
    for (size_t i = 0; i < n; i++) src[i] = static_cast<unsigned char>(i ^ 0x5a);
    void *dev = hostq_malloc_device(n);
    ASSERT_NE(dev, nullptr);
    std::atomic<int> kernel_ran{0};
    uint64_t ops_before = hostq_ops_executed(f.hq);

    ASSERT_EQ(ops->append_signal(q, 1), WEFT_PLUGIN_OK);
    ASSERT_EQ(ops->append_wait(q, 2), WEFT_PLUGIN_OK);
    ASSERT_EQ(hostq_launch(
                  f.hq, [](void *a) { static_cast<std::atomic<int> *>(a)->store(1); }, &kernel_ran),
              HOSTQ_OK);
    ASSERT_EQ(ops->append_copy(q, dev, src.data(), n), WEFT_PLUGIN_OK);
    ASSERT_EQ(ops->append_copy(q, dst.data(), dev, n), WEFT_PLUGIN_OK);
    ASSERT_EQ(ops->append_signal(q, 3), WEFT_PLUGIN_OK);

    ASSERT_TRUE(hostq_test_wait_until([&] { return ops->reached(q) == 1; })) << ops->reached(q);
    // Held at the wait: nothing after it may run.
    EXPECT_EQ(hostq_synchronize_timeout(f.hq, 50 * 1000), HOSTQ_ERR_TIMEOUT);
    EXPECT_EQ(ops->reached(q), 1u);
    EXPECT_EQ(kernel_ran.load(), 0);
    EXPECT_EQ(ops->release(q, 1), WEFT_PLUGIN_OK);  // not enough
    EXPECT_EQ(hostq_synchronize_timeout(f.hq, 20 * 1000), HOSTQ_ERR_TIMEOUT);
    EXPECT_EQ(kernel_ran.load(), 0);

    EXPECT_EQ(ops->release(q, 2), WEFT_PLUGIN_OK);
    ASSERT_TRUE(hostq_test_wait_until([&] { return ops->reached(q) == 3; })) << ops->reached(q);
    EXPECT_EQ(kernel_ran.load(), 1);
    ASSERT_EQ(hostq_synchronize_timeout(f.hq, hostq_test_sync_us), HOSTQ_OK);
    EXPECT_EQ(memcmp(src.data(), dst.data(), n), 0);
    EXPECT_EQ(hostq_ops_executed(f.hq) - ops_before, 6u);

    EXPECT_EQ(ops->detach(q), WEFT_PLUGIN_OK);
    ASSERT_EQ(hostq_synchronize_timeout(f.hq, hostq_test_sync_us), HOSTQ_OK);
    EXPECT_EQ(hostq_ops_executed(f.hq) - ops_before, 7u);  // detach frees from the queue
    EXPECT_TRUE(take_log().empty());                       // no warning: detached after the last signal
    EXPECT_EQ(hostq_free_device(dev), HOSTQ_OK);
}

TEST_F(hostq_plugin, PointsAndCopiesMemops) {
    run_points_and_copies(*this, WEFT_QUEUE_SYNC_MEMOPS, WEFT_QUEUE_SYNC_MEMOPS);
}

TEST_F(hostq_plugin, PointsAndCopiesHostfn) {
    run_points_and_copies(*this, WEFT_QUEUE_SYNC_HOSTFN, WEFT_QUEUE_SYNC_HOSTFN);
}

TEST_F(hostq_plugin, ForceHostfnFallsBack) {
    setenv("WEFT_HOSTQ_FORCE_HOSTFN", "1", 1);
    run_points_and_copies(*this, WEFT_QUEUE_SYNC_MEMOPS, WEFT_QUEUE_SYNC_HOSTFN);
}

// A release is monotonic: a later, smaller one does not take back released points.
void check_release_monotonic(hostq_plugin &f, int sync) {
    weft_queue_t *q = nullptr;
    int used = 0;
    ASSERT_EQ(f.attach(&q, sync, &used), WEFT_PLUGIN_OK) << f.why;
    const weft_queue_ops_v1_t *ops = f.ops;
    EXPECT_EQ(ops->release(q, 5), WEFT_PLUGIN_OK);
    EXPECT_EQ(ops->release(q, 3), WEFT_PLUGIN_OK);
    ASSERT_EQ(ops->append_wait(q, 4), WEFT_PLUGIN_OK);  // covered by 5
    ASSERT_EQ(ops->append_signal(q, 6), WEFT_PLUGIN_OK);
    ASSERT_TRUE(hostq_test_wait_until([&] { return ops->reached(q) == 6; }));
    EXPECT_EQ(ops->detach(q), WEFT_PLUGIN_OK);
    EXPECT_EQ(hostq_synchronize_timeout(f.hq, hostq_test_sync_us), HOSTQ_OK);
}

TEST_F(hostq_plugin, ReleaseIsMonotonicMemops) { check_release_monotonic(*this, WEFT_QUEUE_SYNC_MEMOPS); }

TEST_F(hostq_plugin, ReleaseIsMonotonicHostfn) { check_release_monotonic(*this, WEFT_QUEUE_SYNC_HOSTFN); }

// The core's pattern under load: one thread appends signal/wait pairs while a progress
// thread polls reached() and releases what follows it.
void run_progress_thread(hostq_plugin &f, int sync) {
    weft_queue_t *q = nullptr;
    int used = 0;
    ASSERT_EQ(f.attach(&q, sync, &used), WEFT_PLUGIN_OK) << f.why;
    const weft_queue_ops_v1_t *ops = f.ops;
    constexpr uint32_t pairs = 2000;
    constexpr uint32_t last = 2 * pairs;
    std::atomic<bool> stop{false};
    std::thread progress([&] {
        uint32_t released = 0;
        while (!stop.load()) {
            uint32_t r = ops->reached(q);
            if (r % 2 == 1 && r != released) {  // signal 2k-1 reached: release wait 2k
                EXPECT_EQ(ops->release(q, r + 1), WEFT_PLUGIN_OK);
                released = r;
            }
            if (r == last) return;
            std::this_thread::yield();
        }
    });
    for (uint32_t k = 1; k <= pairs; k++) {
        ASSERT_EQ(ops->append_signal(q, 2 * k - 1), WEFT_PLUGIN_OK);
        ASSERT_EQ(ops->append_wait(q, 2 * k), WEFT_PLUGIN_OK);
    }
    // The last point is a wait; a final signal shows that everything passed.
    ASSERT_EQ(ops->append_signal(q, last + 1), WEFT_PLUGIN_OK);
    bool done = hostq_test_wait_until([&] { return ops->reached(q) == last + 1; }, 30s);
    stop = true;
    progress.join();
    ASSERT_TRUE(done) << "reached " << ops->reached(q);
    EXPECT_EQ(ops->detach(q), WEFT_PLUGIN_OK);
    EXPECT_EQ(hostq_synchronize_timeout(f.hq, hostq_test_sync_us), HOSTQ_OK);
}

TEST_F(hostq_plugin, ProgressThreadMemops) { run_progress_thread(*this, WEFT_QUEUE_SYNC_MEMOPS); }

TEST_F(hostq_plugin, ProgressThreadHostfn) { run_progress_thread(*this, WEFT_QUEUE_SYNC_HOSTFN); }

TEST_F(hostq_plugin, MemoryKindsAndPinnedAllocation) {
    weft_queue_t *q = nullptr;
    int used = 0;
    ASSERT_EQ(attach(&q, WEFT_QUEUE_SYNC_MEMOPS, &used), WEFT_PLUGIN_OK) << why;
    void *dev = hostq_malloc_device(64);
    ASSERT_NE(dev, nullptr);
    void *pinned = nullptr;
    ASSERT_EQ(ops->host_alloc(q, 4096, &pinned), WEFT_PLUGIN_OK);
    ASSERT_NE(pinned, nullptr);
    int plain = 0;
    weft_mem_kind_t kind = WEFT_MEM_MANAGED;
    ASSERT_EQ(ops->mem_kind(q, dev, &kind), WEFT_PLUGIN_OK);
    EXPECT_EQ(kind, WEFT_MEM_DEVICE);
    ASSERT_EQ(ops->mem_kind(q, static_cast<char *>(pinned) + 4095, &kind), WEFT_PLUGIN_OK);
    EXPECT_EQ(kind, WEFT_MEM_HOST_PINNED);
    ASSERT_EQ(ops->mem_kind(q, &plain, &kind), WEFT_PLUGIN_OK);
    EXPECT_EQ(kind, WEFT_MEM_HOST);
    EXPECT_EQ(ops->host_free(q, dev), WEFT_PLUGIN_ERR_INVALID);  // not pinned memory
    EXPECT_EQ(ops->host_free(q, pinned), WEFT_PLUGIN_OK);
    ASSERT_EQ(ops->mem_kind(q, pinned, &kind), WEFT_PLUGIN_OK);
    EXPECT_EQ(kind, WEFT_MEM_HOST);  // freed
    EXPECT_EQ(hostq_free_device(dev), WEFT_PLUGIN_OK);
    EXPECT_EQ(ops->detach(q), WEFT_PLUGIN_OK);
}

TEST_F(hostq_plugin, WrongHandleSizeIsRefused) {
    weft_queue_t *q = nullptr;
    int used = 0;
    uint32_t small = 0;
    EXPECT_EQ(attach(&small, sizeof(small), WEFT_QUEUE_SYNC_MEMOPS, &q, &used), WEFT_PLUGIN_ERR_INVALID);
    EXPECT_STREQ(why, "hostq: a weft_hostq_t handle is 8 bytes (a hostq_t*), not 4");
    EXPECT_EQ(q, nullptr);
    unsigned char big[16] = {};
    memcpy(big, &hq, sizeof(hq));
    EXPECT_EQ(attach(big, sizeof(big), WEFT_QUEUE_SYNC_HOSTFN, &q, &used), WEFT_PLUGIN_ERR_INVALID);
    EXPECT_NE(std::string(why).find("not 16"), std::string::npos) << why;
    EXPECT_EQ(attach(&hq, sizeof(hq), WEFT_QUEUE_SYNC_MEMOPS, &q, &used, "cudaStream_t"), WEFT_PLUGIN_ERR_INVALID);
    EXPECT_NE(std::string(why).find("cudaStream_t"), std::string::npos) << why;
    EXPECT_EQ(attach(&hq, sizeof(hq), 7, &q, &used), WEFT_PLUGIN_ERR_INVALID);
    EXPECT_NE(std::string(why).find("sync mode 7"), std::string::npos) << why;
    EXPECT_EQ(q, nullptr);
}

TEST_F(hostq_plugin, GarbageHandleIsRefused) {
    weft_queue_t *q = nullptr;
    int used = 0;
    auto *garbage = reinterpret_cast<hostq_t *>(uintptr_t{0xdeadbeef});
    EXPECT_EQ(attach(&garbage, sizeof(garbage), WEFT_QUEUE_SYNC_MEMOPS, &q, &used), WEFT_PLUGIN_ERR_INVALID);
    EXPECT_STREQ(why, "hostq 0xdeadbeef: not a live queue");
    hostq_t *gone = nullptr;
    ASSERT_EQ(hostq_create(&gone), HOSTQ_OK);
    ASSERT_EQ(hostq_destroy(gone), HOSTQ_OK);
    EXPECT_EQ(attach(&gone, sizeof(gone), WEFT_QUEUE_SYNC_HOSTFN, &q, &used), WEFT_PLUGIN_ERR_INVALID);
    EXPECT_NE(std::string(why).find(": not a live queue"), std::string::npos) << why;
    EXPECT_EQ(q, nullptr);
    EXPECT_TRUE(take_log().empty());
}

// A detach that breaks the contract (a signal not yet reached) is logged, and q stays valid
// for the operations still queued (ASan/TSan would see a use after free otherwise).
TEST_F(hostq_plugin, EarlyDetachIsLoggedAndSafe) {
    for (int sync : {WEFT_QUEUE_SYNC_MEMOPS, WEFT_QUEUE_SYNC_HOSTFN}) {
        weft_queue_t *q = nullptr;
        int used = 0;
        ASSERT_EQ(attach(&q, sync, &used), WEFT_PLUGIN_OK) << why;
        take_log();
        ASSERT_EQ(hostq_set_delay_us(hq, 20 * 1000), HOSTQ_OK);
        ASSERT_EQ(ops->append_signal(q, 1), WEFT_PLUGIN_OK);
        ASSERT_EQ(ops->append_signal(q, 2), WEFT_PLUGIN_OK);
        EXPECT_EQ(ops->detach(q), WEFT_PLUGIN_OK);
        auto log = take_log();
        ASSERT_EQ(log.size(), 1u);
        EXPECT_NE(log[0].find("1 hostq: detach of hostq 0x"), std::string::npos) << log[0];
        EXPECT_NE(log[0].find("last signal 2 was reached (reached 0)"), std::string::npos) << log[0];
        ASSERT_EQ(hostq_synchronize_timeout(hq, hostq_test_sync_us), HOSTQ_OK);
        ASSERT_EQ(hostq_set_delay_us(hq, 0), HOSTQ_OK);
    }
}

}  // namespace
