// Every message kind, sync (automatic reply, counted by weft_am_wait_replies) and WEFT_AM_ASYNC
// (no reply; the target's handler calls are awaited instead), around the ring.  Each round
// checks the whole segment of every kernel (data at the right offsets, nothing else changed)
// and every handler call (source kernel, handler index, kind, args, length, offset, payload,
// Long data present before the handler runs).
#include "pgas_plans.hpp"
#include "world_fixture.hpp"

using namespace pgas_test;

namespace {

struct kind_case {
    const char *name;
    bool async;
};
void PrintTo(const kind_case &c, std::ostream *os) { *os << c.name << (c.async ? " async" : " sync"); }

// The strided cases: one per message.  Destination offsets are packed by `p`.
std::vector<message> strided_cases(int dst, unsigned flags, unsigned shift, packer &p, bool get) {
    struct c {
        weft_am_stride src, dst;
        const char *note;
    };
    auto ext = [](const weft_am_stride &s) {
        return s.block_count ? (s.block_count - 1) * s.stride + s.block_size : 0;
    };
    std::vector<c> cs;
    cs.push_back({stride(5, 100, 37, 50), stride(0, 41, 37, 50), "gaps on both sides"});
    cs.push_back({stride(7001, 4096, 1000, 1), stride(0, 4096, 1000, 1), "one block"});
    cs.push_back({stride(20003, 64, 64, 30), stride(0, 100, 96, 20), "different layouts, same total"});
    cs.push_back({stride(30001, 600, 512, 16), stride(0, 1024, 1024, 8), "8192 bytes in total"});
    cs.push_back({stride(50001, 2800, 2731, 3), stride(0, 8193, 8193, 1), "8193 bytes: rendezvous"});
    cs.push_back({stride(100003, 1024, 1000, 100), stride(0, 512, 500, 200), "100000 bytes"});
    cs.push_back({stride(3, 16, 16, 0), stride(0, 16, 16, 0), "block_count 0"});
    cs.push_back({stride(200000, 1032, 1024, 1024), stride(0, 1024, 1024, 1024), "1 MiB"});
    std::vector<message> v;
    for (size_t i = 0; i < cs.size(); ++i) {
        weft_am_stride d = cs[i].dst;
        d.offset = p.take(ext(d));
        unsigned h = get && i % 5 == 4 ? WEFT_AM_H_EMPTY : record_handlers()[i % 5];
        message m = get ? make_get_strided(dst, h, nargs_for(i, shift), cs[i].src, d)
                        : make_strided(dst, h, nargs_for(i, shift), cs[i].src, d, flags);
        m.note = cs[i].note;
        v.push_back(m);
    }
    return v;
}

std::vector<message> vectored_cases(int dst, unsigned flags, unsigned shift, packer &p) {
    struct c {
        std::vector<weft_am_piece> src, dst;  // dst offsets relative to the packed region
        size_t span;
        const char *note;
    };
    std::vector<c> cs;
    cs.push_back({{{11, 3000}}, {{0, 3000}}, 3000, "one piece each side"});
    cs.push_back({{{100, 0}, {5000, 100}, {6000, 0}, {7000, 57}, {7100, 0}},
                  {{0, 50}, {60, 0}, {70, 107}, {200, 0}},
                  300,
                  "zero-length pieces"});
    {
        // 16 source and 16 destination pieces of different lengths, the same total; the
        // destination pieces in descending offset order.
        c x;
        size_t tot = 0;
        for (size_t i = 0; i < WEFT_AM_MAX_VECTOR; ++i) {
            x.src.push_back({9000 + i * 200, i * 13 + 1});
            tot += i * 13 + 1;
        }
        for (size_t j = 0; j < WEFT_AM_MAX_VECTOR; ++j) {
            size_t len = j + 1 < WEFT_AM_MAX_VECTOR ? 98 : tot - 98 * (WEFT_AM_MAX_VECTOR - 1);
            x.dst.push_back({(WEFT_AM_MAX_VECTOR - 1 - j) * 110, len});
        }
        x.span = WEFT_AM_MAX_VECTOR * 110;
        x.note = "16 and 16 pieces, different layouts";
        cs.push_back(x);
    }
    {
        c x;
        x.src = {{20000, 1600}};
        for (size_t j = 0; j < WEFT_AM_MAX_VECTOR; ++j) x.dst.push_back({j * 104, 100});
        x.span = WEFT_AM_MAX_VECTOR * 104;
        x.note = "1 source piece, 16 destination pieces";
        cs.push_back(x);
    }
    {
        c x;
        // Overlapping source pieces, out of order: sources are only read.
        for (size_t j = 0; j < WEFT_AM_MAX_VECTOR; ++j) x.src.push_back({30000 + ((j * 7) % 4) * 50, 100});
        x.dst = {{0, 1600}};
        x.span = 1600;
        x.note = "16 overlapping source pieces, 1 destination piece";
        cs.push_back(x);
    }
    cs.push_back({{{40000, 2048}, {43000, 2048}, {46000, 2048}, {49000, 2048}},
                  {{0, 4096}, {4100, 4096}},
                  8196,
                  "8192 bytes in total"});
    cs.push_back({{{52000, 2731}, {55000, 2731}, {58000, 2731}}, {{0, 8193}}, 8193, "8193 bytes: rendezvous"});
    {
        c x;
        for (size_t j = 0; j < 4; ++j) x.src.push_back({100000 + j * 25003, 25000});
        for (size_t j = 0; j < 5; ++j) x.dst.push_back({j * 20004, 20000});
        x.span = 5 * 20004;
        x.note = "100000 bytes";
        cs.push_back(x);
    }
    cs.push_back({{{61000, 64}}, {{0, 0}, {8, 64}}, 72, "first destination piece empty"});
    cs.push_back({{{62000, 0}}, {{0, 0}}, 0, "zero bytes in total"});
    {
        c x;
        for (size_t j = 0; j < WEFT_AM_MAX_VECTOR; ++j) x.src.push_back({200000 + j * 65536, 65536});
        x.dst = {{0, 512 * KiB}, {512 * KiB + 8, 512 * KiB}};
        x.span = MiB + 8;
        x.note = "1 MiB";
        cs.push_back(x);
    }
    std::vector<message> v;
    for (size_t i = 0; i < cs.size(); ++i) {
        size_t base = p.take(cs[i].span);
        for (auto &d : cs[i].dst) d.offset += base;
        message m = make_vectored(dst, record_handlers()[i % 5], nargs_for(i, shift), cs[i].src, cs[i].dst, flags);
        m.note = cs[i].note;
        v.push_back(m);
    }
    return v;
}

// The plan of one kind: kernel s sends every case to its ring successor.
plan_fn kind_plan(const std::string &kind, bool async, size_t max_medium) {
    const unsigned flags = async ? WEFT_AM_ASYNC : 0;
    const unsigned shift = async ? 1 : 0;
    return [=](int s, int n) {
        const int t = (s + 1) % n;
        std::vector<message> v;
        packer p;
        // Sync plans send one message of each list to WEFT_AM_H_EMPTY (no handler call to
        // await: only its data and its reply).
        auto h = [&](size_t i) { return !async && i == 4 ? unsigned(WEFT_AM_H_EMPTY) : handler_for(i); };
        if (kind == "short") {
            v.push_back(make_short(t, 5, 0, flags));
            v.push_back(make_short(t, 15, 1, flags));
            v.push_back(make_short(t, 16, 15, flags));
            v.push_back(make_short(t, 200, 7, flags));
            v.push_back(make_short(t, 255, 15, flags));
        } else if (kind == "medium" || kind == "medium_seg") {
            std::vector<size_t> sizes = {0, 1, 7, 8, 4096, max_medium - 1, max_medium};
            for (size_t i = 0; i < sizes.size(); ++i) {
                unsigned hh = h(i) == WEFT_AM_H_EMPTY ? 5 : h(i);  // a Medium is only useful to a handler
                if (kind == "medium")
                    v.push_back(make_medium(t, hh, nargs_for(i, shift), sizes[i], flags));
                else
                    v.push_back(make_medium_seg(t, hh, nargs_for(i, shift), (i * 1237 + 3) % (src_area - sizes[i]),
                                                sizes[i], flags));
            }
        } else if (kind == "long" || kind == "long_seg") {
            for (size_t i = 0; i < long_sizes().size(); ++i) {
                size_t len = long_sizes()[i];
                size_t d = p.take(len);
                if (kind == "long")
                    v.push_back(make_long(t, h(i), nargs_for(i, shift), len, d, flags));
                else
                    v.push_back(
                        make_long_seg(t, h(i), nargs_for(i, shift), (i * 4099 + 3) % (src_area - len), len, d, flags));
            }
        } else if (kind == "strided") {
            v = strided_cases(t, flags, shift, p, false);
        } else if (kind == "vectored") {
            v = vectored_cases(t, flags, shift, p);
        } else if (kind == "get_long") {
            for (size_t i = 0; i < long_sizes().size(); ++i) {
                size_t len = long_sizes()[i];
                v.push_back(make_get_long(t, i % 5 == 4 ? WEFT_AM_H_EMPTY : handler_for(i), nargs_for(i, 0),
                                          (i * 4099 + 3) % (src_area - len), len, p.take(len)));
            }
        } else if (kind == "get_strided") {
            v = strided_cases(t, 0, 0, p, true);
        }
        return v;
    };
}

class Kinds : public World, public ::testing::WithParamInterface<kind_case> {};

TEST_P(Kinds, Round) {
    const kind_case &c = GetParam();
    ASSERT_GE(kc().max_medium, 8u) << "weft_am_max_medium";
    run_round(kc(), kind_plan(c.name, c.async, kc().max_medium), std::string(c.name) + (c.async ? " async" : " sync"));
}

const kind_case kind_cases[] = {
    {"short", false},      {"short", true},      {"medium", false},   {"medium", true},
    {"medium_seg", false}, {"medium_seg", true}, {"long", false},     {"long", true},
    {"long_seg", false},   {"long_seg", true},   {"strided", false},  {"strided", true},
    {"vectored", false},   {"vectored", true},   {"get_long", false}, {"get_strided", false},
};

INSTANTIATE_TEST_SUITE_P(Messages, Kinds, ::testing::ValuesIn(kind_cases),
                         [](const ::testing::TestParamInfo<kind_case> &i) {
                             return std::string(i.param.name) + (i.param.async ? "_async" : "_sync");
                         });

// All kinds at once from every kernel to every kernel: many sources into one segment, and
// messages from a kernel to itself.
TEST_F(World, AllToAllSync) { run_round(kc(), all_to_all_plan(0), "all-to-all sync"); }
TEST_F(World, AllToAllAsync) { run_round(kc(), all_to_all_plan(WEFT_AM_ASYNC), "all-to-all async"); }

// Many messages in flight at once (sync and async mixed), with every argument count 0..15.
TEST_F(World, ManyMessagesInFlight) {
    run_round(
        kc(),
        [](int s, int n) {
            const int t = (s + 1) % n;
            std::vector<message> v;
            packer p;
            for (size_t i = 0; i < 300; ++i) {
                const unsigned flags = i % 4 == 1 ? WEFT_AM_ASYNC : 0, nargs = unsigned(i % 16);
                switch (i % 3) {
                    case 0: v.push_back(make_short(t, handler_for(i), nargs, flags)); break;
                    case 1: v.push_back(make_medium(t, handler_for(i), nargs, 24 + i, flags)); break;
                    default: v.push_back(make_long(t, handler_for(i), nargs, 100 + i, p.take(100 + i), flags));
                }
            }
            return v;
        },
        "300 messages in flight");
}

// Once a Long's reply is counted, its data is in the target's segment: a get sent after it
// must bring the data back.
TEST_F(World, ReplyMeansTheDataIsInPlace) {
    kc().round++;
    fill_segment(kc());
    ASSERT_EQ(weft_pgas_barrier(kc().k), 0) << detail();
    const int t = next_of(me(), nk());
    size_t put_at = dst_lo + 1, get_at = dst_lo + 600001, i = 0;
    for (size_t len : {size_t(1), size_t(8193), size_t(100000), size_t(300000)}) {
        std::vector<uint8_t> data(len);
        fill_bytes(buffer_seed(me(), kc().round, i++), data.data(), 0, len);
        step("put %zu bytes, then get them back", len);
        ASSERT_EQ(weft_am_long(kc().k, t, WEFT_AM_H_EMPTY, nullptr, 0, data.data(), len, put_at, 0), 0) << detail();
        ASSERT_EQ(weft_am_wait_replies(kc().k, 1), 0) << detail();
        ASSERT_EQ(weft_am_get_long(kc().k, t, WEFT_AM_H_EMPTY, nullptr, 0, put_at, len, get_at, 0), 0) << detail();
        ASSERT_EQ(weft_am_wait_replies(kc().k, 1), 0) << detail();
        EXPECT_EQ(std::memcmp(kc().base + get_at, data.data(), len), 0)
            << kc().name() << ": a get right after the reply of a " << len
            << "-byte Long did not return the Long's data";
        put_at += len + 5;
        get_at += len + 5;
    }
    ASSERT_EQ(weft_pgas_barrier(kc().k), 0) << detail();
}

// Offsets right at the end of the segment are in bounds: a Long ending on the segment's last
// byte, a Long and a Medium reading the sender's last bytes, a get of the target's last bytes.
TEST_F(World, RegionsEndingAtTheSegmentEnd) {
    // Round 1: writes at the end of the target's segment (the destination half).
    run_round(
        kc(),
        [](int s, int n) {
            int t = (s + 1) % n;
            return std::vector<message>{make_long(t, 5, 0, 7, seg_size - 7), make_long(t, 16, 1, 0, seg_size)};
        },
        "Long ending at the segment end");
    // Round 2: sources at the end of a segment; nothing may write there, so the data lands
    // in the middle of the destination half.
    run_round(
        kc(),
        [](int s, int n) {
            int t = (s + 1) % n;
            std::vector<message> v;
            v.push_back(make_long_seg(t, 5, 0, seg_size - 9, 9, dst_lo + 11));
            v.push_back(make_medium_seg(t, 15, 2, seg_size - 5, 5));
            v.push_back(make_get_long(t, 16, 0, seg_size - 13, 13, dst_lo + 101));
            v.push_back(make_strided(t, 200, 0, stride(seg_size - 100, 30, 10, 4), stride(dst_lo + 203, 40, 10, 4)));
            v.push_back(make_vectored(t, 255, 0, {{seg_size - 1, 1}, {0, 1}}, {{dst_lo + 401, 2}}));
            return v;
        },
        "sources ending at the segment end");
}

// The segment starts zero-filled, and the query calls describe the context.
TEST_F(World, FreshContext) {
    std::vector<uint8_t> zero(seg_size, 0);
    EXPECT_EQ(std::memcmp(kc().base, zero.data(), seg_size), 0) << "new segment not zero-filled";
    unsigned nargs = 0;
    EXPECT_EQ(weft_am_max_args(kc().k, &nargs), 0) << detail();
    EXPECT_EQ(nargs, unsigned(WEFT_AM_MAX_ARGS));
    size_t max_long = 0;
    EXPECT_EQ(weft_am_max_long(kc().k, &max_long), 0) << detail();
    EXPECT_GE(max_long, MiB) << "the suite sends 1 MiB Longs";
    EXPECT_GE(kc().max_medium, 8u);
    weft_pgas k = WEFT_PGAS_NULL;
    EXPECT_NE(weft_pgas_get_kernel(kc().k, 1, &k), 0) << "local index 1 on a communicator with one kernel per process";
    EXPECT_NE(weft_pgas_get_kernel(kc().k, -1, &k), 0) << "local index -1";
    uint64_t bad = 123;
    EXPECT_EQ(weft_pgas_bad_packets(kc().k, &bad), 0) << detail();
    EXPECT_EQ(bad, 0u);
    // A handle that is no PGAS kernel.
    int id = -1;
    EXPECT_NE(weft_pgas_kernel_id(WEFT_PGAS_NULL, &id), 0);
    EXPECT_NE(weft_pgas_kernel_id(WEFT_COMM_WORLD, &id), 0) << "a communicator handle";
    EXPECT_NE(weft_pgas_progress(WEFT_PGAS_NULL), 0);
}

}  // namespace
