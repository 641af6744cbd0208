// weft::Pgas on a singleton job: WEFT_COMM_SELF gives one kernel, which sends to itself.
// Skipped only when no fabric plugin is available to this build (WEFT_ERR_PLUGIN).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/weft.hpp"

// ---- Compile-time: ownership and which arguments the methods take ----
static_assert(!std::is_copy_constructible_v<weft::Pgas>);
static_assert(!std::is_copy_assignable_v<weft::Pgas>);
static_assert(std::is_nothrow_move_constructible_v<weft::Pgas>);
static_assert(std::is_nothrow_move_assignable_v<weft::Pgas>);
namespace {
template <class T>
concept can_send_medium = requires(weft::Pgas p, std::span<T> payload) {
    p.medium(0, 5, {}, payload);
};
template <class F>
concept can_register = requires(weft::Pgas p, F f) {
    p.register_handler(5, f);
};
}  // namespace
static_assert(can_send_medium<const std::byte>);
static_assert(can_send_medium<double>);
static_assert(can_send_medium<const weft_am_piece>);
static_assert(!can_send_medium<std::string>);  // not trivially copyable: no byte image
static_assert(can_register<void (*)(const weft::AmMessage &)>);
static_assert(can_register<weft_am_handler>);
static_assert(!can_register<void (*)(int)>);

namespace {

// One init per process: the environment lives for the whole test program.
class RuntimeEnv : public ::testing::Environment {
  public:
    void SetUp() override {
        try {
            env = std::make_unique<weft::Environment>(WEFT_THREAD_MULTIPLE);
        } catch (const weft::error &e) {
            init_error = e.code();
            init_message = e.what();
        }
    }
    void TearDown() override { env.reset(); }
    static inline std::unique_ptr<weft::Environment> env;
    static inline int init_error = WEFT_SUCCESS;
    static inline std::string init_message;
};

const auto *registered = ::testing::AddGlobalTestEnvironment(new RuntimeEnv);

#define REQUIRE_RUNTIME()                                                            \
    do {                                                                             \
        if (RuntimeEnv::init_error == WEFT_ERR_PLUGIN)                               \
            GTEST_SKIP() << "no fabric plugin: " << RuntimeEnv::init_message;        \
        ASSERT_EQ(RuntimeEnv::init_error, WEFT_SUCCESS) << RuntimeEnv::init_message; \
    } while (0)

constexpr size_t segment_size = 1 << 18;  // room for payloads above the 8 KiB inline limit
constexpr unsigned h_user = WEFT_AM_HANDLER_FIRST;

// Progresses until pred() holds; false after 10 s (a lost message, not a slow machine).
template <class Pred>
bool progress_until(const weft::Pgas &p, Pred pred) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!pred()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        p.progress();
    }
    return true;
}

// What one handler call saw (copied out: the pointers die with the call).
struct Seen {
    int calls = 0;
    int source = -1;
    unsigned handler = 0;
    int kind = 0;
    bool is_reply = false;
    std::vector<uint64_t> args;
    std::vector<std::byte> payload;
    size_t length = 0, offset = 0;

    void record(const weft::AmMessage &m) {
        ++calls;
        source = m.source();
        handler = m.handler();
        kind = m.kind();
        is_reply = m.is_reply();
        args.assign(m.args().begin(), m.args().end());
        payload.assign(m.payload().begin(), m.payload().end());
        length = m.length();
        offset = m.offset();
    }
};

std::vector<std::byte> pattern(size_t n, unsigned seed) {
    std::vector<std::byte> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>(i * 37 + seed);
    return v;
}

bool same(std::span<const std::byte> a, std::span<const std::byte> b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// Runs `send`; the call either refuses it (weft::error) or the receiver drops and counts it.
template <class Send>
void expect_refused_or_dropped(const weft::Pgas &p, Send send) {
    uint64_t before = p.bad_packets();
    try {
        send();
    } catch (const weft::error &e) {
        EXPECT_NE(e.code(), WEFT_SUCCESS);
        return;
    }
    EXPECT_TRUE(progress_until(p, [&] { return p.bad_packets() > before; })) << "neither refused nor dropped";
}

}  // namespace

