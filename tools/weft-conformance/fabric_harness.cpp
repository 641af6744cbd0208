/* Fabric conformance harness: plugin loading, the host services, completion bookkeeping. */
#include "fabric_harness.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace conformance {
namespace {

LoadedPlugin g_plugin;
std::atomic<int> g_violations{0};
thread_local Inside t_inside = Inside::nothing;
thread_local void *t_posting = nullptr;

void host_log(int level, const char *name, const char *message) {
    static const bool verbose = getenv("WEFT_CONFORMANCE_VERBOSE") != nullptr;
    static const char *const names[] = {"error", "warn", "info", "debug"};
    if (level <= WEFT_LOG_WARN || verbose)
        fprintf(stderr, "[weft:%s] %s: %s\n", name ? name : "?", (level >= 0 && level <= 3) ? names[level] : "log",
                message ? message : "");
}

const char *host_hint(void *, const char *) { return nullptr; }

const weft_plugin_host_t g_host = {sizeof(weft_plugin_host_t), host_log, host_hint, nullptr};

/* Marks the plugin call this thread is in for the duration of a scope. */
struct InsideScope {
    Inside saved;
    void *saved_ctx;
    InsideScope(Inside what, void *ctx = nullptr) : saved(t_inside), saved_ctx(t_posting) {
        t_inside = what;
        t_posting = ctx;
    }
    ~InsideScope() {
        t_inside = saved;
        t_posting = saved_ctx;
    }
};

}  // namespace

void plugin_select(const std::string &path) {
    g_plugin = LoadedPlugin{};
    g_plugin.path = path;
    if (path.empty()) {
        g_plugin.error =
            "no plugin given: pass --fabric NAME|PATH (or set "
            "WEFT_CONFORMANCE_PLUGIN)";
        return;
    }
    /* Never dlclosed: vendor libraries keep atexit handlers into their own text. */
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        g_plugin.error = "dlopen(" + path + "): " + dlerror();
        return;
    }
    auto *desc = static_cast<const weft_plugin_v1_t *>(dlsym(handle, WEFT_PLUGIN_SYMBOL));
    if (!desc) {
        g_plugin.error = path + " does not export " WEFT_PLUGIN_SYMBOL;
        return;
    }
    if (desc->abi_major != WEFT_PLUGIN_ABI_MAJOR) {
        g_plugin.error = path + ": plugin ABI " + std::to_string(desc->abi_major) + ", this suite is ABI " +
            std::to_string(WEFT_PLUGIN_ABI_MAJOR);
        return;
    }
    if (desc->kind != WEFT_PLUGIN_KIND_FABRIC) {
        g_plugin.error = path + " is not a fabric plugin (" +
            (desc->kind == WEFT_PLUGIN_KIND_QUEUE ? std::string("it is a queue plugin: check it with --queue")
                                                  : "descriptor kind " + std::to_string(static_cast<int>(desc->kind))) +
            ")";
        return;
    }
    g_plugin.desc = desc;
    g_plugin.ops = static_cast<const weft_fabric_ops_v1_t *>(desc->ops);
    if (!g_plugin.ops) g_plugin.error = path + ": fabric plugin without an ops table";
}

const LoadedPlugin &plugin() { return g_plugin; }
const weft_plugin_host_t *host() { return &g_host; }

void complete_record(void *context, const weft_fabric_completion_t *c) {
    bool allowed = t_inside == Inside::progress || t_inside == Inside::disconnect || t_inside == Inside::close ||
        t_inside == Inside::peer_failed || (t_inside == Inside::post && t_posting == context);
    if (!allowed) g_violations.fetch_add(1);
    auto *op = static_cast<Op *>(context);
    op->c = *c;
    op->calls.fetch_add(1, std::memory_order_release);
}

int completion_violations() { return g_violations.load(); }
void completion_violations_reset() { g_violations.store(0); }

void pattern_fill(uint8_t *p, size_t n, uint32_t seed) {
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; ++i) {
        x = x * 1103515245u + 12345u;
        p[i] = static_cast<uint8_t>(x >> 16);
    }
}

size_t pattern_check(const uint8_t *p, size_t n, uint32_t seed) {
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; ++i) {
        x = x * 1103515245u + 12345u;
        if (p[i] != static_cast<uint8_t>(x >> 16)) return i;
    }
    return n;
}

// ------------------------------------------------------------------ FabricTest ----------

