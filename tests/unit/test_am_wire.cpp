// The active-message wire format (core/pgas/am_wire.hpp, docs/pgas-wire.md): exact header bits, so
// Shoal's layout cannot drift; encode/decode round trips of every kind; rejection of malformed
// packets; segment bounds with overflowing sizes; and a randomized robustness check (run it
// under AddressSanitizer: every buffer is allocated at its exact length).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "pgas/am_wire.hpp"
#include "weft/weft.h"

using namespace weft;

namespace {

constexpr uint64_t u64max = std::numeric_limits<uint64_t>::max();

// A packet buffer of exactly `len` bytes (operator new[] aligns to 16), so that AddressSanitizer
// reports any read past the packet.
struct Exact {
    std::unique_ptr<unsigned char[]> bytes;
    size_t len = 0;
    Exact(const void *src, size_t n) : bytes(new unsigned char[n == 0 ? 1 : n]), len(n) {
        if (n != 0) std::memcpy(bytes.get(), src, n);
    }
    const void *data() const { return bytes.get(); }
    bool contains(const void *p, uint64_t n) const {
        auto b = reinterpret_cast<uintptr_t>(bytes.get()), q = reinterpret_cast<uintptr_t>(p);
        return q >= b && q - b <= len && n <= len - (q - b);
    }
};

// An encoded packet with the storage its pointers refer to.
struct Message {
    am_packet p;
    std::vector<uint64_t> args, pieces;
    std::vector<unsigned char> payload;
    std::vector<uint64_t> wire = std::vector<uint64_t>(am_max_packet / 8);
    size_t len = 0;

    Message() = default;
    // p points into the storage: a copy points into its own.
    Message(const Message &o) : p(o.p), args(o.args), pieces(o.pieces), payload(o.payload), wire(o.wire), len(o.len) {
        point();
    }
    Message &operator=(const Message &) = delete;

    // Points p at the storage, encodes, and returns *this.
    Message &encode() {
        point();
        p.nargs = static_cast<unsigned>(args.size());
        p.npieces = static_cast<unsigned>(pieces.size() / 2);
        if (!payload.empty()) p.payload_bytes = payload.size();
        len = am_encode(p, wire.data());
        return *this;
    }
    void point() {
        p.args = args.empty() ? nullptr : args.data();
        p.pieces = pieces.empty() ? nullptr : pieces.data();
        p.payload = payload.empty() ? nullptr : payload.data();
    }
    Exact exact() const { return Exact(wire.data(), len); }
};

std::vector<unsigned char> pattern(size_t n, unsigned seed = 1) {
    std::vector<unsigned char> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 131 + seed * 7 + 3);
    return v;
}

// Decodes m's bytes and checks every field against what was encoded.
void expect_round_trip(const Message &m) {
    SCOPED_TRACE(::testing::Message() << "type 0x" << std::hex << unsigned{m.p.type});
    Exact buf = m.exact();
    am_packet d;
    ASSERT_EQ(am_decode(buf.data(), buf.len, d), am_wire_error::ok);
    const am_packet &p = m.p;
    EXPECT_EQ(d.type, p.type);
    EXPECT_EQ(d.src, p.src);
    EXPECT_EQ(d.dst, p.dst);
    EXPECT_EQ(d.token, p.token);
    EXPECT_EQ(d.handler, p.handler);
    EXPECT_EQ(d.nargs, p.nargs);
    EXPECT_EQ(d.ext_flags, p.ext_flags);
    EXPECT_EQ(d.rndv_seq, p.rndv_seq);
    EXPECT_EQ(d.payload_bytes, p.payload_bytes);
    EXPECT_EQ(d.dst_offset, p.dst_offset);
    EXPECT_EQ(d.src_offset, p.src_offset);
    for (auto [a, b] : {std::pair{&d.dst_stride, &p.dst_stride}, std::pair{&d.src_stride, &p.src_stride}}) {
        EXPECT_EQ(a->offset, b->offset);
        EXPECT_EQ(a->stride, b->stride);
        EXPECT_EQ(a->block_size, b->block_size);
        EXPECT_EQ(a->block_count, b->block_count);
    }
    EXPECT_EQ(d.npieces, p.npieces);
    for (unsigned i = 0; i < 2 * std::min(d.npieces, p.npieces); ++i) EXPECT_EQ(d.pieces[i], p.pieces[i]) << i;
    for (unsigned i = 0; i < std::min(d.nargs, p.nargs); ++i) EXPECT_EQ(d.args[i], p.args[i]) << i;
    if (d.nargs != 0) {
        EXPECT_TRUE(buf.contains(d.args, 8 * uint64_t{d.nargs}));
    }
    if (m.payload.empty()) {
        if (d.payload != nullptr) {
            EXPECT_EQ(d.payload_bytes, 0u);
        }
    } else {
        ASSERT_NE(d.payload, nullptr);
        ASSERT_TRUE(buf.contains(d.payload, d.payload_bytes));
        EXPECT_EQ(std::memcmp(d.payload, m.payload.data(), m.payload.size()), 0);
    }
    // The encoder marks exactly the packets that need the extension word.
    EXPECT_EQ((p.type & am_ext) != 0, am_needs_ext(p));
}

am_packet header(uint8_t type, uint32_t src, uint32_t dst, unsigned handler, uint16_t token) {
    am_packet p;
    p.type = type;
    p.src = src;
    p.dst = dst;
    p.handler = handler;
    p.token = token;
    return p;
}

am_wire_error decode(const std::vector<uint64_t> &words, size_t len, am_packet &p) {
    Exact buf(words.data(), len);
    return am_decode(buf.data(), buf.len, p);
}
am_wire_error decode(const std::vector<uint64_t> &words) {
    am_packet p;
    return decode(words, words.size() * 8, p);
}

// The words of an encoded message (for editing).
std::vector<uint64_t> words_of(const Message &m) { return {m.wire.begin(), m.wire.begin() + m.len / 8}; }

Message long_fifo_example() {
    Message m;
    m.p = header(am_kind_long | am_fifo, 1, 2, 5, 7);
    m.p.dst_offset = 0x100;
    m.args = {0x11, 0x22};
    m.payload = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    m.encode();
    return m;
}

}  // namespace

// ---- Exact layout: Shoal's header words cannot drift ----

TEST(AmWireLayout, LongFifoExampleWords) {
    // docs/pgas-wire.md shows these words.
    Message m = long_fifo_example();
    ASSERT_EQ(m.len, 7u * 8);
    EXPECT_EQ(m.wire[0], 0x2500100002000114u);
    EXPECT_EQ(m.wire[1], 0x0007000000000000u);
    EXPECT_EQ(m.wire[2], 0x100u);
    EXPECT_EQ(m.wire[3], 0x11u);
    EXPECT_EQ(m.wire[4], 0x22u);
    EXPECT_EQ(m.wire[5], 0x0807060504030201u);
    EXPECT_EQ(m.wire[6], 0x100F0E0D0C0B0A09u);
    // Little-endian on the wire: the type is the first byte, the source kernel the next two.
    const auto *b = reinterpret_cast<const unsigned char *>(m.wire.data());
    EXPECT_EQ(b[0], 0x14);
    EXPECT_EQ(b[1], 0x01);
    EXPECT_EQ(b[2], 0x00);
    EXPECT_EQ(b[3], 0x02);
    EXPECT_EQ(b[7], 0x25);
    EXPECT_FALSE(am_needs_ext(m.p));
    expect_round_trip(m);
}

