// Point-to-point with non-contiguous datatypes: the buffer goes to the fabric as one run when
// its runs merge into one, as an iovec (tag_sendv/tag_recvv, plugin ABI 1.8) when the fabric
// takes one and the runs are few enough, and through a packed staging buffer otherwise.  An
// iovec receive lands in place; a packed one is unpacked at request_finish.
#include <cstdlib>

#include "base/error.hpp"
#include "base/match.hpp"
#include "comm/p2p.hpp"
#include "transport/runtime.hpp"

namespace weft {
namespace {

static_assert(sizeof(datatype_iov) == sizeof(weft_fabric_iov_t) &&
                  offsetof(datatype_iov, base) == offsetof(weft_fabric_iov_t, base) &&
                  offsetof(datatype_iov, len) == offsetof(weft_fabric_iov_t, len),
              "the engine's iovec must be the plugin ABI's");

// Runs per message past which a message is packed: WEFT_IOV_MAX (default 1024; 0 turns
// iovecs off), within the fabric's iov_limit.  UCX spends about 90 instructions per entry
// gathering and scattering, our packing about 30 plus the copy, but packing mallocs a staging
// buffer on each side, and a fresh 1 MiB buffer costs page faults and UCX registrations:
// measured with bench/strided.c on UCX shared memory, 1 MiB in 256 runs of 4 KiB went 26%
// faster as an iovec; in 16384 runs of 64 B both took as long, the iovec with 2.2x the
// instructions (callgrind).
constexpr size_t iov_max_default = 1024;
size_t iov_max(const vci &v) {
    static const size_t configured = [] {
        const char *e = std::getenv("WEFT_IOV_MAX");
        char *end = nullptr;
        unsigned long long n = e && *e ? std::strtoull(e, &end, 10) : iov_max_default;
        return end != nullptr && *end != '\0' ? iov_max_default : static_cast<size_t>(n);
    }();
    if (v.ops->tag_sendv == nullptr || v.ops->tag_recvv == nullptr) return 1;
    size_t fabric = rt().fabric.caps.iov_limit;
    return fabric != 0 && fabric < configured ? fabric : configured;
}

// The runs of b as an iovec of at most iov_max(v) entries: their number (the list malloc'ed
// into *list, or nullptr with one run, which *one then holds), or 0 when b must be packed.
size_t make_iov(const vci &v, const p2p_buffer &b, datatype_iov **list, datatype_iov *one) {
    const datatype &t = *b.type;
    size_t max = iov_max(v), bound;
    *list = nullptr;
    if (!t.flat || max == 0 || __builtin_mul_overflow(b.count, t.blocks.size(), &bound)) return 0;
    if (bound <= 1) {
        size_t n = datatype_iovec(t, b.buf, b.count, one, 1);
        return n == 1 ? 1 : 0;
    }
    if (bound > max) return 0;
    auto *iov = static_cast<datatype_iov *>(std::malloc(bound * sizeof(datatype_iov)));
    if (iov == nullptr) return 0;  // packing needs memory too, and reports its lack
    size_t n = datatype_iovec(t, b.buf, b.count, iov, bound);
    if (n == 1) {
        *one = iov[0];
        std::free(iov);
        return 1;
    }
    *list = iov;
    return n;
}

// A receive was just posted for a process known dead (as p2p.cpp's recheck_failures).
void recheck_failures(vci &v, const comm &c, int source) {
    if (source != WEFT_ANY_SOURCE && peer_failed(c.world_ranks[static_cast<size_t>(source)]))
        v.failure_epoch_seen = g_failure_epoch.load(std::memory_order_relaxed) - 1;
}

}  // namespace

int p2p_post_send_noncontig(comm &c, size_t li, int dest, int dst_idx, uint16_t ctx, int tag, const p2p_buffer &b,
                            request &r) {
    r.op = request::kind::send;
    r.user_count = b.count;
    vci &v = *c.local[li];
    datatype_iov one, *list;
    size_t n = make_iov(v, b, &list, &one);
    const void *data = n == 1 ? one.base : nullptr;
    if (n > 1) {
        r.staging = list;
        r.extras = true;
    } else if (n == 0) {
        r.staging = std::malloc(b.bytes);
        if (r.staging == nullptr)
            return fail(WEFT_ERR_NO_MEM, "send: cannot allocate %zu bytes to pack a derived datatype", b.bytes);
        datatype_pack(*b.type, b.buf, b.count, r.staging);
        data = r.staging;
        r.extras = true;
    }
    uint64_t bits =
        match_bits(ctx, static_cast<uint32_t>(li), static_cast<uint32_t>(c.rank), static_cast<uint32_t>(tag));
    v.enter();
    weft_fabric_peer_t *peer = nullptr;
    int rc = comm_peer(c, li, dest, dst_idx, &peer);
    if (rc == WEFT_SUCCESS) {
        auto *iov = static_cast<const weft_fabric_iov_t *>(r.staging);
        while ((rc = n > 1
                    ? v.ops->tag_sendv(v.ep, peer, iov, n, bits, request_context(r))
                    : v.ops->tag_send(v.ep, peer, data, b.bytes, bits, request_context(r))) == WEFT_PLUGIN_ERR_AGAIN)
            v.ops->ep_progress(v.ep);
        if (rc != WEFT_PLUGIN_OK)
            rc = fail(plugin_error(rc), "send to rank %d: the fabric refused the message (code %d)", dest, rc);
    }
    v.leave();
    if (rc != WEFT_SUCCESS) {
        std::free(r.staging);
        r.staging = nullptr;
    }
    return rc;
}

int p2p_post_recv_noncontig(comm &c, size_t li, int source, int src_idx, uint16_t ctx, int tag, const p2p_buffer &b,
                            request &r, uint64_t also_ignore) {
    r.op = request::kind::recv;
    r.group = &c;
    r.peer = source;
    r.failing = false;
    r.user_buf = const_cast<void *>(b.buf);
    vci &v = *c.local[li];
    datatype_iov one, *list;
    size_t n = make_iov(v, b, &list, &one);
    void *data = n == 1 ? one.base : nullptr;
    if (n >= 1) {
        // In place: nothing to unpack, so request_finish sees a byte capacity and no type.
        r.type = nullptr;
        r.user_count = b.bytes;
        if (n > 1) {
            r.staging = list;
            r.extras = true;
        }
    } else {
        r.type = b.type;  // held by the caller (hold_type), for the unpack at request_finish
        r.user_count = b.count;
        r.staging = std::malloc(b.bytes);
        if (r.staging == nullptr)
            return fail(WEFT_ERR_NO_MEM, "recv: cannot allocate %zu bytes to unpack a derived datatype", b.bytes);
        data = r.staging;
        r.extras = true;
    }
    bool any_source = source == WEFT_ANY_SOURCE, any_tag = tag == WEFT_ANY_TAG, any_index = src_idx == WEFT_ANY_INDEX;
    uint64_t bits =
        match_bits(ctx, any_index ? 0 : static_cast<uint32_t>(src_idx), any_source ? 0 : static_cast<uint32_t>(source),
                   any_tag ? 0 : static_cast<uint32_t>(tag));
    uint64_t ignore = match_ignore(any_source, any_tag, any_index) | also_ignore;
    v.enter();
    int rc;
    auto *iov = static_cast<const weft_fabric_iov_t *>(r.staging);
    while ((rc = n > 1
                ? v.ops->tag_recvv(v.ep, iov, n, bits, ignore, request_context(r))
                : v.ops->tag_recv(v.ep, data, b.bytes, bits, ignore, request_context(r))) == WEFT_PLUGIN_ERR_AGAIN)
        v.ops->ep_progress(v.ep);
    if (__builtin_expect(g_failure_epoch.load(std::memory_order_relaxed) != 0, 0)) recheck_failures(v, c, source);
    v.leave();
    if (rc != WEFT_PLUGIN_OK) {
        std::free(r.staging);
        r.staging = nullptr;
        return fail(plugin_error(rc), "recv: the fabric refused the receive (code %d)", rc);
    }
    return WEFT_SUCCESS;
}

}  // namespace weft