void FabricTest::SetUp() {
    const LoadedPlugin &p = plugin();
    if (p.path.empty()) GTEST_SKIP() << p.error;
    ASSERT_TRUE(p.error.empty()) << p.error;
    completion_violations_reset();
    char why[256] = "";
    int rc = ops().init(host(), &fabric_, why, sizeof(why));
    if (rc != WEFT_PLUGIN_OK) {
        /* A fabric with no usable hardware/transport here is not a failure of the plugin. */
        GTEST_SKIP() << p.desc->name << " cannot open on this machine (rc " << rc << "): " << why;
    }
    ASSERT_NE(fabric_, nullptr);
    caps_.struct_size = sizeof(caps_);
    ASSERT_EQ(ops().query(fabric_, &caps_), WEFT_PLUGIN_OK);
    context_space_ = g_context_space != kContextSpaceAsked ? g_context_space : context_space_asked(caps_);
    a_ = open_endpoint();
    b_ = open_endpoint();
    ASSERT_NE(a_.ep, nullptr);
    ASSERT_NE(b_.ep, nullptr);
    a_to_b_ = connect(a_, b_);
    b_to_a_ = connect(b_, a_);
    ASSERT_NE(a_to_b_, nullptr);
    ASSERT_NE(b_to_a_, nullptr);
}

void FabricTest::TearDown() {
    if (!fabric_) return;
    /* Every posted op must complete exactly once: give stragglers time, then check. */
    progress_until(
        [&] {
            for (Op *op : posted_)
                if (op->done() == 0) return false;
            return true;
        },
        std::chrono::seconds(5));
    progress_for(std::chrono::milliseconds(20));
    size_t idx = 0;
    for (Op *op : posted_) {
        EXPECT_EQ(op->done(), 1) << "operation #" << idx << " was completed " << op->done()
                                 << " times (must be exactly once)";
        ++idx;
    }
    for (auto &[ep, peer] : peers_) EXPECT_EQ(disconnect(ep, peer), WEFT_PLUGIN_OK);
    peers_.clear();
    for (weft_fabric_ep_t *ep : open_) {
        InsideScope in(Inside::close);
        EXPECT_EQ(ops().ep_close(ep), WEFT_PLUGIN_OK);
    }
    open_.clear();
    EXPECT_EQ(ops().finalize(fabric_), WEFT_PLUGIN_OK);
    fabric_ = nullptr;
    EXPECT_EQ(completion_violations(), 0)
        << "complete() was called outside ep_progress/ep_disconnect/ep_close and outside "
           "the call posting that operation";
}

Endpoint FabricTest::open_endpoint(int serial) {
    Endpoint e;
    weft_fabric_ep_attr_t attr{sizeof(attr), serial, complete_record, context_space_};
    int rc = ops().ep_open(fabric_, &attr, &e.ep);
    EXPECT_EQ(rc, WEFT_PLUGIN_OK) << "ep_open";
    if (rc != WEFT_PLUGIN_OK) return Endpoint{};
    open_.push_back(e.ep);
    size_t len = caps_.max_address_size;
    e.address.resize(len);
    rc = ops().ep_address(e.ep, e.address.data(), &len);
    EXPECT_EQ(rc, WEFT_PLUGIN_OK) << "ep_address with a max_address_size buffer";
    EXPECT_LE(len, caps_.max_address_size) << "address longer than caps.max_address_size";
    e.address.resize(rc == WEFT_PLUGIN_OK ? len : 0);
    return e;
}

weft_fabric_peer_t *FabricTest::connect(const Endpoint &from, const Endpoint &to) {
    weft_fabric_peer_t *peer = nullptr;
    int rc = ops().ep_connect(from.ep, to.address.data(), to.address.size(), &peer);
    EXPECT_EQ(rc, WEFT_PLUGIN_OK) << "ep_connect";
    if (rc == WEFT_PLUGIN_OK) peers_.emplace_back(from.ep, peer);
    return rc == WEFT_PLUGIN_OK ? peer : nullptr;
}

void FabricTest::close_endpoint(Endpoint &e) {
    for (auto it = peers_.begin(); it != peers_.end();) {
        if (it->first == e.ep) {
            EXPECT_EQ(disconnect(it->first, it->second), WEFT_PLUGIN_OK);
            it = peers_.erase(it);
        } else {
            ++it;
        }
    }
    {
        InsideScope in(Inside::close);
        EXPECT_EQ(ops().ep_close(e.ep), WEFT_PLUGIN_OK);
    }
    std::erase(open_, e.ep);
    e = Endpoint{};
}

int FabricTest::disconnect(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, std::vector<weft_fabric_ep_t *> also) {
    std::atomic<bool> done{false};
    int rc = WEFT_PLUGIN_ERR_OTHER;
    std::thread t([&] {
        InsideScope in(Inside::disconnect);
        rc = ops().ep_disconnect(ep, peer);
        done.store(true);
    });
    for (weft_fabric_ep_t *o : open_)
        if (o != ep) also.push_back(o);
    {
        InsideScope in(Inside::progress);
        while (!done.load()) {
            for (weft_fabric_ep_t *o : also)
                if (o != ep) ops().ep_progress(o);
            std::this_thread::yield();
        }
    }
    t.join();
    return rc;
}

size_t g_context_space = kContextSpaceAsked;

size_t context_space_asked(const weft_fabric_caps_t &caps) {
    uint32_t minor = plugin().desc->abi_minor;
    if (minor < 7) return minor == 6 ? 336 : 0;
    return caps.context_space < kOpContextSpace ? caps.context_space : kOpContextSpace;
}

