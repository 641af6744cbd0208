// Bad requests are refused at the sender, with an error code, and send nothing: no truncation,
// no clamping.  Each kernel makes every bad call towards its ring successor, then sends one good
// "fence" Long; the round's checks then prove that nothing but the fence arrived (no other
// handler call, no other byte changed in any segment, no packet dropped at the target).
#include <climits>

#include "world_fixture.hpp"

using namespace pgas_test;

namespace {

// One bad call: what it is, its return code, and the exact code required (0: any error).
struct bad_call {
    std::string what;
    int rc;
    int required;
};

std::vector<bad_call> bad_calls(kernel_ctx &kc) {
    const weft_pgas k = kc.k;
    const int t = (kc.id + 1) % kc.n, n = kc.n;
    const size_t S = seg_size, mm = kc.max_medium;
    uint64_t a16[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    static std::vector<uint8_t> big;
    big.assign(std::max(S, mm) + 8, 0x5A);
    uint8_t *b = big.data();
    std::vector<bad_call> v;
    auto add = [&](std::string what, int rc, int required = 0) { v.push_back({std::move(what), rc, required}); };
    const unsigned A = WEFT_AM_ASYNC;
    const weft_am_stride s50 = stride(0, 100, 10, 5), d50 = stride(dst_lo, 100, 10, 5);

    // Destination beyond the target's segment (all kernels have the same size).
    add("long: dst_offset + length = size + 1", weft_am_long(k, t, 5, nullptr, 0, b, 4, S - 3, 0));
    add("long ASYNC: dst_offset + length = size + 1", weft_am_long(k, t, 5, nullptr, 0, b, 4, S - 3, A));
    add("long: dst_offset = size, 1 byte", weft_am_long(k, t, 5, nullptr, 0, b, 1, S, 0));
    add("long: dst_offset + length wraps around", weft_am_long(k, t, 5, nullptr, 0, b, 8, SIZE_MAX - 2, 0));
    add("long: length = segment size + 1", weft_am_long(k, t, 5, nullptr, 0, b, S + 1, 0, 0));
    add("long_seg: destination beyond the target's segment", weft_am_long_seg(k, t, 5, nullptr, 0, 0, 8, S - 4, 0));
    // Source beyond the sender's own segment.
    add("long_seg: src_offset + length = size + 1", weft_am_long_seg(k, t, 5, nullptr, 0, S - 3, 4, dst_lo, 0));
    add("long_seg: src_offset + length wraps around", weft_am_long_seg(k, t, 5, nullptr, 0, SIZE_MAX, 2, dst_lo, 0));
    add("medium_seg: src_offset + length = size + 1", weft_am_medium_seg(k, t, 5, nullptr, 0, S - 3, 4, 0));
    add("medium_seg ASYNC: src_offset + length = size + 1", weft_am_medium_seg(k, t, 5, nullptr, 0, S - 3, 4, A));
    // Oversize Medium.
    add("medium: weft_am_max_medium + 1 bytes", weft_am_medium(k, t, 5, nullptr, 0, b, mm + 1, 0));
    add("medium ASYNC: weft_am_max_medium + 1 bytes", weft_am_medium(k, t, 5, nullptr, 0, b, mm + 1, A));
    if (mm + 1 <= S)
        add("medium_seg: weft_am_max_medium + 1 bytes", weft_am_medium_seg(k, t, 5, nullptr, 0, 0, mm + 1, 0));
    // Null buffers with a length.
    add("long: null buffer, 8 bytes", weft_am_long(k, t, 5, nullptr, 0, nullptr, 8, dst_lo, 0));
    add("medium: null buffer, 8 bytes", weft_am_medium(k, t, 5, nullptr, 0, nullptr, 8, 0));
    add("short: null args, nargs 2", weft_am_short(k, t, 5, nullptr, 2, 0));
    // 16 arguments.
    add("short: 16 args", weft_am_short(k, t, 5, a16, 16, 0));
    add("short ASYNC: 16 args", weft_am_short(k, t, 5, a16, 16, A));
    add("medium: 16 args", weft_am_medium(k, t, 5, a16, 16, b, 8, 0));
    add("medium_seg: 16 args", weft_am_medium_seg(k, t, 5, a16, 16, 0, 8, 0));
    add("long: 16 args", weft_am_long(k, t, 5, a16, 16, b, 8, dst_lo, 0));
    add("long_seg: 16 args", weft_am_long_seg(k, t, 5, a16, 16, 0, 8, dst_lo, 0));
    add("strided: 16 args", weft_am_long_strided(k, t, 5, a16, 16, &s50, &d50, 0));
    {
        weft_am_piece sp[1] = {{0, 8}}, dp[1] = {{dst_lo, 8}};
        add("vectored: 16 args", weft_am_long_vectored(k, t, 5, a16, 16, sp, 1, dp, 1, 0));
    }
    add("get_long: 16 args", weft_am_get_long(k, t, 5, a16, 16, 0, 8, dst_lo, 0));
    add("get_strided: 16 args", weft_am_get_strided(k, t, 5, a16, 16, &s50, &d50, 0));
    // Handler indices: 3 and 4 are the barrier's, 256 and above do not exist.
    for (unsigned h : {3u, 4u, 256u, 1000u, UINT_MAX})
        add("short: handler " + std::to_string(h), weft_am_short(k, t, h, nullptr, 0, 0));
    add("short ASYNC: handler 3", weft_am_short(k, t, 3, nullptr, 0, A));
    add("medium: handler 256", weft_am_medium(k, t, 256, nullptr, 0, b, 8, 0));
    add("long: handler 4", weft_am_long(k, t, 4, nullptr, 0, b, 8, dst_lo, 0));
    add("long: handler 256", weft_am_long(k, t, 256, nullptr, 0, b, 8, dst_lo, 0));
    add("long_seg: handler 3", weft_am_long_seg(k, t, 3, nullptr, 0, 0, 8, dst_lo, 0));
    add("strided: handler 256", weft_am_long_strided(k, t, 256, nullptr, 0, &s50, &d50, 0));
    {
        weft_am_piece sp[1] = {{0, 8}}, dp[1] = {{dst_lo, 8}};
        add("vectored: handler 256", weft_am_long_vectored(k, t, 256, nullptr, 0, sp, 1, dp, 1, 0));
    }
    add("get_long: handler 256", weft_am_get_long(k, t, 256, nullptr, 0, 0, 8, dst_lo, 0));
    add("get_long: handler 3", weft_am_get_long(k, t, 3, nullptr, 0, 0, 8, dst_lo, 0));
    // Targets that are no kernel of the context.
    add("short: target = number of kernels", weft_am_short(k, n, 5, nullptr, 0, 0));
    add("short: target -1", weft_am_short(k, -1, 5, nullptr, 0, 0));
    add("long: target = number of kernels", weft_am_long(k, n, 5, nullptr, 0, b, 8, dst_lo, 0));
    add("get_long: target = number of kernels", weft_am_get_long(k, n, 5, nullptr, 0, 0, 8, dst_lo, 0));
    // Strided regions.
    {
        weft_am_stride d_out = stride(S - 409, 100, 10, 5);  // last block ends at size + 1
        add("strided: destination's last block ends at size + 1",
            weft_am_long_strided(k, t, 5, nullptr, 0, &s50, &d_out, 0));
        weft_am_stride s_out = stride(S - 409, 100, 10, 5);
        add("strided: source's last block ends at size + 1",
            weft_am_long_strided(k, t, 5, nullptr, 0, &s_out, &d50, 0));
        weft_am_stride s24 = stride(0, 8, 8, 3), d_wrap = stride(dst_lo, SIZE_MAX / 2, 8, 3);
        add("strided: destination stride * count wraps around",
            weft_am_long_strided(k, t, 5, nullptr, 0, &s24, &d_wrap, 0));
        weft_am_stride d60 = stride(dst_lo, 10, 10, 6), s50c = stride(0, 10, 10, 5);
        add("strided: 50 source bytes, 60 destination bytes", weft_am_long_strided(k, t, 5, nullptr, 0, &s50c, &d60, 0),
            WEFT_ERR_ARG);
        add("strided ASYNC: 50 source bytes, 60 destination bytes",
            weft_am_long_strided(k, t, 5, nullptr, 0, &s50c, &d60, A), WEFT_ERR_ARG);
        add("strided: null source region", weft_am_long_strided(k, t, 5, nullptr, 0, nullptr, &d50, 0));
        add("strided: null destination region", weft_am_long_strided(k, t, 5, nullptr, 0, &s50, nullptr, 0));
    }
    // Vectored pieces.
    {
        std::vector<weft_am_piece> one17 = {{0, 17}}, d17, s17;
        for (size_t i = 0; i < 17; ++i) {
            s17.push_back({i * 2, 1});
            d17.push_back({dst_lo + i * 2, 1});
        }
        std::vector<weft_am_piece> d_one17 = {{dst_lo, 17}};
        add("vectored: 17 source pieces",
            weft_am_long_vectored(k, t, 5, nullptr, 0, s17.data(), 17, d_one17.data(), 1, 0));
        add("vectored: 17 destination pieces",
            weft_am_long_vectored(k, t, 5, nullptr, 0, one17.data(), 1, d17.data(), 17, 0));
        weft_am_piece s8[1] = {{0, 8}}, d8[1] = {{dst_lo, 8}};
        weft_am_piece d_out[2] = {{dst_lo, 0}, {S - 4, 8}}, s_out[1] = {{S - 4, 8}}, d_wrap[1] = {{SIZE_MAX - 3, 8}};
        add("vectored: destination piece ends at size + 4",
            weft_am_long_vectored(k, t, 5, nullptr, 0, s8, 1, d_out, 2, 0));
        add("vectored: source piece ends at size + 4", weft_am_long_vectored(k, t, 5, nullptr, 0, s_out, 1, d8, 1, 0));
        add("vectored: destination offset + length wraps around",
            weft_am_long_vectored(k, t, 5, nullptr, 0, s8, 1, d_wrap, 1, 0));
        weft_am_piece s16[2] = {{0, 8}, {16, 8}}, d15[1] = {{dst_lo, 15}};
        add("vectored: 16 source bytes, 15 destination bytes",
            weft_am_long_vectored(k, t, 5, nullptr, 0, s16, 2, d15, 1, 0), WEFT_ERR_ARG);
        add("vectored ASYNC: 16 source bytes, 15 destination bytes",
            weft_am_long_vectored(k, t, 5, nullptr, 0, s16, 2, d15, 1, A), WEFT_ERR_ARG);
        add("vectored: null source pieces, count 1", weft_am_long_vectored(k, t, 5, nullptr, 0, nullptr, 1, d8, 1, 0));
    }
    // Gets: ASYNC is not allowed (the data is the reply); regions on both sides are checked.
    add("get_long with WEFT_AM_ASYNC", weft_am_get_long(k, t, 5, nullptr, 0, 0, 8, dst_lo, A));
    add("get_long: remote offset + length = size + 1", weft_am_get_long(k, t, 5, nullptr, 0, S - 3, 4, dst_lo, 0));
    add("get_long: local offset + length = size + 1", weft_am_get_long(k, t, 5, nullptr, 0, 0, 4, S - 3, 0));
    add("get_long: remote offset wraps around", weft_am_get_long(k, t, 5, nullptr, 0, SIZE_MAX - 1, 4, dst_lo, 0));
    add("get_strided with WEFT_AM_ASYNC", weft_am_get_strided(k, t, 5, nullptr, 0, &s50, &d50, A));
    {
        weft_am_stride out = stride(S - 409, 100, 10, 5), d60 = stride(dst_lo, 10, 10, 6);
        add("get_strided: remote region ends at size + 1", weft_am_get_strided(k, t, 5, nullptr, 0, &out, &d50, 0));
        add("get_strided: local region ends at size + 1", weft_am_get_strided(k, t, 5, nullptr, 0, &s50, &out, 0));
        add("get_strided: 50 remote bytes, 60 local bytes", weft_am_get_strided(k, t, 5, nullptr, 0, &s50, &d60, 0),
            WEFT_ERR_ARG);
    }
    // Handles that are no kernel.
    add("short on WEFT_PGAS_NULL", weft_am_short(WEFT_PGAS_NULL, t, 5, nullptr, 0, 0));
    add("short on a communicator handle", weft_am_short(WEFT_COMM_WORLD, t, 5, nullptr, 0, 0));
    add("short on a garbage handle", weft_am_short(0x7ffffff3, t, 5, nullptr, 0, 0));
    add("weft_am_wait_replies on WEFT_PGAS_NULL", weft_am_wait_replies(WEFT_PGAS_NULL, 0));
    add("weft_pgas_barrier on WEFT_PGAS_NULL", weft_pgas_barrier(WEFT_PGAS_NULL));
    return v;
}

// Every bad call fails, and the round shows that none of them sent anything.
TEST_F(World, BadRequestsAreRefusedAndSendNothing) {
    uint64_t bad_before = 0;
    ASSERT_EQ(weft_pgas_bad_packets(kc().k, &bad_before), 0) << detail();
    run_round(
        kc(),
        [](int s, int n) {
            return std::vector<message>{make_long((s + 1) % n, 5, 1, 16, dst_lo + 8)};  // the fence
        },
        "bad calls, then one good Long",
        [](kernel_ctx &k) {
            step("kernel %d: bad calls", k.id);
            for (auto &c : bad_calls(k)) {
                if (c.required)
                    EXPECT_EQ(c.rc, c.required) << k.name() << ": " << c.what << ": " << err(c.rc);
                else
                    EXPECT_NE(c.rc, 0) << k.name() << ": " << c.what << " succeeded";
                EXPECT_NE(c.rc, WEFT_ERR_INTERNAL) << k.name() << ": " << c.what;
            }
        });
    uint64_t bad_after = 0;
    ASSERT_EQ(weft_pgas_bad_packets(kc().k, &bad_after), 0) << detail();
    EXPECT_EQ(bad_after, bad_before) << kc().name()
                                     << ": packets were dropped at this kernel: a refused call sent something";
    // The kernel still works after all that.
    run_round(
        kc(), [](int s, int n) { return std::vector<message>{make_medium((s + 1) % n, 16, 15, 100)}; },
        "after the bad calls");
}

// Registering a handler at a barrier index or past 255 is an error; user indices work.
TEST_F(World, RegisterIndices) {
    for (unsigned h : {3u, 4u, 256u, 1000u, UINT_MAX}) {
        int rc = weft_am_register(kc().k, h, record_handler, &kc());
        EXPECT_NE(rc, 0) << "weft_am_register(" << h << ") succeeded";
    }
    EXPECT_NE(weft_am_register(WEFT_PGAS_NULL, 5, record_handler, &kc()), 0) << "register on WEFT_PGAS_NULL";
    // The failed registrations changed nothing: the barrier (handlers 3 and 4) still works and
    // index 5 still reaches the record handler.
    run_round(
        kc(), [](int s, int n) { return std::vector<message>{make_short((s + 1) % n, 5, 2)}; },
        "after refused registrations");
}

// A message to an index nobody registered is dropped and counted at the receiver (ASYNC: no
// reply is owed for it).
TEST_F(World, UnregisteredHandlerIsDroppedAndCounted) {
    uint64_t before = 0, now = 0;
    ASSERT_EQ(weft_pgas_bad_packets(kc().k, &before), 0) << detail();
    step("barrier before sending");
    ASSERT_EQ(weft_pgas_barrier(kc().k), 0) << detail();
    uint64_t args[2] = {7, 8};
    ASSERT_EQ(weft_am_short(kc().k, next_of(me(), nk()), 77, args, 2, WEFT_AM_ASYNC), 0) << detail();
    step("waiting for the dropped-packet count");
    poll_until(
        kc(),
        [&] {
            weft_pgas_bad_packets(kc().k, &now);
            return now >= before + 1;
        },
        10, "waiting for weft_pgas_bad_packets to count the message to unregistered handler 77");
    ASSERT_EQ(weft_pgas_barrier(kc().k), 0) << detail();
    // Let any wrongly produced traffic arrive, then check the count is exactly one more.
    auto t0 = std::chrono::steady_clock::now();
    poll_until(
        kc(), [&] { return std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(50); }, 10, "settling");
    ASSERT_EQ(weft_pgas_bad_packets(kc().k, &now), 0) << detail();
    EXPECT_EQ(now, before + 1) << "weft_pgas_bad_packets after one message to an unregistered handler";
    EXPECT_EQ(kc().calls.load(), 0) << "a registered handler ran for it";
    ASSERT_EQ(weft_pgas_barrier(kc().k), 0) << detail();
}

}  // namespace
