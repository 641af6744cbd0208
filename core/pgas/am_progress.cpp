// Receiving active messages: validate, commit the data, run the handler, reply.
#include <cstdlib>
#include <cstring>

#include "base/error.hpp"
#include "base/match.hpp"
#include "pgas/pgas.hpp"
#include "transport/runtime.hpp"
#include "base/stats.hpp"
#include "weft/plugin.h"

namespace weft {

namespace {

thread_local am_kernel *t_handler_kernel = nullptr;
struct reply_ctx;
// The request the calling thread's innermost handler is answering: weft_am_reply_short only
// dereferences an info whose private pointer is this one (a stale info from a handler that
// returned points into a dead stack frame).
thread_local reply_ctx *t_reply = nullptr;

// What weft_am_reply_short needs of the request being handled.
struct reply_ctx {
    am_kernel *k;
    uint32_t source;
    uint16_t token;
    bool replied;
    bool is_reply;
};

void bump(std::atomic<uint64_t> &a, uint64_t by = 1) {
    a.store(a.load(std::memory_order_relaxed) + by, std::memory_order_release);
}

void count_bad(am_kernel &k, const char *why) {
    bump(k.bad_packets);
    g_stats.am_dropped.fetch_add(1, std::memory_order_relaxed);  // several endpoints: a real add
    log(WEFT_LOG_WARN, "pgas kernel %u: dropped an active message: %s", k.id, why);
}

bool handler_ok(const am_kernel &k, const am_packet &p) {
    if (p.handler >= WEFT_AM_MAX_HANDLERS) return false;
    if (p.handler == WEFT_AM_H_ADD) return p.nargs >= 1;
    if (p.handler < WEFT_AM_HANDLER_FIRST) return true;
    return k.handlers[p.handler].fn != nullptr;
}

void run_handler(am_kernel &k, const am_packet &p, const void *payload, uint64_t length, uint64_t offset) {
    switch (p.handler) {
        case WEFT_AM_H_EMPTY: return;
        case WEFT_AM_H_INCR: bump(k.counter); return;
        case WEFT_AM_H_ADD: bump(k.counter, p.args[0]); return;
        case am_h_barrier: bump(k.barrier_arrivals); return;
        case am_h_reserved: return;
        default: break;
    }
    const am_handler_entry &h = k.handlers[p.handler];
    bool is_reply = (p.type & am_reply) != 0;
    reply_ctx rc{&k, p.src, p.token, false, is_reply};
    weft_am_info info{};
    info.source = static_cast<int>(p.src);
    info.handler = p.handler;
    info.token = p.token;
    info.kind = p.kind();
    info.is_reply = is_reply;
    info.nargs = p.nargs;
    info.args = p.nargs != 0 ? p.args : nullptr;
    info.payload = payload;
    info.length = length;
    info.offset = offset;
    info.weft_private_ = &rc;
    am_kernel *outer = t_handler_kernel;
    reply_ctx *outer_reply = t_reply;
    t_handler_kernel = &k;
    t_reply = &rc;
    h.fn(k.handle, &info, h.user_data);
    t_handler_kernel = outer;
    t_reply = outer_reply;
}

int send_auto_reply(am_kernel &k, uint32_t dst, uint16_t token) {
    am_packet r;
    r.type = am_kind_short | am_reply;
    r.dst = dst;
    r.token = token;
    return am_send(k, r, am_source{}, nullptr);
}

// The data has landed (or there was none): handler, then the acknowledgement.
void finish(am_kernel &k, const am_packet &p, const void *medium_payload) {
    uint64_t offset = 0;
    if (p.kind() == am_kind_long) offset = p.dst_offset;
    if (p.kind() == am_kind_strided) offset = p.dst_stride.offset;
    if (p.kind() == am_kind_vectored && p.npieces != 0) offset = p.pieces[0];
    run_handler(k, p, medium_payload, p.payload_bytes, offset);
    if (p.type & am_reply) {
        bump(k.replies);  // a get's data: it is the reply
    } else if (!(p.type & am_async)) {
        if (int rc = send_auto_reply(k, p.src, p.token))
            log(WEFT_LOG_WARN, "pgas kernel %u: cannot reply to kernel %u (error %d)", k.id, p.src, rc);
    }
}

void commit(am_kernel &k, const am_packet &p, const char *data) {
    switch (p.kind()) {
        case am_kind_long:
            if (p.payload_bytes != 0) std::memcpy(k.segment + p.dst_offset, data, p.payload_bytes);
            break;
        case am_kind_strided: am_scatter_stride(k.segment, p.dst_stride, data); break;
        case am_kind_vectored: am_scatter_pieces(k.segment, p.pieces, p.npieces, data); break;
        default: break;
    }
}

void serve_get(am_kernel &k, const am_packet &p) {
    am_packet r;
    r.type = static_cast<uint8_t>(p.kind() | am_reply);
    r.dst = p.src;
    r.token = p.token;
    r.handler = p.handler;
    r.nargs = p.nargs;
    r.args = p.args;
    r.payload_bytes = p.payload_bytes;
    am_source src;
    if (p.kind() == am_kind_strided) {
        r.dst_stride = p.dst_stride;
        src.stride = &p.src_stride;
    } else {
        r.dst_offset = p.dst_offset;
        src.contig = k.segment + p.src_offset;
    }
    if (int rc = am_send(k, r, src, nullptr))
        log(WEFT_LOG_WARN, "pgas kernel %u: cannot answer a get from kernel %u (error %d)", k.id, p.src, rc);
}

void start_rndv(am_kernel &k, const am_packet &p, const void *packet, size_t len, int src_rank, int src_index) {
    am_rndv *e = nullptr;
    for (auto &x : k.rndv)
        if (!x->active) {
            e = x.get();
            break;
        }
    if (e == nullptr) e = k.rndv.emplace_back(std::make_unique<am_rndv>()).get();
    std::memcpy(e->header, packet, len);
    e->header_len = len;
    void *dst;
    if (p.kind() == am_kind_long) {
        dst = k.segment + p.dst_offset;
    } else {
        e->staging = std::malloc(p.payload_bytes);
        if (e->staging == nullptr) {
            count_bad(k, "no memory to stage a large strided or vectored payload");
            return;
        }
        dst = e->staging;
    }
    pgas_ctx &x = *k.ctx;
    uint64_t bits = match_bits(x.context, static_cast<uint32_t>(src_index), static_cast<uint32_t>(src_rank),
                               (static_cast<uint32_t>(k.li) << am_tag_shift) | p.rndv_seq);
    e->r.complete.store(false, std::memory_order_relaxed);
    e->r.fabric_status = WEFT_PLUGIN_OK;
    e->r.endpoint = k.v;
    vci &v = *k.v;
    int rc;
    while ((rc = v.ops->tag_recv(v.ep, dst, p.payload_bytes, bits, 0, request_context(e->r))) == WEFT_PLUGIN_ERR_AGAIN)
        v.ops->ep_progress(v.ep);
    if (rc != WEFT_PLUGIN_OK) {
        std::free(e->staging);
        e->staging = nullptr;
        count_bad(k, "the fabric refused the receive of a large payload");
        return;
    }
    e->active = true;
}

void finish_rndv(am_kernel &k, am_rndv &e) {
    e.active = false;
    am_packet p;
    am_decode(e.header, e.header_len, p);  // decoded once already: valid
    if (e.r.fabric_status != WEFT_PLUGIN_OK || e.r.msg_bytes != p.payload_bytes) {
        count_bad(k, "a large payload arrived short or failed");
    } else {
        if (e.staging != nullptr) commit(k, p, static_cast<const char *>(e.staging));
        finish(k, p, nullptr);
    }
    std::free(e.staging);
    e.staging = nullptr;
}

// Returns nullptr when the packet is valid and was handled, else why it was dropped.
const char *handle_packet(am_kernel &k, const uint64_t *buf, size_t len, uint64_t tag) {
    am_packet p;
    if (am_wire_error e = am_decode(buf, len, p); e != am_wire_error::ok) return am_wire_error_name(e);
    pgas_ctx &x = *k.ctx;
    if (p.dst != k.id) return "addressed to another kernel";
    int src_rank = match_source(tag), src_index = match_index(tag);
    bool from_hardware = static_cast<uint32_t>(src_rank) == am_hw_rank;
    if (from_hardware) {
        // The fabric names the sending kernel itself (kernel_bind's tag).
        if (!x.is_hardware(static_cast<uint32_t>(src_index)) || p.src != static_cast<uint32_t>(src_index))
            return "its source kernel is not the hardware kernel that sent it";
        if (p.ext_flags != 0) return "a hardware kernel sent Weft's extensions";
    } else {
        if (src_rank >= x.c->size) return "from a rank outside the communicator";
        uint32_t first = x.c->remote_offset[static_cast<size_t>(src_rank)];
        if (first + static_cast<uint32_t>(src_index) >= x.c->remote_offset[static_cast<size_t>(src_rank) + 1] ||
            p.src != x.id_of[first + static_cast<uint32_t>(src_index)])
            return "its source kernel is not the sender";
    }
    if (from_hardware && (p.kind() == am_kind_long || p.kind() == am_kind_strided) && (p.type & am_async) &&
        !(p.type & am_reply)) {
        // Maybe the answer to a Shoal get: the GAScore sends it as a plain ASYNC Long with the
        // get's token.  Then it is this kernel's reply, as Weft's own get answers are.
        for (auto it = k.shoal_gets.begin(); it != k.shoal_gets.end(); ++it)
            if (it->first == p.src && it->second == p.token) {
                k.shoal_gets.erase(it);
                p.type = static_cast<uint8_t>((p.type & ~am_async) | am_reply);
                break;
            }
    }
    if (p.is_get()) {
        // The handler runs on the requester when the data arrives; here only the source matters.
        if (!am_check_bounds(p, x.segment_size)) return "a region lies outside the segment";
        serve_get(k, p);
        return nullptr;
    }
    if (!handler_ok(k, p)) return "no handler is registered at its index (or H_ADD without an argument)";
    bool reply = (p.type & am_reply) != 0;
    if (reply && p.kind() == am_kind_short) {
        if (p.type & am_async)
            run_handler(k, p, nullptr, 0, 0);  // a handler's own reply
        else
            bump(k.replies);
        return nullptr;
    }
    if (!am_check_bounds(p, x.segment_size)) return "a region lies outside the segment";
    if (p.ext_flags & am_ext_rndv) {
        start_rndv(k, p, buf, len, src_rank, src_index);
        return nullptr;
    }
    commit(k, p, static_cast<const char *>(p.payload));
    finish(k, p, p.kind() == am_kind_medium ? p.payload : nullptr);
    return nullptr;
}

int kernel_progress(am_kernel &k) {
    int n = 0;
    for (unsigned budget = 0; budget < am_rx_slots; ++budget) {
        am_rx &rx = k.rx[k.rx_head];
        if (!rx.r.complete.load(std::memory_order_acquire)) break;
        if (rx.r.fabric_status != WEFT_PLUGIN_OK)
            count_bad(k,
                      rx.r.fabric_status == WEFT_PLUGIN_ERR_TRUNCATE ? "larger than any valid packet"
                                                                     : "the fabric reported an error");
        else if (const char *why = handle_packet(k, rx.buf, rx.r.msg_bytes, rx.r.msg_tag))
            count_bad(k, why);
        if (int rc = am_post_rx(k, rx))
            log(WEFT_LOG_ERROR, "pgas kernel %u: cannot repost a receive (error %d)", k.id, rc);
        k.rx_head = (k.rx_head + 1) % am_rx_slots;
        ++n;
    }
    for (size_t i = 0; i < k.rndv.size(); ++i) {
        am_rndv &e = *k.rndv[i];
        if (e.active && e.r.complete.load(std::memory_order_acquire)) {
            finish_rndv(k, e);
            ++n;
        }
    }
    return n;
}

}  // namespace

int am_post_rx(am_kernel &k, am_rx &rx) {
    uint64_t bits = match_bits(k.ctx->context, 0, 0, static_cast<uint32_t>(k.li) << am_tag_shift);
    uint64_t ignore = match_rank_mask | match_index_mask;
    rx.r.complete.store(false, std::memory_order_relaxed);
    rx.r.fabric_status = WEFT_PLUGIN_OK;
    rx.r.endpoint = k.v;
    vci &v = *k.v;
    int rc;
    while ((rc = v.ops->tag_recv(v.ep, rx.buf, am_max_packet, bits, ignore, request_context(rx.r))) ==
           WEFT_PLUGIN_ERR_AGAIN)
        v.ops->ep_progress(v.ep);
    return rc == WEFT_PLUGIN_OK ? WEFT_SUCCESS
                                : fail(plugin_error(rc), "pgas: the fabric refused a receive (code %d)", rc);
}

int am_progress_hook(vci &, vci_hook &self) {
    int n = 0;
    for (auto *k = static_cast<am_kernel *>(self.state); k != nullptr; k = k->next_on_vci) {
        if (k->in_progress) continue;
        k->in_progress = true;
        n += kernel_progress(*k);
        k->in_progress = false;
    }
    return n;
}

bool am_in_handler() { return t_handler_kernel != nullptr; }

int am_reply_short(const weft_am_info *info, unsigned handler, const uint64_t *args, unsigned nargs) {
    auto *rc = static_cast<reply_ctx *>(info->weft_private_);
    if (rc == nullptr || rc != t_reply)
        return fail(WEFT_ERR_ARG,
                    "weft_am_reply_short: call it only from inside the handler of the message it answers");
    if (rc->is_reply) return fail(WEFT_ERR_ARG, "weft_am_reply_short: a reply cannot be answered");
    if (rc->replied) return fail(WEFT_ERR_ARG, "weft_am_reply_short: a handler may reply only once");
    am_packet r;
    r.type = am_kind_short | am_reply | am_async;
    r.dst = rc->source;
    r.token = rc->token;
    r.handler = handler;
    r.nargs = nargs;
    r.args = args;
    int err = am_send(*rc->k, r, am_source{}, nullptr);
    if (err == WEFT_SUCCESS) rc->replied = true;
    return err;
}

}  // namespace weft
