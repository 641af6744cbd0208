// weft_sendrecv, weft_sendrecv_replace and their nonblocking forms.  The receive is posted
// before the send, both on the communicator's local endpoint 0; a nonblocking call returns one
// request, a compound (comm/p2p_sync.hpp) of the two parts, which takes the receive's result.
#include <cstdlib>
#include <new>

#include "base/error.hpp"
#include "comm/errhandler.hpp"
#include "base/match.hpp"
#include "comm/p2p_sync.hpp"
#include "comm/stream.hpp"
#include "transport/runtime.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

struct sendrecv_args {
    p2p_op send, recv;
    int dest, sendtag, source, recvtag;
    weft_datatype recvtype;
    void *replace_copy = nullptr;  // _replace: the packed copy of what is sent (owned)
};

// Where the receive lands: the user's buffer, or r.staging for a derived datatype (unpacked at
// finish).  Fills the fields request_finish reads.
int recv_data(request &r, const p2p_buffer &b, void *&data) {
    r.user_buf = const_cast<void *>(b.buf);
    r.user_count = b.count;
    r.type = b.type;
    r.staging = nullptr;
    data = r.user_buf;
    if (b.type->contiguous || b.bytes == 0) return WEFT_SUCCESS;
    r.staging = std::malloc(b.bytes);
    if (r.staging == nullptr)
        return fail(WEFT_ERR_NO_MEM, "sendrecv: cannot allocate %zu bytes to unpack a derived datatype", b.bytes);
    r.extras = true;
    data = r.staging;
    return WEFT_SUCCESS;
}

uint64_t recv_bits(const comm &c, int source, int tag) {
    return match_bits(c.context_id, 0, source == WEFT_ANY_SOURCE ? 0 : static_cast<uint32_t>(source),
                      tag == WEFT_ANY_TAG ? 0 : static_cast<uint32_t>(tag));
}
uint64_t recv_ignore(int source, int tag) {
    return match_ignore(source == WEFT_ANY_SOURCE, tag == WEFT_ANY_TAG, true) | g_user_recv_ignore;
}

// Posts the receive (q, unless from WEFT_PROC_NULL) then the send (s, unless to WEFT_PROC_NULL)
// holding endpoint 0.  On an error *q_posted tells whether q is left posted (cancelled).
int post_both_held(sendrecv_args &x, request *q, request *s, bool *q_posted) {
    comm &c = *x.send.c;
    vci &v = *c.local[0];
    *q_posted = false;
    if (q != nullptr) {
        void *data;
        if (int rc = recv_data(*q, x.recv.b, data)) return rc;
        if (int rc = p2p_recv_held(c, 0, x.source, recv_bits(c, x.source, x.recvtag), recv_ignore(x.source, x.recvtag),
                                   data, x.recv.b.bytes, *q))
            return rc;
        *q_posted = true;
    }
    if (s == nullptr) return WEFT_SUCCESS;
    const void *data;
    int rc = p2p_pack_send(*s, x.send.b, data);
    if (rc == WEFT_SUCCESS) {
        uint64_t bits = match_bits(c.context_id, 0, static_cast<uint32_t>(c.rank), static_cast<uint32_t>(x.sendtag));
        rc = p2p_send_held(c, 0, x.dest, 0, bits, data, x.send.b.bytes, *s);
    }
    if (rc != WEFT_SUCCESS && *q_posted) v.ops->cancel(v.ep, request_context(*q));
    return rc;
}

int check_both(const char *fn, const void *sendbuf, size_t sendcount, weft_datatype sendtype, int dest, int sendtag,
               void *recvbuf, size_t recvcount, weft_datatype recvtype, int source, int recvtag, weft_comm handle,
               sendrecv_args &x) {
    if (int rc = check_p2p(fn, sendbuf, sendcount, sendtype, dest, false, sendtag, handle, 0, 0, x.send)) return rc;
    if (int rc = check_p2p(fn, recvbuf, recvcount, recvtype, source, true, recvtag, handle, 0, 0, x.recv)) return rc;
    x.dest = dest;
    x.sendtag = sendtag;
    x.source = source;
    x.recvtag = recvtag;
    x.recvtype = recvtype;
    return WEFT_SUCCESS;
}

