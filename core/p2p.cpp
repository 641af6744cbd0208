// Point-to-point: send, recv, isend, irecv, probe, iprobe.
#include <cstdlib>

#include "comm.hpp"
#include "error.hpp"
#include "match.hpp"
#include "runtime.hpp"

namespace weft {
namespace {

// The validated arguments of one operation.
struct p2p_op {
    comm *c;
    const datatype *type;
    size_t bytes;
};

int check_p2p(const char *fn, const void *buf, size_t count, weft_datatype type, int peer, bool is_recv,
              int tag, weft_comm handle, p2p_op &op) {
    if (int rc = runtime_check(fn)) return rc;
    op.c = comm_get(handle);
    if (op.c == nullptr) return fail(WEFT_ERR_COMM, "%s: invalid communicator handle 0x%x", fn, handle);
    op.type = datatype_get(type);
    if (op.type == nullptr) return fail(WEFT_ERR_TYPE, "%s: invalid datatype handle 0x%x", fn, type);
    if (!op.type->committed)
        return fail(WEFT_ERR_TYPE, "%s: datatype 0x%x is not committed (call weft_type_commit)", fn, type);
    bool peer_ok = peer == WEFT_PROC_NULL || (peer >= 0 && peer < op.c->size) || (is_recv && peer == WEFT_ANY_SOURCE);
    if (!peer_ok)
        return fail(WEFT_ERR_RANK, "%s: rank %d is out of range for a communicator of size %d", fn, peer, op.c->size);
    if (!(tag >= 0 && tag <= WEFT_TAG_UB) && !(is_recv && tag == WEFT_ANY_TAG))
        return fail(WEFT_ERR_TAG, "%s: tag %d is outside 0..WEFT_TAG_UB (%d)", fn, tag, WEFT_TAG_UB);
    if (op.type->size != 0 && count > SIZE_MAX / op.type->size)
        return fail(WEFT_ERR_COUNT, "%s: count %zu of a %zu-byte datatype overflows", fn, count, op.type->size);
    op.bytes = count * op.type->size;
    if (buf == nullptr && op.bytes != 0)
        return fail(WEFT_ERR_BUFFER, "%s: buffer is NULL but count is %zu", fn, count);
    return WEFT_SUCCESS;
}

// Posts a send of op.bytes; r must stay alive until it completes.
int post_send(const p2p_op &op, request &r, const void *buf, size_t count, int dest, int tag) {
    r.op = request::kind::send;
    r.user_count = count;
    const void *data = buf;
    if (!op.type->contiguous && op.bytes != 0) {
        r.staging = std::malloc(op.bytes);
        if (r.staging == nullptr) return fail(WEFT_ERR_NO_MEM, "send: cannot allocate %zu bytes to pack a derived datatype", op.bytes);
        datatype_pack(*op.type, buf, count, r.staging);
        data = r.staging;
    }
    vci &v = *op.c->endpoint;
    int world_dest = op.c->world_ranks[static_cast<size_t>(dest)];
    uint64_t bits = match_bits(op.c->context_id, 0, static_cast<uint32_t>(op.c->rank), static_cast<uint32_t>(tag));
    v.enter();
    weft_fabric_peer_t *peer = nullptr;
    int rc = vci_peer(v, world_dest, &peer);
    if (rc == WEFT_SUCCESS) {
        while ((rc = v.ops->tag_send(v.ep, peer, data, op.bytes, bits, &r)) == WEFT_PLUGIN_ERR_AGAIN)
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

int post_recv(const p2p_op &op, request &r, void *buf, size_t count, int source, int tag) {
    r.op = request::kind::recv;
    r.user_buf = buf;
    r.user_count = count;
    void *data = buf;
    if (!op.type->contiguous && op.bytes != 0) {
        r.staging = std::malloc(op.bytes);
        if (r.staging == nullptr) return fail(WEFT_ERR_NO_MEM, "recv: cannot allocate %zu bytes to unpack a derived datatype", op.bytes);
        data = r.staging;
    }
    // request_finish needs the element size (and the layout, for unpacking).
    r.type = std::shared_ptr<const datatype>(std::shared_ptr<const datatype>{}, op.type);
    bool any_source = source == WEFT_ANY_SOURCE, any_tag = tag == WEFT_ANY_TAG;
    uint64_t bits = match_bits(op.c->context_id, 0, any_source ? 0 : static_cast<uint32_t>(source),
                               any_tag ? 0 : static_cast<uint32_t>(tag));
    uint64_t ignore = match_ignore(any_source, any_tag, true);
    vci &v = *op.c->endpoint;
    v.enter();
    int rc;
    while ((rc = v.ops->tag_recv(v.ep, data, op.bytes, bits, ignore, &r)) == WEFT_PLUGIN_ERR_AGAIN)
        v.ops->ep_progress(v.ep);
    v.leave();
    if (rc != WEFT_PLUGIN_OK) {
        std::free(r.staging);
        r.staging = nullptr;
        return fail(plugin_error(rc), "recv: the fabric refused the receive (code %d)", rc);
    }
    return WEFT_SUCCESS;
}

void wait_local(request &r) {
    vci_progress_until(*r.endpoint, [&] { return r.complete.load(std::memory_order_acquire); });
}

// A derived datatype can be freed while an operation on it is pending: hold a reference.
void hold_type(request &r, weft_datatype type, const p2p_op &op) {
    if (!op.type->builtin) r.type = datatype_get_shared(type);
}

int start(bool is_send, const void *buf, size_t count, weft_datatype type, int peer, int tag, weft_comm handle,
          weft_request *req, const char *fn) {
    p2p_op op;
    if (int rc = check_p2p(fn, buf, count, type, peer, !is_send, tag, handle, op)) return rc;
    if (req == nullptr) return fail(WEFT_ERR_ARG, "%s: request must not be NULL", fn);
    vci &v = *op.c->endpoint;
    v.enter();
    request *r = v.requests.alloc(req);
    v.leave();
    if (r == nullptr) return fail(WEFT_ERR_NO_MEM, "%s: more than 1M requests pending on one endpoint", fn);
    r->endpoint = &v;
    int rc;
    if (peer == WEFT_PROC_NULL) {
        r->op = request::kind::done;
        r->complete.store(true, std::memory_order_relaxed);
        rc = WEFT_SUCCESS;
    } else if (is_send) {
        rc = post_send(op, *r, buf, count, peer, tag);
    } else {
        rc = post_recv(op, *r, const_cast<void *>(buf), count, peer, tag);
    }
    if (rc == WEFT_SUCCESS && r->op != request::kind::done) hold_type(*r, type, op);
    if (rc != WEFT_SUCCESS) {
        v.enter();
        v.requests.release(r);
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

extern "C" int weft_send(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm handle) {
    p2p_op op;
    if (int rc = check_p2p("weft_send", buf, count, type, dest, false, tag, handle, op)) return rc;
    if (dest == WEFT_PROC_NULL) return WEFT_SUCCESS;
    request r;
    r.endpoint = op.c->endpoint;
    if (int rc = post_send(op, r, buf, count, dest, tag)) return rc;
    wait_local(r);
    return request_finish(r, WEFT_STATUS_IGNORE);
}

extern "C" int weft_recv(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm handle,
                         weft_status *status) {
    p2p_op op;
    if (int rc = check_p2p("weft_recv", buf, count, type, source, true, tag, handle, op)) return rc;
    if (source == WEFT_PROC_NULL) {
        proc_null_status(status);
        return WEFT_SUCCESS;
    }
    request r;
    r.endpoint = op.c->endpoint;
    if (int rc = post_recv(op, r, buf, count, source, tag)) return rc;
    wait_local(r);
    int rc = request_finish(r, status);
    if (rc == WEFT_ERR_TRUNCATE)
        fail(rc, "weft_recv: a message of %zu bytes does not fit the %zu-byte buffer", r.msg_bytes, op.bytes);
    return rc;
}

extern "C" int weft_isend(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm handle,
                          weft_request *request) {
    return start(true, buf, count, type, dest, tag, handle, request, "weft_isend");
}

extern "C" int weft_irecv(void *buf, size_t count, weft_datatype type, int source, int tag, weft_comm handle,
                          weft_request *request) {
    return start(false, buf, count, type, source, tag, handle, request, "weft_irecv");
}

extern "C" int weft_iprobe(int source, int tag, weft_comm handle, int *flag, weft_status *status) {
    p2p_op op;
    if (int rc = check_p2p("weft_iprobe", nullptr, 0, WEFT_BYTE, source, true, tag, handle, op)) return rc;
    if (flag == nullptr) return fail(WEFT_ERR_ARG, "weft_iprobe: flag must not be NULL");
    if (source == WEFT_PROC_NULL) {
        *flag = 1;
        proc_null_status(status);
        return WEFT_SUCCESS;
    }
    bool any_source = source == WEFT_ANY_SOURCE, any_tag = tag == WEFT_ANY_TAG;
    uint64_t bits = match_bits(op.c->context_id, 0, any_source ? 0 : static_cast<uint32_t>(source),
                               any_tag ? 0 : static_cast<uint32_t>(tag));
    vci &v = *op.c->endpoint;
    int found = 0;
    uint64_t msg_tag = 0;
    size_t msg_len = 0;
    v.enter();
    v.ops->ep_progress(v.ep);
    int rc = v.ops->tag_probe(v.ep, bits, match_ignore(any_source, any_tag, true), &found, &msg_tag, &msg_len);
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

extern "C" int weft_probe(int source, int tag, weft_comm handle, weft_status *status) {
    int flag = 0;
    for (unsigned polls = 1;; ++polls) {
        if (int rc = weft_iprobe(source, tag, handle, &flag, status)) return rc;
        if (flag) return WEFT_SUCCESS;
        if (polls % 512 == 0) sched_yield();  // see vci_progress_until
    }
}

extern "C" int weft_get_count(const weft_status *status, weft_datatype type, size_t *count) {
    if (status == nullptr || count == nullptr)
        return fail(WEFT_ERR_ARG, "weft_get_count: status and count must not be NULL");
    const datatype *t = datatype_get(type);
    if (t == nullptr) return fail(WEFT_ERR_TYPE, "weft_get_count: invalid datatype handle 0x%x", type);
    if (t->size == 0)
        *count = 0;
    else
        *count = status->weft_bytes_ % t->size ? WEFT_UNDEFINED : status->weft_bytes_ / t->size;
    return WEFT_SUCCESS;
}