TEST(AmWireLayout, EachShoalFieldAtItsBits) {
    // One field at its maximum, the others zero: each lands in its own bits only.
    struct Case {
        uint32_t src, dst;
        unsigned handler, nargs;
        size_t payload_words;
        uint16_t token;
        uint64_t word0, word1;
    };
    const Case cases[] = {
        {0xFFFF, 0, 0, 0, 0, 0, 0x0000000000FFFF00u | am_kind_medium, 0},
        {0, 0xFFFF, 0, 0, 0, 0, 0x000000FFFF000000u | am_kind_medium, 0},
        {0, 0, 15, 0, 0, 0, 0x0F00000000000000u | am_kind_medium, 0},
        {0, 0, 0, 15, 0, 0, 0xF000000000000000u | am_kind_medium, 0},
        {0, 0, 0, 0, 1024, 0, 0x0020000000000000u | am_kind_medium, 0},  // 8192 bytes
        {0, 0, 0, 0, 0, 0xFFFF, am_kind_medium, 0xFFFF000000000000u},
    };
    for (const Case &c : cases) {
        Message m;
        m.p = header(am_kind_medium, c.src, c.dst, c.handler, c.token);
        m.args.assign(c.nargs, 0);
        m.payload.assign(c.payload_words * 8, 0xAB);
        m.encode();
        EXPECT_EQ(m.wire[0], c.word0) << std::hex << m.wire[0];
        EXPECT_EQ(m.wire[1], c.word1) << std::hex << m.wire[1];
        EXPECT_EQ(m.len, 16 + 8 * c.nargs + 8 * c.payload_words);
        expect_round_trip(m);
    }
}

TEST(AmWireLayout, TypeCodesAreShoals) {
    EXPECT_EQ(am_kind_short, 1);
    EXPECT_EQ(am_kind_medium, 2);
    EXPECT_EQ(am_kind_long, 4);
    EXPECT_EQ(am_kind_strided, 5);
    EXPECT_EQ(am_kind_vectored, 6);
    EXPECT_EQ(am_fifo, 0x10);
    EXPECT_EQ(am_async, 0x20);
    EXPECT_EQ(am_reply, 0x40);
    EXPECT_EQ(am_ext, 0x80);
    // The public kinds are the wire kinds.
    EXPECT_EQ(int{am_kind_short}, int{WEFT_AM_SHORT});
    EXPECT_EQ(int{am_kind_medium}, int{WEFT_AM_MEDIUM});
    EXPECT_EQ(int{am_kind_long}, int{WEFT_AM_LONG});
    EXPECT_EQ(int{am_kind_strided}, int{WEFT_AM_LONG_STRIDED});
    EXPECT_EQ(int{am_kind_vectored}, int{WEFT_AM_LONG_VECTORED});
    EXPECT_EQ(am_max_args, unsigned{WEFT_AM_MAX_ARGS});
    EXPECT_EQ(am_max_vector, unsigned{WEFT_AM_MAX_VECTOR});
}

TEST(AmWireLayout, ExtensionWordBits) {
    // A rendezvous Long to handler 200: word 2 = handler | flags << 8 | sequence << 16 | bytes << 32.
    Message m;
    m.p = header(am_kind_long, 3, 4, 200, 0x1234);
    m.p.ext_flags = am_ext_rndv;
    m.p.rndv_seq = 0xBEEF;
    m.p.payload_bytes = 100000;
    m.p.dst_offset = 64;
    m.encode();
    ASSERT_EQ(m.len, 4u * 8);  // header, token, extension, destination offset: no payload
    EXPECT_EQ(m.p.type, am_kind_long | am_ext);
    EXPECT_EQ(m.wire[0] & 0xFF, uint64_t{am_kind_long | am_ext});
    EXPECT_EQ((m.wire[0] >> 8) & 0xFFFF, 3u);
    EXPECT_EQ((m.wire[0] >> 24) & 0xFFFF, 4u);
    EXPECT_EQ((m.wire[0] >> 40) & 0xFFFF, 0u);  // sizes of extended packets live in word 2
    EXPECT_EQ((m.wire[0] >> 56) & 0xF, 200u & 0xF);
    EXPECT_EQ(m.wire[1], 0x1234000000000000u);
    EXPECT_EQ(m.wire[2], 200u | uint64_t{am_ext_rndv} << 8 | uint64_t{0xBEEF} << 16 | uint64_t{100000} << 32);
    EXPECT_EQ(m.wire[3], 64u);
    expect_round_trip(m);
}

// ---- Which packets a Shoal-limited peer can parse ----

TEST(AmWireShoalForm, NeedsExtension) {
    auto needs = [](uint8_t type, unsigned handler, uint64_t payload, uint8_t ext_flags = 0) {
        am_packet p = header(type, 0, 1, handler, 0);
        p.payload_bytes = payload;
        p.ext_flags = ext_flags;
        return am_needs_ext(p);
    };
    EXPECT_FALSE(needs(am_kind_short, 0, 0));
    EXPECT_FALSE(needs(am_kind_short, 15, 0));
    EXPECT_TRUE(needs(am_kind_short, 16, 0));
    EXPECT_TRUE(needs(am_kind_short, 255, 0));
    EXPECT_FALSE(needs(am_kind_short | am_reply, 0, 0));  // automatic reply
    // A handler's reply: a GAScore would count it as an automatic one, so it is an extension.
    EXPECT_TRUE(needs(am_kind_short | am_reply | am_async, 9, 0));
    EXPECT_FALSE(needs(am_kind_medium | am_fifo, 5, 0));
    EXPECT_FALSE(needs(am_kind_medium | am_fifo, 5, 8));
    EXPECT_FALSE(needs(am_kind_medium, 5, am_max_inline));
    EXPECT_FALSE(needs(am_kind_medium, 5, 12));  // sizes are in bytes, as in Shoal
    EXPECT_FALSE(needs(am_kind_medium, 5, 1));
    EXPECT_FALSE(needs(am_kind_long | am_fifo, 5, 64));
    EXPECT_FALSE(needs(am_kind_long | am_async, 5, 0xFFFF));  // fits the 16-bit byte count
    EXPECT_TRUE(needs(am_kind_long, 5, 0x10000));
    EXPECT_TRUE(needs(am_kind_long, 5, 64, am_ext_rndv));
    EXPECT_TRUE(needs(am_kind_long, 5, 64, am_ext_get));
    EXPECT_TRUE(needs(am_kind_strided, 5, 64));
    EXPECT_TRUE(needs(am_kind_vectored, 5, 64));
    EXPECT_TRUE(needs(am_kind_long, 16, 64));
}

