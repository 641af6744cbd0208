// Persistent point-to-point: weft_send_init, weft_recv_init, weft_stream_send_init,
// weft_stream_recv_init.
#include "comm/p2p_persistent.hpp"

#include <new>

#include "base/error.hpp"
#include "comm/errhandler.hpp"
#include "comm/stream.hpp"
#include "weft/weft.h"

namespace weft {

int persistent_p2p::start(request &r) {
    stream_use use(op.s);
    if (use.conflict())
        return fail(WEFT_ERR_STREAM,
                    "weft_start: another thread is using the same stream; a stream is a serial context");
    if (peer == WEFT_PROC_NULL) {
        r.op = request::kind::done;
        r.complete.store(true, std::memory_order_release);
        return WEFT_SUCCESS;
    }
    return post(*this, r);
}

int p2p_persistent_post_send(const persistent_p2p &p, request &r) {
    return p2p_post_send(*p.op.c, p.op.li, p.peer, p.op.peer_idx, p.op.c->context_id, p.tag, p.op.b, r);
}

int p2p_persistent_post_recv(const persistent_p2p &p, request &r) {
    return p2p_post_recv(*p.op.c, p.op.li, p.peer, p.op.peer_idx, p.op.c->context_id, p.tag, p.op.b, r);
}

int p2p_persistent_init(const char *fn, bool is_recv, const void *buf, size_t count, weft_datatype type, int peer,
                        int tag, weft_comm comm, int local_idx, int peer_idx, persistent_p2p::post_fn post,
                        weft_request *request) {
    p2p_op op;
    if (int rc = check_p2p(fn, buf, count, type, peer, is_recv, tag, comm, local_idx, peer_idx, op)) return rc;
    if (request == nullptr) return fail(WEFT_ERR_ARG, "%s: request must not be NULL", fn);
    std::shared_ptr<persistent_p2p> p(new (std::nothrow) persistent_p2p);
    if (!p) return fail(WEFT_ERR_NO_MEM, "%s: out of memory", fn);
    p->op = op;
    p->peer = peer;
    p->tag = tag;
    p->post = post;
    if (!op.b.type->builtin) p->type_hold = datatype_get_shared(type);
    return persistent_create(*op.c->local[op.li], &op.c->pending[op.li], std::move(p), request, fn);
}

}  // namespace weft

using namespace weft;

static int send_init_impl(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm comm,
                          weft_request *request) {
    return p2p_persistent_init("weft_send_init", false, buf, count, type, dest, tag, comm, 0, 0,
                               p2p_persistent_post_send, request);
}

extern "C" int weft_send_init(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm comm,
                              weft_request *request) {
    return comm_entry(comm, "weft_send_init",
                      [&] { return send_init_impl(buf, count, type, dest, tag, comm, request); });
}

static int recv_init_impl(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm comm,
                          weft_request *request) {
    return p2p_persistent_init("weft_recv_init", true, buf, count, type, source, tag, comm, 0, 0,
                               p2p_persistent_post_recv, request);
}

extern "C" int weft_recv_init(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm comm,
                              weft_request *request) {
    return comm_entry(comm, "weft_recv_init",
                      [&] { return recv_init_impl(buf, count, type, source, tag, comm, request); });
}

static int stream_send_init_impl(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm comm,
                                 int src_idx, int dst_idx, weft_request *request) {
    return p2p_persistent_init("weft_stream_send_init", false, buf, count, type, dest, tag, comm, src_idx, dst_idx,
                               p2p_persistent_post_send, request);
}

extern "C" int weft_stream_send_init(const void *buf, size_t count, weft_datatype type, int dest, int tag,
                                     weft_comm comm, int src_idx, int dst_idx, weft_request *request) {
    return comm_entry(comm, "weft_stream_send_init", [&] {
        return stream_send_init_impl(buf, count, type, dest, tag, comm, src_idx, dst_idx, request);
    });
}

static int stream_recv_init_impl(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm comm,
                                 int src_idx, int dst_idx, weft_request *request) {
    // As weft_stream_irecv: the local stream is dst_idx, the peer's src_idx.
    return p2p_persistent_init("weft_stream_recv_init", true, buf, count, type, source, tag, comm, dst_idx, src_idx,
                               p2p_persistent_post_recv, request);
}

extern "C" int weft_stream_recv_init(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm comm,
                                     int src_idx, int dst_idx, weft_request *request) {
    return comm_entry(comm, "weft_stream_recv_init", [&] {
        return stream_recv_init_impl(buf, count, type, source, tag, comm, src_idx, dst_idx, request);
    });
}