TEST(CxxPgas, CreateAndQuery) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    EXPECT_TRUE(p);
    EXPECT_TRUE(p.owns());
    EXPECT_EQ(p.kernel_id(), 0);
    EXPECT_EQ(p.num_kernels(), 1);
    EXPECT_EQ(p.max_args(), unsigned{WEFT_AM_MAX_ARGS});
    EXPECT_GE(p.max_medium(), size_t{8});
    EXPECT_GE(p.max_long(), p.max_medium());
    EXPECT_EQ(p.bad_packets(), 0u);
    std::span<std::byte> seg = p.segment();
    ASSERT_EQ(seg.size(), segment_size);
    ASSERT_NE(seg.data(), nullptr);
    EXPECT_TRUE(std::all_of(seg.begin(), seg.end(), [](std::byte b) { return b == std::byte{0}; }));
    EXPECT_EQ(p.segment().data(), seg.data());
    seg.back() = std::byte{1};  // writable to its end
    p.barrier();                // one kernel: returns at once
}

TEST(CxxPgas, ShortRunsTheHandlerThenReplies) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    Seen seen;
    p.register_handler(h_user, [&](const weft::AmMessage &m) { seen.record(m); });
    const std::array<uint64_t, 3> args{1, 2, ~uint64_t{0}};
    p.short_am(0, h_user, args);
    p.wait_replies(1);  // the reply leaves after the handler ran
    EXPECT_EQ(seen.calls, 1);
    EXPECT_EQ(seen.source, 0);
    EXPECT_EQ(seen.handler, h_user);
    EXPECT_EQ(seen.kind, WEFT_AM_SHORT);
    EXPECT_FALSE(seen.is_reply);
    EXPECT_EQ(seen.args, std::vector<uint64_t>(args.begin(), args.end()));
    EXPECT_TRUE(seen.payload.empty());

    // Fifteen arguments and handler 255; no arguments at all.
    Seen high;
    p.register_handler(255, [&](const weft::AmMessage &m) { high.record(m); });
    std::array<uint64_t, WEFT_AM_MAX_ARGS> many{};
    for (size_t i = 0; i < many.size(); ++i) many[i] = 100 + i;
    p.short_am(0, 255, many);
    p.short_am(0, h_user);
    p.wait_replies(2);
    EXPECT_EQ(high.calls, 1);
    EXPECT_EQ(high.args, std::vector<uint64_t>(many.begin(), many.end()));
    EXPECT_EQ(seen.calls, 2);
    EXPECT_TRUE(seen.args.empty());
}

TEST(CxxPgas, AsyncMessagesAreNotAcknowledged) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    Seen seen;
    p.register_handler(h_user, [&](const weft::AmMessage &m) { seen.record(m); });
    p.short_am(0, h_user, {}, WEFT_AM_ASYNC);
    ASSERT_TRUE(progress_until(p, [&] { return seen.calls == 1; }));
    // Then one acknowledged message: wait_replies(1) must not have counted the async one.
    p.short_am(0, h_user);
    p.wait_replies(1);
    EXPECT_EQ(seen.calls, 2);
}

TEST(CxxPgas, MediumDeliversThePayload) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    Seen seen;
    p.register_handler(h_user, [&](const weft::AmMessage &m) { seen.record(m); });
    for (size_t n : {size_t{0}, size_t{64}, size_t{100}, p.max_medium()}) {
        SCOPED_TRACE(n);
        std::vector<std::byte> data = pattern(n, 3);
        const std::array<uint64_t, 1> args{n};
        p.medium(0, h_user, args, std::span<const std::byte>(data));
        p.wait_replies(1);
        EXPECT_EQ(seen.kind, WEFT_AM_MEDIUM);
        EXPECT_EQ(seen.length, n);
        EXPECT_TRUE(same(seen.payload, data));
        EXPECT_EQ(seen.args, std::vector<uint64_t>{n});
    }
    // Typed payloads go as their bytes.
    const std::vector<int> ints{1, -2, 3};
    p.medium(0, h_user, {}, std::span(ints));
    p.wait_replies(1);
    EXPECT_TRUE(same(seen.payload, std::as_bytes(std::span(ints))));
    // From this kernel's segment.
    std::span<std::byte> seg = p.segment();
    std::vector<std::byte> data = pattern(40, 9);
    std::copy(data.begin(), data.end(), seg.begin() + 1000);
    p.medium_seg(0, h_user, {}, 1000, 40);
    p.wait_replies(1);
    EXPECT_TRUE(same(seen.payload, data));
}