TEST(AmWireShoalForm, EncoderSetsOrClearsTheMark) {
    Message m;
    m.p = header(am_kind_short | am_ext, 0, 1, 5, 0);  // a stale mark is cleared
    m.encode();
    EXPECT_EQ(m.p.type, am_kind_short);
    EXPECT_EQ(m.len, 16u);
    Message e;
    e.p = header(am_kind_short, 0, 1, 16, 0);
    e.encode();
    EXPECT_EQ(e.p.type, am_kind_short | am_ext);
    EXPECT_EQ(e.len, 24u);
}

// ---- Round trips of every kind ----

TEST(AmWireRoundTrip, Short) {
    for (unsigned handler : {0u, 1u, 15u, 16u, 255u})
        for (unsigned nargs : {0u, 1u, 15u}) {
            Message m;
            m.p = header(am_kind_short, 0xFFFE, 0xABCD, handler, static_cast<uint16_t>(handler * 77 + nargs));
            for (unsigned i = 0; i < nargs; ++i) m.args.push_back(u64max - i);
            m.encode();
            EXPECT_EQ(m.len, 16 + (handler >= 16 ? 8 : 0) + 8 * nargs);
            expect_round_trip(m);
        }
}

TEST(AmWireRoundTrip, ShortAsync) {
    Message m;
    m.p = header(am_kind_short | am_async, 1, 2, 7, 3);
    m.args = {42};
    expect_round_trip(m.encode());
}

TEST(AmWireRoundTrip, Medium) {
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{4096}, am_max_inline})
        for (unsigned handler : {5u, 16u}) {
            Message m;
            m.p = header(am_kind_medium | am_fifo, 2, 3, handler, 11);
            m.args = {1, 2, 3};
            m.payload = pattern(bytes);
            m.p.payload_bytes = bytes;
            m.encode();
            bool ext = handler >= 16;
            EXPECT_EQ(m.len, 16 + (ext ? 8 : 0) + 24 + (bytes + 7) / 8 * 8) << bytes;
            expect_round_trip(m);
        }
}

TEST(AmWireRoundTrip, MediumFromMemoryAndFifoDiffer) {
    // The FIFO bit travels (Shoal keeps it): it says where the sender took the payload from.
    Message a, b;
    a.p = header(am_kind_medium, 0, 1, 5, 0);
    b.p = header(am_kind_medium | am_fifo, 0, 1, 5, 0);
    a.payload = b.payload = pattern(16);
    a.encode();
    b.encode();
    EXPECT_EQ(a.wire[0] ^ b.wire[0], uint64_t{am_fifo});
    expect_round_trip(a);
    expect_round_trip(b);
}

TEST(AmWireRoundTrip, Long) {
    for (size_t bytes : {size_t{0}, size_t{8}, size_t{13}, am_max_inline})
        for (unsigned nargs : {0u, 15u}) {
            Message m;
            m.p = header(am_kind_long | am_fifo, 9, 8, 5, 1);
            m.p.dst_offset = u64max - 1;  // bounds are not the decoder's business
            m.args.assign(nargs, 0x5555);
            m.payload = pattern(bytes, 2);
            m.p.payload_bytes = bytes;
            expect_round_trip(m.encode());
        }
}

TEST(AmWireRoundTrip, Strided) {
    Message m;
    m.p = header(am_kind_strided, 4, 5, 6, 0x8000);
    m.p.dst_stride = {1024, 64, 24, 10};
    m.payload = pattern(240);
    m.args = {7};
    m.encode();
    EXPECT_EQ(m.p.type, am_kind_strided | am_ext);  // Weft's strided descriptor is not Shoal's
    EXPECT_EQ(m.len, 8 * (3 + 4 + 1 + 30u));
    expect_round_trip(m);
}

TEST(AmWireRoundTrip, Vectored) {
    for (unsigned n : {0u, 1u, 16u}) {
        Message m;
        m.p = header(am_kind_vectored | am_async, 4, 5, 255, 2);
        size_t total = 0;
        for (unsigned i = 0; i < n; ++i) {
            m.pieces.push_back(1000 * i);
            m.pieces.push_back(i % 3 == 0 ? 0 : i);  // zero lengths are allowed
            total += m.pieces.back();
        }
        m.payload = pattern(total);
        m.p.payload_bytes = total;
        m.args.assign(15, 3);
        m.encode();
        EXPECT_EQ(m.len, 8 * (3 + 1 + 2 * n + 15) + (total + 7) / 8 * 8);
        expect_round_trip(m);
    }
}

TEST(AmWireRoundTrip, LongGet) {
    Message m;
    m.p = header(am_kind_long, 1, 0, 9, 77);
    m.p.ext_flags = am_ext_get;
    m.p.src_offset = 4096;
    m.p.payload_bytes = 1u << 20;  // what it asks for; nothing inline
    m.p.dst_offset = 128;
    m.args = {5, 6};
    m.encode();
    EXPECT_EQ(m.len, 8 * (3 + 3 + 2u));
    EXPECT_EQ(m.wire[3], 4096u);
    EXPECT_EQ(m.wire[4], 1u << 20);
    EXPECT_EQ(m.wire[5], 128u);
    expect_round_trip(m);
}

TEST(AmWireRoundTrip, StridedGet) {
    Message m;
    m.p = header(am_kind_strided, 1, 0, 0, 78);
    m.p.ext_flags = am_ext_get;
    m.p.src_stride = {0, 100, 10, 8};   // 80 bytes
    m.p.dst_stride = {512, 20, 20, 4};  // 80 bytes, another shape
    m.p.payload_bytes = 80;
    m.encode();
    EXPECT_EQ(m.len, 8 * (3 + 8u));
    expect_round_trip(m);
}

TEST(AmWireRoundTrip, Replies) {
    // The automatic reply: Short | REPLY, handler 0, the request's token.
    Message a;
    a.p = header(am_kind_short | am_reply, 2, 1, 0, 0xCAFE);
    a.encode();
    EXPECT_EQ(a.len, 16u);
    EXPECT_EQ(a.wire[0] & 0xFF, 0x41u);
    expect_round_trip(a);
    // A handler's own reply: Short | REPLY | ASYNC, with its handler and arguments.
    Message h;
    h.p = header(am_kind_short | am_reply | am_async, 2, 1, 200, 0xCAFE);
    h.args = {1, 2, 3};
    h.encode();
    EXPECT_EQ(h.wire[0] & 0x7F, 0x61u);
    expect_round_trip(h);
    // A get's data: a REPLY Long (or strided), inline or by rendezvous.
    Message d;
    d.p = header(am_kind_long | am_reply, 0, 1, 9, 77);
    d.p.dst_offset = 128;
    d.payload = pattern(64);
    expect_round_trip(d.encode());
    Message r;
    r.p = header(am_kind_long | am_reply, 0, 1, 9, 77);
    r.p.ext_flags = am_ext_rndv;
    r.p.rndv_seq = 4095;
    r.p.payload_bytes = 1u << 20;
    expect_round_trip(r.encode());
    Message s;
    s.p = header(am_kind_strided | am_reply, 0, 1, 0, 78);
    s.p.dst_stride = {512, 20, 20, 4};
    s.payload = pattern(80);
    expect_round_trip(s.encode());
}

