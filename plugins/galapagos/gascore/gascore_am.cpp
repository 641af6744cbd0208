/* Shoal packet layouts: encoding of header and descriptor words, and the receive-side parser
 * that refuses anything a GAScore could not parse or that would make it write outside a
 * kernel's memory. */
#include "gascore_am.hpp"

#include "gal_wire.hpp"

namespace gascore {

uint64_t header_encode(const am_header &h) {
    return uint64_t(h.type) | uint64_t(h.src) << 8 | uint64_t(h.dst) << 24 | uint64_t(h.size) << 40 |
        uint64_t(h.handler & 0xf) << 56 | uint64_t(h.nargs & 0xf) << 60;
}

am_header header_decode(uint64_t w) {
    am_header h;
    h.type = uint8_t(w);
    h.src = uint16_t(w >> 8);
    h.dst = uint16_t(w >> 24);
    h.size = uint16_t(w >> 40);
    h.handler = uint8_t((w >> 56) & 0xf);
    h.nargs = uint8_t(w >> 60);
    return h;
}

uint64_t stride_encode(const stride_desc &s, uint16_t token) {
    return uint64_t(s.stride) | uint64_t(s.block_size) << 16 | uint64_t(s.block_count) << 32 | uint64_t(token) << 48;
}

stride_desc stride_decode(uint64_t w) {
    stride_desc s;
    s.stride = uint16_t(w);
    s.block_size = uint16_t(w >> 16);
    s.block_count = uint16_t(w >> 32);
    return s;
}

uint64_t stride_extent(const stride_desc &s) {
    if (s.block_count == 0 || s.block_size == 0) return 0;
    /* 16-bit fields: no overflow in 64 bits. */
    return uint64_t(s.block_count - 1) * s.stride + s.block_size;
}

const char *drop_reason_name(drop_reason r) {
    switch (r) {
        case drop_reason::truncated: return "truncated";
        case drop_reason::bad_reserved: return "reserved";
        case drop_reason::bad_type: return "type";
        case drop_reason::extension: return "extension";
        case drop_reason::bad_size: return "size";
        case drop_reason::bad_reply: return "reply";
        case drop_reason::out_of_range: return "range";
        case drop_reason::wrong_node: return "not-hosted";
        case drop_reason::mismatch: return "mismatch";
        case drop_reason::unroutable: return "unroutable";
        case drop_reason::stream_full: return "stream-full";
        case drop_reason::count_: break;
    }
    return "?";
}

namespace {

constexpr uint64_t low48 = (uint64_t(1) << 48) - 1;

/* Reads word i of the packet; the caller has checked the length. */
uint64_t word_at(const uint8_t *data, size_t i) { return gal::get_u64(data + 8 * i); }

struct parse_fail {
    drop_reason reason;
    const char *text;
};

/* The answer to a get must fit one Galapagos packet: header words plus the data. */
bool answer_fits(size_t header_words, uint64_t size) {
    return header_words + gal::flits_for(size) <= gal::max_packet_flits;
}

}  // namespace

bool am_parse(const uint8_t *data, size_t len, am_message &m, drop_reason &why, const char *&why_text) {
    auto fail = [&](drop_reason r, const char *text) {
        why = r;
        why_text = text;
        return false;
    };
    if (len < 16 || len % 8 != 0) return fail(drop_reason::truncated, "shorter than header and token");
    const size_t nwords = len / 8;
    m = am_message{};
    m.h = header_decode(word_at(data, 0));
    const uint64_t w1 = word_at(data, 1);
    const uint8_t type = m.h.type;
    if (type & AM_EXT) return fail(drop_reason::extension, "Weft extension bit (0x80)");
    if (type & AM_RESERVED) return fail(drop_reason::bad_reserved, "reserved type bit 0x08");
    const am_kind kind = m.kind();
    if (kind != AM_SHORT && kind != AM_MEDIUM && kind != AM_LONG && kind != AM_STRIDED && kind != AM_VECTOR)
        return fail(drop_reason::bad_type, "no such message kind");
    const bool reply = type & AM_REPLY;
    m.is_get = reply && kind != AM_SHORT;

    /* Words before the arguments, and the token, by layout. */
    size_t head = 2;
    switch (kind) {
        case AM_SHORT:
            if (m.h.size != 0) return fail(drop_reason::bad_size, "Short with a payload size");
            if (reply && m.h.nargs != 0) return fail(drop_reason::bad_reply, "Short reply with arguments");
            if (w1 & low48) return fail(drop_reason::bad_reserved, "token word bits [47:0] set");
            m.token = uint16_t(w1 >> 48);
            break;
        case AM_MEDIUM:
        case AM_LONG:
            if (w1 & low48) return fail(drop_reason::bad_reserved, "token word bits [47:0] set");
            m.token = uint16_t(w1 >> 48);
            if (m.is_get) {
                head = kind == AM_MEDIUM ? 3 : 4; /* source address [, requester's destination] */
                if (nwords < head) return fail(drop_reason::truncated, "get without its addresses");
                m.src_addr = word_at(data, 2);
                if (kind == AM_LONG) m.dst_addr = word_at(data, 3);
            } else if (kind == AM_LONG) {
                head = 3;
                if (nwords < head) return fail(drop_reason::truncated, "Long without its address");
                m.dst_addr = word_at(data, 2);
            }
            break;
        case AM_STRIDED:
            if (m.is_get) {
                head = 5; /* src stride, src addr, dst stride (token), dst addr */
                if (nwords < head) return fail(drop_reason::truncated, "strided get without its descriptors");
                /* Bits [63:48] of the source stride word carry no token; Shoal leaves them
             * unspecified, so they are ignored. */
                m.src_stride = stride_decode(w1);
                m.src_addr = word_at(data, 2);
                m.dst_stride_word = word_at(data, 3);
                m.dst_stride = stride_decode(m.dst_stride_word);
                m.token = uint16_t(m.dst_stride_word >> 48);
                m.dst_addr = word_at(data, 4);
                uint64_t src_bytes = uint64_t(m.src_stride.block_size) * m.src_stride.block_count;
                uint64_t dst_bytes = uint64_t(m.dst_stride.block_size) * m.dst_stride.block_count;
                if (src_bytes != m.h.size || dst_bytes != m.h.size)
                    return fail(drop_reason::bad_size, "strided get regions disagree with the size");
            } else {
                head = 3;
                if (nwords < head) return fail(drop_reason::truncated, "strided without its address");
                m.dst_stride = stride_decode(w1);
                m.token = uint16_t(w1 >> 48);
                m.dst_addr = word_at(data, 2);
                if (uint64_t(m.dst_stride.block_size) * m.dst_stride.block_count != m.h.size)
                    return fail(drop_reason::bad_size, "size is not block size x block count");
            }
            break;
        case AM_VECTOR: {
            if (m.is_get) return fail(drop_reason::bad_type, "vectored get (not served by this model)");
            /* src count [3:0] and src size0 [19:8] are zeroed by the sender's am_tx. */
            if ((w1 & 0xf) != 0 || ((w1 >> 8) & 0xfff) != 0 || ((w1 >> 32) & 0xffff) != 0)
                return fail(drop_reason::bad_reserved, "vector word: source fields or [47:32] set");
            const unsigned pieces = unsigned(w1 >> 4) & 0xf;
            if (pieces == 0) return fail(drop_reason::bad_size, "vectored with no destination piece");
            m.token = uint16_t(w1 >> 48);
            head = 3 + 2 * size_t(pieces - 1);
            if (nwords < head) return fail(drop_reason::truncated, "vectored without its pieces");
            m.dst_pieces.push_back({word_at(data, 2), (w1 >> 20) & 0xfff});
            uint64_t total = m.dst_pieces[0].size;
            for (unsigned i = 1; i < pieces; ++i) {
                uint64_t size_word = word_at(data, 3 + 2 * (i - 1));
                if (size_word > max_vector_piece)
                    return fail(drop_reason::bad_reserved, "vector size word above 12 bits");
                m.dst_pieces.push_back({word_at(data, 4 + 2 * (i - 1)), size_word});
                total += size_word;
            }
            if (total != m.h.size) return fail(drop_reason::bad_size, "size is not the sum of the pieces");
            m.dst_addr = m.dst_pieces[0].addr;
            break;
        }
    }
    if (m.is_get && (type & AM_FIFO)) return fail(drop_reason::bad_type, "get with the FIFO bit");

    const size_t args_end = head + m.h.nargs;
    if (nwords < args_end) return fail(drop_reason::truncated, "arguments beyond the packet");
    for (size_t i = head; i < args_end; ++i) m.args.push_back(word_at(data, i));

    const size_t rest = len - 8 * args_end;
    if (kind == AM_SHORT || m.is_get) {
        if (rest != 0) return fail(drop_reason::bad_size, "words after the arguments");
        if (m.is_get) {
            /* The answer carries the args and, for Long and strided, address words. */
            size_t answer_head = 2 + m.h.nargs + (kind == AM_MEDIUM ? 0 : 1);
            if (!answer_fits(answer_head, m.h.size))
                return fail(drop_reason::bad_size, "get answer larger than one packet");
        }
        return true;
    }
    if (!(m.h.size <= rest && rest < size_t(m.h.size) + 8))
        return fail(drop_reason::bad_size, "payload size disagrees with the packet length");
    m.payload = data + 8 * args_end;
    return true;
}

bool check_bounds(const am_message &m, size_t mem_size) {
    switch (m.kind()) {
        case AM_SHORT:
        case AM_MEDIUM: return !m.is_get || range_ok(m.src_addr, m.h.size, mem_size);
        case AM_LONG: return range_ok(m.is_get ? m.src_addr : m.dst_addr, m.h.size, mem_size);
        case AM_STRIDED:
            if (m.is_get) return range_ok(m.src_addr, stride_extent(m.src_stride), mem_size);
            return range_ok(m.dst_addr, stride_extent(m.dst_stride), mem_size);
        case AM_VECTOR:
            for (const am_piece &p : m.dst_pieces)
                if (!range_ok(p.addr, p.size, mem_size)) return false;
            return true;
    }
    return false;
}

void am_builder::word(uint64_t w) {
    size_t at = data_.size();
    data_.resize(at + 8);
    gal::put_u64(data_.data() + at, w);
}

uint8_t *am_builder::grow(size_t n) {
    size_t at = data_.size();
    data_.resize(at + gal::flits_for(n) * gal::flit_bytes, 0);
    return data_.data() + at;
}

void am_builder::bytes(const void *p, size_t n) {
    uint8_t *to = grow(n);
    if (n) std::memcpy(to, p, n);
}

}  // namespace gascore
