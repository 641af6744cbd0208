#include "pgas.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "check.hpp"
#include "context.hpp"
#include "options.hpp"
#include "random.hpp"
#include "report.hpp"
#include "schedule.hpp"

namespace soak {

int g_nk = 0;
size_t g_max_medium = 0, g_max_long = 0, g_seg_size = 0;

namespace {

const unsigned user_handlers[] = {5, 9, 16, 200, 255};
constexpr unsigned H_REPLY = 6, H_GETCHK = 7;

size_t slot_base(int sender, uint32_t round) {
    return DST_LO + (size_t(sender) * opt.check_every + round % opt.check_every) * AREA;
}

const char *am_kind_name[] = {"short", "builtin short", "medium",       "medium(seg)",
                              "long",  "long(seg)",     "long strided", "get long"};

std::string describe(const am_msg &m, int src, uint32_t round, size_t idx) {
    char b[512];
    int n = std::snprintf(b, sizeof b, "AM #%zu of round %u from kernel %d: %s to kernel %d, handler %u, %u args%s%s",
                          idx, round, src, am_kind_name[m.kind], m.dst, m.handler, m.nargs,
                          (m.flags & WEFT_AM_ASYNC) ? ", ASYNC" : "", m.want_reply ? ", reply requested" : "");
    switch (m.kind) {
        case A_MEDIUM:
        case A_MEDIUM_SEG:
        case A_LONG:
        case A_LONG_SEG:
        case A_GET:
            std::snprintf(b + n, sizeof b - n, ", %zu bytes, src offset %zu, dst offset %zu", m.len, m.src_off,
                          m.dst_off);
            break;
        case A_STRIDED:
            std::snprintf(b + n, sizeof b - n,
                          ", src {off %zu stride %zu block %zu count %zu} dst {off %zu stride %zu block %zu count %zu}",
                          m.s.offset, m.s.stride, m.s.block_size, m.s.block_count, m.d.offset, m.d.stride,
                          m.d.block_size, m.d.block_count);
            break;
        default:
            break;
    }
    return b;
}

// The messages kernel `src` sends in `round` (when its thread's round is a pgas round).
std::vector<am_msg> am_plan(int src, uint32_t round) {
    rng g(hkey(opt.seed, D_AMPLAN, src, round));
    size_t n = 1 + g.below(5);
    std::vector<am_msg> v(n);
    std::vector<size_t> used(size_t(g_nk), 0);
    size_t get_used = 0;
    for (size_t i = 0; i < n; ++i) {
        am_msg &m = v[i];
        unsigned w = unsigned(g.below(100));
        m.kind = w < 18   ? A_SHORT
                 : w < 28 ? A_BUILTIN
                 : w < 42 ? A_MEDIUM
                 : w < 52 ? A_MEDIUM_SEG
                 : w < 66 ? A_LONG
                 : w < 76 ? A_LONG_SEG
                 : w < 86 ? A_STRIDED
                          : A_GET;
        m.dst = int(g.below(uint64_t(g_nk)));
        m.handler = user_handlers[g.below(5)];
        m.flags = (m.kind != A_GET && g.pct(30)) ? WEFT_AM_ASYNC : 0;
        m.want_reply = m.kind != A_BUILTIN && m.kind != A_GET && g.pct(20);
        unsigned min_args = 1;
        size_t &u = used[size_t(m.dst)];
        switch (m.kind) {
            case A_SHORT:
            case A_MEDIUM:
            case A_MEDIUM_SEG:
                if (m.kind != A_SHORT) {
                    m.len = std::min(pick_size(g, opt.max_size), g_max_medium);
                    if (m.kind == A_MEDIUM_SEG) m.src_off = g.below(SRC_SZ - m.len + 1);
                }
                break;
            case A_BUILTIN:
                if (g.pct(50)) {
                    m.handler = WEFT_AM_H_INCR;
                    m.counter = 1;
                    min_args = 0;
                } else {
                    m.handler = WEFT_AM_H_ADD;
                    m.counter = 1 + g.below(1000);
                }
                break;
            case A_LONG:
            case A_LONG_SEG: {
                size_t room = AREA > u + 8 ? AREA - u - 8 : 0;
                m.len = std::min({pick_size(g, opt.max_size), room, g_max_long});
                m.dst_off = slot_base(src, round) + u + 1 + g.below(7);  // odd offsets too
                u = m.dst_off + m.len + 1 - slot_base(src, round);
                if (m.kind == A_LONG_SEG) m.src_off = g.below(SRC_SZ - m.len + 1);
                break;
            }
            case A_STRIDED: {
                size_t block = 1 + g.below(300), count = 1 + g.below(12);
                size_t sstride = block + g.below(80), dstride = block + g.below(40);
                size_t dblock = block, dcount = count;
                if (count % 2 == 0 && g.pct(50)) dblock = block * 2, dcount = count / 2, dstride = dblock + g.below(40);
                size_t room = AREA > u + 8 ? AREA - u - 8 : 0;
                if (room == 0) {  // the slot is full: a Short instead
                    m.kind = A_SHORT;
                    break;
                }
                if ((dcount - 1) * dstride + dblock > room) {  // the slot is nearly full: one small block
                    block = dblock = std::min<size_t>(block, room);
                    count = dcount = 1;
                }
                size_t sext = (count - 1) * sstride + block;
                m.s = {g.below(SRC_SZ - sext + 1), sstride, block, count};
                m.d = {slot_base(src, round) + u + 1 + g.below(7), dstride, dblock, dcount};
                u = m.d.offset + (dcount - 1) * dstride + dblock + 1 - slot_base(src, round);
                m.len = block * count;
                break;
            }
            case A_GET:
                m.len = std::min(
                    {pick_size(g, opt.max_size), GET_SZ > get_used + 8 ? GET_SZ - get_used - 8 : 0, g_max_long});
                m.src_off = g.below(SRC_SZ - m.len + 1);
                m.dst_off = GET_LO + get_used + g.below(8);
                get_used = m.dst_off + m.len + 1 - GET_LO;
                m.handler = g.pct(50) ? WEFT_AM_H_EMPTY : H_GETCHK;
                break;
        }
        m.nargs = unsigned(min_args + g.below(WEFT_AM_MAX_ARGS - min_args + 1));
        for (unsigned j = 0; j < m.nargs; ++j) m.args[j] = hkey(opt.seed, D_AMARG, src, round, i, j);
        if (m.kind == A_BUILTIN) {
            if (m.handler == WEFT_AM_H_ADD) m.args[0] = m.counter;
        } else if (m.nargs) {
            m.args[0] =
                (uint64_t(round) << 32) | (uint64_t(i) << 16) | (uint64_t(m.want_reply) << 8) | uint64_t(m.kind);
        }
    }
    return v;
}

// ================================================================== AM handlers

void request_handler(weft_pgas kernel, const weft_am_info *info, void *ud) {
    auto *ks = static_cast<kernel_state *>(ud);
    if (kernel != ks->k) fail("AM handler on kernel %d got kernel handle 0x%x, expected 0x%x", ks->id, kernel, ks->k);
    if (info->is_reply)
        fail("kernel %d: request handler %u called for a reply from kernel %d", ks->id, info->handler, info->source);
    if (info->source < 0 || info->source >= g_nk)
        fail("kernel %d: AM from kernel %d (there are %d)", ks->id, info->source, g_nk);
    if (info->nargs == 0 || info->args == nullptr)
        fail("kernel %d: AM (handler %u, kind %d) from kernel %d has no args; every soak request carries args[0]",
             ks->id, info->handler, info->kind, info->source);
    const int src = info->source;
    const uint64_t a0 = info->args[0];
    const uint32_t round = uint32_t(a0 >> 32);
    const size_t idx = size_t((a0 >> 16) & 0xffff);
    std::vector<am_msg> plan = am_plan(src, round);
    if (idx >= plan.size())
        fail("kernel %d: AM from kernel %d, handler %u: args[0] 0x%" PRIx64
             " names message #%zu of round %u, which has %zu",
             ks->id, src, info->handler, a0, idx, round, plan.size());
    const am_msg &m = plan[idx];
    std::string what = "kernel " + std::to_string(ks->id) + " handling " + describe(m, src, round, idx);
    static const int wire_kind[] = {WEFT_AM_SHORT, WEFT_AM_SHORT, WEFT_AM_MEDIUM,       WEFT_AM_MEDIUM,
                                    WEFT_AM_LONG,  WEFT_AM_LONG,  WEFT_AM_LONG_STRIDED, WEFT_AM_LONG};
    if (m.dst != ks->id || m.kind == A_BUILTIN || m.kind == A_GET)
        fail("%s: it reached the wrong kernel", what.c_str());
    if (info->handler != m.handler) fail("%s: info->handler is %u", what.c_str(), info->handler);
    if (info->kind != wire_kind[m.kind])
        fail("%s: info->kind is %d, expected %d", what.c_str(), info->kind, wire_kind[m.kind]);
    if (info->nargs != m.nargs) fail("%s: info->nargs is %u", what.c_str(), info->nargs);
    for (unsigned j = 0; j < m.nargs; ++j)
        if (info->args[j] != m.args[j])
            fail("%s: args[%u] is 0x%" PRIx64 ", expected 0x%" PRIx64, what.c_str(), j, info->args[j], m.args[j]);
    switch (m.kind) {
        case A_MEDIUM:
        case A_MEDIUM_SEG:
            if (info->length != m.len) fail("%s: info->length is %zu", what.c_str(), info->length);
            if (m.len && !info->payload) fail("%s: info->payload is NULL", what.c_str());
            if (m.kind == A_MEDIUM)
                check_bytes(what + ": payload", hkey(opt.seed, D_AMPAY, src, round, idx), info->payload, m.len);
            else
                check_bytes(what + ": payload", srcarea_key(src), info->payload, m.len, m.src_off);
            break;
        case A_LONG:
        case A_LONG_SEG:
            if (info->length != m.len) fail("%s: info->length is %zu", what.c_str(), info->length);
            if (info->offset != m.dst_off) fail("%s: info->offset is %zu", what.c_str(), info->offset);
            if (m.kind == A_LONG)
                check_bytes(what + ": data in the segment", hkey(opt.seed, D_AMPAY, src, round, idx),
                            ks->base + m.dst_off, m.len);
            else
                check_bytes(what + ": data in the segment", srcarea_key(src), ks->base + m.dst_off, m.len, m.src_off);
            break;
        case A_STRIDED: {
            if (info->length != m.len) fail("%s: info->length is %zu", what.c_str(), info->length);
            if (info->offset != m.d.offset) fail("%s: info->offset is %zu", what.c_str(), info->offset);
            const uint64_t key = srcarea_key(src);
            for (size_t p = 0; p < m.len; ++p) {
                size_t soff = m.s.offset + (p / m.s.block_size) * m.s.stride + p % m.s.block_size;
                size_t doff = m.d.offset + (p / m.d.block_size) * m.d.stride + p % m.d.block_size;
                if (ks->base[doff] != byte_at(key, soff))
                    fail("%s: byte %zu of the stream (segment offset %zu): got 0x%02x, expected 0x%02x", what.c_str(),
                         p, doff, ks->base[doff], byte_at(key, soff));
            }
            break;
        }
        default:
            break;
    }
    {
        std::lock_guard<std::mutex> g(ks->seen_mu);
        if (!ks->seen.insert(hkey(src, round, idx)).second) fail("%s: handled twice", what.c_str());
    }
    if (m.want_reply) {
        uint64_t r0 = a0;
        int rc = weft_am_reply_short(info, H_REPLY, &r0, 1);
        if (rc) fail("%s: weft_am_reply_short returned %s", what.c_str(), weft_err(rc).c_str());
    }
    ks->handled_bytes.fetch_add(m.len, std::memory_order_relaxed);
    ks->handled.fetch_add(1, std::memory_order_release);
}

// weft_am_reply_short's answer, on the sender.
void reply_handler(weft_pgas kernel, const weft_am_info *info, void *ud) {
    auto *ks = static_cast<kernel_state *>(ud);
    am_round *cur = ks->cur.load(std::memory_order_acquire);
    if (kernel != ks->k) fail("reply handler on kernel %d got kernel handle 0x%x", ks->id, kernel);
    if (!info->is_reply || info->kind != WEFT_AM_SHORT || info->nargs != 1 || !info->args)
        fail(
            "kernel %d: reply handler: is_reply %d, kind %d, nargs %u from kernel %d (expected a Short reply with 1 "
            "arg)",
            ks->id, info->is_reply, info->kind, info->nargs, info->source);
    uint64_t a0 = info->args[0];
    uint32_t round = uint32_t(a0 >> 32);
    size_t idx = size_t((a0 >> 16) & 0xffff);
    if (!cur || round != cur->round || idx >= cur->plan.size() || !cur->plan[idx].want_reply ||
        cur->plan[idx].dst != info->source)
        fail("kernel %d: unexpected reply 0x%" PRIx64 " (round %u, message #%zu) from kernel %d while in round %d",
             ks->id, a0, round, idx, info->source, cur ? int(cur->round) : -1);
    if (++cur->replies[idx] != 1)
        fail("kernel %d: %s: answered %d times", ks->id, describe(cur->plan[idx], ks->id, round, idx).c_str(),
             cur->replies[idx]);
    ks->replies.fetch_add(1, std::memory_order_release);
}

// A get's data arrived (runs on the caller).
void get_handler(weft_pgas kernel, const weft_am_info *info, void *ud) {
    auto *ks = static_cast<kernel_state *>(ud);
    am_round *cur = ks->cur.load(std::memory_order_acquire);
    if (kernel != ks->k) fail("get handler on kernel %d got kernel handle 0x%x", ks->id, kernel);
    if (!cur)
        fail("kernel %d: get handler outside a pgas round (source %d, offset %zu)", ks->id, info->source, info->offset);
    size_t idx = SIZE_MAX;
    for (size_t i = 0; i < cur->plan.size(); ++i)
        if (cur->plan[i].kind == A_GET && cur->plan[i].handler == H_GETCHK && cur->plan[i].dst_off == info->offset)
            idx = i;
    if (idx == SIZE_MAX)
        fail("kernel %d: get handler: no get of round %u lands at offset %zu (source %d, length %zu)", ks->id,
             cur->round, info->offset, info->source, info->length);
    const am_msg &m = cur->plan[idx];
    std::string what = "kernel " + std::to_string(ks->id) + ", get handler for " + describe(m, ks->id, cur->round, idx);
    if (!info->is_reply) fail("%s: is_reply is 0", what.c_str());
    if (info->source != m.dst) fail("%s: info->source is %d", what.c_str(), info->source);
    if (info->length != m.len) fail("%s: info->length is %zu", what.c_str(), info->length);
    check_bytes(what + ": data in the segment", srcarea_key(m.dst), ks->base + m.dst_off, m.len, m.src_off);
    if (++cur->get_calls[idx] != 1) fail("%s: ran %d times", what.c_str(), cur->get_calls[idx]);
    ks->get_calls.fetch_add(1, std::memory_order_release);
}

}  // namespace

uint64_t srcarea_key(int kernel) { return hkey(opt.seed, D_SRCAREA, kernel); }

void attach_kernel(weft_pgas pgas, thread_ctx &T) {
    kernel_state &ks = T.ks;
    WEFT_OK(weft_pgas_get_kernel(pgas, T.t, &ks.k));
    WEFT_OK(weft_pgas_kernel_id(ks.k, &ks.id));
    if (ks.id != g_rank * g_threads + T.t)
        fail("local kernel %d has id %d, expected %d", T.t, ks.id, g_rank * g_threads + T.t);
    void *base = nullptr;
    WEFT_OK(weft_pgas_segment(ks.k, &base, &ks.size));
    if (!base || ks.size != g_seg_size)
        fail("weft_pgas_segment: base %p, size %zu (asked %zu)", base, ks.size, g_seg_size);
    ks.base = static_cast<uint8_t *>(base);
    fill(srcarea_key(ks.id), ks.base, SRC_SZ);
    for (unsigned h : user_handlers) WEFT_OK(weft_am_register(ks.k, h, request_handler, &ks));
    WEFT_OK(weft_am_register(ks.k, H_REPLY, reply_handler, &ks));
    WEFT_OK(weft_am_register(ks.k, H_GETCHK, get_handler, &ks));
}

void round_pgas(thread_ctx &T, uint32_t r) {
    kernel_state &ks = T.ks;
    am_round ar;
    ar.round = r;
    ar.plan = am_plan(ks.id, r);
    ar.replies.assign(ar.plan.size(), 0);
    ar.get_calls.assign(ar.plan.size(), 0);
    const uint64_t replies0 = ks.replies.load(), gets0 = ks.get_calls.load();
    ks.cur.store(&ar, std::memory_order_release);
    size_t sync = 0, want_replies = 0, want_gets = 0;
    for (size_t i = 0; i < ar.plan.size(); ++i) {
        const am_msg &m = ar.plan[i];
        std::string what = describe(m, ks.id, r, i);
        doing("round %u pgas: sending %s", r, what.c_str());
        std::vector<uint8_t> buf;
        int rc = 0;
        switch (m.kind) {
            case A_SHORT:
            case A_BUILTIN:
                rc = weft_am_short(ks.k, m.dst, m.handler, m.args, m.nargs, m.flags);
                break;
            case A_MEDIUM:
            case A_LONG:
                buf.resize(m.len);
                fill(hkey(opt.seed, D_AMPAY, ks.id, r, i), buf.data(), m.len);
                rc = m.kind == A_MEDIUM
                         ? weft_am_medium(ks.k, m.dst, m.handler, m.args, m.nargs, buf.data(), m.len, m.flags)
                         : weft_am_long(ks.k, m.dst, m.handler, m.args, m.nargs, buf.data(), m.len, m.dst_off, m.flags);
                // The call promises the buffer may be reused once it returns.
                if (!buf.empty()) std::memset(buf.data(), 0xA5, buf.size());
                break;
            case A_MEDIUM_SEG:
                rc = weft_am_medium_seg(ks.k, m.dst, m.handler, m.args, m.nargs, m.src_off, m.len, m.flags);
                break;
            case A_LONG_SEG:
                rc = weft_am_long_seg(ks.k, m.dst, m.handler, m.args, m.nargs, m.src_off, m.len, m.dst_off, m.flags);
                break;
            case A_STRIDED:
                rc = weft_am_long_strided(ks.k, m.dst, m.handler, m.args, m.nargs, &m.s, &m.d, m.flags);
                break;
            case A_GET:
                fill(hkey(opt.seed, D_CANARY, ks.id, r, i), ks.base + m.dst_off, m.len);
                rc = weft_am_get_long(ks.k, m.dst, m.handler, m.args, m.nargs, m.src_off, m.len, m.dst_off, 0);
                break;
        }
        if (rc) fail("%s: %s", what.c_str(), weft_err(rc).c_str());
        if (!(m.flags & WEFT_AM_ASYNC)) ++sync;
        if (m.want_reply) ++want_replies;
        if (m.kind == A_GET && m.handler == H_GETCHK) ++want_gets;
        T.st.v[S_AMS_SENT]++;
        T.st.v[S_AM_BYTES] += m.len;
        if (m.kind == A_GET) T.st.v[S_GETS]++;
    }
    doing("round %u pgas: weft_am_wait_replies(%zu)", r, sync);
    WEFT_OK(weft_am_wait_replies(ks.k, sync));
    doing("round %u pgas: waiting for %zu handler replies and %zu get handler calls", r, want_replies, want_gets);
    spin_until(T, [&] {
        return ks.replies.load(std::memory_order_acquire) - replies0 >= want_replies &&
               ks.get_calls.load(std::memory_order_acquire) - gets0 >= want_gets;
    });
    for (size_t i = 0; i < ar.plan.size(); ++i) {
        const am_msg &m = ar.plan[i];
        if (m.want_reply && ar.replies[i] != 1)
            fail("%s: answered %d times", describe(m, ks.id, r, i).c_str(), ar.replies[i]);
        if (m.kind == A_GET) {
            if (m.handler == H_GETCHK && ar.get_calls[i] != 1)
                fail("%s: its handler ran %d times", describe(m, ks.id, r, i).c_str(), ar.get_calls[i]);
            check_bytes(describe(m, ks.id, r, i) + ": data after weft_am_wait_replies", srcarea_key(m.dst),
                        ks.base + m.dst_off, m.len, m.src_off);
        }
    }
    ks.cur.store(nullptr, std::memory_order_release);
}

void account_incoming(thread_ctx &T, uint32_t r) {
    for (int t = 0; t < g_threads; ++t) {
        if (kind_of(t, r) != R_PGAS) continue;
        for (int p = 0; p < g_size; ++p)
            for (const am_msg &m : am_plan(p * g_threads + t, r)) {
                if (m.dst != T.ks.id) continue;
                if (m.kind == A_BUILTIN)
                    T.exp_counter += m.counter;
                else if (m.kind != A_GET)
                    T.exp_handled++;
            }
    }
}

void final_pgas_checks(thread_ctx &T) {
    // Nothing is in flight any more (the agreement settled every AM); the segment's source area
    // must be as it was written at the start, and no packet may have been dropped.
    doing("final: checks");
    check_bytes("kernel " + std::to_string(T.ks.id) + ": source area of the segment (nothing writes there)",
                srcarea_key(T.ks.id), T.ks.base, SRC_SZ);
    uint64_t bad = 0;
    WEFT_OK(weft_pgas_bad_packets(T.ks.k, &bad));
    if (bad) fail("kernel %d dropped %" PRIu64 " bad packets", T.ks.id, bad);
}

}  // namespace soak