TEST(AmWireRoundTrip, Rendezvous) {
    for (uint8_t kind : {am_kind_long, am_kind_strided, am_kind_vectored}) {
        Message m;
        m.p = header(kind, 7, 6, 5, 4);
        m.p.ext_flags = am_ext_rndv;
        m.p.rndv_seq = 1;
        m.p.payload_bytes = 3 * am_max_inline;
        m.p.dst_offset = kind == am_kind_long ? 8 : 0;
        if (kind == am_kind_strided) m.p.dst_stride = {0, 4096, 4096, 6};
        if (kind == am_kind_vectored) m.pieces = {0, am_max_inline, 2 * am_max_inline, 2 * am_max_inline};
        m.encode();
        EXPECT_NE(m.p.type & am_ext, 0);
        expect_round_trip(m);
    }
}

// ---- Rejection of malformed packets ----

TEST(AmWireReject, TruncatedAtEveryLength) {
    std::vector<Message> samples;
    samples.push_back(long_fifo_example());
    Message v;
    v.p = header(am_kind_vectored, 0, 1, 20, 0);
    v.pieces = {0, 3, 8, 5};
    v.payload = pattern(8);
    v.args = {1};
    samples.push_back(v.encode());
    Message g;
    g.p = header(am_kind_strided, 0, 1, 0, 0);
    g.p.ext_flags = am_ext_get;
    g.p.src_stride = g.p.dst_stride = {0, 8, 8, 2};
    g.p.payload_bytes = 16;
    samples.push_back(g.encode());
    Message s;
    s.p = header(am_kind_short, 0, 1, 5, 0);
    s.args = {1, 2};
    samples.push_back(s.encode());
    for (const Message &m : samples) {
        std::vector<uint64_t> w = words_of(m);
        am_packet p;
        ASSERT_EQ(decode(w, m.len, p), am_wire_error::ok);
        for (size_t n = 0; n < m.len; ++n) EXPECT_NE(decode(w, n, p), am_wire_error::ok) << "length " << n;
        // A word too many is as wrong as one too few.
        w.push_back(0);
        EXPECT_EQ(decode(w, m.len + 8, p), am_wire_error::bad_size);
    }
}

TEST(AmWireReject, BadKinds) {
    for (uint8_t kind : {0, 3, 7}) {
        std::vector<uint64_t> w = {kind, 0};
        EXPECT_EQ(decode(w), am_wire_error::bad_type) << int{kind};
        std::vector<uint64_t> e = {uint64_t{kind} | am_ext, 0, 0};
        EXPECT_EQ(decode(e), am_wire_error::bad_type) << int{kind};
    }
    // Without the extension word, strided and vectored are Shoal's forms: these are malformed
    // ones (nothing described, words left over; no pieces).
    EXPECT_EQ(decode({am_kind_strided, 0, 0, 0, 0, 0}), am_wire_error::bad_size);
    EXPECT_EQ(decode({am_kind_vectored, 0, 0}), am_wire_error::bad_size);
}

// ---- Shoal's own strided, vectored and get packets (what a GAScore sends and parses) ----

TEST(AmWireShoal, StridedRoundTripAndLayout) {
    Message m;
    m.p = header(am_kind_strided | am_async, 3, 4, 9, 0x1234);
    m.p.dst_stride = {0x200, 48, 16, 3};
    m.args = {77};
    m.payload = pattern(48);
    m.point();
    m.p.nargs = 1;
    m.p.payload_bytes = 48;
    ASSERT_TRUE(am_shoal_fits(m.p));
    m.len = am_encode_shoal(m.p, m.wire.data());
    ASSERT_EQ(m.len, (3 + 1) * 8 + 48u);
    EXPECT_EQ(m.wire[0], 0x1900300004000325u);  // type 0x25, src 3, dst 4, 48 bytes, handler 9, 1 arg
    EXPECT_EQ(m.wire[1], 0x1234000300100030u);  // token, block count 3, block size 16, stride 48
    EXPECT_EQ(m.wire[2], 0x200u);
    am_packet d;
    Exact buf = m.exact();
    ASSERT_EQ(am_decode(buf.data(), buf.len, d), am_wire_error::ok);
    EXPECT_EQ(d.kind(), am_kind_strided);
    EXPECT_EQ(d.token, 0x1234);
    EXPECT_EQ(d.dst_stride.offset, 0x200u);
    EXPECT_EQ(d.dst_stride.stride, 48u);
    EXPECT_EQ(d.dst_stride.block_size, 16u);
    EXPECT_EQ(d.dst_stride.block_count, 3u);
    EXPECT_EQ(d.args[0], 77u);
    EXPECT_EQ(std::memcmp(d.payload, m.payload.data(), 48), 0);
    // A size that disagrees with the stride word is refused.
    std::vector<uint64_t> w = words_of(m);
    w[0] += uint64_t{8} << 40;
    EXPECT_NE(decode(w), am_wire_error::ok);
}

TEST(AmWireShoal, VectoredRoundTrip) {
    Message m;
    m.p = header(am_kind_vectored, 1, 2, 5, 7);
    m.pieces = {0x100, 5, 0x300, 0, 0x400, 11};
    m.payload = pattern(16);
    m.point();
    m.p.npieces = 3;
    m.p.payload_bytes = 16;
    ASSERT_TRUE(am_shoal_fits(m.p));
    m.len = am_encode_shoal(m.p, m.wire.data());
    EXPECT_EQ(m.wire[1], (uint64_t{7} << 48) | (uint64_t{5} << 20) | (uint64_t{3} << 4));
    am_packet d;
    Exact buf = m.exact();
    ASSERT_EQ(am_decode(buf.data(), buf.len, d), am_wire_error::ok);
    ASSERT_EQ(d.npieces, 3u);
    for (unsigned i = 0; i < 6; ++i) EXPECT_EQ(d.pieces[i], m.pieces[i]) << i;
    EXPECT_EQ(std::memcmp(d.payload, m.payload.data(), 16), 0);
    // Pieces of 4096 bytes or more, or 16 pieces, do not fit Shoal's fields.
    m.pieces[1] = 4096;
    EXPECT_FALSE(am_shoal_fits(m.p));
}