TEST(CxxPgas, LongWritesTheSegmentBeforeTheHandler) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    std::span<std::byte> seg = p.segment();
    Seen seen;
    bool landed_before_handler = false;
    std::vector<std::byte> data = pattern(200, 5);
    p.register_handler(h_user, [&](const weft::AmMessage &m) {
        seen.record(m);
        landed_before_handler = same(seg.subspan(m.offset(), m.length()), data);
    });
    p.long_am(0, h_user, {}, std::span<const std::byte>(data), 256);
    p.wait_replies(1);
    EXPECT_EQ(seen.kind, WEFT_AM_LONG);
    EXPECT_EQ(seen.offset, 256u);
    EXPECT_EQ(seen.length, data.size());
    EXPECT_TRUE(seen.payload.empty());
    EXPECT_TRUE(landed_before_handler);
    EXPECT_TRUE(same(seg.subspan(256, data.size()), data));
    EXPECT_EQ(seg[255], std::byte{0});
    EXPECT_EQ(seg[256 + data.size()], std::byte{0});

    // From the segment itself, to the segment's last bytes.
    p.long_seg(0, WEFT_AM_H_EMPTY, {}, 256, data.size(), segment_size - data.size());
    p.wait_replies(1);
    EXPECT_TRUE(same(seg.last(data.size()), data));
}

TEST(CxxPgas, LargePayloadsGoByRendezvous) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    std::span<std::byte> seg = p.segment();
    const size_t n = 64 * 1024;  // well above the 8 KiB a packet carries
    ASSERT_GE(p.max_long(), n);
    std::vector<std::byte> data = pattern(n, 11);
    Seen seen;
    p.register_handler(h_user, [&](const weft::AmMessage &m) { seen.record(m); });
    p.long_am(0, h_user, {}, std::span<const std::byte>(data), 8);
    p.wait_replies(1);
    EXPECT_EQ(seen.length, n);
    EXPECT_TRUE(same(seg.subspan(8, n), data));

    // A large get of the same bytes, elsewhere.
    p.get_long(0, WEFT_AM_H_EMPTY, {}, 8, n, 2 * n);
    p.wait_replies(1);
    EXPECT_TRUE(same(seg.subspan(2 * n, n), data));
}

TEST(CxxPgas, StridedAndVectored) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    std::span<std::byte> seg = p.segment();
    std::vector<std::byte> data = pattern(64, 21);
    std::copy(data.begin(), data.end(), seg.begin());
    Seen seen;
    p.register_handler(h_user, [&](const weft::AmMessage &m) { seen.record(m); });

    // Four 8-byte blocks every 16 bytes, packed into 32 contiguous bytes at 4096.
    const weft_am_stride from{0, 16, 8, 4}, to{4096, 8, 8, 4};
    p.long_strided(0, h_user, {}, from, to);
    p.wait_replies(1);
    EXPECT_EQ(seen.kind, WEFT_AM_LONG_STRIDED);
    EXPECT_EQ(seen.offset, 4096u);
    EXPECT_EQ(seen.length, 32u);
    for (size_t b = 0; b < 4; ++b)
        EXPECT_TRUE(same(seg.subspan(4096 + 8 * b, 8), std::span(data).subspan(16 * b, 8))) << b;

    // Pieces of 5 and 3 bytes into one of 8, and a zero-length piece.
    const std::array<weft_am_piece, 3> src{{{0, 5}, {40, 3}, {60, 0}}};
    const std::array<weft_am_piece, 1> dst{{{8192, 8}}};
    p.long_vectored(0, h_user, {}, src, dst);
    p.wait_replies(1);
    EXPECT_EQ(seen.kind, WEFT_AM_LONG_VECTORED);
    EXPECT_EQ(seen.offset, 8192u);
    EXPECT_EQ(seen.length, 8u);
    EXPECT_TRUE(same(seg.subspan(8192, 5), std::span(data).first(5)));
    EXPECT_TRUE(same(seg.subspan(8197, 3), std::span(data).subspan(40, 3)));

    // A strided get: the same four blocks back, spread 32 bytes apart.
    const weft_am_stride remote{0, 16, 8, 4}, local{12288, 32, 8, 4};
    p.get_strided(0, WEFT_AM_H_EMPTY, {}, remote, local);
    p.wait_replies(1);
    for (size_t b = 0; b < 4; ++b)
        EXPECT_TRUE(same(seg.subspan(12288 + 32 * b, 8), std::span(data).subspan(16 * b, 8))) << b;
}

TEST(CxxPgas, GetRunsItsHandlerAsAReply) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    std::span<std::byte> seg = p.segment();
    std::vector<std::byte> data = pattern(128, 33);
    std::copy(data.begin(), data.end(), seg.begin() + 512);
    Seen seen;
    p.register_handler(h_user, [&](const weft::AmMessage &m) { seen.record(m); });
    const std::array<uint64_t, 2> args{7, 8};
    p.get_long(0, h_user, args, 512, data.size(), 20000);
    p.wait_replies(1);
    EXPECT_TRUE(same(seg.subspan(20000, data.size()), data));
    EXPECT_EQ(seen.calls, 1);
    EXPECT_TRUE(seen.is_reply);
    EXPECT_EQ(seen.args, std::vector<uint64_t>(args.begin(), args.end()));
    EXPECT_EQ(seen.offset, 20000u);
}