// _replace: what is sent is a packed copy of buf (x.replace_copy), so that the receive may
// write buf meanwhile.
int make_replace_copy(const char *fn, sendrecv_args &x) {
    p2p_buffer &b = x.send.b;
    if (x.dest == WEFT_PROC_NULL || b.bytes == 0) return WEFT_SUCCESS;
    x.replace_copy = std::malloc(b.bytes);
    if (x.replace_copy == nullptr) return fail(WEFT_ERR_NO_MEM, "%s: cannot allocate %zu bytes", fn, b.bytes);
    datatype_pack(*b.type, b.buf, b.count, x.replace_copy);
    b = p2p_buffer{x.replace_copy, b.bytes, datatype_get(WEFT_BYTE), b.bytes};
    return WEFT_SUCCESS;
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

int do_sendrecv(const char *fn, sendrecv_args &x, weft_status *status) {
    stream_use use(x.send.s);
    if (use.conflict()) return p2p_stream_conflict(fn);
    comm &c = *x.send.c;
    vci &v = *c.local[0];
    local_request q, s;
    q.endpoint = s.endpoint = &v;
    bool has_q = x.source != WEFT_PROC_NULL, has_s = x.dest != WEFT_PROC_NULL, q_posted;
    v.enter();
    int rc = post_both_held(x, has_q ? &q : nullptr, has_s ? &s : nullptr, &q_posted);
    v.leave();
    bool sent = rc == WEFT_SUCCESS && has_s;
    vci_progress_until(v, [&] {
        if (q_posted && !q.complete.load(std::memory_order_acquire)) {
            if (g_failure_epoch.load(std::memory_order_relaxed) != 0) p2p_fail_if_peer_dead(q);
            return false;
        }
        return !sent || s.complete.load(std::memory_order_acquire);
    });
    std::free(s.staging);
    if (rc != WEFT_SUCCESS) {
        std::free(q.staging);
        return rc;
    }
    int send_status = has_s ? s.fabric_status : WEFT_PLUGIN_OK;
    if (has_q) {
        rc = request_finish(q, status);
        if (rc == WEFT_ERR_TRUNCATE)
            fail(rc, "%s: a message of %zu bytes does not fit the %zu-byte buffer", fn, q.msg_bytes, x.recv.b.bytes);
    } else {
        proc_null_status(status);
    }
    if (rc == WEFT_SUCCESS && send_status != WEFT_PLUGIN_OK) {
        rc = send_status == WEFT_PLUGIN_ERR_PEER_FAILED
            ? fail_proc(fn, x.dest, c.world_ranks[static_cast<size_t>(x.dest)])
            : fail(plugin_error(send_status), "%s: the send to rank %d failed (fabric code %d)", fn, x.dest,
                   send_status);
        if (status != WEFT_STATUS_IGNORE) status->error = rc;
    }
    return rc;
}

int start_sendrecv(const char *fn, sendrecv_args &x, weft_request *req) {
    comm &c = *x.send.c;
    vci &v = *c.local[0];
    stream_use use(x.send.s);
    if (use.conflict()) return p2p_stream_conflict(fn);
    v.enter();
    request *p = p2p_request_alloc(v, &c, 0, req);
    if (p == nullptr) {
        v.leave();
        return fail(WEFT_ERR_NO_MEM, "%s: more than %u requests pending on one endpoint", fn,
                    request_pool::max_slots - 1);
    }
    if (x.source == WEFT_PROC_NULL && x.dest == WEFT_PROC_NULL) {
        p->op = request::kind::done;
        p->complete.store(true, std::memory_order_relaxed);
        v.leave();
        return WEFT_SUCCESS;
    }
    weft_request unused;
    bool ok = true;
    request *q = nullptr, *s = nullptr;
    if (x.source != WEFT_PROC_NULL) ok = (q = p2p_request_alloc(v, nullptr, 0, &unused)) != nullptr;
    if (ok && x.dest != WEFT_PROC_NULL) ok = (s = p2p_request_alloc(v, nullptr, 0, &unused)) != nullptr;
    auto *cx = ok ? new (std::nothrow) compound : nullptr;
    int rc = WEFT_SUCCESS;
    bool q_posted = false;
    if (cx == nullptr) {
        rc =
            fail(WEFT_ERR_NO_MEM, "%s: more than %u requests pending on one endpoint", fn, request_pool::max_slots - 1);
    } else {
        // The hook must exist before anything is posted: queueing cannot fail after.
        *cx = compound{compound::kind::sendrecv, p, {s, q}, x.replace_copy, nullptr};
        if (!compound_queue(v, cx)) {
            delete cx;
            cx = nullptr;
            rc = fail(WEFT_ERR_NO_MEM, "%s: endpoint %u has no hook left", fn, v.index);
        } else {
            rc = post_both_held(x, q, s, &q_posted);
            if (rc == WEFT_SUCCESS && q != nullptr && !x.recv.b.type->builtin) {
                q->type_hold = datatype_get_shared(x.recvtype);
                q->extras = true;
            }
        }
    }
    if (rc != WEFT_SUCCESS) {
        // Queued already: the hook finds it.  Only a cancelled receive is left for it to wait on.
        if (cx != nullptr) {
            cx->what = compound::kind::cleanup;
            cx->parent = nullptr;
            cx->parts[0] = q_posted ? q : nullptr;
            cx->parts[1] = nullptr;
            cx->scratch = nullptr;  // the caller frees the copy
            if (q_posted) q = nullptr;
        }
        for (request *r : {p, q, s})
            if (r != nullptr) {
                std::free(r->staging);
                r->staging = nullptr;
                r->extras = false;
                request_release(*r);
            }
        *req = WEFT_REQUEST_NULL;
    }
    v.leave();
    return rc;
}

}  // namespace
}  // namespace weft