TEST(AmWireShoal, GetsAreLongOrStridedWithReply) {
    Message m;
    m.p = header(am_kind_long, 0, 1, 0, 42);
    m.p.src_offset = 0x80;
    m.p.dst_offset = 0x1000;
    m.p.payload_bytes = 512;
    m.len = am_encode_shoal_get(m.p, m.wire.data());
    ASSERT_EQ(m.len, 32u);
    EXPECT_EQ(m.wire[0] & 0xFF, uint64_t{am_kind_long | am_reply});
    EXPECT_EQ((m.wire[0] >> 40) & 0xFFFF, 512u);
    EXPECT_EQ(m.wire[1], uint64_t{42} << 48);
    EXPECT_EQ(m.wire[2], 0x80u);
    EXPECT_EQ(m.wire[3], 0x1000u);
    Message s;
    s.p = header(am_kind_strided, 0, 1, 0, 43);
    s.p.src_stride = {0x10, 32, 8, 4};
    s.p.dst_stride = {0x20, 8, 8, 4};
    s.p.payload_bytes = 32;
    s.len = am_encode_shoal_get(s.p, s.wire.data());
    ASSERT_EQ(s.len, 40u);
    EXPECT_EQ(s.wire[0] & 0xFF, uint64_t{am_kind_strided | am_reply});
    EXPECT_EQ(s.wire[1], 0x0000000400080020u);  // source stride word: no token
    EXPECT_EQ(s.wire[2], 0x10u);
    EXPECT_EQ(s.wire[3], (uint64_t{43} << 48) | 0x0000000400080008u);
    EXPECT_EQ(s.wire[4], 0x20u);
}

TEST(AmWireReject, BadFlagCombinations) {
    auto ext = [](uint8_t flags, uint64_t bytes = 0) { return uint64_t{flags} << 8 | bytes << 32; };
    // get on Short or Medium; get as a reply; get with a rendezvous; rendezvous Medium or Short.
    EXPECT_EQ(decode({am_kind_short | am_ext, 0, ext(am_ext_get)}), am_wire_error::bad_type);
    EXPECT_EQ(decode({am_kind_medium | am_ext, 0, ext(am_ext_get)}), am_wire_error::bad_type);
    EXPECT_EQ(decode({am_kind_long | am_reply | am_ext, 0, ext(am_ext_get), 0, 0, 0}), am_wire_error::bad_type);
    EXPECT_EQ(decode({am_kind_long | am_ext, 0, ext(am_ext_get | am_ext_rndv), 0, 0, 0}), am_wire_error::bad_type);
    EXPECT_EQ(decode({am_kind_medium | am_ext, 0, ext(am_ext_rndv, 9000)}), am_wire_error::bad_type);
    EXPECT_EQ(decode({am_kind_short | am_ext, 0, ext(am_ext_rndv, 9000)}), am_wire_error::bad_type);
    // Only Short, Long and strided replies exist.
    EXPECT_EQ(decode({am_kind_medium | am_reply, 0}), am_wire_error::bad_type);
    EXPECT_EQ(decode({am_kind_vectored | am_reply | am_ext, 0, 0, 0}), am_wire_error::bad_type);
}

TEST(AmWireReject, ReservedBits) {
    Message s;
    s.p = header(am_kind_short, 0, 1, 5, 0xFFFF);
    s.encode();
    for (int bit = 0; bit < 48; ++bit) {  // word 1 below the token
        std::vector<uint64_t> w = words_of(s);
        w[1] |= uint64_t{1} << bit;
        EXPECT_EQ(decode(w), am_wire_error::bad_reserved) << bit;
    }
    std::vector<uint64_t> t = words_of(s);
    t[0] |= 0x08;  // the unused type bit
    EXPECT_EQ(decode(t), am_wire_error::bad_reserved);

    Message e;
    e.p = header(am_kind_short, 0, 1, 0x35, 0);
    e.encode();
    ASSERT_EQ(e.len, 24u);
    for (int bit = 2; bit < 8; ++bit) {  // unknown extension flags
        std::vector<uint64_t> w = words_of(e);
        w[2] |= uint64_t{1} << (8 + bit);
        EXPECT_EQ(decode(w), am_wire_error::bad_reserved) << bit;
    }
    // With the extension, word 0's size is zero and its handler the low bits of word 2's.
    std::vector<uint64_t> size_set = words_of(e);
    size_set[0] |= uint64_t{1} << 40;
    EXPECT_EQ(decode(size_set), am_wire_error::bad_reserved);
    std::vector<uint64_t> handler_differs = words_of(e);
    handler_differs[0] ^= uint64_t{1} << 56;
    EXPECT_EQ(decode(handler_differs), am_wire_error::bad_reserved);
}

TEST(AmWireReject, SizeMismatches) {
    // Short with a payload size.
    EXPECT_EQ(decode({am_kind_short | uint64_t{1} << 40, 0, 0}), am_wire_error::bad_size);
    // Medium that says 17 bytes and carries two words, or says 8 and carries two.
    Message m;
    m.p = header(am_kind_medium, 0, 1, 5, 0);
    m.payload = pattern(16);
    m.encode();
    std::vector<uint64_t> w = words_of(m);
    w[0] += uint64_t{1} << 40;
    EXPECT_EQ(decode(w), am_wire_error::bad_size);
    w[0] -= uint64_t{9} << 40;
    EXPECT_EQ(decode(w), am_wire_error::bad_size);
    // Extended Medium whose byte count is 9 while one word follows (needs two).
    Message x;
    x.p = header(am_kind_medium, 0, 1, 16, 0);  // handler 16: extended
    x.payload = pattern(7);
    x.encode();
    std::vector<uint64_t> xw = words_of(x);
    ASSERT_EQ(xw.size(), 4u);
    xw[2] += uint64_t{2} << 32;
    EXPECT_EQ(decode(xw), am_wire_error::bad_size);
    // Strided whose size disagrees with its descriptor, or whose descriptor overflows.
    Message s;
    s.p = header(am_kind_strided, 0, 1, 5, 0);
    s.p.dst_stride = {0, 16, 8, 2};
    s.payload = pattern(16);
    s.encode();
    std::vector<uint64_t> sw = words_of(s);
    sw[6] = 3;  // block count: 24 bytes described, 16 carried
    EXPECT_EQ(decode(sw), am_wire_error::bad_size);
    sw[5] = uint64_t{1} << 62;  // block size * 3 wraps
    EXPECT_EQ(decode(sw), am_wire_error::bad_size);
    // Vectored whose piece lengths do not add up, or wrap around to the size.
    Message v;
    v.p = header(am_kind_vectored, 0, 1, 5, 0);
    v.pieces = {0, 8, 64, 8};
    v.payload = pattern(16);
    v.encode();
    std::vector<uint64_t> vw = words_of(v);
    vw[7] = 9;
    EXPECT_EQ(decode(vw), am_wire_error::bad_size);
    vw[5] = u64max - 7;  // (2^64 - 8) + 24 wraps around to the 16 carried
    vw[7] = 24;
    EXPECT_EQ(decode(vw), am_wire_error::bad_size);
    // A get whose descriptor length is not its size field; a get or rendezvous with data inline.
    Message g;
    g.p = header(am_kind_long, 0, 1, 0, 0);
    g.p.ext_flags = am_ext_get;
    g.p.payload_bytes = 64;
    g.encode();
    std::vector<uint64_t> gw = words_of(g);
    gw[4] = 65;
    EXPECT_EQ(decode(gw), am_wire_error::bad_size);
    gw[4] = 64;
    gw.push_back(0);
    EXPECT_EQ(decode(gw), am_wire_error::bad_size);
    Message r;
    r.p = header(am_kind_long, 0, 1, 0, 0);
    r.p.ext_flags = am_ext_rndv;
    r.p.rndv_seq = 1;
    r.p.payload_bytes = 8;
    r.encode();
    std::vector<uint64_t> rw = words_of(r);
    rw.push_back(0);
    EXPECT_EQ(decode(rw), am_wire_error::bad_size);
    // A strided get whose two sides move different amounts.
    Message sg;
    sg.p = header(am_kind_strided, 0, 1, 0, 0);
    sg.p.ext_flags = am_ext_get;
    sg.p.src_stride = {0, 8, 8, 2};
    sg.p.dst_stride = {0, 8, 8, 3};
    sg.p.payload_bytes = 16;
    sg.encode();
    EXPECT_EQ(decode(words_of(sg)), am_wire_error::bad_size);
}

