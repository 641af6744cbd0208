/* More endpoints in one fabric, shared (non-serial) endpoints, and clean teardown with
 * operations still pending. */
#include "fabric_harness.hpp"

#include <thread>

namespace conformance {
namespace {

using Lifecycle = FabricTest;

TEST_F(Lifecycle, SecondPairIsIndependent) {
    Endpoint c = open_endpoint(), d = open_endpoint();
    ASSERT_NE(c.ep, nullptr);
    ASSERT_NE(d.ep, nullptr);
    weft_fabric_peer_t *c_to_d = connect(c, d);
    ASSERT_NE(c_to_d, nullptr);
    /* b listens for anything; only c -> d traffic flows: b must see none of it. */
    uint64_t b_got = 0, d_got = 0, v = 0xd00d;
    Op &rb = new_op(), &rd = new_op(), &s = new_op();
    ASSERT_EQ(recv(b_, &b_got, 8, 0, ~0ull, rb), WEFT_PLUGIN_OK);
    ASSERT_EQ(recv(d, &d_got, 8, 7, 0, rd), WEFT_PLUGIN_OK);
    ASSERT_EQ(send(c, c_to_d, &v, 8, 7, s), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(rd));
    EXPECT_EQ(d_got, v);
    progress_for(std::chrono::milliseconds(20));
    EXPECT_EQ(rb.done(), 0) << "a message for endpoint d reached endpoint b";
    ASSERT_EQ(cancel(b_, rb), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(rb));
    EXPECT_EQ(rb.c.status, WEFT_PLUGIN_ERR_CANCELED);
    /* The first pair still works with the second one open. */
    uint64_t got = 0;
    Op &r2 = new_op(), &s2 = new_op();
    ASSERT_EQ(recv(b_, &got, 8, 8, 0, r2), WEFT_PLUGIN_OK);
    ASSERT_EQ(send(a_, a_to_b_, &v, 8, 8, s2), WEFT_PLUGIN_OK);
    ASSERT_TRUE(wait(r2));
    EXPECT_EQ(got, v);
    close_endpoint(c);
    close_endpoint(d);
}

TEST_F(Lifecycle, SharedEndpointFromTwoThreads) {
    if (!(caps_.flags & WEFT_FABRIC_CAP_THREAD_SAFE))
        GTEST_SKIP() << plugin().desc->name << " has no WEFT_FABRIC_CAP_THREAD_SAFE";
    Endpoint s = open_endpoint(0), r = open_endpoint(0);
    weft_fabric_peer_t *s_to_r = connect(s, r);
    ASSERT_NE(s_to_r, nullptr);
    constexpr int N = 300;
    std::vector<uint32_t> in(2 * N, UINT32_MAX), out(2 * N);
    std::vector<Op *> rs(2 * N), ss(2 * N);
    for (int i = 0; i < 2 * N; ++i) {
        rs[i] = &new_op();
        ss[i] = &new_op();
        out[i] = static_cast<uint32_t>(i);
        /* Thread t sends tag t; receives per tag are posted in order. */
        ASSERT_EQ(recv(r, &in[i], 4, static_cast<uint64_t>(i % 2), 0, *rs[i]), WEFT_PLUGIN_OK);
    }
    std::atomic<int> failures{0};
    auto sender = [&](int t) {
        for (int i = t; i < 2 * N; i += 2) {
            int rc;
            do {
                rc = ops().tag_send(s.ep, s_to_r, &out[i], 4, static_cast<uint64_t>(t), ss[i]);
                if (rc == WEFT_PLUGIN_ERR_AGAIN) ops().ep_progress(s.ep);
            } while (rc == WEFT_PLUGIN_ERR_AGAIN);
            if (rc != WEFT_PLUGIN_OK) failures.fetch_add(1);
            ops().ep_progress(s.ep);
        }
    };
    completion_violations_reset();
    std::thread t0(sender, 0), t1(sender, 1);
    t0.join();
    t1.join();
    ASSERT_EQ(failures.load(), 0);
    for (int i = 0; i < 2 * N; ++i) posted_.push_back(ss[i]);
    ASSERT_TRUE(progress_until([&] {
        for (int i = 0; i < 2 * N; ++i)
            if (!rs[i]->done() || !ss[i]->done()) return false;
        return true;
    }));
    /* Per tag, thread t's messages arrive in its send order. */
    for (int i = 0; i < 2 * N; ++i) EXPECT_EQ(in[i], static_cast<uint32_t>(i)) << "receive " << i;
    completion_violations_reset(); /* the raw sender threads bypassed the call tracking */
}

TEST_F(Lifecycle, CloseWithPendingOperationsCompletesThemOnce) {
    Endpoint c = open_endpoint();
    weft_fabric_peer_t *c_to_b = connect(c, b_);
    ASSERT_NE(c_to_b, nullptr);
    uint64_t buf = 0;
    std::vector<uint8_t> big(4 << 20);
    Op &r = new_op(), &s = new_op();
    ASSERT_EQ(recv(c, &buf, 8, 0x5eed, 0, r), WEFT_PLUGIN_OK);
    /* A rendezvous-sized send nobody receives: it cannot finish before close. */
    ASSERT_EQ(send(c, c_to_b, big.data(), big.size(), 0xb16, s), WEFT_PLUGIN_OK);
    progress_for(std::chrono::milliseconds(20));
    close_endpoint(c);
    EXPECT_EQ(r.done(), 1) << "ep_close must complete a pending receive exactly once";
    EXPECT_EQ(r.c.status, WEFT_PLUGIN_ERR_CANCELED);
    EXPECT_EQ(s.done(), 1) << "ep_close must complete a pending send exactly once";
    /* b may hold c's unexpected message; b's teardown must cope. */
}

TEST_F(Lifecycle, DisconnectIsBoundedWhenThePeerIsGone) {
    Endpoint c = open_endpoint(), d = open_endpoint();
    weft_fabric_peer_t *c_to_d = nullptr;
    ASSERT_EQ(ops().ep_connect(c.ep, d.address.data(), d.address.size(), &c_to_d), WEFT_PLUGIN_OK);
    uint64_t v = 1;
    Op &s = new_op();
    ASSERT_EQ(send(c, c_to_d, &v, 8, 1, s), WEFT_PLUGIN_OK);
    progress_for(std::chrono::milliseconds(10));
    close_endpoint(d);
    auto t0 = std::chrono::steady_clock::now();
    int rc = disconnect(c.ep, c_to_d);
    auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(secs, 12.0) << "ep_disconnect took " << secs << " s with the peer gone";
    RecordProperty("disconnect_rc", rc);
    close_endpoint(c);
}

TEST_F(Lifecycle, ReconnectAfterDisconnect) {
    Endpoint c = open_endpoint(), d = open_endpoint();
    for (int round = 0; round < 3; ++round) {
        weft_fabric_peer_t *p = nullptr;
        ASSERT_EQ(ops().ep_connect(c.ep, d.address.data(), d.address.size(), &p), WEFT_PLUGIN_OK);
        uint64_t v = 100 + round, got = 0;
        Op &r = new_op(), &s = new_op();
        ASSERT_EQ(recv(d, &got, 8, 3, 0, r), WEFT_PLUGIN_OK);
        ASSERT_EQ(send(c, p, &v, 8, 3, s), WEFT_PLUGIN_OK);
        ASSERT_TRUE(wait(r));
        ASSERT_TRUE(wait(s));
        EXPECT_EQ(got, v);
        EXPECT_EQ(disconnect(c.ep, p), WEFT_PLUGIN_OK);
    }
    close_endpoint(c);
    close_endpoint(d);
}

}  // namespace
}  // namespace conformance
