// Fuzz target: core/pgas/am_wire.cpp, the active-message packet validator every receiver runs on
// bytes from the network (am_decode, am_check_bounds) and the encoders (am_encode,
// am_encode_shoal, am_shoal_fits, am_needs_ext, am_stride_extent).
//
// The input is used twice:
//  1. as a received packet (copied to a buffer of exactly its length, so that ASan sees any read
//     past it).  When am_decode accepts it: every pointer it returns (args, pieces, payload) lies
//     inside the packet; counts are within limits; the descriptors account for payload_bytes;
//     am_check_bounds agrees with an independent 128-bit computation of each region's end for a
//     few segment sizes; am_encode of the decoded fields decodes back to the same fields, and so
//     does am_encode_shoal for a Shoal-form packet (which am_shoal_fits must accept);
//  2. as the fields of a packet to send: one that follows the rules of am_wire.hpp is encoded
//     (am_encode, and the Shoal encoders when am_shoal_fits) and must decode to the same fields.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "pgas/am_wire.hpp"
#include "fuzz_common.hpp"

using namespace weft;

namespace {

// A buffer of exactly len bytes (operator new[] aligns to 16).
struct exact {
    std::unique_ptr<uint8_t[]> bytes;
    size_t len;
    exact(const void *src, size_t n) : bytes(new uint8_t[n ? n : 1]), len(n) {
        if (n) std::memcpy(bytes.get(), src, n);
    }
    bool contains(const void *p, unsigned __int128 n) const {
        auto b = reinterpret_cast<uintptr_t>(bytes.get()), q = reinterpret_cast<uintptr_t>(p);
        return q >= b && q - b <= len && n <= len - (q - b);
    }
};

using u128 = unsigned __int128;

bool region_fits(uint64_t offset, uint64_t length, uint64_t seg) { return u128{offset} + length <= seg; }

bool stride_region_fits(const am_stride_desc &s, uint64_t seg) {
    if (s.block_count == 0 || s.block_size == 0) return s.offset <= seg;
    if (s.block_count > 1 && s.stride < s.block_size) return false;
    u128 end = u128{s.offset} + u128{s.block_count - 1} * s.stride + s.block_size;
    return end <= seg;
}

// am_check_bounds's contract, computed without overflow.
bool expected_bounds(const am_packet &p, uint64_t seg) {
    if (p.is_get()) {
        if (p.kind() == am_kind_strided) return stride_region_fits(p.src_stride, seg);
        return region_fits(p.src_offset, p.payload_bytes, seg);
    }
    switch (p.kind()) {
        case am_kind_long: return region_fits(p.dst_offset, p.payload_bytes, seg);
        case am_kind_strided: {
            // Overflowing extents are refused even where the segment is huge.
            u128 span = u128{p.dst_stride.block_count ? p.dst_stride.block_count - 1 : 0} * p.dst_stride.stride +
                p.dst_stride.block_size;
            if (p.dst_stride.block_count != 0 && p.dst_stride.block_size != 0 && span > UINT64_MAX) return false;
            return stride_region_fits(p.dst_stride, seg);
        }
        case am_kind_vectored:
            for (unsigned i = 0; i < p.npieces; ++i)
                if (!region_fits(p.pieces[2 * i], p.pieces[2 * i + 1], seg)) return false;
            return true;
        default: return true;
    }
}

bool same_stride(const am_stride_desc &a, const am_stride_desc &b) {
    return a.offset == b.offset && a.stride == b.stride && a.block_size == b.block_size &&
        a.block_count == b.block_count;
}

// Fields of two packets agree (the am_ext bit aside: the encoder sets it as needed).  with_seq:
// compare the rendezvous sequence too (it travels only in the extension word).
void check_same(const am_packet &a, const am_packet &b, bool with_seq) {
    FUZZ_CHECK((a.type & ~am_ext) == (b.type & ~am_ext));
    FUZZ_CHECK(a.src == b.src && a.dst == b.dst && a.token == b.token);
    FUZZ_CHECK(a.handler == b.handler && a.nargs == b.nargs && a.ext_flags == b.ext_flags);
    if (with_seq) FUZZ_CHECK(a.rndv_seq == b.rndv_seq);
    FUZZ_CHECK(a.payload_bytes == b.payload_bytes);
    FUZZ_CHECK(a.npieces == b.npieces);
    if (a.is_get() || a.kind() == am_kind_long) FUZZ_CHECK(a.dst_offset == b.dst_offset);
    if (a.is_get() && a.kind() == am_kind_long) FUZZ_CHECK(a.src_offset == b.src_offset);
    if (a.kind() == am_kind_strided) FUZZ_CHECK(same_stride(a.dst_stride, b.dst_stride));
    if (a.is_get() && a.kind() == am_kind_strided) FUZZ_CHECK(same_stride(a.src_stride, b.src_stride));
    for (unsigned i = 0; i < 2 * a.npieces; ++i) FUZZ_CHECK(a.pieces[i] == b.pieces[i]);
    for (unsigned i = 0; i < a.nargs; ++i) FUZZ_CHECK(a.args[i] == b.args[i]);
    FUZZ_CHECK((a.payload == nullptr) == (b.payload == nullptr) || a.payload_bytes == 0);
    if (a.payload && b.payload && a.payload_bytes) FUZZ_CHECK(std::memcmp(a.payload, b.payload, a.payload_bytes) == 0);
}

// Encodes p with `encode` into a fresh buffer and decodes it back: must give p's fields.
template <class Encode>
void round_trip(const am_packet &p, Encode encode, size_t payload_room, bool with_seq) {
    std::vector<uint64_t> out((am_max_packet + payload_room) / 8 + 8, 0xdededededededeull);
    am_packet q = p;
    size_t len = encode(q, out.data());
    FUZZ_CHECK(len % 8 == 0 && len <= out.size() * 8);
    exact wire(out.data(), len);
    am_packet d;
    am_wire_error e = am_decode(wire.bytes.get(), wire.len, d);
    if (e != am_wire_error::ok) {
        std::fprintf(stderr, "re-encoded packet refused: %s (type 0x%x)\n", am_wire_error_name(e), q.type);
        FUZZ_CHECK(e == am_wire_error::ok);
    }
    check_same(p, d, with_seq && (q.type & am_ext));
    if (d.nargs) FUZZ_CHECK(wire.contains(d.args, 8 * u128{d.nargs}));
    if (d.payload) FUZZ_CHECK(wire.contains(d.payload, d.payload_bytes));
}

bool payload_inline(const am_packet &p) {
    return !p.is_get() && !(p.ext_flags & am_ext_rndv) && p.kind() != am_kind_short;
}

void check_received(const uint8_t *data, size_t size) {
    exact buf(data, size);
    am_packet p;
    if (am_decode(buf.bytes.get(), buf.len, p) != am_wire_error::ok) return;
    uint8_t k = p.kind();
    FUZZ_CHECK(k == am_kind_short || k == am_kind_medium || k == am_kind_long || k == am_kind_strided ||
               k == am_kind_vectored);
    FUZZ_CHECK(p.nargs <= am_max_args && p.npieces <= am_max_vector);
    FUZZ_CHECK(p.src <= 0xFFFF && p.dst <= 0xFFFF && p.handler <= 0xFF);
    FUZZ_CHECK(size >= 16 && size % 8 == 0);
    if (p.nargs) FUZZ_CHECK(buf.contains(p.args, 8 * u128{p.nargs}));
    bool shoal_pieces = p.pieces == p.shoal_pieces;
    if (p.npieces && !shoal_pieces) FUZZ_CHECK(buf.contains(p.pieces, 16 * u128{p.npieces}));
    if (payload_inline(p)) {
        FUZZ_CHECK(p.payload != nullptr && buf.contains(p.payload, p.payload_bytes));
        // Padded to a word, no more.
        auto end = reinterpret_cast<uintptr_t>(buf.bytes.get()) + size;
        FUZZ_CHECK(end - reinterpret_cast<uintptr_t>(p.payload) - p.payload_bytes < 8);
    } else {
        FUZZ_CHECK(p.payload == nullptr);
    }
    if (p.is_get()) FUZZ_CHECK((k == am_kind_long || k == am_kind_strided) && !(p.ext_flags & am_ext_rndv));
    if (k == am_kind_short && !p.is_get()) FUZZ_CHECK(p.payload_bytes == 0);
    // The descriptors account for the payload.
    if (!p.is_get() && k == am_kind_strided)
        FUZZ_CHECK(u128{p.dst_stride.block_size} * p.dst_stride.block_count == p.payload_bytes);
    if (!p.is_get() && k == am_kind_vectored) {
        u128 sum = 0;
        for (unsigned i = 0; i < p.npieces; ++i) sum += p.pieces[2 * i + 1];
        FUZZ_CHECK(sum == p.payload_bytes);
    }
    for (uint64_t seg : {uint64_t{0}, uint64_t{1} << 12, uint64_t{1} << 40, UINT64_MAX})
        FUZZ_CHECK(am_check_bounds(p, seg) == expected_bounds(p, seg));
    uint64_t ext;
    am_stride_extent(p.dst_stride, ext);

    // Encode what was decoded: the same fields come back.
    size_t room = payload_inline(p) ? p.payload_bytes : 0;
    round_trip(
        p, [](am_packet &q, void *out) { return am_encode(q, out); }, room, true);
    if (!(p.type & am_ext) && (k == am_kind_strided || k == am_kind_vectored)) {
        // Shoal's own form: Shoal's encoder must be able to carry it, and give it back.
        FUZZ_CHECK(am_shoal_fits(p));
        round_trip(
            p, [](am_packet &q, void *out) { return am_encode_shoal(q, out); }, room, false);
    }
}

// A packet to send, from the input's bytes; false when it breaks am_wire.hpp's rules (those
// the sender's am_send.cpp enforces before encoding).
struct to_send {
    am_packet p;
    uint64_t args[am_max_args];
    uint64_t pieces[2 * am_max_vector];
    std::vector<uint8_t> payload;
};

bool make_packet(fuzz::input &in, to_send &m) {
    static const uint8_t kinds[] = {am_kind_short, am_kind_medium, am_kind_long, am_kind_strided, am_kind_vectored};
    am_packet &p = m.p;
    p = am_packet{};
    uint8_t t = in.u8();
    p.type = static_cast<uint8_t>(kinds[t % 5] | (t & (am_fifo | am_async | am_reply)));
    p.src = in.u16();
    p.dst = in.u16();
    p.token = in.u16();
    p.handler = in.u8();
    p.nargs = in.u8() % (am_max_args + 1);
    p.ext_flags = in.u8() & (am_ext_get | am_ext_rndv);
    p.rndv_seq = in.u16();
    uint8_t k = p.kind();
    bool get = p.is_get(), rndv = (p.ext_flags & am_ext_rndv) != 0;
    if (get && ((k != am_kind_long && k != am_kind_strided) || rndv || (p.type & am_reply))) return false;
    if (rndv && k != am_kind_long && k != am_kind_strided && k != am_kind_vectored) return false;
    if ((p.type & am_reply) && k != am_kind_short && k != am_kind_long && k != am_kind_strided) return false;
    // Sizes: inline payloads at most am_max_inline, the 32-bit size field otherwise.
    uint64_t max = (get || rndv) ? UINT32_MAX : am_max_inline;
    auto small = [&](uint64_t cap) { return cap == 0 ? 0 : in.u32() % (cap + 1); };
    auto stride = [&](am_stride_desc &s, uint64_t total_cap) {
        s.offset = in.u64();
        s.stride = in.u64();
        s.block_size = small(total_cap < 4096 ? total_cap : 4096);
        s.block_count = s.block_size ? small(total_cap / s.block_size) : small(64);
    };
    if (get) {
        if (k == am_kind_strided) {
            stride(p.src_stride, max);
            p.dst_stride = p.src_stride;
            p.dst_stride.offset = in.u64();
            p.dst_stride.stride = in.u64();
            p.payload_bytes = p.src_stride.block_size * p.src_stride.block_count;
        } else {
            p.src_offset = in.u64();
            p.dst_offset = in.u64();
            p.payload_bytes = small(max);
        }
    } else if (k == am_kind_long) {
        p.dst_offset = in.u64();
        p.payload_bytes = small(max);
    } else if (k == am_kind_medium) {
        p.payload_bytes = small(max);
    } else if (k == am_kind_strided) {
        stride(p.dst_stride, max);
        p.payload_bytes = p.dst_stride.block_size * p.dst_stride.block_count;
    } else if (k == am_kind_vectored) {
        p.npieces = in.u8() % (am_max_vector + 1);
        uint64_t total = 0;
        for (unsigned i = 0; i < p.npieces; ++i) {
            m.pieces[2 * i] = in.u64();
            m.pieces[2 * i + 1] = small((max - total) < 4096 ? max - total : 4096);
            total += m.pieces[2 * i + 1];
        }
        p.pieces = m.pieces;
        p.payload_bytes = total;
    }
    for (unsigned i = 0; i < p.nargs; ++i) m.args[i] = in.u64();
    p.args = m.args;
    if (payload_inline(p)) {
        m.payload.resize(p.payload_bytes);
        for (auto &b : m.payload) b = in.u8();
        p.payload = m.payload.data();
    }
    return true;
}

void check_sent(fuzz::input &in) {
    to_send m;
    if (!make_packet(in, m)) return;
    const am_packet &p = m.p;
    size_t room = payload_inline(p) ? p.payload_bytes : 0;
    round_trip(
        p,
        [](am_packet &q, void *out) {
            size_t len = am_encode(q, out);
            FUZZ_CHECK(((q.type & am_ext) != 0) == am_needs_ext(q));
            return len;
        },
        room, true);
    uint8_t k = p.kind();
    if (am_shoal_fits(p) && !p.is_get() && (k == am_kind_strided || k == am_kind_vectored) && !(p.type & am_reply))
        round_trip(
            p, [](am_packet &q, void *out) { return am_encode_shoal(q, out); }, room, false);
    if (am_shoal_fits(p) && p.is_get()) {
        // Shoal's get form is for hardware targets; Weft's decoder does not serve it, but must
        // refuse or accept it without reading past it.
        std::vector<uint64_t> out(am_max_packet / 8);
        size_t len = am_encode_shoal_get(p, out.data());
        exact wire(out.data(), len);
        am_packet d;
        (void)am_decode(wire.bytes.get(), wire.len, d);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check_received(data, size);
    fuzz::input in(data, size);
    check_sent(in);
    return 0;
}