TEST(AmWireReject, TooManyPieces) {
    Message v;
    v.p = header(am_kind_vectored, 0, 1, 5, 0);
    for (unsigned i = 0; i < am_max_vector; ++i) v.pieces.insert(v.pieces.end(), {8 * uint64_t{i}, 0});
    v.encode();
    std::vector<uint64_t> w = words_of(v);
    ASSERT_EQ(decode(w), am_wire_error::ok);
    // A 17th piece, with the words to hold it: still refused.
    w[3] = am_max_vector + 1;
    w.insert(w.end(), {0, 0});
    EXPECT_EQ(decode(w), am_wire_error::too_many_pieces);
    w[3] = u64max;
    EXPECT_EQ(decode(w), am_wire_error::too_many_pieces);
}

TEST(AmWireReject, ErrorsHaveNames) {
    for (auto e : {am_wire_error::ok, am_wire_error::truncated, am_wire_error::bad_type, am_wire_error::too_many_args,
                   am_wire_error::too_many_pieces, am_wire_error::bad_size, am_wire_error::bad_reserved}) {
        ASSERT_NE(am_wire_error_name(e), nullptr);
        EXPECT_GT(std::strlen(am_wire_error_name(e)), 1u);
    }
}

// ---- Segment bounds ----

namespace {
am_packet long_at(uint64_t offset, uint64_t bytes) {
    am_packet p = header(am_kind_long, 0, 1, 0, 0);
    p.dst_offset = offset;
    p.payload_bytes = bytes;
    return p;
}
am_packet strided_at(am_stride_desc s) {
    am_packet p = header(am_kind_strided | am_ext, 0, 1, 0, 0);
    p.dst_stride = s;
    p.payload_bytes = s.block_size * s.block_count;
    return p;
}
}  // namespace

TEST(AmWireBounds, Long) {
    const uint64_t seg = 4096;
    EXPECT_TRUE(am_check_bounds(long_at(0, seg), seg));
    EXPECT_TRUE(am_check_bounds(long_at(seg - 16, 16), seg));
    EXPECT_FALSE(am_check_bounds(long_at(seg - 15, 16), seg));
    EXPECT_FALSE(am_check_bounds(long_at(0, seg + 1), seg));
    EXPECT_TRUE(am_check_bounds(long_at(seg, 0), seg));  // empty, at the end
    EXPECT_FALSE(am_check_bounds(long_at(seg, 8), seg));
    EXPECT_FALSE(am_check_bounds(long_at(seg + 8, 8), seg));
    // offset + size wrapping around to a small number.
    EXPECT_FALSE(am_check_bounds(long_at(u64max - 7, 16), seg));
    EXPECT_FALSE(am_check_bounds(long_at(16, u64max - 7), seg));
    EXPECT_FALSE(am_check_bounds(long_at(u64max, u64max), seg));
    EXPECT_FALSE(am_check_bounds(long_at(0, 8), 0));
    // Short and Medium name no region.
    EXPECT_TRUE(am_check_bounds(header(am_kind_short, 0, 1, 5, 0), 0));
    am_packet m = header(am_kind_medium, 0, 1, 5, 0);
    m.payload_bytes = 64;
    EXPECT_TRUE(am_check_bounds(m, 0));
}

TEST(AmWireBounds, StrideExtent) {
    uint64_t e = 1;
    ASSERT_TRUE(am_stride_extent({0, 64, 16, 1}, e));
    EXPECT_EQ(e, 16u);
    ASSERT_TRUE(am_stride_extent({999, 64, 16, 3}, e));  // the offset is not part of the extent
    EXPECT_EQ(e, 2 * 64 + 16u);
    ASSERT_TRUE(am_stride_extent({0, 4, 16, 4}, e));  // overlapping blocks: stride < block size
    EXPECT_EQ(e, 3 * 4 + 16u);
    ASSERT_TRUE(am_stride_extent({0, 0, 16, 1000}, e));
    EXPECT_EQ(e, 16u);
    // No blocks (or empty ones) span nothing, whatever the stride: (count - 1) must not wrap.
    ASSERT_TRUE(am_stride_extent({0, u64max, 16, 0}, e));
    EXPECT_EQ(e, 0u);
    ASSERT_TRUE(am_stride_extent({0, u64max, 0, 5}, e));
    EXPECT_EQ(e, 0u);
    EXPECT_FALSE(am_stride_extent({0, uint64_t{1} << 63, 1, 3}, e));  // (3 - 1) * 2^63 wraps to 0
    EXPECT_FALSE(am_stride_extent({0, u64max / 2, 2, 3}, e));         // 2 * (2^63 - 1) + 2 wraps
    ASSERT_TRUE(am_stride_extent({0, u64max / 2, 1, 3}, e));          // ... + 1 is the largest extent
    EXPECT_EQ(e, u64max);
    EXPECT_FALSE(am_stride_extent({0, 8, u64max, 2}, e));  // 8 + block size wraps
    EXPECT_TRUE(am_stride_extent({0, 0, u64max, 1}, e));
    EXPECT_EQ(e, u64max);
}

