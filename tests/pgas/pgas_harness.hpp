// The PGAS round engine.  A test describes its traffic as a *plan*: a pure function giving the
// messages kernel s sends when the context has n kernels.  Since every kernel can evaluate the
// plan of every other kernel, each one knows exactly what must land in its own segment and
// which handler calls it must see, and checks that against what happened:
//
//   - every segment is filled with a pattern unique to (kernel, round) before the round, so a
//     byte written at the wrong offset, a byte too many, or stale data from an earlier round
//     shows up in the whole-segment comparison after the round;
//   - a user handler (the "record" handler, registered at several indices) matches each call
//     against the expected messages (source kernel, handler index, kind, is_reply, args,
//     length, offset) and checks, at handler time, that a Long's data has already landed and
//     that a Medium's payload is right;
//   - caller buffers are overwritten as soon as the weft_am_* call returns (the call promises
//     the buffer may then be reused).
//
// Segment layout: sources are read from the lower half, which nothing writes during a round;
// destinations lie in the upper half.  All kernels of a context have the same segment size.
#pragma once
#include <algorithm>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <vector>

#include "mix64.hpp"
#include "pgas_env.hpp"

namespace pgas_test {

constexpr size_t KiB = 1024, MiB = 1024 * 1024;
constexpr size_t seg_size = 2 * MiB + MiB / 2;
constexpr size_t src_area = seg_size / 2;  // [0, src_area): only read during a round
constexpr size_t dst_lo = seg_size / 2;    // [dst_lo, seg_size): written during a round
constexpr size_t dst_len = seg_size - dst_lo;

// Handler indices the record handler is registered at: the lowest user index, the top of
// Shoal's 4-bit range, the first index past it, and the top of the 8-bit range.
inline const std::vector<unsigned> &record_handlers() {
    static const std::vector<unsigned> h = {5, 15, 16, 200, 255};
    return h;
}
// Under weft_am_shoal_compat only indices below 16 can be sent.
inline const std::vector<unsigned> &compat_record_handlers() {
    static const std::vector<unsigned> h = {5, 9, 15};
    return h;
}

// ---------------------------------------------------------------- deterministic data

using harness::mix64;
inline uint64_t seed_of(uint64_t a, uint64_t b, uint64_t c) { return mix64(mix64(a * 0x100000001b3ull + b) ^ (c + 0x51)); }
inline uint64_t word_at(uint64_t seed, size_t w) {
    uint64_t x = (w + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 31;
    x *= 0xD6E8FEB86659FD93ull;
    return x ^ (x >> 29);
}
inline uint8_t byte_at(uint64_t seed, size_t pos) { return uint8_t(word_at(seed, pos >> 3) >> ((pos & 7) * 8)); }
inline void fill_bytes(uint64_t seed, uint8_t *out, size_t from, size_t len) {
    size_t i = 0;
    for (; i < len && ((from + i) & 7); ++i) out[i] = byte_at(seed, from + i);
    for (; i + 8 <= len; i += 8) {
        uint64_t w = word_at(seed, (from + i) >> 3);
        std::memcpy(out + i, &w, 8);  // little-endian: byte k of the word is byte_at(pos + k)
    }
    for (; i < len; ++i) out[i] = byte_at(seed, from + i);
}
// The pattern a kernel's segment holds at the start of a round.
inline uint64_t segment_seed(int kernel, uint32_t round) { return seed_of(1, uint64_t(kernel), round); }
// Caller-buffer bytes of message idx of kernel s.
inline uint64_t buffer_seed(int s, uint32_t round, size_t idx) { return seed_of(2, uint64_t(s) * 4096 + idx, round); }
// Handler argument j of message idx of kernel s: full 64-bit values, and 0 / all ones at
// positions 3 and 4.
inline uint64_t arg_value(int s, uint32_t round, size_t idx, unsigned j) {
    if (j == 3) return 0;
    if (j == 4) return ~uint64_t(0);
    return mix64(seed_of(3, uint64_t(s) * 4096 + idx, round) + j);
}

// ---------------------------------------------------------------- messages

enum class op { short_, medium, medium_seg, long_, long_seg, strided, vectored, get_long, get_strided };

inline const char *op_name(op o) {
    switch (o) {
        case op::short_:
            return "short";
        case op::medium:
            return "medium(buffer)";
        case op::medium_seg:
            return "medium(segment)";
        case op::long_:
            return "long(buffer)";
        case op::long_seg:
            return "long(segment)";
        case op::strided:
            return "long strided";
        case op::vectored:
            return "long vectored";
        case op::get_long:
            return "get long";
        case op::get_strided:
            return "get strided";
    }
    return "?";
}
inline bool is_get(op o) { return o == op::get_long || o == op::get_strided; }
inline int kind_of(op o) {
    switch (o) {
        case op::short_:
            return WEFT_AM_SHORT;
        case op::medium:
        case op::medium_seg:
            return WEFT_AM_MEDIUM;
        case op::long_:
        case op::long_seg:
        case op::get_long:
            return WEFT_AM_LONG;
        case op::strided:
        case op::get_strided:
            return WEFT_AM_LONG_STRIDED;
        case op::vectored:
            return WEFT_AM_LONG_VECTORED;
    }
    return 0;
}

struct message {
    op kind = op::short_;
    int dst = 0;  // target kernel id
    unsigned handler = 0;
    unsigned flags = 0;
    unsigned nargs = 0;
    size_t length = 0;      // medium, long, get_long
    size_t src_offset = 0;  // medium_seg, long_seg: the sender's segment; get_long: the target's
    size_t dst_offset = 0;  // long, long_seg: the target's segment; get_long: the caller's
    weft_am_stride src{}, dstr{};  // strided: src local, dstr remote; get_strided: src remote, dstr local
    std::vector<weft_am_piece> src_pieces, dst_pieces;  // vectored
    bool check_offset = true;  // false: info->offset is not defined (vectored, first piece empty)
    std::vector<uint64_t> args;  // fixed argument values (counters); empty: generated ones
    std::string note;            // what the message exercises, for failure messages
};

inline message make_short(int dst, unsigned h, unsigned nargs, unsigned flags = 0) {
    message m;
    m.kind = op::short_;
    m.dst = dst;
    m.handler = h;
    m.nargs = nargs;
    m.flags = flags;
    return m;
}
inline message make_medium(int dst, unsigned h, unsigned nargs, size_t len, unsigned flags = 0) {
    message m = make_short(dst, h, nargs, flags);
    m.kind = op::medium;
    m.length = len;
    return m;
}
inline message make_medium_seg(int dst, unsigned h, unsigned nargs, size_t src_off, size_t len, unsigned flags = 0) {
    message m = make_medium(dst, h, nargs, len, flags);
    m.kind = op::medium_seg;
    m.src_offset = src_off;
    return m;
}
inline message make_long(int dst, unsigned h, unsigned nargs, size_t len, size_t dst_off, unsigned flags = 0) {
    message m = make_short(dst, h, nargs, flags);
    m.kind = op::long_;
    m.length = len;
    m.dst_offset = dst_off;
    return m;
}
inline message make_long_seg(int dst, unsigned h, unsigned nargs, size_t src_off, size_t len, size_t dst_off,
                             unsigned flags = 0) {
    message m = make_long(dst, h, nargs, len, dst_off, flags);
    m.kind = op::long_seg;
    m.src_offset = src_off;
    return m;
}
inline message make_strided(int dst, unsigned h, unsigned nargs, weft_am_stride src, weft_am_stride dstr,
                            unsigned flags = 0) {
    message m = make_short(dst, h, nargs, flags);
    m.kind = op::strided;
    m.src = src;
    m.dstr = dstr;
    return m;
}
inline message make_vectored(int dst, unsigned h, unsigned nargs, std::vector<weft_am_piece> src,
                             std::vector<weft_am_piece> dstp, unsigned flags = 0) {
    message m = make_short(dst, h, nargs, flags);
    m.kind = op::vectored;
    m.src_pieces = std::move(src);
    m.dst_pieces = std::move(dstp);
    m.check_offset = !m.dst_pieces.empty() && m.dst_pieces[0].length != 0;
    return m;
}
inline message make_get_long(int target, unsigned h, unsigned nargs, size_t remote_off, size_t len, size_t local_off) {
    message m = make_short(target, h, nargs, 0);
    m.kind = op::get_long;
    m.length = len;
    m.src_offset = remote_off;
    m.dst_offset = local_off;
    return m;
}
inline message make_get_strided(int target, unsigned h, unsigned nargs, weft_am_stride remote, weft_am_stride local) {
    message m = make_short(target, h, nargs, 0);
    m.kind = op::get_strided;
    m.src = remote;
    m.dstr = local;
    return m;
}
inline weft_am_stride stride(size_t offset, size_t st, size_t block, size_t count) {
    weft_am_stride s;
    s.offset = offset;
    s.stride = st;
    s.block_size = block;
    s.block_count = count;
    return s;
}

using region = std::pair<size_t, size_t>;  // offset, length
inline std::vector<region> stride_regions(const weft_am_stride &s) {
    std::vector<region> r;
    for (size_t b = 0; b < s.block_count; ++b) r.push_back({s.offset + b * s.stride, s.block_size});
    return r;
}
inline std::vector<region> piece_regions(const std::vector<weft_am_piece> &p) {
    std::vector<region> r;
    for (auto &x : p) r.push_back({x.offset, x.length});
    return r;
}
inline size_t total(const std::vector<region> &r) {
    size_t t = 0;
    for (auto &x : r) t += x.second;
    return t;
}
inline size_t extent_end(const std::vector<region> &r) {
    size_t e = 0;
    for (auto &x : r) e = std::max(e, x.first + x.second);
    return e;
}

// Where the data of message m (sent by kernel s) comes from: regions of `source_kernel`'s
// segment, or (source_kernel < 0) the caller's buffer.
inline std::vector<region> source_regions(const message &m, int s, int &source_kernel) {
    source_kernel = is_get(m.kind) ? m.dst : s;
    switch (m.kind) {
        case op::medium_seg:
        case op::long_seg:
        case op::get_long:
            return {{m.src_offset, m.length}};
        case op::strided:
        case op::get_strided:
            return stride_regions(m.src);
        case op::vectored:
            return piece_regions(m.src_pieces);
        case op::medium:
        case op::long_:
            source_kernel = -1;
            return {{0, m.length}};
        case op::short_:
            break;
    }
    source_kernel = -1;
    return {};
}
// Where the data lands (in the segment of landing_kernel(m, s)).
inline std::vector<region> landing_regions(const message &m) {
    switch (m.kind) {
        case op::long_:
        case op::long_seg:
        case op::get_long:
            return {{m.dst_offset, m.length}};
        case op::strided:
        case op::get_strided:
            return stride_regions(m.dstr);
        case op::vectored:
            return piece_regions(m.dst_pieces);
        default:
            return {};
    }
}
inline int landing_kernel(const message &m, int s) { return is_get(m.kind) ? s : m.dst; }
// The kernel info->source names at the landing kernel.
inline int reported_source(const message &m, int s) { return is_get(m.kind) ? m.dst : s; }

// The byte stream message idx of kernel s carries in the given round.
inline std::vector<uint8_t> payload_stream(const message &m, int s, uint32_t round, size_t idx) {
    int sk = -1;
    auto regs = source_regions(m, s, sk);
    std::vector<uint8_t> out(total(regs));
    size_t at = 0;
    for (auto &r : regs) {
        if (sk < 0)
            fill_bytes(buffer_seed(s, round, idx), out.data() + at, r.first, r.second);
        else
            fill_bytes(segment_seed(sk, round), out.data() + at, r.first, r.second);
        at += r.second;
    }
    return out;
}

inline std::string describe(const message &m, int s, size_t idx) {
    std::ostringstream o;
    o << "message #" << idx << " of kernel " << s << ": " << op_name(m.kind) << " to kernel " << m.dst << ", handler "
      << m.handler << ", " << m.nargs << " args" << ((m.flags & WEFT_AM_ASYNC) ? ", ASYNC" : "");
    switch (m.kind) {
        case op::medium:
        case op::long_:
        case op::get_long:
        case op::medium_seg:
        case op::long_seg:
            o << ", " << m.length << " bytes";
            if (m.kind == op::medium_seg || m.kind == op::long_seg || m.kind == op::get_long)
                o << " from offset " << m.src_offset;
            if (m.kind != op::medium && m.kind != op::medium_seg) o << " to offset " << m.dst_offset;
            break;
        case op::strided:
        case op::get_strided:
            o << ", src {off " << m.src.offset << " stride " << m.src.stride << " block " << m.src.block_size
              << " count " << m.src.block_count << "} dst {off " << m.dstr.offset << " stride " << m.dstr.stride
              << " block " << m.dstr.block_size << " count " << m.dstr.block_count << "}";
            break;
        case op::vectored:
            o << ", " << m.src_pieces.size() << " src pieces, " << m.dst_pieces.size() << " dst pieces, "
              << total(piece_regions(m.src_pieces)) << " bytes";
            break;
        default:
            break;
    }
    if (!m.note.empty()) o << " [" << m.note << "]";
    return o.str();
}

// ---------------------------------------------------------------- kernels

// What one kernel expects to see for one incoming message (or get reply).
struct expectation {
    std::string what;
    bool recorded = false;  // a record handler runs for it
    int source = -1;
    unsigned handler = 0;
    int kind = 0, is_reply = 0;
    unsigned nargs = 0;
    std::vector<uint64_t> args;
    bool check_length = true, check_offset = true;
    size_t length = 0, offset = 0;
    std::vector<uint8_t> bytes;       // medium payload, or the Long data in landing order
    std::vector<region> regions;      // Long: where `bytes` land
    int matched = 0;
    std::string data_error;           // set by the handler
};

struct kernel_ctx {
    weft_pgas k = WEFT_PGAS_NULL;
    int index = 0;  // local index
    int id = -1, n = 0;
    uint8_t *base = nullptr;
    size_t size = 0;
    size_t max_medium = 0;
    uint32_t round = 0;
    std::mutex mu;
    std::vector<expectation> expect;
    std::vector<std::string> unexpected;      // handler calls that matched nothing
    std::vector<std::string> handler_errors;  // wrong kernel handle, ...
    std::atomic<int> calls{0};                // record-handler calls this round
    std::set<std::thread::id> handler_threads;
    std::string name() const {
        return "kernel " + std::to_string(id) + " (rank " + std::to_string(world_rank()) + ", local index " +
               std::to_string(index) + ")";
    }
};

inline std::string describe_info(const weft_am_info *info) {
    std::ostringstream o;
    o << "{source " << info->source << ", handler " << info->handler << ", kind " << info->kind << ", is_reply "
      << info->is_reply << ", nargs " << info->nargs << ", length " << info->length << ", offset " << info->offset;
    if (info->nargs && info->args) {
        o << ", args";
        for (unsigned j = 0; j < info->nargs && j < 16; ++j) o << " " << std::hex << info->args[j] << std::dec;
    }
    o << "}";
    return o.str();
}

// The record handler: matches the call against the kernel's expectations and checks the data.
inline void record_handler(weft_pgas kernel, const weft_am_info *info, void *user_data) {
    auto *kc = static_cast<kernel_ctx *>(user_data);
    std::lock_guard<std::mutex> g(kc->mu);
    kc->handler_threads.insert(std::this_thread::get_id());
    if (kernel != kc->k)
        kc->handler_errors.push_back("handler got kernel handle " + std::to_string(kernel) + ", expected " +
                                     std::to_string(kc->k));
    expectation *hit = nullptr;
    for (auto &e : kc->expect) {
        if (!e.recorded || e.matched) continue;
        if (info->source != e.source || info->handler != e.handler || info->kind != e.kind ||
            (info->is_reply != 0) != (e.is_reply != 0) || info->nargs != e.nargs)
            continue;
        if (e.check_length && info->length != e.length) continue;
        if (e.check_offset && info->offset != e.offset) continue;
        if (e.nargs && (!info->args || std::memcmp(info->args, e.args.data(), 8 * e.nargs) != 0)) continue;
        hit = &e;
        break;
    }
    if (!hit) {
        kc->unexpected.push_back(describe_info(info));
        kc->calls++;
        return;
    }
    hit->matched++;
    if (hit->kind == WEFT_AM_MEDIUM) {
        if (hit->length && (!info->payload || std::memcmp(info->payload, hit->bytes.data(), hit->length) != 0)) {
            size_t i = 0;
            const uint8_t *p = static_cast<const uint8_t *>(info->payload);
            while (p && i < hit->length && p[i] == hit->bytes[i]) ++i;
            hit->data_error = p ? "payload differs from byte " + std::to_string(i) : "info->payload is null";
        }
    } else if (!hit->regions.empty()) {
        // A Long's data must be in the segment before its handler runs.
        size_t at = 0;
        for (auto &r : hit->regions) {
            if (r.second && std::memcmp(kc->base + r.first, hit->bytes.data() + at, r.second) != 0) {
                size_t i = 0;
                while (kc->base[r.first + i] == hit->bytes[at + i]) ++i;
                hit->data_error = "at handler time, segment offset " + std::to_string(r.first + i) +
                                  " (byte " + std::to_string(at + i) + " of the data) is not the data yet";
                break;
            }
            at += r.second;
        }
    }
    kc->calls++;
}

inline std::vector<uint64_t> make_args(const message &m, int s, uint32_t round, size_t idx) {
    std::vector<uint64_t> a(m.nargs);
    for (unsigned j = 0; j < m.nargs; ++j) a[j] = j < m.args.size() ? m.args[j] : arg_value(s, round, idx, j);
    return a;
}

// A plan: the messages kernel s sends in a context of n kernels.
using plan_fn = std::function<std::vector<message>(int s, int n)>;

// Issues message idx of kernel kc; the caller buffer is overwritten right after the call
// returns (the call promises it may be reused).  Returns the weft return code.
inline int issue(kernel_ctx &kc, const message &m, size_t idx) {
    std::vector<uint64_t> args = make_args(m, kc.id, kc.round, idx);
    const uint64_t *a = m.nargs ? args.data() : nullptr;
    std::vector<uint8_t> buf;
    int rc = 0;
    switch (m.kind) {
        case op::short_:
            rc = weft_am_short(kc.k, m.dst, m.handler, a, m.nargs, m.flags);
            break;
        case op::medium: {
            buf = payload_stream(m, kc.id, kc.round, idx);
            static const uint8_t dummy[8] = {};
            rc = weft_am_medium(kc.k, m.dst, m.handler, a, m.nargs, m.length ? buf.data() : dummy, m.length, m.flags);
            break;
        }
        case op::medium_seg:
            rc = weft_am_medium_seg(kc.k, m.dst, m.handler, a, m.nargs, m.src_offset, m.length, m.flags);
            break;
        case op::long_:
            buf = payload_stream(m, kc.id, kc.round, idx);
            // A zero-length Long passes a null buffer (a null buffer with count 0 is valid).
            rc = weft_am_long(kc.k, m.dst, m.handler, a, m.nargs, m.length ? buf.data() : nullptr, m.length,
                              m.dst_offset, m.flags);
            break;
        case op::long_seg:
            rc = weft_am_long_seg(kc.k, m.dst, m.handler, a, m.nargs, m.src_offset, m.length, m.dst_offset, m.flags);
            break;
        case op::strided:
            rc = weft_am_long_strided(kc.k, m.dst, m.handler, a, m.nargs, &m.src, &m.dstr, m.flags);
            break;
        case op::vectored:
            rc = weft_am_long_vectored(kc.k, m.dst, m.handler, a, m.nargs, m.src_pieces.data(), m.src_pieces.size(),
                                       m.dst_pieces.data(), m.dst_pieces.size(), m.flags);
            break;
        case op::get_long:
            rc = weft_am_get_long(kc.k, m.dst, m.handler, a, m.nargs, m.src_offset, m.length, m.dst_offset, m.flags);
            break;
        case op::get_strided:
            rc = weft_am_get_strided(kc.k, m.dst, m.handler, a, m.nargs, &m.src, &m.dstr, m.flags);
            break;
    }
    if (!buf.empty()) std::memset(buf.data(), 0xA5, buf.size());
    return rc;
}

// Fills the kernel's segment with this round's pattern.
inline void fill_segment(kernel_ctx &kc) { fill_bytes(segment_seed(kc.id, kc.round), kc.base, 0, kc.size); }

// A round's bookkeeping on one kernel.
struct round_state {
    std::vector<uint8_t> image;  // what the segment must hold after the round
    int expected_calls = 0;
    uint64_t counter = 0;         // what WEFT_AM_H_INCR/ADD add to this kernel's counter
    size_t sync_sent = 0;         // messages of this kernel that get an automatic reply
    std::vector<message> mine;    // this kernel's messages
};

// Starts a round: new pattern in the segment, expectations from every kernel's plan.
inline round_state prepare_round(kernel_ctx &kc, const plan_fn &plan) {
    round_state rs;
    kc.round++;
    fill_segment(kc);
    rs.image.assign(kc.base, kc.base + kc.size);
    std::vector<expectation> ex;
    for (int s = 0; s < kc.n; ++s) {
        std::vector<message> msgs = plan(s, kc.n);
        if (s == kc.id) rs.mine = msgs;
        for (size_t i = 0; i < msgs.size(); ++i) {
            const message &m = msgs[i];
            if (landing_kernel(m, s) != kc.id) continue;
            expectation e;
            e.what = describe(m, s, i);
            e.source = reported_source(m, s);
            e.handler = m.handler;
            e.kind = kind_of(m.kind);
            e.is_reply = is_get(m.kind) ? 1 : 0;
            e.nargs = m.nargs;
            e.args = make_args(m, s, kc.round, i);
            e.regions = landing_regions(m);
            if (m.kind != op::short_) e.bytes = payload_stream(m, s, kc.round, i);
            e.length = e.bytes.size();
            e.check_length = m.kind != op::short_;
            e.check_offset = !e.regions.empty() && m.check_offset;
            e.offset = e.regions.empty() ? 0 : e.regions[0].first;
            e.recorded = m.handler >= WEFT_AM_HANDLER_FIRST;
            if (e.recorded) rs.expected_calls++;
            if (m.handler == WEFT_AM_H_INCR) rs.counter += 1;
            if (m.handler == WEFT_AM_H_ADD) rs.counter += m.nargs ? e.args[0] : 0;
            size_t at = 0;
            for (auto &r : e.regions) {
                if (r.first + r.second > rs.image.size()) {
                    ADD_FAILURE() << "test plan error: " << e.what << " lands outside the segment";
                    break;
                }
                if (r.second != 0) std::memcpy(rs.image.data() + r.first, e.bytes.data() + at, r.second);
                at += r.second;
            }
            ex.push_back(std::move(e));
        }
    }
    for (auto &m : rs.mine)
        if (is_get(m.kind) || !(m.flags & WEFT_AM_ASYNC)) rs.sync_sent++;
    std::lock_guard<std::mutex> g(kc.mu);
    kc.expect = std::move(ex);
    kc.unexpected.clear();
    kc.handler_errors.clear();
    kc.handler_threads.clear();
    kc.calls = 0;
    return rs;
}

// Progresses the kernel until done() or the timeout (a failure naming `what`).
inline bool poll_until(kernel_ctx &kc, const std::function<bool()> &done, double timeout_s, const std::string &what) {
    auto t0 = std::chrono::steady_clock::now();
    for (long spins = 0; !done(); ++spins) {
        int rc = weft_pgas_progress(kc.k);
        if (rc) {
            ADD_FAILURE() << kc.name() << ": weft_pgas_progress while " << what << ": " << err(rc);
            return false;
        }
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_s) {
            ADD_FAILURE() << kc.name() << ": timed out after " << timeout_s << " s " << what;
            return false;
        }
        // Several processes share 2 cores: let the peers run.
        if (spins < 200)
            sched_yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    return true;
}

// Sends this kernel's messages of the round; every call must succeed.
inline void send_round(kernel_ctx &kc, const round_state &rs) {
    for (size_t i = 0; i < rs.mine.size(); ++i) {
        step("%s: sending %s", kc.name().c_str(), describe(rs.mine[i], kc.id, i).c_str());
        int rc = issue(kc, rs.mine[i], i);
        EXPECT_EQ(rc, 0) << kc.name() << ": " << describe(rs.mine[i], kc.id, i) << ": " << err(rc);
    }
}

// Waits for this kernel's replies, its counter and its handler calls.
inline void wait_round(kernel_ctx &kc, const round_state &rs, double timeout_s = 20) {
    step("%s: weft_am_wait_replies(%zu)", kc.name().c_str(), rs.sync_sent);
    int rc = weft_am_wait_replies(kc.k, rs.sync_sent);
    EXPECT_EQ(rc, 0) << kc.name() << ": weft_am_wait_replies(" << rs.sync_sent << "): " << err(rc);
    if (rs.counter) {
        step("%s: weft_pgas_wait_counter(%llu)", kc.name().c_str(), (unsigned long long)rs.counter);
        rc = weft_pgas_wait_counter(kc.k, rs.counter);
        EXPECT_EQ(rc, 0) << kc.name() << ": weft_pgas_wait_counter(" << rs.counter << "): " << err(rc);
    }
    step("%s: waiting for %d handler calls", kc.name().c_str(), rs.expected_calls);
    poll_until(
        kc, [&] { return kc.calls.load() >= rs.expected_calls; }, timeout_s,
        "waiting for " + std::to_string(rs.expected_calls) + " handler calls");
}

// Compares the segment with the image; names the message whose region a wrong byte lies in.
inline void check_segment(kernel_ctx &kc, const round_state &rs, const std::string &round_name) {
    if (std::memcmp(kc.base, rs.image.data(), kc.size) == 0) return;
    std::ostringstream o;
    int shown = 0;
    for (size_t i = 0; i < kc.size && shown < 6;) {
        if (kc.base[i] == rs.image[i]) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < kc.size && kc.base[j] != rs.image[j]) ++j;
        o << "\n  bytes [" << i << ", " << j << ") differ (first: found 0x" << std::hex << int(kc.base[i])
          << ", expected 0x" << int(rs.image[i]) << std::dec << ")";
        bool inside = false;
        std::lock_guard<std::mutex> g(kc.mu);
        for (auto &e : kc.expect)
            for (auto &r : e.regions)
                if (i >= r.first && i < r.first + r.second) {
                    o << " inside the destination of " << e.what << " at its region byte " << i - r.first;
                    inside = true;
                }
        if (!inside) o << ": no message writes there (must be unchanged)";
        ++shown;
        i = j;
    }
    ADD_FAILURE() << kc.name() << ", " << round_name << ": segment content wrong:" << o.str();
}

// Every expected handler call happened once, with the right data, and nothing else.
inline void check_records(kernel_ctx &kc, const std::string &round_name) {
    std::lock_guard<std::mutex> g(kc.mu);
    for (auto &e : kc.expect) {
        if (!e.recorded) continue;
        if (e.matched != 1)
            ADD_FAILURE() << kc.name() << ", " << round_name << ": the handler ran " << e.matched
                          << " times (expected once) for " << e.what << " (expected info: source " << e.source
                          << ", kind " << e.kind << ", is_reply " << e.is_reply << ", length " << e.length
                          << ", offset " << e.offset << ")";
        if (!e.data_error.empty())
            ADD_FAILURE() << kc.name() << ", " << round_name << ": " << e.what << ": " << e.data_error;
    }
    for (auto &u : kc.unexpected)
        ADD_FAILURE() << kc.name() << ", " << round_name << ": handler call that matches no message sent: " << u;
    for (auto &h : kc.handler_errors) ADD_FAILURE() << kc.name() << ", " << round_name << ": " << h;
}

// A whole round on one kernel: prepare, barrier, [extra], send, wait, barrier, check.
inline void run_round(kernel_ctx &kc, const plan_fn &plan, const std::string &round_name,
                      const std::function<void(kernel_ctx &)> &before_send = nullptr) {
    round_state rs = prepare_round(kc, plan);
    step("%s, %s: weft_pgas_barrier before sending", kc.name().c_str(), round_name.c_str());
    int rc = weft_pgas_barrier(kc.k);
    EXPECT_EQ(rc, 0) << kc.name() << ": weft_pgas_barrier: " << err(rc);
    if (before_send) before_send(kc);
    send_round(kc, rs);
    wait_round(kc, rs);
    step("%s, %s: weft_pgas_barrier after the round", kc.name().c_str(), round_name.c_str());
    rc = weft_pgas_barrier(kc.k);
    EXPECT_EQ(rc, 0) << kc.name() << ": weft_pgas_barrier: " << err(rc);
    check_segment(kc, rs, round_name);
    check_records(kc, round_name);
}

// ---------------------------------------------------------------- a context

// A PGAS context with its local kernels (one per local stream on a multiplex communicator).
struct pgas_ctx {
    weft_pgas handle = WEFT_PGAS_NULL;
    std::vector<std::unique_ptr<kernel_ctx>> local;
    int nkernels = 0;