Op &FabricTest::new_op() {
    Op &op = ops_.emplace_back();
    /* Not zeroed: the contract promises the fabric nothing about these bytes. */
    memset(op.fabric_space, 0xA5, sizeof(op.fabric_space));
    return op;
}

int FabricTest::post_retrying(Op &op, const std::function<int()> &post) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
        int rc;
        {
            InsideScope in(Inside::post, &op);
            rc = post();
        }
        if (rc == WEFT_PLUGIN_OK) posted_.push_back(&op);
        if (rc != WEFT_PLUGIN_ERR_AGAIN || std::chrono::steady_clock::now() > deadline) return rc;
        progress_all();
    }
}

int FabricTest::send(const Endpoint &from, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag,
                     Op &op) {
    return post_retrying(op, [&] { return ops().tag_send(from.ep, peer, buf, len, tag, &op); });
}

int FabricTest::send_sync(const Endpoint &from, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag,
                          Op &op) {
    return post_retrying(op, [&] { return ops().tag_send_sync(from.ep, peer, buf, len, tag, &op); });
}

int FabricTest::send_once(const Endpoint &from, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag,
                          Op &op) {
    int rc;
    {
        InsideScope in(Inside::post, &op);
        rc = ops().tag_send(from.ep, peer, buf, len, tag, &op);
    }
    if (rc == WEFT_PLUGIN_OK) posted_.push_back(&op);
    return rc;
}

bool FabricTest::has_iov() const {
    return plugin().desc->abi_minor >= 8 && ops().tag_sendv != nullptr && ops().tag_recvv != nullptr;
}

int FabricTest::sendv(const Endpoint &from, weft_fabric_peer_t *peer, const weft_fabric_iov_t *iov, size_t count,
                      uint64_t tag, Op &op) {
    return post_retrying(op, [&] { return ops().tag_sendv(from.ep, peer, iov, count, tag, &op); });
}

int FabricTest::recvv(const Endpoint &on, const weft_fabric_iov_t *iov, size_t count, uint64_t tag, uint64_t ignore,
                      Op &op) {
    return post_retrying(op, [&] { return ops().tag_recvv(on.ep, iov, count, tag, ignore, &op); });
}

int FabricTest::recv(const Endpoint &on, void *buf, size_t len, uint64_t tag, uint64_t ignore, Op &op) {
    return post_retrying(op, [&] { return ops().tag_recv(on.ep, buf, len, tag, ignore, &op); });
}

int FabricTest::cancel(const Endpoint &on, Op &op) {
    InsideScope in(Inside::other);
    return ops().cancel(on.ep, &op);
}

int FabricTest::probe(const Endpoint &on, uint64_t tag, uint64_t ignore, int *found, uint64_t *msg_tag,
                      size_t *msg_len) {
    InsideScope in(Inside::other);
    return ops().tag_probe(on.ep, tag, ignore, found, msg_tag, msg_len);
}

bool FabricTest::has_peer_failed() const { return plugin().desc->abi_minor >= 4 && ops().ep_peer_failed != nullptr; }

int FabricTest::peer_failed(const Endpoint &on, weft_fabric_peer_t *peer) {
    InsideScope in(Inside::peer_failed);
    return ops().ep_peer_failed(on.ep, peer);
}

int FabricTest::progress_all() {
    InsideScope in(Inside::progress);
    int n = 0;
    for (weft_fabric_ep_t *ep : open_) {
        int rc = ops().ep_progress(ep);
        EXPECT_GE(rc, 0) << "ep_progress failed";
        if (rc > 0) n += rc;
    }
    return n;
}

int FabricTest::progress_one(const Endpoint &e) {
    InsideScope in(Inside::progress);
    return ops().ep_progress(e.ep);
}

namespace {

/* Runs step until pred holds or timeout passes; two cores, many threads: yields now and then so
 * that a peer thread can run. */
bool step_until(const std::function<bool()> &pred, std::chrono::milliseconds timeout,
                const std::function<void()> &step) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    unsigned spins = 0;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        step();
        if (++spins % 1024 == 0) std::this_thread::yield();
    }
    return true;
}

}  // namespace

bool FabricTest::progress_one_until(const Endpoint &e, const std::function<bool()> &pred,
                                    std::chrono::milliseconds timeout) {
    return step_until(pred, timeout, [&] { EXPECT_GE(progress_one(e), 0) << "ep_progress failed"; });
}

bool FabricTest::progress_until(const std::function<bool()> &pred, std::chrono::milliseconds timeout) {
    return step_until(pred, timeout, [&] { progress_all(); });
}

bool FabricTest::wait(const Op &op, std::chrono::milliseconds timeout) {
    return progress_until([&] { return op.done() > 0; }, timeout);
}

void FabricTest::progress_for(std::chrono::milliseconds d) {
    auto end = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < end) progress_all();
}

}  // namespace conformance