TEST(AmWireBounds, Strided) {
    const uint64_t seg = 4096;
    EXPECT_TRUE(am_check_bounds(strided_at({0, 64, 16, 64}), seg));   // ends at 4048
    EXPECT_TRUE(am_check_bounds(strided_at({48, 64, 16, 64}), seg));  // ends at 4096
    EXPECT_FALSE(am_check_bounds(strided_at({49, 64, 16, 64}), seg));
    EXPECT_FALSE(am_check_bounds(strided_at({0, 64, 16, 65}), seg));
    // Overlapping blocks are refused wherever they lie: the payload would exceed the region.
    EXPECT_FALSE(am_check_bounds(strided_at({0, 4, 16, 4}), seg));
    EXPECT_FALSE(am_check_bounds(strided_at({seg - 16, 0, 16, 100}), seg));
    // Blocks that touch are fine; one block needs no stride.
    EXPECT_TRUE(am_check_bounds(strided_at({seg - 64, 16, 16, 4}), seg));
    EXPECT_FALSE(am_check_bounds(strided_at({seg - 63, 16, 16, 4}), seg));
    EXPECT_TRUE(am_check_bounds(strided_at({seg - 16, 0, 16, 1}), seg));
    // No blocks: nothing is written, the offset still has to be inside.
    EXPECT_TRUE(am_check_bounds(strided_at({0, u64max, 16, 0}), seg));
    EXPECT_TRUE(am_check_bounds(strided_at({seg, 64, 16, 0}), seg));
    // Wrapping: the stride product, the end, the offset.
    EXPECT_FALSE(am_check_bounds(strided_at({0, uint64_t{1} << 63, 1, 3}), seg));
    EXPECT_FALSE(am_check_bounds(strided_at({0, u64max / 2, 8, 3}), seg));
    EXPECT_FALSE(am_check_bounds(strided_at({u64max - 15, 16, 16, 2}), seg));
    EXPECT_FALSE(am_check_bounds(strided_at({16, 16, u64max - 7, 1}), seg));
}

TEST(AmWireBounds, Vectored) {
    const uint64_t seg = 4096;
    auto vec = [](std::vector<uint64_t> &pieces) {
        am_packet p = header(am_kind_vectored | am_ext, 0, 1, 0, 0);
        p.npieces = static_cast<unsigned>(pieces.size() / 2);
        p.pieces = pieces.data();
        for (size_t i = 1; i < pieces.size(); i += 2) p.payload_bytes += pieces[i];
        return p;
    };
    std::vector<uint64_t> ok = {0, 8, seg - 8, 8, seg, 0};
    EXPECT_TRUE(am_check_bounds(vec(ok), seg));
    std::vector<uint64_t> none;
    EXPECT_TRUE(am_check_bounds(vec(none), seg));
    std::vector<uint64_t> last_out = {0, 8, 8, 8, seg - 7, 8};
    EXPECT_FALSE(am_check_bounds(vec(last_out), seg));
    std::vector<uint64_t> first_out = {seg + 1, 0, 0, 8};
    EXPECT_FALSE(am_check_bounds(vec(first_out), seg));
    std::vector<uint64_t> wraps = {0, 8, u64max - 3, 8};
    EXPECT_FALSE(am_check_bounds(vec(wraps), seg));
    std::vector<uint64_t> huge = {8, u64max};
    EXPECT_FALSE(am_check_bounds(vec(huge), seg));
}

TEST(AmWireBounds, GetsCheckTheirSource) {
    const uint64_t seg = 4096;
    // The target checks what it reads; the requester's destination is checked when the data
    // comes back (as a REPLY Long, a destination like any other).
    am_packet g = header(am_kind_long | am_ext, 1, 0, 0, 0);
    g.ext_flags = am_ext_get;
    g.src_offset = seg - 64;
    g.payload_bytes = 64;
    g.dst_offset = u64max;
    EXPECT_TRUE(am_check_bounds(g, seg));
    g.src_offset = seg - 63;
    EXPECT_FALSE(am_check_bounds(g, seg));
    g.src_offset = u64max - 31;
    EXPECT_FALSE(am_check_bounds(g, seg));
    g.src_offset = 64;
    g.payload_bytes = u64max - 31;
    EXPECT_FALSE(am_check_bounds(g, seg));

    am_packet s = header(am_kind_strided | am_ext, 1, 0, 0, 0);
    s.ext_flags = am_ext_get;
    s.src_stride = {seg - 64, 16, 16, 4};
    s.dst_stride = {u64max, 16, 16, 4};
    s.payload_bytes = 64;
    EXPECT_TRUE(am_check_bounds(s, seg));
    s.src_stride.offset = seg - 63;
    EXPECT_FALSE(am_check_bounds(s, seg));
    s.src_stride = {0, uint64_t{1} << 63, 16, 3};
    EXPECT_FALSE(am_check_bounds(s, seg));

    am_packet data = long_at(u64max - 7, 16);
    data.type |= am_reply;
    EXPECT_FALSE(am_check_bounds(data, seg));
}

// ---- Randomized: arbitrary bytes never crash the decoder, accepted packets are sane ----