using namespace weft;

static int sendrecv_impl(const void *sendbuf, size_t sendcount, weft_datatype sendtype, int dest, int sendtag,
                         void *recvbuf, size_t recvcount, weft_datatype recvtype, int source, int recvtag,
                         weft_comm handle, weft_status *status) {
    sendrecv_args x;
    if (int rc = check_both("weft_sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                            source, recvtag, handle, x))
        return rc;
    return do_sendrecv("weft_sendrecv", x, status);
}

extern "C" int weft_sendrecv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, int dest, int sendtag,
                             void *recvbuf, size_t recvcount, weft_datatype recvtype, int source, int recvtag,
                             weft_comm handle, weft_status *status) {
    return comm_entry(handle, "weft_sendrecv", [&] {
        return sendrecv_impl(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                             handle, status);
    });
}

static int sendrecv_replace_impl(void *buf, size_t count, weft_datatype type, int dest, int sendtag, int source,
                                 int recvtag, weft_comm handle, weft_status *status) {
    sendrecv_args x;
    if (int rc = check_both("weft_sendrecv_replace", buf, count, type, dest, sendtag, buf, count, type, source, recvtag,
                            handle, x))
        return rc;
    if (int rc = make_replace_copy("weft_sendrecv_replace", x)) return rc;
    int rc = do_sendrecv("weft_sendrecv_replace", x, status);
    std::free(x.replace_copy);
    return rc;
}

extern "C" int weft_sendrecv_replace(void *buf, size_t count, weft_datatype type, int dest, int sendtag, int source,
                                     int recvtag, weft_comm handle, weft_status *status) {
    return comm_entry(handle, "weft_sendrecv_replace", [&] {
        return sendrecv_replace_impl(buf, count, type, dest, sendtag, source, recvtag, handle, status);
    });
}

static int isendrecv_impl(const void *sendbuf, size_t sendcount, weft_datatype sendtype, int dest, int sendtag,
                          void *recvbuf, size_t recvcount, weft_datatype recvtype, int source, int recvtag,
                          weft_comm handle, weft_request *request) {
    sendrecv_args x;
    if (int rc = check_both("weft_isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                            source, recvtag, handle, x))
        return rc;
    if (request == nullptr) return fail(WEFT_ERR_ARG, "weft_isendrecv: request must not be NULL");
    return start_sendrecv("weft_isendrecv", x, request);
}

extern "C" int weft_isendrecv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, int dest, int sendtag,
                              void *recvbuf, size_t recvcount, weft_datatype recvtype, int source, int recvtag,
                              weft_comm handle, weft_request *request) {
    return comm_entry(handle, "weft_isendrecv", [&] {
        return isendrecv_impl(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                              recvtag, handle, request);
    });
}

static int isendrecv_replace_impl(void *buf, size_t count, weft_datatype type, int dest, int sendtag, int source,
                                  int recvtag, weft_comm handle, weft_request *request) {
    sendrecv_args x;
    if (int rc = check_both("weft_isendrecv_replace", buf, count, type, dest, sendtag, buf, count, type, source,
                            recvtag, handle, x))
        return rc;
    if (request == nullptr) return fail(WEFT_ERR_ARG, "weft_isendrecv_replace: request must not be NULL");
    if (int rc = make_replace_copy("weft_isendrecv_replace", x)) return rc;
    // The copy belongs to the request from here (freed at its completion, or below on error).
    int rc = start_sendrecv("weft_isendrecv_replace", x, request);
    if (rc != WEFT_SUCCESS) std::free(x.replace_copy);
    return rc;
}

extern "C" int weft_isendrecv_replace(void *buf, size_t count, weft_datatype type, int dest, int sendtag, int source,
                                      int recvtag, weft_comm handle, weft_request *request) {
    return comm_entry(handle, "weft_isendrecv_replace", [&] {
        return isendrecv_replace_impl(buf, count, type, dest, sendtag, source, recvtag, handle, request);
    });
}
