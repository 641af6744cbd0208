// Point-to-point: send, recv, isend, irecv, probe, iprobe, and the multiplex stream variants.
#include "comm/p2p.hpp"

#include <cstdlib>

#include "base/error.hpp"
#include "base/match.hpp"
#include "transport/runtime.hpp"
#include "comm/errhandler.hpp"
#include "comm/stream.hpp"

namespace weft {

// A receive was just posted for a process known dead: the endpoint's next progress applies
// the failures again (peer_failure.cpp), failing it unless a message it sent was waiting.
inline void recheck_failures(vci &v, const comm &c, int source) {
    if (source != WEFT_ANY_SOURCE && peer_failed(c.world_ranks[static_cast<size_t>(source)]))
        v.failure_epoch_seen = g_failure_epoch.load(std::memory_order_relaxed) - 1;
}

namespace {

// The bodies of p2p_post_send and p2p_post_recv, inlined into weft_send and weft_recv as well:
// a call with eight arguments costs a blocking call about 25 instructions each way.
__attribute__((always_inline)) inline int post_send(comm &c, size_t li, int dest, int dst_idx, uint16_t ctx, int tag,
                                                    const p2p_buffer &b, request &r) {
    if (__builtin_expect(g_failure_epoch.load(std::memory_order_relaxed) != 0, 0) &&
        peer_failed(c.world_ranks[static_cast<size_t>(dest)]))
        return fail_proc("send", dest, c.world_ranks[static_cast<size_t>(dest)]);
    if (!b.type->contiguous && b.bytes != 0) return p2p_post_send_noncontig(c, li, dest, dst_idx, ctx, tag, b, r);
    r.op = request::kind::send;
    r.user_count = b.count;
    const void *data = b.buf;
    vci &v = *c.local[li];
    uint64_t bits =
        match_bits(ctx, static_cast<uint32_t>(li), static_cast<uint32_t>(c.rank), static_cast<uint32_t>(tag));
    v.enter();
    weft_fabric_peer_t *peer = nullptr;
    int rc = comm_peer(c, li, dest, dst_idx, &peer);
    if (rc == WEFT_SUCCESS) {
        while ((rc = v.ops->tag_send(v.ep, peer, data, b.bytes, bits, request_context(r))) == WEFT_PLUGIN_ERR_AGAIN)
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

// also_ignore: g_user_recv_ignore for a user receive (it matches synchronous messages too), else 0.
__attribute__((always_inline)) inline int post_recv(comm &c, size_t li, int source, int src_idx, uint16_t ctx, int tag,
                                                    const p2p_buffer &b, request &r, uint64_t also_ignore) {
    // A receive from a process known dead is still posted: a message it sent before dying
    // may have arrived.  Waiting for it fails it otherwise (p2p_fail_if_peer_dead).
    if (!b.type->contiguous && b.bytes != 0)
        return p2p_post_recv_noncontig(c, li, source, src_idx, ctx, tag, b, r, also_ignore);
    r.op = request::kind::recv;
    r.group = &c;
    r.peer = source;
    r.failing = false;
    r.user_buf = const_cast<void *>(b.buf);
    r.user_count = b.count;
    void *data = r.user_buf;
    // request_finish needs the element size (and the layout, for unpacking); a non-owning
    // pointer: built-ins are static, and derived types are held by the caller (hold_type).
    r.type = b.type;
    bool any_source = source == WEFT_ANY_SOURCE, any_tag = tag == WEFT_ANY_TAG, any_index = src_idx == WEFT_ANY_INDEX;
    uint64_t bits =
        match_bits(ctx, any_index ? 0 : static_cast<uint32_t>(src_idx), any_source ? 0 : static_cast<uint32_t>(source),
                   any_tag ? 0 : static_cast<uint32_t>(tag));
    uint64_t ignore = match_ignore(any_source, any_tag, any_index) | also_ignore;
    vci &v = *c.local[li];
    v.enter();
    int rc;
    while ((rc = v.ops->tag_recv(v.ep, data, b.bytes, bits, ignore, request_context(r))) == WEFT_PLUGIN_ERR_AGAIN)
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

}  // namespace

int p2p_post_send(comm &c, size_t li, int dest, int dst_idx, uint16_t ctx, int tag, const p2p_buffer &b, request &r) {
    return post_send(c, li, dest, dst_idx, ctx, tag, b, r);
}

int p2p_post_recv(comm &c, size_t li, int source, int src_idx, uint16_t ctx, int tag, const p2p_buffer &b, request &r) {
    return post_recv(c, li, source, src_idx, ctx, tag, b, r, ctx == c.context_id ? g_user_recv_ignore : 0);
}

void p2p_fail_if_peer_dead(request &r) {
    if (r.op != request::kind::recv || r.failing || r.group == nullptr) return;
    const peer_group &c = *r.group;
    bool hit =
        r.peer == WEFT_ANY_SOURCE ? group_has_failed(c) : peer_failed(c.world_ranks[static_cast<size_t>(r.peer)]);
    if (!hit) return;
    vci &v = *r.endpoint;
    v.enter();
    vci_drain(v);  // what the dead sent before dying may still be on its way in
    if (!r.complete.load(std::memory_order_acquire)) {
        r.failing = true;
        if (v.ops->cancel(v.ep, request_context(r)) != WEFT_PLUGIN_OK) r.failing = false;
    }
    v.leave();
}

void p2p_wait_local(request &r) {
    // The request is on the caller's stack, out of reach of the endpoint's failure sweep
    // (peer_failure.cpp), so the wait itself watches for its peer's death.
    vci_progress_until(*r.endpoint, [&] {
        if (r.complete.load(std::memory_order_acquire)) return true;
        if (__builtin_expect(g_failure_epoch.load(std::memory_order_relaxed) != 0, 0)) p2p_fail_if_peer_dead(r);
        return false;
    });
}

// src_idx/dst_idx < 0 (but not WEFT_ANY_INDEX) means "conventional call": index 0 both sides.
int check_p2p(const char *fn, const void *buf, size_t count, weft_datatype type, int peer, bool is_recv, int tag,
              weft_comm handle, int local_idx, int peer_idx, p2p_op &op) {
    if (int rc = runtime_check(fn)) return rc;
    comm *c = op.c = comm_get(handle);
    if (c == nullptr) return fail(WEFT_ERR_COMM, "%s: invalid communicator handle 0x%x", fn, handle);
    const datatype *t = op.b.type = datatype_get(type);
    if (t == nullptr) return fail(WEFT_ERR_TYPE, "%s: invalid datatype handle 0x%x", fn, type);
    if (!t->committed)
        return fail(WEFT_ERR_TYPE, "%s: datatype 0x%x is not committed (call weft_type_commit)", fn, type);
    bool peer_ok = peer == WEFT_PROC_NULL || (peer >= 0 && peer < c->size) || (is_recv && peer == WEFT_ANY_SOURCE);
    if (!peer_ok)
        return fail(WEFT_ERR_RANK, "%s: rank %d is out of range for a communicator of size %d", fn, peer, c->size);
    if (!(tag >= 0 && tag <= WEFT_TAG_UB) && !(is_recv && tag == WEFT_ANY_TAG))
        return fail(WEFT_ERR_TAG, "%s: tag %d is outside 0..WEFT_TAG_UB (%d)", fn, tag, WEFT_TAG_UB);
    if (__builtin_mul_overflow(count, t->size, &op.b.bytes))
        return fail(WEFT_ERR_COUNT, "%s: count %zu of a %zu-byte datatype overflows", fn, count, t->size);
    op.b.buf = buf;
    op.b.count = count;
    if (buf == nullptr && op.b.bytes != 0)
        return fail(WEFT_ERR_BUFFER, "%s: buffer is NULL but count is %zu", fn, count);
    if (local_idx < 0 || static_cast<size_t>(local_idx) >= c->local.size()) {
        if (c->local.empty())
            return fail(WEFT_ERR_STREAM, "%s: this process attached no stream to the multiplex communicator", fn);
        return fail(WEFT_ERR_STREAM, "%s: local stream index %d is outside 0..%zu", fn, local_idx, c->local.size() - 1);
    }
    op.li = static_cast<size_t>(local_idx);
    op.peer_idx = peer_idx;
    if (peer >= 0 && !(is_recv && peer_idx == WEFT_ANY_INDEX)) {
        uint32_t n = c->remote_offset[static_cast<size_t>(peer) + 1] - c->remote_offset[static_cast<size_t>(peer)];
        if (peer_idx < 0 || static_cast<uint32_t>(peer_idx) >= n)
            return fail(WEFT_ERR_STREAM, "%s: rank %d attached %u stream(s); stream index %d is out of range", fn, peer,
                        n, peer_idx);
    } else if (peer_idx != WEFT_ANY_INDEX && (peer_idx < 0 || peer_idx > 255)) {
        return fail(WEFT_ERR_STREAM, "%s: stream index %d is out of range", fn, peer_idx);
    }
    op.s = c->local_streams[op.li];
    return WEFT_SUCCESS;
}

namespace {

int conflict(const char *fn) {
    return fail(WEFT_ERR_STREAM, "%s: another thread is using the same stream; a stream is a serial context", fn);
}

// A derived datatype can be freed while an operation on it is pending: hold a reference.
void hold_type(request &r, weft_datatype type, const p2p_op &op) {
    if (!op.b.type->builtin) {
        r.type_hold = datatype_get_shared(type);
        r.extras = true;
    }
}

int do_send(const p2p_op &op, int dest, int tag) {
    stream_use use(op.s);
    if (use.conflict()) return conflict("send");
    local_request r;
    r.endpoint = op.c->local[op.li];
    if (int rc = p2p_post_send(*op.c, op.li, dest, op.peer_idx, op.c->context_id, tag, op.b, r)) return rc;
    p2p_wait_local(r);
    return request_finish(r, WEFT_STATUS_IGNORE);
}

int do_recv(const p2p_op &op, int source, int tag, weft_status *status) {
    stream_use use(op.s);
    if (use.conflict()) return conflict("recv");
    local_request r;
    r.endpoint = op.c->local[op.li];
    if (int rc = p2p_post_recv(*op.c, op.li, source, op.peer_idx, op.c->context_id, tag, op.b, r)) return rc;
    p2p_wait_local(r);
    int rc = request_finish(r, status);
    if (rc == WEFT_ERR_TRUNCATE)
        fail(rc, "recv: a message of %zu bytes does not fit the %zu-byte buffer", r.msg_bytes, op.b.bytes);
    return rc;
}

int do_start(bool is_send, const p2p_op &op, weft_datatype type, int peer, int tag, weft_request *req, const char *fn) {
    if (req == nullptr) return fail(WEFT_ERR_ARG, "%s: request must not be NULL", fn);
    stream_use use(op.s);
    if (use.conflict()) return conflict(fn);
    comm &c = *op.c;
    vci &v = *c.local[op.li];
    v.enter();
    request *r = v.requests.alloc(req);
    if (r != nullptr) {
        r->endpoint = &v;
        r->comm_pending = &c.pending[op.li];
        ++*r->comm_pending;
    }
    v.leave();
    if (r == nullptr)
        return fail(WEFT_ERR_NO_MEM,
                    "%s: more than %u requests pending on one endpoint (spread them over more: WEFT_NUM_VCIS, streams)",
                    fn, request_pool::max_slots - 1);
    int rc;
    if (peer == WEFT_PROC_NULL) {
        r->op = request::kind::done;
        r->complete.store(true, std::memory_order_relaxed);
        rc = WEFT_SUCCESS;
    } else if (is_send) {
        rc = p2p_post_send(c, op.li, peer, op.peer_idx, c.context_id, tag, op.b, *r);
    } else {
        rc = p2p_post_recv(c, op.li, peer, op.peer_idx, c.context_id, tag, op.b, *r);
    }
    if (rc == WEFT_SUCCESS && r->op != request::kind::done) hold_type(*r, type, op);
    if (rc != WEFT_SUCCESS) {
        v.enter();
        request_release(*r);
        v.leave();
        *req = WEFT_REQUEST_NULL;
    }
    return rc;
}

void proc_null_status(weft_status *status) {
    if (status == WEFT_STATUS_IGNORE) return;
    status->source = WEFT_PROC_NULL;
    status->tag = WEFT_ANY_TAG;
    status->error = WEFT_SUCCESS;
    status->stream_index = 0;
    status->weft_bytes_ = 0;
    status->weft_cancelled_ = 0;
}

}  // namespace
}  // namespace weft

using namespace weft;

namespace weft {
namespace {

// The common case of a blocking call, checked in a few branches: initialized, valid
// communicator with a local endpoint, built-in (contiguous) datatype, peer and tag in range.
// Anything else (including every error, which then gets its detail) takes the full path.
// With stream checks compiled in, stream communicators take the full path too.
inline bool fast_args(weft_comm handle, weft_datatype type, size_t count, const void *buf, int peer, int tag, comm *&c,
                      const datatype *&t, size_t &bytes) {
    if (!runtime_initialized()) return false;
    c = comm_get(handle);
    // Built-in types only (the table lookup of a derived one is the slow path's business).
    uint32_t u = static_cast<uint32_t>(type), slot = (u & 0xfffff) - 1;
    if ((u >> 20) != 0x500 || slot >= datatype_builtin_count) return false;
    t = g_builtin_datatypes[slot];
    if (c == nullptr || t == nullptr || !t->contiguous) return false;
    if (static_cast<unsigned>(peer) >= static_cast<unsigned>(c->size) || static_cast<unsigned>(tag) > WEFT_TAG_UB)
        return false;
    if (c->local.empty() ||
        c->remote_offset[static_cast<size_t>(peer) + 1] == c->remote_offset[static_cast<size_t>(peer)])
        return false;
#ifdef WEFT_STREAM_CHECKS
    if (c->local_streams[0] != nullptr) return false;
#endif
    if (__builtin_mul_overflow(count, t->size, &bytes)) return false;
    return buf != nullptr || bytes == 0;
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

// Sends on endpoint 0 through the fabric's tag_send_now: WEFT_SUCCESS when sent, or 1 when the
// caller must send through the request path (no tag_send_now, a dead peer's check, a send the
// fabric cannot finish now, or an error, which the request path reports in full).
__attribute__((always_inline)) inline int p2p_send_now(comm &c, int dest, int tag, const void *buf, size_t bytes) {
    vci &v = *c.local[0];
    if (v.ops->tag_send_now == nullptr || __builtin_expect(g_failure_epoch.load(std::memory_order_relaxed) != 0, 0))
        return 1;
    uint64_t bits = match_bits(c.context_id, 0, static_cast<uint32_t>(c.rank), static_cast<uint32_t>(tag));
    v.enter();
    weft_fabric_peer_t *peer = nullptr;
    int rc = comm_peer(c, 0, dest, 0, &peer);
    if (rc == WEFT_SUCCESS) rc = v.ops->tag_send_now(v.ep, peer, buf, bytes, bits);
    v.leave();
    if (rc == WEFT_PLUGIN_OK) return WEFT_SUCCESS;
    return 1;  // the request path retries it and reports any error in full
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

// weft_send when fast_args declined: the full checker, with its error details.  Out of line, so
// that weft_send's fast path keeps the frame it had before errors went to handlers (inline,
// the handle kept for the handler cost it 3 instructions per call).
__attribute__((noinline)) int send_checked(const void *buf, size_t count, weft_datatype type, int dest, int tag,
                                           weft_comm handle) {
    p2p_op op;
    if (int rc = check_p2p("weft_send", buf, count, type, dest, false, tag, handle, 0, 0, op))
        return comm_error_raise(handle, rc, "weft_send");
    return dest == WEFT_PROC_NULL ? WEFT_SUCCESS : comm_error_return(handle, do_send(op, dest, tag), "weft_send");
}

}  // namespace
}  // namespace weft

extern "C" int weft_send(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm handle) {
    comm *c;
    const datatype *t;
    size_t bytes;
    if (__builtin_expect(fast_args(handle, type, count, buf, dest, tag, c, t, bytes), 1)) {
        // A send the fabric finishes at once needs no request, completion or wait.
        if (int rc = p2p_send_now(*c, dest, tag, buf, bytes); rc <= 0) return rc;
        local_request r;
        r.endpoint = c->local[0];
        p2p_buffer b{buf, count, t, bytes};
        if (int rc = post_send(*c, 0, dest, 0, c->context_id, tag, b, r))
            return comm_error_raise_at(c, rc, "weft_send");
        p2p_wait_local(r);
        if (__builtin_expect(r.fabric_status == WEFT_PLUGIN_OK, 1)) return WEFT_SUCCESS;
        return comm_error_return_at(c, request_finish(r, WEFT_STATUS_IGNORE), "weft_send");
    }
    return send_checked(buf, count, type, dest, tag, handle);
}

extern "C" int weft_recv(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm handle,
                         weft_status *status) {
    comm *c;
    const datatype *t;
    size_t bytes;
    if (__builtin_expect(fast_args(handle, type, count, buf, source, tag, c, t, bytes), 1)) {
        local_request r;
        r.endpoint = c->local[0];
        p2p_buffer b{buf, count, t, bytes};
        if (int rc = post_recv(*c, 0, source, 0, c->context_id, tag, b, r, g_user_recv_ignore))
            return comm_error_raise_at(c, rc, "weft_recv");
        p2p_wait_local(r);
        if (__builtin_expect(r.fabric_status == WEFT_PLUGIN_OK, 1)) {
            if (status != WEFT_STATUS_IGNORE) {
                status->source = match_source(r.msg_tag);
                status->tag = match_tag(r.msg_tag);
                status->stream_index = match_index(r.msg_tag);
                status->error = WEFT_SUCCESS;
                status->weft_bytes_ = r.msg_bytes;
                status->weft_cancelled_ = 0;
            }
            return WEFT_SUCCESS;
        }
        int rc = request_finish(r, status);
        if (rc == WEFT_ERR_TRUNCATE)
            fail(rc, "weft_recv: a message of %zu bytes does not fit the %zu-byte buffer", r.msg_bytes, bytes);
        return comm_error_return_at(c, rc, "weft_recv");
    }
    p2p_op op;
    if (int rc = check_p2p("weft_recv", buf, count, type, source, true, tag, handle, 0, 0, op))
        return comm_error_raise(handle, rc, "weft_recv");
    if (source == WEFT_PROC_NULL) {
        proc_null_status(status);
        return WEFT_SUCCESS;
    }
    return comm_error_return(handle, do_recv(op, source, tag, status), "weft_recv");
}

namespace weft {
namespace {

// weft_isend/weft_irecv with arguments that fast_args accepted (built-in contiguous type, peer
// and tag in range, local endpoint 0, no stream checks): the request is allocated and posted in
// one pass over the endpoint (one enter/leave).  The same work as do_start + p2p_post_send/recv,
// without what only derived types, PROC_NULL or wildcards need.  A receive records its capacity
// in bytes (user_count, with no type), which is all request_finish needs for a contiguous type.
template <bool is_send>
__attribute__((always_inline)) inline int start_fast(comm &c, size_t bytes, const void *buf, int peer, int tag,
                                                     weft_request *handle) {
    vci &v = *c.local[0];
    if constexpr (is_send) {
        // A send the fabric finishes at once gets the endpoint's lightweight request: nothing
        // to allocate, complete or release.  Anything else takes the request path below.
        weft_request done = v.requests.done_send_handle();
        if (done != WEFT_REQUEST_NULL && p2p_send_now(c, peer, tag, buf, bytes) == WEFT_SUCCESS) {
            *handle = done;
            return WEFT_SUCCESS;
        }
    }
    v.enter();
    request *r = v.requests.alloc(handle);
    if (__builtin_expect(r == nullptr, 0)) {
        v.leave();
        return fail(WEFT_ERR_NO_MEM,
                    "%s: more than %u requests pending on one endpoint (spread them over more: WEFT_NUM_VCIS, streams)",
                    is_send ? "weft_isend" : "weft_irecv", request_pool::max_slots - 1);
    }
    r->endpoint = &v;
    r->comm_pending = &c.pending[0];
    ++*r->comm_pending;
    int rc;
    if (is_send && __builtin_expect(g_failure_epoch.load(std::memory_order_relaxed) != 0, 0) &&
        peer_failed(c.world_ranks[static_cast<size_t>(peer)])) {
        rc = fail_proc("weft_isend", peer, c.world_ranks[static_cast<size_t>(peer)]);
    } else if constexpr (is_send) {
        r->op = request::kind::send;
        weft_fabric_peer_t *p = nullptr;
        rc = comm_peer(c, 0, peer, 0, &p);
        if (__builtin_expect(rc == WEFT_SUCCESS, 1)) {
            uint64_t bits = match_bits(c.context_id, 0, static_cast<uint32_t>(c.rank), static_cast<uint32_t>(tag));
            while ((rc = v.ops->tag_send(v.ep, p, buf, bytes, bits, request_context(*r))) == WEFT_PLUGIN_ERR_AGAIN)
                v.ops->ep_progress(v.ep);
            if (__builtin_expect(rc != WEFT_PLUGIN_OK, 0))
                rc = fail(plugin_error(rc), "send to rank %d: the fabric refused the message (code %d)", peer, rc);
        }
    } else {
        r->op = request::kind::recv;
        r->group = &c;
        r->peer = peer;
        r->user_buf = const_cast<void *>(buf);
        r->user_count = bytes;
        r->type = nullptr;
        uint64_t bits = match_bits(c.context_id, 0, static_cast<uint32_t>(peer), static_cast<uint32_t>(tag));
        while ((rc = v.ops->tag_recv(v.ep, const_cast<void *>(buf), bytes, bits, g_user_recv_ignore,
                                     request_context(*r))) == WEFT_PLUGIN_ERR_AGAIN)
            v.ops->ep_progress(v.ep);
        if (__builtin_expect(g_failure_epoch.load(std::memory_order_relaxed) != 0, 0)) recheck_failures(v, c, peer);
        if (__builtin_expect(rc != WEFT_PLUGIN_OK, 0))
            rc = fail(plugin_error(rc), "recv: the fabric refused the receive (code %d)", rc);
    }
    if (__builtin_expect(rc != WEFT_SUCCESS, 0)) {
        request_release(*r);
        *handle = WEFT_REQUEST_NULL;
    }
    v.leave();
    return rc;
}

// weft_isend/weft_irecv when fast_args declined: the full checker, with its error details.
template <bool is_send>
__attribute__((noinline)) int start_checked(const void *buf, size_t count, weft_datatype type, int peer, int tag,
                                            weft_comm handle, weft_request *request) {
    const char *fn = is_send ? "weft_isend" : "weft_irecv";
    p2p_op op;
    if (int rc = check_p2p(fn, buf, count, type, peer, !is_send, tag, handle, 0, 0, op))
        return comm_error_raise(handle, rc, fn);
    return comm_error_return(handle, do_start(is_send, op, type, peer, tag, request, fn), fn);
}

}  // namespace
}  // namespace weft

// Both entry points: fast_args and start_fast inline (measured: splitting them into calls costs
// more in prologues than it saves), everything else out of line in start_checked.
extern "C" int weft_isend(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm handle,
                          weft_request *request) {
    comm *c;
    const datatype *t;
    size_t bytes;
    if (__builtin_expect(request != nullptr && fast_args(handle, type, count, buf, dest, tag, c, t, bytes), 1))
        return comm_error_return(handle, start_fast<true>(*c, bytes, buf, dest, tag, request), "weft_isend");
    return start_checked<true>(buf, count, type, dest, tag, handle, request);
}

extern "C" int weft_irecv(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm handle,
                          weft_request *request) {
    comm *c;
    const datatype *t;
    size_t bytes;
    if (__builtin_expect(request != nullptr && fast_args(handle, type, count, buf, source, tag, c, t, bytes), 1))
        return comm_error_return(handle, start_fast<false>(*c, bytes, buf, source, tag, request), "weft_irecv");
    return start_checked<false>(buf, count, type, source, tag, handle, request);
}

extern "C" int weft_stream_send(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm handle,
                                int src_idx, int dst_idx) {
    p2p_op op;
    if (int rc = check_p2p("weft_stream_send", buf, count, type, dest, false, tag, handle, src_idx, dst_idx, op))
        return comm_error_raise(handle, rc, "weft_stream_send");
    return dest == WEFT_PROC_NULL ? WEFT_SUCCESS
                                  : comm_error_return(handle, do_send(op, dest, tag), "weft_stream_send");
}

extern "C" int weft_stream_isend(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm handle,
                                 int src_idx, int dst_idx, weft_request *request) {
    p2p_op op;
    if (int rc = check_p2p("weft_stream_isend", buf, count, type, dest, false, tag, handle, src_idx, dst_idx, op))
        return comm_error_raise(handle, rc, "weft_stream_isend");
    return comm_error_return(handle, do_start(true, op, type, dest, tag, request, "weft_stream_isend"),
                             "weft_stream_isend");
}

extern "C" int weft_stream_recv(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm handle,
                                int src_idx, int dst_idx, weft_status *status) {
    p2p_op op;
    if (int rc = check_p2p("weft_stream_recv", buf, count, type, source, true, tag, handle, dst_idx, src_idx, op))
        return comm_error_raise(handle, rc, "weft_stream_recv");
    if (source == WEFT_PROC_NULL) {
        proc_null_status(status);
        return WEFT_SUCCESS;
    }
    return comm_error_return(handle, do_recv(op, source, tag, status), "weft_stream_recv");
}

extern "C" int weft_stream_irecv(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm handle,
                                 int src_idx, int dst_idx, weft_request *request) {
    p2p_op op;
    if (int rc = check_p2p("weft_stream_irecv", buf, count, type, source, true, tag, handle, dst_idx, src_idx, op))
        return comm_error_raise(handle, rc, "weft_stream_irecv");
    return comm_error_return(handle, do_start(false, op, type, source, tag, request, "weft_stream_irecv"),
                             "weft_stream_irecv");
}

namespace {
int iprobe(int source, int tag, weft_comm handle, int *flag, weft_status *status) {
    p2p_op op;
    if (int rc = check_p2p("weft_iprobe", nullptr, 0, WEFT_BYTE, source, true, tag, handle, 0, WEFT_ANY_INDEX, op))
        return rc;
    if (flag == nullptr) return fail(WEFT_ERR_ARG, "weft_iprobe: flag must not be NULL");
    if (source == WEFT_PROC_NULL) {
        *flag = 1;
        proc_null_status(status);
        return WEFT_SUCCESS;
    }
    stream_use use(op.s);
    if (use.conflict()) return conflict("weft_iprobe");
    bool any_source = source == WEFT_ANY_SOURCE, any_tag = tag == WEFT_ANY_TAG;
    uint64_t bits = match_bits(op.c->context_id, 0, any_source ? 0 : static_cast<uint32_t>(source),
                               any_tag ? 0 : static_cast<uint32_t>(tag));
    vci &v = *op.c->local[0];
    int found = 0;
    uint64_t msg_tag = 0;
    size_t msg_len = 0;
    v.enter();
    v.progress_held();  // with the hooks: acknowledgements owed go out while a thread polls
    int rc = v.ops->tag_probe(v.ep, bits, match_ignore(any_source, any_tag, true) | g_user_recv_ignore, &found,
                              &msg_tag, &msg_len);
    v.leave();
    if (rc != WEFT_PLUGIN_OK) return fail(plugin_error(rc), "weft_iprobe: the fabric's probe failed (code %d)", rc);
    *flag = found;
    if (found && status != WEFT_STATUS_IGNORE) {
        status->source = match_source(msg_tag);
        status->tag = match_tag(msg_tag);
        status->stream_index = match_index(msg_tag);
        status->error = WEFT_SUCCESS;
        status->weft_bytes_ = msg_len;
        status->weft_cancelled_ = 0;
    }
    return WEFT_SUCCESS;
}
}  // namespace

extern "C" int weft_iprobe(int source, int tag, weft_comm handle, int *flag, weft_status *status) {
    return comm_error_return(handle, iprobe(source, tag, handle, flag, status), "weft_iprobe");
}

extern "C" int weft_probe(int source, int tag, weft_comm handle, weft_status *status) {
    int flag = 0;
    for (unsigned polls = 1;; ++polls) {
        if (int rc = iprobe(source, tag, handle, &flag, status)) return comm_error_raise(handle, rc, "weft_probe");
        if (flag) return WEFT_SUCCESS;
        if (polls % g_polls_before_yield == 0) sched_yield();  // see vci_progress_until
    }
}

extern "C" int weft_get_count(const weft_status *status, weft_datatype type, size_t *count) {
    if (status == nullptr || count == nullptr)
        return self_error_return(fail(WEFT_ERR_ARG, "weft_get_count: status and count must not be NULL"),
                                 "weft_get_count");
    const datatype *t = datatype_get(type);
    if (t == nullptr)
        return self_error_return(fail(WEFT_ERR_TYPE, "weft_get_count: invalid datatype handle 0x%x", type),
                                 "weft_get_count");
    if (t->size == 0)
        *count = 0;
    else
        *count = status->weft_bytes_ % t->size ? WEFT_UNDEFINED : status->weft_bytes_ / t->size;
    return WEFT_SUCCESS;
}
