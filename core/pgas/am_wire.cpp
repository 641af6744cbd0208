// Encoding and validation of active-message packets (layout: am_wire.hpp, docs/pgas-wire.md).
#include "pgas/am_wire.hpp"

#include <cstring>

namespace weft {

namespace {

constexpr uint64_t bits(uint64_t v, int lo, int width) { return (v >> lo) & ((uint64_t{1} << width) - 1); }

size_t descriptor_words(const am_packet &p) {
    if (p.is_get()) return p.kind() == am_kind_strided ? 8 : 3;
    switch (p.kind()) {
        case am_kind_long: return 1;
        case am_kind_strided: return 4;
        case am_kind_vectored: return 1 + 2 * size_t{p.npieces};
        default: return 0;
    }
}

bool carries_payload(const am_packet &p) {
    return !p.is_get() && (p.ext_flags & am_ext_rndv) == 0 && p.kind() != am_kind_short;
}

// Bytes a region of `length` at `offset` needs inside a segment.
bool fits(uint64_t offset, uint64_t length, uint64_t seg_size) {
    return offset <= seg_size && length <= seg_size - offset;
}

// Blocks may not overlap: a payload then never exceeds the region it lands in, so a packet
// cannot make the receiver stage more than its segment holds.
bool stride_fits(const am_stride_desc &s, uint64_t seg_size) {
    uint64_t extent;
    if (s.block_count > 1 && s.stride < s.block_size) return false;
    return am_stride_extent(s, extent) && fits(s.offset, extent, seg_size);
}

bool stride_total(const am_stride_desc &s, uint64_t &total) {
    return !__builtin_mul_overflow(s.block_size, s.block_count, &total);
}

}  // namespace

const char *am_wire_error_name(am_wire_error e) {
    switch (e) {
        case am_wire_error::ok: return "valid";
        case am_wire_error::truncated: return "shorter than its header says";
        case am_wire_error::bad_type: return "unknown message type";
        case am_wire_error::too_many_args: return "more than 15 arguments";
        case am_wire_error::too_many_pieces: return "more than 16 vector pieces";
        case am_wire_error::bad_size: return "payload size disagrees with the packet";
        case am_wire_error::bad_reserved: return "reserved bits set";
    }
    return "?";
}

bool am_stride_extent(const am_stride_desc &s, uint64_t &extent) {
    if (s.block_count == 0 || s.block_size == 0) {
        extent = 0;
        return true;
    }
    uint64_t span;
    if (__builtin_mul_overflow(s.block_count - 1, s.stride, &span)) return false;
    return !__builtin_add_overflow(span, s.block_size, &extent);
}

bool am_needs_ext(const am_packet &p) {
    uint8_t k = p.kind();
    if (k != am_kind_short && k != am_kind_medium && k != am_kind_long) return true;
    if (p.ext_flags != 0 || p.handler >= 16) return true;
    // A GAScore takes every Short REPLY for an automatic one; a handler's reply (0x61) would be
    // miscounted there.
    if ((p.type & am_reply) && (p.type & am_async)) return true;
    if (k == am_kind_short) return p.payload_bytes != 0;
    return p.payload_bytes > 0xFFFF;  // Shoal's size field: 16 bits of bytes
}

size_t am_encode(am_packet &p, void *out) {
    bool ext = am_needs_ext(p);
    p.type = static_cast<uint8_t>(ext ? (p.type | am_ext) : (p.type & ~am_ext));
    auto *w = static_cast<uint64_t *>(out);
    uint64_t size = ext ? 0 : p.payload_bytes;
    w[0] = uint64_t{p.type} | (uint64_t{p.src & 0xFFFF} << 8) | (uint64_t{p.dst & 0xFFFF} << 24) |
        ((size & 0xFFFF) << 40) | (uint64_t{p.handler & 0xF} << 56) | (uint64_t{p.nargs & 0xF} << 60);
    w[1] = uint64_t{p.token} << 48;
    size_t n = 2;
    if (ext)
        w[n++] = uint64_t{p.handler & 0xFF} | (uint64_t{p.ext_flags} << 8) | (uint64_t{p.rndv_seq} << 16) |
            ((p.payload_bytes & 0xFFFFFFFF) << 32);
    auto put_stride = [&](const am_stride_desc &s) {
        w[n++] = s.offset;
        w[n++] = s.stride;
        w[n++] = s.block_size;
        w[n++] = s.block_count;
    };
    if (p.is_get()) {
        if (p.kind() == am_kind_strided) {
            put_stride(p.src_stride);
            put_stride(p.dst_stride);
        } else {
            w[n++] = p.src_offset;
            w[n++] = p.payload_bytes;
            w[n++] = p.dst_offset;
        }
    } else if (p.kind() == am_kind_long) {
        w[n++] = p.dst_offset;
    } else if (p.kind() == am_kind_strided) {
        put_stride(p.dst_stride);
    } else if (p.kind() == am_kind_vectored) {
        w[n++] = p.npieces;
        for (unsigned i = 0; i < 2 * p.npieces; ++i) w[n++] = p.pieces[i];
    }
    for (unsigned i = 0; i < p.nargs; ++i) w[n++] = p.args[i];
    size_t len = n * 8;
    if (carries_payload(p) && p.payload_bytes != 0) {
        size_t padded = (p.payload_bytes + 7) & ~size_t{7};
        w[(len + padded) / 8 - 1] = 0;  // the padding must not carry an earlier packet's bytes
        // Without a payload pointer the caller packs the payload into its place itself.
        if (p.payload != nullptr) std::memcpy(reinterpret_cast<char *>(out) + len, p.payload, p.payload_bytes);
        len += padded;
    }
    return len;
}

namespace {

uint64_t shoal_word0(const am_packet &p, uint8_t type) {
    return uint64_t{type} | (uint64_t{p.src & 0xFFFF} << 8) | (uint64_t{p.dst & 0xFFFF} << 24) |
        ((p.payload_bytes & 0xFFFF) << 40) | (uint64_t{p.handler & 0xF} << 56) | (uint64_t{p.nargs & 0xF} << 60);
}

uint64_t shoal_stride_word(const am_stride_desc &s) {
    return (s.stride & 0xFFFF) | ((s.block_size & 0xFFFF) << 16) | ((s.block_count & 0xFFFF) << 32);
}

bool shoal_stride_fits(const am_stride_desc &s) {
    return s.stride <= 0xFFFF && s.block_size <= 0xFFFF && s.block_count <= 0xFFFF;
}

}  // namespace

bool am_shoal_fits(const am_packet &p) {
    if (p.handler >= 16 || p.payload_bytes > 0xFFFF || (p.ext_flags & am_ext_rndv)) return false;
    switch (p.kind()) {
        case am_kind_strided:
            return shoal_stride_fits(p.dst_stride) && (!p.is_get() || shoal_stride_fits(p.src_stride));
        case am_kind_vectored:
            if (p.is_get() || p.npieces == 0 || p.npieces > 15) return false;
            for (unsigned i = 0; i < p.npieces; ++i)
                if (p.pieces[2 * i + 1] > 0xFFF) return false;
            return true;
        case am_kind_long: return true;
        default: return !p.is_get();
    }
}

size_t am_encode_shoal_get(const am_packet &p, void *out) {
    auto *w = static_cast<uint64_t *>(out);
    size_t n = 0;
    if (p.kind() == am_kind_strided) {
        w[n++] = shoal_word0(p, am_kind_strided | am_reply);
        w[n++] = shoal_stride_word(p.src_stride);
        w[n++] = p.src_stride.offset;
        w[n++] = shoal_stride_word(p.dst_stride) | (uint64_t{p.token} << 48);
        w[n++] = p.dst_stride.offset;
    } else {
        w[n++] = shoal_word0(p, am_kind_long | am_reply);
        w[n++] = uint64_t{p.token} << 48;
        w[n++] = p.src_offset;
        w[n++] = p.dst_offset;
    }
    for (unsigned i = 0; i < p.nargs; ++i) w[n++] = p.args[i];
    return n * 8;
}

size_t am_encode_shoal(const am_packet &p, void *out) {
    auto *w = static_cast<uint64_t *>(out);
    size_t n = 0;
    w[n++] = shoal_word0(p, static_cast<uint8_t>(p.type & ~am_ext));
    if (p.kind() == am_kind_strided) {
        w[n++] = shoal_stride_word(p.dst_stride) | (uint64_t{p.token} << 48);
        w[n++] = p.dst_stride.offset;
    } else {  // vectored: the source fields are the sender's business (zero on the wire)
        w[n++] = (uint64_t{p.npieces & 0xF} << 4) | ((p.pieces[1] & 0xFFF) << 20) | (uint64_t{p.token} << 48);
        w[n++] = p.pieces[0];
        for (unsigned i = 1; i < p.npieces; ++i) {
            w[n++] = p.pieces[2 * i + 1] & 0xFFF;
            w[n++] = p.pieces[2 * i];
        }
    }
    for (unsigned i = 0; i < p.nargs; ++i) w[n++] = p.args[i];
    size_t len = n * 8;
    if (p.payload_bytes != 0) {
        size_t padded = (p.payload_bytes + 7) & ~size_t{7};
        w[(len + padded) / 8 - 1] = 0;
        if (p.payload != nullptr) std::memcpy(reinterpret_cast<char *>(out) + len, p.payload, p.payload_bytes);
        len += padded;
    }
    return len;
}

namespace {

// Shoal-form strided and vectored Longs (no extension word): what a GAScore sends.
am_wire_error decode_shoal_sv(const uint64_t *w, size_t nwords, am_packet &p) {
    if (p.type & (am_reply | am_ext)) return am_wire_error::bad_type;  // Shoal's gets are not served here
    if (nwords < 3) return am_wire_error::truncated;
    size_t n = 2;
    uint64_t described = 0;
    if (p.kind() == am_kind_strided) {
        p.dst_stride.stride = bits(w[1], 0, 16);
        p.dst_stride.block_size = bits(w[1], 16, 16);
        p.dst_stride.block_count = bits(w[1], 32, 16);
        p.dst_stride.offset = w[n++];
        described = p.dst_stride.block_size * p.dst_stride.block_count;  // 16 x 16 bits: no overflow
    } else {
        if (bits(w[1], 0, 4) != 0 || bits(w[1], 8, 12) != 0 || bits(w[1], 32, 16) != 0)
            return am_wire_error::bad_reserved;  // source fields are zero on the wire
        p.npieces = static_cast<unsigned>(bits(w[1], 4, 4));
        if (p.npieces == 0) return am_wire_error::bad_size;
        if (nwords < n + 1 + 2 * (size_t{p.npieces} - 1)) return am_wire_error::truncated;
        p.shoal_pieces[0] = w[n++];
        p.shoal_pieces[1] = bits(w[1], 20, 12);
        for (unsigned i = 1; i < p.npieces; ++i) {
            if (w[n] > 0xFFF) return am_wire_error::bad_reserved;
            p.shoal_pieces[2 * i + 1] = w[n++];
            p.shoal_pieces[2 * i] = w[n++];
        }
        p.pieces = p.shoal_pieces;
        for (unsigned i = 0; i < p.npieces; ++i) described += p.shoal_pieces[2 * i + 1];
    }
    if (described != p.payload_bytes) return am_wire_error::bad_size;
    if (nwords < n + p.nargs) return am_wire_error::truncated;
    p.args = w + n;
    n += p.nargs;
    size_t rest = (nwords - n) * 8;
    if (p.payload_bytes > rest || rest - p.payload_bytes >= 8) return am_wire_error::bad_size;
    p.payload = w + n;
    return am_wire_error::ok;
}

}  // namespace

am_wire_error am_decode(const void *buf, size_t len, am_packet &p) {
    const auto *w = static_cast<const uint64_t *>(buf);
    if (len < 16 || len % 8 != 0) return am_wire_error::truncated;
    size_t nwords = len / 8;
    p = am_packet{};
    p.type = static_cast<uint8_t>(bits(w[0], 0, 8));
    p.src = static_cast<uint32_t>(bits(w[0], 8, 16));
    p.dst = static_cast<uint32_t>(bits(w[0], 24, 16));
    uint64_t size = bits(w[0], 40, 16);
    p.handler = static_cast<unsigned>(bits(w[0], 56, 4));
    p.nargs = static_cast<unsigned>(bits(w[0], 60, 4));
    p.token = static_cast<uint16_t>(bits(w[1], 48, 16));
    if ((p.type & 0x08) != 0) return am_wire_error::bad_reserved;
    uint8_t k = p.kind();
    if (k != am_kind_short && k != am_kind_medium && k != am_kind_long && k != am_kind_strided && k != am_kind_vectored)
        return am_wire_error::bad_type;
    if (!(p.type & am_ext) && (k == am_kind_strided || k == am_kind_vectored)) {
        p.payload_bytes = size;
        return decode_shoal_sv(w, nwords, p);
    }
    if (bits(w[1], 0, 48) != 0) return am_wire_error::bad_reserved;
    size_t n = 2;
    if (p.type & am_ext) {
        if (nwords < 3) return am_wire_error::truncated;
        uint64_t e = w[n++];
        if (size != 0 || bits(e, 0, 4) != p.handler) return am_wire_error::bad_reserved;
        p.handler = static_cast<unsigned>(bits(e, 0, 8));
        p.ext_flags = static_cast<uint8_t>(bits(e, 8, 8));
        p.rndv_seq = static_cast<uint16_t>(bits(e, 16, 16));
        p.payload_bytes = bits(e, 32, 32);
        if ((p.ext_flags & ~(am_ext_get | am_ext_rndv)) != 0) return am_wire_error::bad_reserved;
    } else {
        p.payload_bytes = size;
    }
    if (p.nargs > am_max_args) return am_wire_error::too_many_args;  // 4 bits: never, kept for clarity
    bool get = p.is_get();
    bool rndv = (p.ext_flags & am_ext_rndv) != 0;
    if (get && ((k != am_kind_long && k != am_kind_strided) || rndv || (p.type & am_reply)))
        return am_wire_error::bad_type;
    if (rndv && k != am_kind_long && k != am_kind_strided && k != am_kind_vectored) return am_wire_error::bad_type;
    if ((p.type & am_reply) && k != am_kind_short && !(k == am_kind_long || k == am_kind_strided))
        return am_wire_error::bad_type;
    if (k == am_kind_short && p.payload_bytes != 0 && !get) return am_wire_error::bad_size;
    if (k == am_kind_vectored) {
        if (nwords < n + 1) return am_wire_error::truncated;
        if (w[n] > am_max_vector) return am_wire_error::too_many_pieces;
        p.npieces = static_cast<unsigned>(w[n]);
    }
    size_t desc = descriptor_words(p);
    if (nwords < n + desc + p.nargs) return am_wire_error::truncated;
    auto get_stride = [&](am_stride_desc &s) {
        s.offset = w[n++];
        s.stride = w[n++];
        s.block_size = w[n++];
        s.block_count = w[n++];
    };
    uint64_t described = p.payload_bytes;  // what the descriptors say is moved
    if (get) {
        if (k == am_kind_strided) {
            get_stride(p.src_stride);
            get_stride(p.dst_stride);
            uint64_t a, b;
            if (!stride_total(p.src_stride, a) || !stride_total(p.dst_stride, b) || a != b)
                return am_wire_error::bad_size;
            described = a;
        } else {
            p.src_offset = w[n++];
            described = w[n++];
            p.dst_offset = w[n++];
        }
        // A get request carries no payload; its size field names what it asks for.
        if (described != p.payload_bytes) return am_wire_error::bad_size;
    } else if (k == am_kind_long) {
        p.dst_offset = w[n++];
    } else if (k == am_kind_strided) {
        get_stride(p.dst_stride);
        if (!stride_total(p.dst_stride, described)) return am_wire_error::bad_size;
    } else if (k == am_kind_vectored) {
        ++n;
        p.pieces = w + n;
        n += 2 * size_t{p.npieces};
        described = 0;
        for (unsigned i = 0; i < p.npieces; ++i)
            if (__builtin_add_overflow(described, p.pieces[2 * i + 1], &described)) return am_wire_error::bad_size;
    }
    if (described != p.payload_bytes) return am_wire_error::bad_size;
    p.args = w + n;
    n += p.nargs;
    size_t rest = (nwords - n) * 8;
    if (carries_payload(p)) {
        if (p.payload_bytes > rest || rest - p.payload_bytes >= 8) return am_wire_error::bad_size;
        p.payload = w + n;
    } else if (rest != 0) {
        return am_wire_error::bad_size;
    }
    return am_wire_error::ok;
}

bool am_check_bounds(const am_packet &p, uint64_t seg_size) {
    if (p.is_get()) {
        // The target checks its source side; the requester checked its own destination.
        if (p.kind() == am_kind_strided) return stride_fits(p.src_stride, seg_size);
        return fits(p.src_offset, p.payload_bytes, seg_size);
    }
    switch (p.kind()) {
        case am_kind_long: return fits(p.dst_offset, p.payload_bytes, seg_size);
        case am_kind_strided: return stride_fits(p.dst_stride, seg_size);
        case am_kind_vectored:
            for (unsigned i = 0; i < p.npieces; ++i)
                if (!fits(p.pieces[2 * i], p.pieces[2 * i + 1], seg_size)) return false;
            return true;
        default: return true;
    }
}

}  // namespace weft