    // Collective.  Registers the record handler at `handlers` on every local kernel.
    int create(weft_comm comm, int nlocal, bool compat, std::string &why) {
        weft_info info = WEFT_INFO_NULL;
        if (compat) {
            weft_info_create(&info);
            weft_info_set(info, "weft_am_shoal_compat", "true");
        }
        int rc = weft_pgas_create(comm, seg_size, info, &handle);
        if (info != WEFT_INFO_NULL) weft_info_free(&info);
        if (rc) {
            why = "weft_pgas_create: " + err(rc);
            return rc;
        }
        if ((rc = weft_pgas_num_kernels(handle, &nkernels))) {
            why = "weft_pgas_num_kernels: " + err(rc);
            return rc;
        }
        for (int i = 0; i < nlocal; ++i) {
            auto kc = std::make_unique<kernel_ctx>();
            kc->index = i;
            kc->n = nkernels;
            if ((rc = weft_pgas_get_kernel(handle, i, &kc->k))) {
                why = "weft_pgas_get_kernel(" + std::to_string(i) + "): " + err(rc);
                return rc;
            }
            if ((rc = weft_pgas_kernel_id(kc->k, &kc->id))) {
                why = "weft_pgas_kernel_id: " + err(rc);
                return rc;
            }
            void *b = nullptr;
            if ((rc = weft_pgas_segment(kc->k, &b, &kc->size))) {
                why = "weft_pgas_segment: " + err(rc);
                return rc;
            }
            kc->base = static_cast<uint8_t *>(b);
            if (!b || kc->size != seg_size) {
                why = "weft_pgas_segment gave base " + std::to_string(reinterpret_cast<uintptr_t>(b)) + ", size " +
                      std::to_string(kc->size) + " (asked for " + std::to_string(seg_size) + ")";
                return WEFT_ERR_INTERNAL;
            }
            if ((rc = weft_am_max_medium(kc->k, &kc->max_medium))) {
                why = "weft_am_max_medium: " + err(rc);
                return rc;
            }
            for (unsigned h : compat ? compat_record_handlers() : record_handlers())
                if ((rc = weft_am_register(kc->k, h, record_handler, kc.get()))) {
                    why = "weft_am_register(" + std::to_string(h) + "): " + err(rc);
                    return rc;
                }
            local.push_back(std::move(kc));
        }
        return 0;
    }
    int destroy() {
        if (handle == WEFT_PGAS_NULL) return 0;
        int rc = weft_pgas_free(&handle);
        handle = WEFT_PGAS_NULL;
        local.clear();
        return rc;
    }
    kernel_ctx &k0() { return *local.at(0); }

