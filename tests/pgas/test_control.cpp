// Barrier, counters, handler replies, and the Shoal-compatible mode, on WEFT_COMM_WORLD.
#include "pgas_plans.hpp"
#include "world_fixture.hpp"

using namespace pgas_test;

namespace {

// ---------------------------------------------------------------- barrier

TEST_F(World, BarrierWaitsForEveryKernel) { barrier_rounds(kc(), 20); }

// ---------------------------------------------------------------- counters

// WEFT_AM_H_INCR adds 1 and WEFT_AM_H_ADD adds args[0] to the target's counter, whatever the
// message kind, sync or async; a Long's data is in place before its counter moves.
TEST_F(World, CountersFromEveryKind) {
    run_round(
        kc(),
        [](int s, int n) {
            const int t = (s + 1) % n;
            const unsigned A = WEFT_AM_ASYNC;
            std::vector<message> v;
            packer p;
            for (int i = 0; i < 10; ++i) v.push_back(make_short(t, WEFT_AM_H_INCR, 0));
            for (uint64_t i = 1; i <= 5; ++i) {
                v.push_back(make_short(t, WEFT_AM_H_ADD, 1, A));
                v.back().args = {i};
            }
            v.push_back(make_short(t, WEFT_AM_H_ADD, 1));
            v.back().args = {uint64_t(1) << 40};  // the counter is 64 bits wide
            v.push_back(make_short(t, WEFT_AM_H_ADD, WEFT_AM_MAX_ARGS));
            v.back().args = {3};  // only args[0] counts; the others are generated
            v.push_back(make_long(t, WEFT_AM_H_INCR, 0, 64, p.take(64)));
            v.push_back(make_long_seg(t, WEFT_AM_H_ADD, 1, 777, 9000, p.take(9000), A));
            v.back().args = {100};
            v.push_back(make_medium(t, WEFT_AM_H_ADD, 2, 50));
            v.back().args = {1000, 99};
            v.push_back(make_strided(t, WEFT_AM_H_INCR, 0, stride(0, 20, 10, 10), stride(p.take(100), 10, 10, 10), A));
            v.push_back(make_vectored(t, WEFT_AM_H_ADD, 1, {{50, 10}, {70, 10}}, {{p.take(20), 20}}));
            v.back().args = {7};
            return v;
        },
        "counters");
}

// weft_pgas_wait_counter(v) subtracts v: after an ADD of 5, a wait for 3 leaves 2, so a second
// wait for 3 must block until one more arrives.  Kernel 1 adds 5, and adds the last 1 only
// with a Long (data before counter) sent once kernel 0 says it is about to wait; if the second
// wait returned early, that Long's data would not be there yet.
std::atomic<int> go_count{0};
void go_handler(weft_pgas, const weft_am_info *, void *) { go_count++; }

TEST_F(World, WaitCounterSubtracts) {
    if (nk() < 2) GTEST_SKIP() << "needs 2 kernels";
    go_count = 0;
    ASSERT_EQ(weft_am_register(kc().k, 20, go_handler, nullptr), 0) << detail();
    ASSERT_EQ(weft_pgas_barrier(kc().k), 0) << detail();
    const uint64_t marker = 0x1122334455667788ull;
    if (me() == 1) {
        uint64_t five = 5, one = 1;
        ASSERT_EQ(weft_am_short(kc().k, 0, WEFT_AM_H_ADD, &five, 1, WEFT_AM_ASYNC), 0) << detail();
        step("kernel 1: waiting for kernel 0's go");
        poll_until(
            kc(), [] { return go_count.load() >= 1; }, 20, "waiting for kernel 0's go message");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        ASSERT_EQ(weft_am_long(kc().k, 0, WEFT_AM_H_ADD, &one, 1, &marker, 8, dst_lo, 0), 0) << detail();
        ASSERT_EQ(weft_am_wait_replies(kc().k, 1), 0) << detail();
    } else if (me() == 0) {
        step("kernel 0: wait_counter(3), first");
        ASSERT_EQ(weft_pgas_wait_counter(kc().k, 3), 0) << detail();
        ASSERT_EQ(weft_am_short(kc().k, 1, 20, nullptr, 0, WEFT_AM_ASYNC), 0) << detail();
        step("kernel 0: wait_counter(3), second");
        ASSERT_EQ(weft_pgas_wait_counter(kc().k, 3), 0) << detail();
        uint64_t got = 0;
        std::memcpy(&got, kc().base + dst_lo, 8);
        EXPECT_EQ(got, marker) << "the second weft_pgas_wait_counter(3) returned before the last ADD arrived: the "
                                  "first wait did not subtract 3 from the counter (5)";
    }
    step("barrier at the end");
    ASSERT_EQ(weft_pgas_barrier(kc().k), 0) << detail();
}

// ---------------------------------------------------------------- handler replies

struct reply_state {
    kernel_ctx *kc = nullptr;
    std::mutex mu;
    std::atomic<int> requests{0}, replies{0};
    std::vector<std::string> errors;
    std::vector<uint64_t> reply_args;  // args[0] of each reply received
    weft_am_info saved{};
    bool have_saved = false;
    void error(const std::string &e) {
        std::lock_guard<std::mutex> g(mu);
        errors.push_back(e);
    }
};

// Replies to the request with args {args[0] + 1, requester, me}.
void answer(reply_state *st, const weft_am_info *info) {
    uint64_t a[3] = {info->nargs ? info->args[0] + 1 : 0, uint64_t(info->source), uint64_t(st->kc->id)};
    int rc = weft_am_reply_short(info, 21, a, 3);
    if (rc) st->error("weft_am_reply_short from the request handler: " + err(rc));
}

// Handler 20: bad replies fail without using up the one allowed reply; the good one works
// once; a second is an error.
void replier(weft_pgas, const weft_am_info *info, void *ud) {
    auto *st = static_cast<reply_state *>(ud);
    const int n = st->kc->n, prev = (st->kc->id + n - 1) % n;
    if (info->is_reply) st->error("request handler called with is_reply set");
    if (info->source != prev)
        st->error("request from kernel " + std::to_string(info->source) + ", expected " + std::to_string(prev));
    uint64_t a16[16] = {};
    if (weft_am_reply_short(info, 256, nullptr, 0) == 0) st->error("reply to handler 256 succeeded");
    if (weft_am_reply_short(info, 3, nullptr, 0) == 0) st->error("reply to handler 3 succeeded");
    if (weft_am_reply_short(info, 21, a16, 16) == 0) st->error("reply with 16 args succeeded");
    answer(st, info);
    uint64_t one = 1;
    if (weft_am_reply_short(info, 21, &one, 1) == 0)
        st->error("a second weft_am_reply_short from one handler succeeded");
    {
        std::lock_guard<std::mutex> g(st->mu);
        st->saved = *info;
        st->have_saved = true;
    }
    st->requests++;
}

// Handler 22: replies, then keeps the target busy for 300 ms.
void sleepy_replier(weft_pgas, const weft_am_info *info, void *ud) {
    auto *st = static_cast<reply_state *>(ud);
    answer(st, info);
    st->requests++;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

// Handler 21, on the requester.
void reply_receiver(weft_pgas, const weft_am_info *info, void *ud) {
    auto *st = static_cast<reply_state *>(ud);
    const int n = st->kc->n, next = (st->kc->id + 1) % n;
    if (!info->is_reply) st->error("reply handler called with is_reply 0");
    if (info->source != next)
        st->error("reply from kernel " + std::to_string(info->source) + ", expected " + std::to_string(next));
    if (info->kind != WEFT_AM_SHORT) st->error("reply kind " + std::to_string(info->kind));
    if (info->handler != 21) st->error("reply handler index " + std::to_string(info->handler));
    if (info->nargs != 3 || !info->args) {
        st->error("reply with " + std::to_string(info->nargs) + " args, expected 3");
    } else {
        if (info->args[1] != uint64_t(st->kc->id) || info->args[2] != uint64_t(next))
            st->error("reply args [1], [2] = " + std::to_string(info->args[1]) + ", " + std::to_string(info->args[2]));
        std::lock_guard<std::mutex> g(st->mu);
        st->reply_args.push_back(info->args[0]);
    }
    if (weft_am_reply_short(info, 21, nullptr, 0) == 0) st->error("weft_am_reply_short to a reply succeeded");
    st->replies++;
}

TEST_F(World, HandlerReplies) {
    reply_state st;
    st.kc = &kc();
    ASSERT_EQ(weft_am_register(kc().k, 20, replier, &st), 0) << detail();
    ASSERT_EQ(weft_am_register(kc().k, 21, reply_receiver, &st), 0) << detail();
    ASSERT_EQ(weft_pgas_barrier(kc().k), 0) << detail();
    const int t = next_of(me(), nk());
    const uint64_t base = uint64_t(me()) * 1000;

    // A sync request: its automatic reply is counted, its handler's reply runs handler 21.
    uint64_t a = base + 7;
    ASSERT_EQ(weft_am_short(kc().k, t, 20, &a, 1, 0), 0) << detail();
    step("sync request: weft_am_wait_replies(1)");
    EXPECT_EQ(weft_am_wait_replies(kc().k, 1), 0) << detail();
    poll_until(
        kc(), [&] { return st.replies.load() >= 1 && st.requests.load() >= 1; }, 20,
        "waiting for the handler's reply to a sync request");
    ASSERT_EQ(weft_pgas_barrier(kc().k), 0) << detail();

    // An ASYNC request still gets its handler's reply.
    a = base + 8;
    ASSERT_EQ(weft_am_short(kc().k, t, 20, &a, 1, WEFT_AM_ASYNC), 0) << detail();
    poll_until(
        kc(), [&] { return st.replies.load() >= 2 && st.requests.load() >= 2; }, 20,
        "waiting for the handler's reply to an ASYNC request");

    // Outside a handler, weft_am_reply_short is an error: no info, a zeroed one, or a copy of
    // a handler's info kept after the handler returned.
    EXPECT_NE(weft_am_reply_short(nullptr, 21, nullptr, 0), 0) << "reply with no request";
    weft_am_info zero{};
    EXPECT_NE(weft_am_reply_short(&zero, 21, nullptr, 0), 0) << "reply to a zeroed info outside a handler";
    ASSERT_TRUE(st.have_saved);
    weft_am_info copy = st.saved;
    EXPECT_NE(weft_am_reply_short(&copy, 21, nullptr, 0), 0) << "reply outside a handler, with a saved info";

    ASSERT_EQ(weft_pgas_barrier(kc().k), 0) << detail();
    // Any reply sent by a call that should have failed arrives by now.
    auto t0 = std::chrono::steady_clock::now();
    poll_until(
        kc(), [&] { return std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(50); }, 10, "settling");
    ASSERT_EQ(weft_pgas_barrier(kc().k), 0) << detail();
    EXPECT_EQ(st.requests.load(), 2);
    EXPECT_EQ(st.replies.load(), 2) << "handler replies received (one per request)";
    std::lock_guard<std::mutex> g(st.mu);
    EXPECT_EQ(st.reply_args, (std::vector<uint64_t>{base + 8, base + 9}));
    for (auto &e : st.errors) ADD_FAILURE() << kc().name() << ": " << e;
}

// A handler's reply is not an automatic reply: weft_am_wait_replies must not count it.  The
// target's handler replies and then stays busy for 300 ms; a get sent right behind the
// request can only be answered after that, so if the handler's reply were counted,
// weft_am_wait_replies(1) would return before the get's data is here.
TEST_F(World, HandlerReplyIsNotCountedByWaitReplies) {
    reply_state st;
    st.kc = &kc();
    ASSERT_EQ(weft_am_register(kc().k, 22, sleepy_replier, &st), 0) << detail();
    ASSERT_EQ(weft_am_register(kc().k, 21, reply_receiver, &st), 0) << detail();
    kc().round++;
    fill_segment(kc());
    ASSERT_EQ(weft_pgas_barrier(kc().k), 0) << detail();
    const int t = next_of(me(), nk());
    uint64_t a = uint64_t(me()) * 1000 + 5;
    ASSERT_EQ(weft_am_short(kc().k, t, 22, &a, 1, WEFT_AM_ASYNC), 0) << detail();
    ASSERT_EQ(weft_am_get_long(kc().k, t, WEFT_AM_H_EMPTY, nullptr, 0, 1000, 4096, dst_lo + 1, 0), 0) << detail();
    step("weft_am_wait_replies(1) for the get");
    ASSERT_EQ(weft_am_wait_replies(kc().k, 1), 0) << detail();
    std::vector<uint8_t> want(4096);
    fill_bytes(segment_seed(t, kc().round), want.data(), 1000, 4096);
    EXPECT_EQ(std::memcmp(kc().base + dst_lo + 1, want.data(), 4096), 0)
        << kc().name() << ": weft_am_wait_replies(1) returned before the get's data arrived: the handler's "
        << "weft_am_reply_short was counted as an automatic reply";
    poll_until(
        kc(), [&] { return st.replies.load() >= 1 && st.requests.load() >= 1; }, 20,
        "waiting for the sleepy handler's reply");
    ASSERT_EQ(weft_pgas_barrier(kc().k), 0) << detail();
    std::lock_guard<std::mutex> g(st.mu);
    EXPECT_EQ(st.reply_args, (std::vector<uint64_t>{a + 1}));
    for (auto &e : st.errors) ADD_FAILURE() << kc().name() << ": " << e;
}

// ---------------------------------------------------------------- Shoal-compatible mode

class Compat : public World {
  protected:
    bool compat() const override { return true; }
};

// Messages a Shoal-limited peer could not parse are refused with WEFT_ERR_UNSUPPORTED and send
// nothing; plain Short/Medium/Long up to 8192 bytes still work (sync, async, counters).
TEST_F(Compat, RefusesExtensionsKeepsShoalMessages) {
    uint64_t bad_before = 0;
    ASSERT_EQ(weft_pgas_bad_packets(kc().k, &bad_before), 0) << detail();
    const size_t mm8 = std::min<size_t>(kc().max_medium, 8192) & ~size_t(7);
    run_round(
        kc(),
        [mm8](int s, int n) {
            const int t = (s + 1) % n;
            const unsigned A = WEFT_AM_ASYNC;
            std::vector<message> v;
            v.push_back(make_short(t, 5, 0));
            v.push_back(make_short(t, 15, WEFT_AM_MAX_ARGS));
            v.push_back(make_short(t, 9, 1, A));
            v.push_back(make_medium(t, 5, 0, 0));
            v.push_back(make_medium(t, 9, 2, 8, A));
            v.push_back(make_medium(t, 15, WEFT_AM_MAX_ARGS, 64));
            v.push_back(make_medium(t, 5, 1, mm8));
            v.push_back(make_medium_seg(t, 9, 0, 64, 16));
            // Sizes count bytes, as in Shoal: any size up to 8192 is Shoal-form.
            v.push_back(make_medium(t, 5, 0, 7));
            v.push_back(make_medium(t, 9, 1, 12, A));
            size_t d = dst_lo;
            v.push_back(make_long(t, 5, 0, 9, d));
            d += 32;
            for (size_t len : {size_t(0), size_t(8), size_t(4096), size_t(8192)}) {
                v.push_back(make_long(t, 15, len % 16 ? 15 : 0, len, d));
                d += len + 16;
            }
            v.push_back(make_long_seg(t, 5, 3, 128, 8, d));
            d += 24;
            v.push_back(make_long_seg(t, 9, 0, 4096, 8192, d, A));
            d += 8192 + 16;
            v.push_back(make_long(t, WEFT_AM_H_INCR, 0, 64, d));
            d += 80;
            v.push_back(make_short(t, WEFT_AM_H_ADD, 1, A));
            v.back().args = {5};
            return v;
        },
        "Shoal-compatible messages",
        [](kernel_ctx &k) {
            const int t = (k.id + 1) % k.n;
            const unsigned A = WEFT_AM_ASYNC;
            uint8_t buf[64] = {};
            uint64_t a[2] = {1, 2};
            weft_am_stride s = stride(0, 16, 8, 4), d = stride(dst_lo, 16, 8, 4);
            weft_am_piece sp[1] = {{0, 8}}, dp[1] = {{dst_lo, 8}};
            struct c {
                const char *what;
                int rc;
            } cs[] = {
                {"short to handler 16", weft_am_short(k.k, t, 16, nullptr, 0, 0)},
                {"short ASYNC to handler 255", weft_am_short(k.k, t, 255, a, 2, A)},
                {"medium of 8 bytes to handler 16", weft_am_medium(k.k, t, 16, nullptr, 0, buf, 8, 0)},
                {"long strided (8-byte blocks)", weft_am_long_strided(k.k, t, 5, nullptr, 0, &s, &d, 0)},
                {"long strided ASYNC", weft_am_long_strided(k.k, t, 5, nullptr, 0, &s, &d, A)},
                {"long vectored (8 bytes)", weft_am_long_vectored(k.k, t, 5, nullptr, 0, sp, 1, dp, 1, 0)},
                {"get long (8 bytes)", weft_am_get_long(k.k, t, WEFT_AM_H_EMPTY, nullptr, 0, 0, 8, dst_lo, 0)},
                {"get strided (8-byte blocks)", weft_am_get_strided(k.k, t, WEFT_AM_H_EMPTY, nullptr, 0, &s, &d, 0)},
            };
            for (auto &x : cs)
                EXPECT_EQ(x.rc, WEFT_ERR_UNSUPPORTED)
                    << k.name() << ": weft_am_shoal_compat=true, " << x.what << ": " << err(x.rc);
        });
    uint64_t bad_after = 0;
    ASSERT_EQ(weft_pgas_bad_packets(kc().k, &bad_after), 0) << detail();
    EXPECT_EQ(bad_after, bad_before) << "packets dropped at this kernel: a refused message was sent";
}

// The compatible mode still runs the barrier.
TEST_F(Compat, Barrier) { barrier_rounds(kc(), 6); }

}  // namespace
