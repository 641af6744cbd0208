// Sending active messages: transmit slots, packing, and the rendezvous for large payloads.
#include <cstdlib>
#include <cstring>

#include "base/error.hpp"
#include "base/match.hpp"
#include "pgas/pgas.hpp"
#include "transport/runtime.hpp"

namespace weft {

void am_gather_stride(const char *segment, const am_stride_desc &s, char *out) {
    for (uint64_t b = 0; b < s.block_count; ++b, out += s.block_size)
        std::memcpy(out, segment + s.offset + b * s.stride, s.block_size);
}

void am_scatter_stride(char *segment, const am_stride_desc &s, const char *in) {
    for (uint64_t b = 0; b < s.block_count; ++b, in += s.block_size)
        std::memcpy(segment + s.offset + b * s.stride, in, s.block_size);
}

void am_gather_pieces(const char *segment, const weft_am_piece *pieces, size_t n, char *out) {
    for (size_t i = 0; i < n; ++i) {
        if (pieces[i].length != 0) std::memcpy(out, segment + pieces[i].offset, pieces[i].length);
        out += pieces[i].length;
    }
}

void am_scatter_pieces(char *segment, const uint64_t *pieces, size_t n, const char *in) {
    for (size_t i = 0; i < n; ++i) {
        if (pieces[2 * i + 1] != 0) std::memcpy(segment + pieces[2 * i], in, pieces[2 * i + 1]);
        in += pieces[2 * i + 1];
    }
}

int am_post_send(am_kernel &k, uint32_t dst, const void *buf, size_t len, uint32_t seq, request &r) {
    pgas_ctx &x = *k.ctx;
    comm &c = *x.c;
    int rank = x.kernel_rank[dst];
    int index = x.kernel_index[dst];
    if (rank < 0) {
        // A hardware kernel: one raw packet, routed by kernel id.
        r.complete.store(false, std::memory_order_relaxed);
        r.fabric_status = WEFT_PLUGIN_OK;
        r.endpoint = k.v;
        vci &v = *k.v;
        int rc;
        while ((rc = v.ops->kernel_send(v.ep, dst, k.id, buf, len, request_context(r))) == WEFT_PLUGIN_ERR_AGAIN)
            v.ops->ep_progress(v.ep);
        if (rc != WEFT_PLUGIN_OK)
            return fail(plugin_error(rc), "active message to hardware kernel %u: the fabric refused it (code %d)", dst,
                        rc);
        return WEFT_SUCCESS;
    }
    weft_fabric_peer_t *peer = nullptr;
    if (int rc = comm_peer(c, k.li, rank, index, &peer)) return rc;
    uint64_t bits = match_bits(x.context, static_cast<uint32_t>(k.li), static_cast<uint32_t>(c.rank),
                               (static_cast<uint32_t>(index) << am_tag_shift) | seq);
    r.complete.store(false, std::memory_order_relaxed);
    r.fabric_status = WEFT_PLUGIN_OK;
    r.endpoint = k.v;
    vci &v = *k.v;
    int rc;
    while ((rc = v.ops->tag_send(v.ep, peer, buf, len, bits, request_context(r))) == WEFT_PLUGIN_ERR_AGAIN)
        v.ops->ep_progress(v.ep);
    if (rc != WEFT_PLUGIN_OK)
        return fail(plugin_error(rc), "active message to kernel %u: the fabric refused it (code %d)", dst, rc);
    return WEFT_SUCCESS;
}

namespace {

bool reusable(am_tx &t) {
    if (t.held) return false;
    if (t.busy) {
        if (!t.r.complete.load(std::memory_order_acquire)) return false;
        t.busy = false;
        std::free(t.heap);
        t.heap = nullptr;
    }
    return true;
}

}  // namespace

am_tx &am_tx_acquire(am_kernel &k) {
    for (;;) {
        for (unsigned i = 0; i < am_tx_slots; ++i) {
            unsigned s = (k.tx_next + i) % am_tx_slots;
            if (reusable(k.tx[s])) {
                k.tx_next = (s + 1) % am_tx_slots;
                return k.tx[s];
            }
        }
        k.v->progress_held();
    }
}

namespace {

// Packs a payload that is not one contiguous buffer (strided or vectored in k's segment) into out.
void gather_payload(const am_kernel &k, const am_source &src, char *out) {
    if (src.stride != nullptr)
        am_gather_stride(k.segment, *src.stride, out);
    else
        am_gather_pieces(k.segment, src.pieces, src.npieces, out);
}

// Where the payload goes in an encoded packet of len bytes: its last bytes, padded to a word.
char *payload_place(am_tx &h, size_t len, uint64_t payload_bytes) {
    return reinterpret_cast<char *>(h.buf) + len - ((payload_bytes + 7) & ~uint64_t{7});
}

// A get from a hardware kernel, in Shoal's form (a GAScore does not parse Weft's).
int am_send_shoal_get(am_kernel &k, am_packet &p) {
    if ((p.kind() != am_kind_long && p.kind() != am_kind_strided) || !am_shoal_fits(p) ||
        p.payload_bytes > am_max_inline)
        return fail(WEFT_ERR_UNSUPPORTED,
                    "get from hardware kernel %u: Shoal's format has Long and strided gets of at most %zu bytes, "
                    "with 16-bit strides, block sizes and counts and handlers below 16",
                    p.dst, am_max_inline);
    p.token = k.token++;
    am_tx &h = am_tx_acquire(k);
    size_t len = am_encode_shoal_get(p, h.buf);
    k.shoal_gets.emplace_back(p.dst, p.token);
    if (int rc = am_post_send(k, p.dst, h.buf, len, 0, h.r)) {
        k.shoal_gets.pop_back();
        return rc;
    }
    h.busy = true;
    return WEFT_SUCCESS;
}

// A strided or vectored Long to a hardware kernel, in Shoal's form: one packet.
int am_send_shoal_put(am_kernel &k, am_packet &p, const am_source &src) {
    if (!am_shoal_fits(p) || p.payload_bytes > am_max_inline)
        return fail(WEFT_ERR_UNSUPPORTED,
                    "active message to hardware kernel %u: Shoal's format carries strided Longs with 16-bit strides, "
                    "block sizes and counts, vectored Longs of 1..15 pieces below 4096 bytes each, at most %zu "
                    "bytes, to handlers below 16",
                    p.dst, am_max_inline);
    p.token = k.token++;
    am_tx &h = am_tx_acquire(k);
    p.payload = src.contig;
    size_t len = am_encode_shoal(p, h.buf);
    if (src.contig == nullptr && p.payload_bytes != 0) gather_payload(k, src, payload_place(h, len, p.payload_bytes));
    if (int rc = am_post_send(k, p.dst, h.buf, len, 0, h.r)) return rc;
    h.busy = true;
    return WEFT_SUCCESS;
}

}  // namespace

int am_send(am_kernel &k, am_packet &p, const am_source &src, am_tx **waiter) {
    p.src = k.id;
    bool to_hardware = k.ctx->is_hardware(p.dst);
    if (to_hardware && p.is_get()) return am_send_shoal_get(k, p);
    if (to_hardware && (p.kind() == am_kind_strided || p.kind() == am_kind_vectored) && !(p.type & am_reply))
        return am_send_shoal_put(k, p, src);
    bool has_payload = !p.is_get() && p.kind() != am_kind_short && p.payload_bytes != 0;
    bool rndv = has_payload && p.payload_bytes > am_max_inline;
    if (rndv) {
        p.ext_flags |= am_ext_rndv;
        p.rndv_seq = static_cast<uint16_t>(k.rndv_seq % am_seq_mask + 1);
    }
    if (to_hardware && am_needs_ext(p))
        return fail(WEFT_ERR_UNSUPPORTED,
                    "active message to hardware kernel %u: it needs Weft's packet extensions (handler >= 16, a "
                    "payload above 8192 bytes, strided, vectored, or a handler's reply), which a GAScore cannot parse",
                    p.dst);
    if (k.ctx->shoal_compat && am_needs_ext(p))
        return fail(WEFT_ERR_UNSUPPORTED,
                    "active message: it needs Weft's packet extensions (handler >= 16, a payload above 8192 bytes, "
                    "strided, vectored or get), and the context was created with weft_am_shoal_compat=true");
    if (rndv) k.rndv_seq = p.rndv_seq;
    if (!(p.type & am_reply)) p.token = k.token++;  // replies echo the request's token
    am_tx &h = am_tx_acquire(k);
    p.payload = rndv ? nullptr : src.contig;
    size_t len = am_encode(p, h.buf);
    if (has_payload && !rndv && src.contig == nullptr) gather_payload(k, src, payload_place(h, len, p.payload_bytes));
    if (int rc = am_post_send(k, p.dst, h.buf, len, 0, h.r)) return rc;
    h.busy = true;
    if (!rndv) return WEFT_SUCCESS;

    am_tx &d = am_tx_acquire(k);
    const void *data = src.contig;
    if (data == nullptr) {
        d.heap = std::malloc(p.payload_bytes);
        if (d.heap == nullptr)
            return fail(WEFT_ERR_NO_MEM, "active message: cannot allocate %llu bytes to pack the payload",
                        static_cast<unsigned long long>(p.payload_bytes));
        gather_payload(k, src, static_cast<char *>(d.heap));
        data = d.heap;
    }
    if (int rc = am_post_send(k, p.dst, data, p.payload_bytes, p.rndv_seq, d.r)) {
        std::free(d.heap);
        d.heap = nullptr;
        return rc;
    }
    d.busy = true;
    if (src.caller_buffer && waiter != nullptr) {
        d.held = true;
        *waiter = &d;
    }
    return WEFT_SUCCESS;
}

}  // namespace weft