namespace {

struct Rng {
    std::mt19937_64 g;
    explicit Rng(uint64_t seed) : g(seed) {}
    uint64_t operator()() { return g(); }
    uint64_t below(uint64_t n) { return n == 0 ? 0 : g() % n; }
    bool chance(unsigned percent) { return below(100) < percent; }
    // Mostly small numbers, sometimes edge values: where bounds arithmetic breaks.
    uint64_t size_like() {
        switch (below(6)) {
            case 0: return below(64);
            case 1: return below(8192);
            case 2: return u64max - below(64);
            case 3: return uint64_t{1} << below(64);
            case 4: return g();
            default: return below(5000);
        }
    }
};

// A valid packet of a random kind.
Message random_message(Rng &r) {
    Message m;
    static const uint8_t kinds[] = {am_kind_short, am_kind_medium, am_kind_long, am_kind_strided, am_kind_vectored};
    uint8_t kind = kinds[r.below(5)];
    m.p = header(kind, static_cast<uint32_t>(r.below(0x10000)), static_cast<uint32_t>(r.below(0x10000)),
                 static_cast<unsigned>(r.below(256)), static_cast<uint16_t>(r()));
    if (r.chance(30)) m.p.type |= am_async;
    if (kind == am_kind_medium || kind == am_kind_long) {
        if (r.chance(50)) m.p.type |= am_fifo;
    }
    m.args.resize(r.below(am_max_args + 1));
    for (auto &a : m.args) a = r();
    bool get = (kind == am_kind_long || kind == am_kind_strided) && r.chance(25);
    bool reply = !get && kind != am_kind_medium && kind != am_kind_vectored && r.chance(20);
    if (reply) m.p.type |= am_reply;
    uint64_t bytes = 0;
    switch (kind) {
        case am_kind_short: break;
        case am_kind_medium: bytes = r.below(am_max_inline + 1); break;
        case am_kind_long:
            m.p.dst_offset = r.size_like();
            bytes = r.below(am_max_inline + 1);
            if (get) m.p.src_offset = r.size_like();
            break;
        case am_kind_strided: {
            uint64_t bs = 1 + r.below(64), count = r.below(64);
            m.p.dst_stride = {r.size_like(), r.size_like(), bs, count};
            bytes = bs * count;
            if (get) {
                // Another shape of the same number of bytes.
                m.p.src_stride = {r.size_like(), r.size_like(), bytes, uint64_t{bytes == 0 ? 0u : 1u}};
            }
            break;
        }
        case am_kind_vectored: {
            unsigned n = static_cast<unsigned>(r.below(am_max_vector + 1));
            for (unsigned i = 0; i < n; ++i) {
                uint64_t len = r.below(300);
                m.pieces.insert(m.pieces.end(), {r.size_like(), len});
                bytes += len;
            }
            break;
        }
    }
    if (get) {
        m.p.ext_flags = am_ext_get;
        m.p.payload_bytes = kind == am_kind_long ? r.below(1u << 30) : bytes;
    } else if (kind != am_kind_short && kind != am_kind_medium && r.chance(15)) {
        m.p.ext_flags = am_ext_rndv;  // the payload follows separately: any 32-bit size
        m.p.rndv_seq = static_cast<uint16_t>(r());
        m.p.payload_bytes = kind == am_kind_long ? am_max_inline + 1 + r.below(1u << 30) : bytes;
    } else {
        m.payload.resize(bytes);
        for (auto &b : m.payload) b = static_cast<unsigned char>(r());
        m.p.payload_bytes = bytes;
    }
    m.encode();
    return m;
}

// What a valid packet must satisfy, whatever bytes it came from.
void check_invariants(const Exact &buf, const am_packet &p) {
    uint8_t k = p.kind();
    ASSERT_TRUE(k == am_kind_short || k == am_kind_medium || k == am_kind_long || k == am_kind_strided ||
                k == am_kind_vectored);
    ASSERT_LE(p.nargs, am_max_args);
    ASSERT_LE(p.npieces, am_max_vector);
    ASSERT_LT(p.handler, 256u);
    if (p.nargs != 0) {
        ASSERT_TRUE(buf.contains(p.args, 8 * uint64_t{p.nargs}));
    }
    if (p.npieces != 0) {
        ASSERT_TRUE(buf.contains(p.pieces, 16 * uint64_t{p.npieces}));
    }
    bool inline_data = k != am_kind_short && !p.is_get() && !(p.ext_flags & am_ext_rndv);
    if (inline_data && p.payload_bytes != 0) {
        ASSERT_NE(p.payload, nullptr);
    }
    if (p.payload != nullptr) {
        ASSERT_TRUE(buf.contains(p.payload, p.payload_bytes));
    }
    if (k == am_kind_short) {
        ASSERT_EQ(p.payload_bytes, 0u);
    }
    // Sizes agree with the descriptors.
    if (k == am_kind_vectored) {
        uint64_t sum = 0;
        for (unsigned i = 0; i < p.npieces; ++i) sum += p.pieces[2 * i + 1];
        ASSERT_EQ(sum, p.payload_bytes);
    }
    if (k == am_kind_strided && !p.is_get()) {
        ASSERT_EQ(p.dst_stride.block_size * p.dst_stride.block_count, p.payload_bytes);
    }
}

bool inside(uint64_t offset, uint64_t len, uint64_t seg) { return offset <= seg && len <= seg - offset; }

// Independent of am_check_bounds: every byte the packet makes the receiver touch is inside.
bool touches_only_segment(const am_packet &p, uint64_t seg) {
    auto stride_inside = [&](const am_stride_desc &s) {
        if (s.block_count == 0 || s.block_size == 0) return true;
        for (uint64_t b : {uint64_t{0}, s.block_count - 1}) {  // the first and last block bound the rest
            unsigned __int128 start = static_cast<unsigned __int128>(b) * s.stride + s.offset;
            if (start + s.block_size > seg) return false;
        }
        return true;
    };
    if (p.is_get()) {
        if (p.kind() == am_kind_strided) return stride_inside(p.src_stride);
        return p.payload_bytes == 0 || inside(p.src_offset, p.payload_bytes, seg);
    }
    switch (p.kind()) {
        case am_kind_long: return p.payload_bytes == 0 || inside(p.dst_offset, p.payload_bytes, seg);
        case am_kind_strided: return stride_inside(p.dst_stride);
        case am_kind_vectored:
            for (unsigned i = 0; i < p.npieces; ++i)
                if (p.pieces[2 * i + 1] != 0 && !inside(p.pieces[2 * i], p.pieces[2 * i + 1], seg)) return false;
            return true;
        default: return true;
    }
}

void check_candidate(const void *bytes, size_t len, uint64_t &accepted) {
    Exact buf(bytes, len);
    am_packet p;
    if (am_decode(buf.data(), buf.len, p) != am_wire_error::ok) return;
    ++accepted;
    check_invariants(buf, p);
    for (uint64_t seg : {uint64_t{0}, uint64_t{64}, uint64_t{4096}, uint64_t{1} << 40})
        if (am_check_bounds(p, seg)) {
            ASSERT_TRUE(touches_only_segment(p, seg)) << "segment " << seg;
        }
}

}  // namespace

TEST(AmWireRandom, EncodedPacketsRoundTrip) {
    Rng r(0x5eed);
    for (int i = 0; i < 5000; ++i) {
        Message m = random_message(r);
        ASSERT_NO_FATAL_FAILURE(expect_round_trip(m)) << "sample " << i;
        if (::testing::Test::HasFailure()) break;
    }
}

TEST(AmWireRandom, BitFlipsAndGarbageNeverCrash) {
    Rng r(0xbadc0de);
    uint64_t accepted = 0;
    std::vector<uint64_t> w(am_max_packet / 8 + 2);
    for (int i = 0; i < 100000 && !::testing::Test::HasFatalFailure(); ++i) {
        size_t len;
        if (i % 4 == 0) {
            // Garbage, with a plausible type byte half the time so decoding gets past it.
            len = r.below(8 * 60);
            for (auto &x : w) x = r();
            if (r.chance(50)) w[0] = (w[0] & ~uint64_t{0xFF}) | (r.chance(50) ? 0x80 : 0) | (1 + r.below(6));
            if (r.chance(50)) w[1] &= uint64_t{0xFFFF} << 48;
        } else {
            // A valid packet with a few bits flipped, and sometimes cut or lengthened.
            Message m = random_message(r);
            len = m.len;
            std::copy(m.wire.begin(), m.wire.begin() + (len + 7) / 8, w.begin());
            for (unsigned flips = static_cast<unsigned>(r.below(4)); flips > 0; --flips) {
                size_t bit = r.below(std::min<size_t>(len * 8, 8 * 8 * 40));
                w[bit / 64] ^= uint64_t{1} << (bit % 64);
            }
            if (r.chance(10)) len -= std::min<size_t>(len, r.below(24));
            if (r.chance(5)) len = std::min(len + 8, w.size() * 8);
        }
        check_candidate(w.data(), len, accepted);
    }
    // The flipped packets include many still valid ones (payload bits): the checks above ran.
    EXPECT_GT(accepted, 1000u);
}