TEST(CxxPgas, CountersAndBuiltInHandlers) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    p.short_am(0, WEFT_AM_H_INCR);
    p.short_am(0, WEFT_AM_H_INCR);
    const std::array<uint64_t, 1> ten{10};
    p.short_am(0, WEFT_AM_H_ADD, ten);
    p.wait_counter(12);
    p.wait_replies(3);
    // wait_counter subtracted what it waited for: the next wait needs new increments.
    p.short_am(0, WEFT_AM_H_INCR);
    p.wait_counter(1);
    p.wait_replies(1);
    p.barrier();
}

TEST(CxxPgas, HandlerReplies) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    Seen answer;
    int second_reply_error = WEFT_SUCCESS;
    p.register_handler(h_user, [&](const weft::AmMessage &m) {
        const std::array<uint64_t, 1> args{m.args()[0] + 1};
        m.reply_short(h_user + 1, args);
        try {
            m.reply_short(h_user + 1, args);  // only once
        } catch (const weft::error &e) {
            second_reply_error = e.code();
        }
    });
    p.register_handler(h_user + 1, [&](const weft::AmMessage &m) { answer.record(m); });
    const std::array<uint64_t, 1> args{41};
    p.short_am(0, h_user, args);
    p.wait_replies(1);  // the automatic reply; the handler's own is not counted
    ASSERT_TRUE(progress_until(p, [&] { return answer.calls == 1; }));
    EXPECT_TRUE(answer.is_reply);
    EXPECT_EQ(answer.source, 0);
    EXPECT_EQ(answer.args, std::vector<uint64_t>{42});
    EXPECT_NE(second_reply_error, WEFT_SUCCESS);

    // Outside a handler there is nothing to answer.
    weft_am_info none{};
    EXPECT_THROW(weft::AmMessage(p.handle(), none).reply_short(h_user), weft::error);
}

TEST(CxxPgas, CFunctionHandlers) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    int count = 0;
    weft_am_handler add_nargs = [](weft_pgas, const weft_am_info *info, void *user_data) {
        *static_cast<int *>(user_data) += static_cast<int>(info->nargs);
    };
    p.register_handler(h_user, add_nargs, &count);
    const std::array<uint64_t, 2> args{0, 0};
    p.short_am(0, h_user, args);
    p.wait_replies(1);
    EXPECT_EQ(count, 2);
    // A callable replaces it.
    int calls = 0;
    p.register_handler(h_user, [&](const weft::AmMessage &) { ++calls; });
    p.short_am(0, h_user, args);
    p.wait_replies(1);
    EXPECT_EQ(count, 2);
    EXPECT_EQ(calls, 1);
}

TEST(CxxPgas, BadCallsThrow) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    auto noop = [](const weft::AmMessage &) {};
    EXPECT_THROW(p.register_handler(300, noop), weft::error);
    EXPECT_THROW(p.register_handler(WEFT_AM_MAX_HANDLERS, noop), weft::error);
    EXPECT_THROW(p.register_handler(3, noop), weft::error);  // the barrier's
    EXPECT_THROW(p.register_handler(4, noop), weft::error);
    EXPECT_THROW(p.short_am(0, 300), weft::error);
    EXPECT_THROW(p.short_am(1, WEFT_AM_H_EMPTY), weft::error);  // one kernel only
    EXPECT_THROW(p.short_am(-1, WEFT_AM_H_EMPTY), weft::error);
    std::array<uint64_t, WEFT_AM_MAX_ARGS + 1> too_many{};
    EXPECT_THROW(p.short_am(0, WEFT_AM_H_EMPTY, too_many), weft::error);
    std::vector<std::byte> big(p.max_medium() + 1);
    EXPECT_THROW(p.medium(0, WEFT_AM_H_EMPTY, {}, std::span(big)), weft::error);
    // A get's data is its reply: it cannot be asynchronous.
    EXPECT_THROW(p.get_long(0, WEFT_AM_H_EMPTY, {}, 0, 8, 64, WEFT_AM_ASYNC), weft::error);
    EXPECT_THROW((void)p.kernel(1), weft::error);
    EXPECT_THROW((void)weft::Pgas().kernel_id(), weft::error);
    try {
        p.register_handler(300, noop);
        FAIL() << "no exception";
    } catch (const weft::error &e) {
        EXPECT_EQ(e.code(), WEFT_ERR_ARG);
    }
    // Nothing bad was sent: the kernel still works.
    p.short_am(0, WEFT_AM_H_EMPTY);
    p.wait_replies(1);
}

