/* One-way latency of 8-byte messages between two endpoints on two threads (each thread
 * progresses its own serial endpoint, as two processes would).  Reported, not asserted:
 * timing on a shared machine is not a pass/fail property. */
#include "fabric_harness.hpp"

#include <cstdlib>
#include <thread>

namespace conformance {
namespace {

using Latency = FabricTest;

struct Flag {
    std::atomic<int> n{0};
};
void flag_complete(void *context, const weft_fabric_completion_t *) {
    static_cast<Flag *>(context)->n.fetch_add(1, std::memory_order_relaxed);
}

TEST_F(Latency, PingPongEightBytes) {
    const char *env = getenv("WEFT_CONFORMANCE_LAT_ITERS");
    const int iters = env ? atoi(env) : 20000, warmup = iters / 10;
    /* Fresh endpoints whose completion just bumps a counter: measures the plugin, not the
     * harness's bookkeeping. */
    weft_fabric_ep_attr_t attr{sizeof(attr), 1, flag_complete, 0}; /* Flag has no space */
    weft_fabric_ep_t *p = nullptr, *q = nullptr;
    ASSERT_EQ(ops().ep_open(fabric_, &attr, &p), WEFT_PLUGIN_OK);
    ASSERT_EQ(ops().ep_open(fabric_, &attr, &q), WEFT_PLUGIN_OK);
    std::vector<uint8_t> pa(caps_.max_address_size), qa(caps_.max_address_size);
    size_t pl = pa.size(), ql = qa.size();
    ASSERT_EQ(ops().ep_address(p, pa.data(), &pl), WEFT_PLUGIN_OK);
    ASSERT_EQ(ops().ep_address(q, qa.data(), &ql), WEFT_PLUGIN_OK);
    weft_fabric_peer_t *p2q = nullptr, *q2p = nullptr;
    ASSERT_EQ(ops().ep_connect(p, qa.data(), ql, &p2q), WEFT_PLUGIN_OK);
    ASSERT_EQ(ops().ep_connect(q, pa.data(), pl, &q2p), WEFT_PLUGIN_OK);

    const weft_fabric_ops_v1_t &o = ops();
    // Poll, yielding when nothing came: with more spinning threads than cores (ctest -j2 runs
    // two of these processes), a thread that never yields can hold up its peer for a whole
    // scheduler tick per message (seen: 20000 round trips taking 100 s instead of 1 s).
    auto poll = [&](weft_fabric_ep_t *ep) {
        if (o.ep_progress(ep) == 0) std::this_thread::yield();
    };
    auto side = [&](weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, bool ping, double *usec) {
        uint64_t sbuf = 0, rbuf = 0;
        Flag sf, rf;
        std::chrono::steady_clock::time_point t0;
        for (int i = 0; i < iters + warmup; ++i) {
            if (i == warmup) t0 = std::chrono::steady_clock::now();
            if (ping) {
                while (o.tag_send(ep, peer, &sbuf, 8, 1, &sf) == WEFT_PLUGIN_ERR_AGAIN) poll(ep);
            }
            int want = rf.n.load(std::memory_order_relaxed) + 1;
            while (o.tag_recv(ep, &rbuf, 8, 1, 0, &rf) == WEFT_PLUGIN_ERR_AGAIN) poll(ep);
            while (rf.n.load(std::memory_order_relaxed) < want) poll(ep);
            if (!ping) {
                while (o.tag_send(ep, peer, &sbuf, 8, 1, &sf) == WEFT_PLUGIN_ERR_AGAIN) poll(ep);
            }
        }
        while (sf.n.load() < iters + warmup) poll(ep);
        if (usec)
            *usec =
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters / 2;
    };
    double usec = 0;
    std::thread pong(side, q, q2p, false, nullptr);
    side(p, p2q, true, &usec);
    pong.join();
    printf("%s: 8-byte one-way latency %.3f us (%d round trips, 2 threads)\n", plugin().desc->name, usec, iters);
    RecordProperty("latency_8B_usec", std::to_string(usec));
    EXPECT_GT(usec, 0.0);
    EXPECT_EQ(disconnect(p, p2q, {q}), WEFT_PLUGIN_OK);
    EXPECT_EQ(disconnect(q, q2p, {p}), WEFT_PLUGIN_OK);
    EXPECT_EQ(ops().ep_close(p), WEFT_PLUGIN_OK);
    EXPECT_EQ(ops().ep_close(q), WEFT_PLUGIN_OK);
}

}  // namespace
}  // namespace conformance