    // Runs body once per local kernel: inline for one, on a thread per kernel otherwise.
    void run(const std::function<void(kernel_ctx &)> &body) {
        if (local.size() == 1) {
            body(*local[0]);
            return;
        }
        std::vector<std::thread> th;
        for (auto &kc : local) th.emplace_back([&body, k = kc.get()] { body(*k); });
        for (auto &t : th) t.join();
    }
};

// ---------------------------------------------------------------- plan helpers

// Packs regions one after another into the destination half of a segment (gaps of 5 bytes
// that must stay untouched; odd offsets, so nothing relies on alignment).
struct packer {
    size_t at, end;
    explicit packer(size_t from = dst_lo + 1, size_t to = seg_size) : at(from), end(to) {}
    size_t take(size_t len) {
        size_t o = at;
        at += len + 5;
        if (at > end) ADD_FAILURE() << "test plan error: destination area overflow";
        return o;
    }
};

}  // namespace pgas_test

namespace pgas_test {

// weft_pgas_barrier really waits for every kernel: in round r, kernel L = r mod n arrives late
// (it sleeps 10 ms first) and, before entering the barrier, puts a value for round r into every
// other kernel (sync: in place once its reply is counted).  The others enter the barrier at
// once and send nothing, so only the barrier can hold them until L has arrived; after it each
// must hold L's round-r value.  Two banks alternate so that the late kernel of round r+1
// cannot overwrite what a slower kernel is still checking for round r.
inline void barrier_rounds(kernel_ctx &kc, int rounds) {
    const int n = kc.n;
    auto value = [](int r, int s) { return (uint64_t(r + 1) << 32) | uint64_t(s); };
    for (int r = 0; r < rounds; ++r) {
        const int late = r % n;
        const size_t slot = dst_lo + size_t(r % 2) * 4096 + size_t(late) * 8;
        if (late == kc.id) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            step("%s: barrier round %d: puts of the late kernel", kc.name().c_str(), r);
            const uint64_t v = value(r, kc.id);
            for (int t = 0; t < n; ++t) {
                if (t == kc.id) continue;
                int rc = weft_am_long(kc.k, t, WEFT_AM_H_EMPTY, nullptr, 0, &v, 8, slot, 0);
                EXPECT_EQ(rc, 0) << kc.name() << ": round " << r << ": weft_am_long to " << t << ": " << err(rc);
            }
            int rc = weft_am_wait_replies(kc.k, size_t(n - 1));
            EXPECT_EQ(rc, 0) << kc.name() << ": weft_am_wait_replies: " << err(rc);
        }
        step("%s: barrier round %d: weft_pgas_barrier", kc.name().c_str(), r);
        int rc = weft_pgas_barrier(kc.k);
        if (rc) {
            ADD_FAILURE() << kc.name() << ": round " << r << ": weft_pgas_barrier: " << err(rc);
            return;
        }
        if (late == kc.id) continue;
        uint64_t got = 0;
        std::memcpy(&got, kc.base + slot, 8);
        EXPECT_EQ(got, value(r, late)) << kc.name() << ": after weft_pgas_barrier of round " << r << ", late kernel "
                                       << late << "'s value is not here: the barrier returned before kernel " << late
                                       << " entered it";
    }
}

}  // namespace pgas_test
