/* Queue conformance harness: plugin loading, the host services, queues and points. */
#include "queue_harness.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

namespace conformance {
namespace {

LoadedQueuePlugin g_queue;
bool g_selected = false;

int log_threshold() {
    const char *v = getenv("WEFT_LOG");
    if (!v) return WEFT_LOG_WARN;
    if (!strcmp(v, "error")) return WEFT_LOG_ERROR;
    if (!strcmp(v, "info")) return WEFT_LOG_INFO;
    if (!strcmp(v, "debug")) return WEFT_LOG_DEBUG;
    return WEFT_LOG_WARN;
}

void host_log(int level, const char *name, const char *message) {
    static const int threshold = log_threshold();
    static const char *const names[] = {"error", "warn", "info", "debug"};
    if (level <= threshold)
        fprintf(stderr, "[weft:queue:%s] %s: %s\n", name ? name : "?",
                (level >= 0 && level <= 3) ? names[level] : "log", message ? message : "");
}

const char *host_hint(void *, const char *) { return nullptr; }

const weft_plugin_host_t g_host = {sizeof(weft_plugin_host_t), host_log, host_hint, nullptr};

/* The stream being attached has no info keys but type and value. */
int get_hex_none(void *, const char *, void *, size_t) { return WEFT_PLUGIN_ERR_NOT_FOUND; }

/* Sleeps briefly between polls: the plugin's own threads need the (few, shared) cores. */
struct Poller {
    unsigned spins = 0;
    void pause() {
        if (++spins < 64)
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
};

template <class F>
int retry_again(F &&f, const std::function<void()> &between) {
    auto deadline = std::chrono::steady_clock::now() + queue_deadline;
    int rc;
    while ((rc = f()) == WEFT_PLUGIN_ERR_AGAIN && std::chrono::steady_clock::now() < deadline) {
        if (between) between();
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    return rc;
}

}  // namespace

void queue_plugin_select(const std::string &path) {
    g_selected = true;
    g_queue = LoadedQueuePlugin{};
    g_queue.path = path;
    if (path.empty()) {
        g_queue.error =
            "no queue plugin given: pass --queue NAME|PATH, or set "
            "WEFT_CONFORMANCE_QUEUE_PLUGIN to the path of libweft-queue-<name>.so";
        return;
    }
    /* Never dlclosed: vendor libraries keep atexit handlers into their own text. */
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *e = dlerror();
        std::string text = e ? e : "unknown error";
        /* The plugin is there but a library it links is not: a GPU plugin on a machine without
         * the driver (libcuda.so.1 ...).  The core calls that "no device" too. */
        if (access(path.c_str(), R_OK) == 0 && text.find("cannot open shared object file") != std::string::npos) {
            g_queue.no_device = "no device: dlopen(" + path + "): " + text + " (the runtime's driver is not installed)";
            return;
        }
        g_queue.error = "dlopen(" + path + "): " + text;
        return;
    }
    auto *desc = static_cast<const weft_plugin_v1_t *>(dlsym(handle, WEFT_PLUGIN_SYMBOL));
    if (!desc) {
        g_queue.error = path + " does not export " WEFT_PLUGIN_SYMBOL;
        return;
    }
    if (desc->abi_major != WEFT_PLUGIN_ABI_MAJOR) {
        g_queue.error = path + ": plugin ABI " + std::to_string(desc->abi_major) + "." +
            std::to_string(desc->abi_minor) + ", this suite is ABI " + std::to_string(WEFT_PLUGIN_ABI_MAJOR) + "." +
            std::to_string(WEFT_PLUGIN_ABI_MINOR);
        return;
    }
    if (desc->kind != WEFT_PLUGIN_KIND_QUEUE) {
        g_queue.error = path + " is not a queue plugin (kind " + std::to_string(static_cast<int>(desc->kind)) + ")";
        return;
    }
    if (desc->abi_minor < 2) {
        g_queue.error = path + ": queue plugins need ABI 1.2 or later, it is ABI 1." + std::to_string(desc->abi_minor);
        return;
    }
    if (!desc->ops) {
        g_queue.error = path + ": queue plugin without an ops table";
        return;
    }
    g_queue.desc = desc;
    /* As the core does: only the part of the table the plugin's minor defines. */
    size_t known = desc->abi_minor >= 3 ? sizeof(weft_queue_ops_v1_t) : offsetof(weft_queue_ops_v1_t, queue_create);
    memcpy(&g_queue.ops, desc->ops, known);
    const char *name = desc->name ? desc->name : path.c_str();
    if (desc->abi_minor < 3)
        g_queue.no_create = std::string(name) + " is built for plugin ABI 1." + std::to_string(desc->abi_minor) +
            ": queue_create came with ABI 1.3, so the suite cannot make a native "
            "queue to test";
    else if (!g_queue.ops.queue_create || !g_queue.ops.queue_destroy)
        g_queue.no_create = std::string(name) +
            " has no queue_create/queue_destroy (optional, "
            "ABI 1.3): the suite cannot make a native queue "
            "to test";
}

const LoadedQueuePlugin &queue_plugin() {
    if (!g_selected) {
        const char *env = getenv("WEFT_CONFORMANCE_QUEUE_PLUGIN");
        queue_plugin_select(env ? env : "");
    }
    return g_queue;
}

const weft_plugin_host_t *queue_host() { return &g_host; }

const char *sync_name(int sync) {
    switch (sync) {
        case WEFT_QUEUE_SYNC_MEMOPS: return "memops";
        case WEFT_QUEUE_SYNC_HOSTFN: return "hostfn";
        default: return "unknown";
    }
}

std::string sync_param_name(const ::testing::TestParamInfo<int> &info) { return sync_name(info.param); }

void queue_fill(void *p, size_t n, uint32_t seed) {
    auto *b = static_cast<uint8_t *>(p);
    uint32_t x = seed * 2654435761u + 7;
    for (size_t i = 0; i < n; ++i) {
        x = x * 1103515245u + 12345u;
        b[i] = static_cast<uint8_t>(x >> 16);
    }
}

size_t queue_check(const void *p, size_t n, uint32_t seed) {
    auto *b = static_cast<const uint8_t *>(p);
    uint32_t x = seed * 2654435761u + 7;
    for (size_t i = 0; i < n; ++i) {
        x = x * 1103515245u + 12345u;
        if (b[i] != static_cast<uint8_t>(x >> 16)) return i;
    }
    return n;
}

bool run_bounded(std::function<int()> fn, int *rc, std::chrono::milliseconds timeout) {
    struct State {
        std::mutex m;
        std::condition_variable cv;
        bool done = false;
        int rc = WEFT_PLUGIN_ERR_OTHER;
    };
    auto st = std::make_shared<State>();
    std::thread([st, fn = std::move(fn)] {
        int r = fn();
        std::lock_guard<std::mutex> g(st->m);
        st->rc = r;
        st->done = true;
        st->cv.notify_all();
    }).detach();
    std::unique_lock<std::mutex> l(st->m);
    if (!st->cv.wait_for(l, timeout, [&] { return st->done; })) return false;
    *rc = st->rc;
    return true;
}

void require_queue_plugin() {
    const LoadedQueuePlugin &p = queue_plugin();
    if (p.path.empty()) GTEST_SKIP() << p.error;
    if (!p.no_device.empty()) GTEST_SKIP() << p.no_device;
    ASSERT_TRUE(p.error.empty()) << p.error;
}

weft_queue_runtime_t *open_runtime() {
    const LoadedQueuePlugin &p = queue_plugin();
    weft_queue_runtime_t *rt = nullptr;
    char why[512] = "";
    int rc = p.ops.init(queue_host(), &rt, why, sizeof(why));
    if (rc == WEFT_PLUGIN_ERR_NO_DEVICE) {
        [&] { GTEST_SKIP() << "no device: " << why; }();
        return nullptr;
    }
    if (rc != WEFT_PLUGIN_OK) {
        ADD_FAILURE() << p.desc->name << ": init failed (code " << rc << "): " << why;
        return nullptr;
    }
    if (!rt) ADD_FAILURE() << "init returned WEFT_PLUGIN_OK without a runtime";
    return rt;
}

// ------------------------------------------------------------------ QueueTest -----------

void QueueTest::SetUp() {
    require_queue_plugin();
    if (IsSkipped() || HasFatalFailure()) return;
    rt_ = open_runtime();
    if (IsSkipped()) return;
    ASSERT_NE(rt_, nullptr);
}

void QueueTest::TearDown() {
    bool all = true;
    for (TestQueue &tq : queues_) all = drain(tq) && all;
    if (all) {
        for (const Alloc &a : allocs_) {
            if (a.pinned) {
                EXPECT_EQ(ops().host_free(a.tq->q, a.p), WEFT_PLUGIN_OK) << "host_free";
            } else {
                free(a.p);
            }
        }
    } else if (!allocs_.empty()) {
        ADD_FAILURE() << "a queue did not drain: " << allocs_.size() << " buffer(s) it may still copy into are leaked";
    }
    allocs_.clear();
    for (TestQueue &tq : queues_) all = finish(tq) && all;
    queues_.clear();
    if (rt_ && all && !leak_runtime_) {
        EXPECT_EQ(ops().finalize(rt_), WEFT_PLUGIN_OK);
    } else if (rt_) {
        ADD_FAILURE() << "a queue did not finish: the runtime is left open (not finalized)";
    }
    rt_ = nullptr;
}

TestQueue *QueueTest::create_queue() {
    const LoadedQueuePlugin &p = queue_plugin();
    if (!p.no_create.empty()) {
        [&] { GTEST_SKIP() << p.no_create; }();
        return nullptr;
    }
    TestQueue &tq = queues_.emplace_back();
    uint8_t buf[256];
    size_t size = sizeof(buf);
    int rc = p.ops.queue_create(rt_, buf, &size);
    if (rc != WEFT_PLUGIN_OK) {
        ADD_FAILURE() << "queue_create failed (code " << rc << ")";
        return nullptr;
    }
    if (size == 0 || size > sizeof(buf)) {
        ADD_FAILURE() << "queue_create reported a handle of " << size << " bytes (capacity " << sizeof(buf) << ")";
        return nullptr;
    }
    tq.handle.assign(buf, buf + size);
    tq.created = true;
    return &tq;
}

int QueueTest::attach_raw(const char *type, const void *handle, size_t size, int sync, weft_queue_t **q, int *sync_used,
                          char *why, size_t why_len) {
    weft_queue_attach_args_t args{};
    args.struct_size = sizeof(args);
    args.type = type;
    args.handle = handle;
    args.handle_size = size;
    args.sync = sync;
    args.get_hex = get_hex_none;
    args.get_hex_ctx = nullptr;
    return ops().attach(rt_, &args, q, sync_used, why, why_len);
}

int QueueTest::attach(TestQueue &tq, int sync, char *why, size_t why_len) {
    weft_queue_t *q = nullptr;
    int used = 0;
    int rc = attach_raw(ops().types[0], tq.handle.data(), tq.handle.size(), sync, &q, &used, why, why_len);
    if (rc == WEFT_PLUGIN_OK) {
        tq.q = q;
        tq.sync_requested = sync;
        tq.sync_used = used;
        tq.seen = 0;
    }
    return rc;
}

TestQueue *QueueTest::make_queue(int sync) {
    TestQueue *tq = create_queue();
    if (!tq) return nullptr;
    char why[512] = "";
    int rc = attach(*tq, sync, why, sizeof(why));
    if (rc != WEFT_PLUGIN_OK) {
        ADD_FAILURE() << "attach of a " << ops().types[0] << " from queue_create (sync " << sync_name(sync)
                      << ") failed (code " << rc << "): " << why;
        return nullptr;
    }
    if (tq->sync_used != WEFT_QUEUE_SYNC_MEMOPS && tq->sync_used != WEFT_QUEUE_SYNC_HOSTFN) {
        ADD_FAILURE() << "attach reported *sync_used " << tq->sync_used
                      << ", neither WEFT_QUEUE_SYNC_MEMOPS nor WEFT_QUEUE_SYNC_HOSTFN";
        return nullptr;
    }
    if (tq->q == nullptr) {
        ADD_FAILURE() << "attach returned WEFT_PLUGIN_OK without a queue";
        return nullptr;
    }
    return tq;
}

void QueueTest::detach(TestQueue &tq) {
    if (!tq.q) return;
    EXPECT_EQ(ops().detach(tq.q), WEFT_PLUGIN_OK) << "detach";
    tq.q = nullptr;
}

void QueueTest::destroy(TestQueue &tq) {
    if (!tq.created) return;
    const weft_queue_ops_v1_t *o = &ops();
    weft_queue_runtime_t *rt = rt_;
    std::vector<uint8_t> h = tq.handle;
    int rc = WEFT_PLUGIN_ERR_OTHER;
    /* queue_destroy waits for the queue's work: bounded here, so a stuck queue fails the test
     * instead of hanging the suite. */
    bool returned = run_bounded(
        [o, rt, h] {
            int r;
            auto end = std::chrono::steady_clock::now() + queue_deadline;
            while ((r = o->queue_destroy(rt, h.data(), h.size())) == WEFT_PLUGIN_ERR_AGAIN &&
                   std::chrono::steady_clock::now() < end)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            return r;
        },
        &rc, 2 * queue_deadline);
    if (!returned) {
        ADD_FAILURE() << "queue_destroy did not return within " << (2 * queue_deadline).count() << " ms";
        leak_runtime_ = true;
        tq.stuck = true;
    } else {
        EXPECT_EQ(rc, WEFT_PLUGIN_OK) << "queue_destroy";
    }
    tq.created = false;
}

uint32_t QueueTest::take(TestQueue &tq) {
    uint32_t v = tq.next;
    tq.next = serial_next(v);
    return v;
}

int QueueTest::signal(TestQueue &tq, uint32_t value) {
    weft_queue_t *q = tq.q;
    const weft_queue_ops_v1_t *o = &ops();
    int rc = retry_again([&] { return o->append_signal(q, value); },
                         help_reached_ ? std::function<void()>([&] { reached(tq); }) : nullptr);
    if (rc == WEFT_PLUGIN_OK) {
        tq.last_signal = value;
        tq.tail_is_signal = true;
    }
    return rc;
}

int QueueTest::wait(TestQueue &tq, uint32_t value) {
    weft_queue_t *q = tq.q;
    const weft_queue_ops_v1_t *o = &ops();
    int rc = retry_again([&] { return o->append_wait(q, value); },
                         help_reached_ ? std::function<void()>([&] { reached(tq); }) : nullptr);
    if (rc == WEFT_PLUGIN_OK) {
        tq.last_wait = value;
        tq.any_wait = true;
        tq.tail_is_signal = false;
    }
    return rc;
}

int QueueTest::copy(TestQueue &tq, void *dst, const void *src, size_t bytes) {
    weft_queue_t *q = tq.q;
    const weft_queue_ops_v1_t *o = &ops();
    int rc = retry_again([&] { return o->append_copy(q, dst, src, bytes); },
                         help_reached_ ? std::function<void()>([&] { reached(tq); }) : nullptr);
    if (rc == WEFT_PLUGIN_OK) tq.tail_is_signal = false;
    return rc;
}

uint32_t QueueTest::add_signal(TestQueue &tq) {
    uint32_t v = take(tq);
    EXPECT_EQ(signal(tq, v), WEFT_PLUGIN_OK) << "append_signal(" << v << ")";
    return v;
}

uint32_t QueueTest::add_wait(TestQueue &tq) {
    uint32_t v = take(tq);
    EXPECT_EQ(wait(tq, v), WEFT_PLUGIN_OK) << "append_wait(" << v << ")";
    return v;
}

uint32_t QueueTest::reached(TestQueue &tq) {
    uint32_t r = ops().reached(tq.q);
    if (!serial_ge(r, tq.seen)) {
        ADD_FAILURE() << "reached() went back from " << tq.seen << " to " << r;
        return r; /* keep the newest seen, so one regression fails once */
    }
    tq.seen = r;
    return r;
}

bool QueueTest::pass_one_wait(TestQueue &tq) {
    uint32_t s1 = add_signal(tq);
    uint32_t w = add_wait(tq);
    uint32_t s2 = add_signal(tq);
    if (!wait_reached(tq, s1)) return false;
    release(tq, w);
    return wait_reached(tq, s2);
}

void QueueSyncOneQueueTest::SetUp() {
    QueueSyncTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    tq_ = make_queue(GetParam());
    if (IsSkipped()) return;
    ASSERT_NE(tq_, nullptr);
}

bool QueueTest::wait_reached(TestQueue &tq, uint32_t value, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    Poller p;
    uint32_t r;
    while (!serial_ge(r = reached(tq), value)) {
        if (std::chrono::steady_clock::now() > deadline) {
            ADD_FAILURE() << "point " << value << " was not reached within " << timeout.count() << " ms (reached() is "
                          << r << ", sync " << sync_name(tq.sync_used) << ")";
            return false;
        }
        p.pause();
    }
    return true;
}

bool QueueTest::stays_before(TestQueue &tq, uint32_t value, std::chrono::milliseconds d) {
    auto end = std::chrono::steady_clock::now() + d;
    Poller p;
    while (std::chrono::steady_clock::now() < end) {
        if (serial_ge(reached(tq), value)) return false;
        p.pause();
    }
    return !serial_ge(reached(tq), value);
}

void QueueTest::release(TestQueue &tq, uint32_t value) {
    EXPECT_EQ(ops().release(tq.q, value), WEFT_PLUGIN_OK) << "release(" << value << ")";
}

void *QueueTest::alloc(TestQueue &tq, size_t bytes, bool pinned) {
    void *p = nullptr;
    if (pinned) {
        int rc = ops().host_alloc(tq.q, bytes, &p);
        if (rc != WEFT_PLUGIN_OK || !p) {
            ADD_FAILURE() << "host_alloc(" << bytes << ") failed (code " << rc << ")";
            return nullptr;
        }
    } else {
        p = malloc(bytes);
        if (!p) {
            ADD_FAILURE() << "malloc(" << bytes << ") failed";
            return nullptr;
        }
    }
    allocs_.push_back(Alloc{&tq, p, pinned});
    return p;
}

int QueueTest::free_now(void *p) {
    for (auto it = allocs_.begin(); it != allocs_.end(); ++it) {
        if (it->p != p) continue;
        Alloc a = *it;
        allocs_.erase(it);
        if (!a.pinned) {
            free(p);
            return WEFT_PLUGIN_OK;
        }
        return ops().host_free(a.tq->q, p);
    }
    ADD_FAILURE() << "free_now of memory the test did not allocate";
    return WEFT_PLUGIN_ERR_INVALID;
}

bool QueueTest::drain(TestQueue &tq) {
    if (tq.stuck) return false;
    if (!tq.q) return true;
    /* Everything appended must have executed before detach (and before its buffers go):
     * release every wait, end with a signal, and wait for it. */
    if (tq.any_wait) {
        EXPECT_EQ(ops().release(tq.q, tq.last_wait), WEFT_PLUGIN_OK) << "release";
    }
    if (!tq.tail_is_signal) {
        EXPECT_EQ(signal(tq, take(tq)), WEFT_PLUGIN_OK) << "append_signal at the end";
    }
    if (tq.last_signal != 0 && !wait_reached(tq, tq.last_signal)) {
        ADD_FAILURE() << "the queue did not finish: it is left attached (leaked)";
        tq.stuck = true;
        leak_runtime_ = true;
        return false;
    }
    return true;
}

bool QueueTest::finish(TestQueue &tq) {
    if (!drain(tq)) return false;
    detach(tq);
    destroy(tq);
    return !tq.stuck;
}

void QueueTest::reopen_runtime() {
    ASSERT_EQ(ops().finalize(rt_), WEFT_PLUGIN_OK) << "finalize";
    rt_ = nullptr;
    char why[512] = "";
    ASSERT_EQ(ops().init(queue_host(), &rt_, why, sizeof(why)), WEFT_PLUGIN_OK) << "init again: " << why;
    ASSERT_NE(rt_, nullptr);
}

}  // namespace conformance