TEST(CxxPgas, OutOfSegmentMessagesAreRefusedOrDropped) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    std::vector<std::byte> data(16);
    // Asynchronous: a dropped packet gets no reply to wait for.
    expect_refused_or_dropped(
        p, [&] { p.long_am(0, WEFT_AM_H_EMPTY, {}, std::span(data), segment_size - 8, WEFT_AM_ASYNC); });
    expect_refused_or_dropped(
        p, [&] { p.long_am(0, WEFT_AM_H_EMPTY, {}, std::span(data), ~size_t{0} - 7, WEFT_AM_ASYNC); });
    // A handler nobody registered.
    expect_refused_or_dropped(p, [&] { p.short_am(0, h_user + 7, {}, WEFT_AM_ASYNC); });
    // The segment was not touched past its end and the kernel still works.
    p.short_am(0, WEFT_AM_H_EMPTY);
    p.wait_replies(1);
}

TEST(CxxPgas, MoveKeepsHandlersAndOwnership) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    int calls = 0;
    p.register_handler(h_user, [&](const weft::AmMessage &) { ++calls; });
    weft_pgas h = p.handle();
    weft::Pgas q(std::move(p));
    EXPECT_FALSE(p);
    EXPECT_FALSE(p.owns());
    EXPECT_EQ(q.handle(), h);
    EXPECT_TRUE(q.owns());
    q.short_am(0, h_user);
    q.wait_replies(1);
    EXPECT_EQ(calls, 1);
    weft::Pgas r;
    r = std::move(q);
    r.short_am(0, h_user);
    r.wait_replies(1);
    EXPECT_EQ(calls, 2);
}

TEST(CxxPgas, KernelViewsDoNotOwn) {
    REQUIRE_RUNTIME();
    weft::Pgas p(weft::Comm::self(), segment_size);
    int calls = 0;
    {
        weft::Pgas k = p.kernel(0);
        EXPECT_FALSE(k.owns());
        EXPECT_EQ(k.kernel_id(), 0);
        EXPECT_EQ(k.segment().data(), p.segment().data());
        // A callable registered through a view outlives it.
        k.register_handler(h_user, [&](const weft::AmMessage &) { ++calls; });
    }
    p.short_am(0, h_user);
    p.wait_replies(1);
    EXPECT_EQ(calls, 1);
    {
        weft::Pgas v = weft::Pgas::view(p.handle());
        EXPECT_FALSE(v.owns());
        EXPECT_EQ(v.kernel_id(), 0);
    }
    EXPECT_EQ(p.kernel_id(), 0);  // still alive: neither view freed it
}

TEST(CxxPgas, ShoalCompatRefusesExtensions) {
    REQUIRE_RUNTIME();
    weft::Info hints;
    hints.set("weft_am_shoal_compat", "true");
    weft::Pgas p(weft::Comm::self(), segment_size, hints);
    int calls = 0;
    p.register_handler(h_user, [&](const weft::AmMessage &) { ++calls; });
    p.register_handler(16, [&](const weft::AmMessage &) { ++calls; });
    // Shoal-form: handler < 16, at most 8192 bytes.
    const std::array<uint64_t, 8> words{};
    p.medium(0, h_user, {}, std::span(words));
    p.wait_replies(1);
    EXPECT_EQ(calls, 1);
    auto refused = [](auto send) {
        try {
            send();
        } catch (const weft::error &e) {
            return e.code() == WEFT_ERR_UNSUPPORTED;
        }
        return false;
    };
    EXPECT_TRUE(refused([&] { p.short_am(0, 16); }));
    const std::array<std::byte, 12> odd{};
    EXPECT_FALSE(refused([&] { p.medium(0, h_user, {}, std::span(odd)); }));  // bytes, as Shoal
    p.wait_replies(1);
    EXPECT_TRUE(refused([&] { p.get_long(0, WEFT_AM_H_EMPTY, {}, 0, 8, 64); }));
    const weft_am_stride s{0, 16, 8, 2}, d{64, 8, 8, 2};
    EXPECT_TRUE(refused([&] { p.long_strided(0, h_user, {}, s, d); }));
    std::vector<std::byte> large(16 * 1024);
    EXPECT_TRUE(refused([&] { p.long_am(0, h_user, {}, std::span(large), 0); }));
    EXPECT_EQ(calls, 2);
}
