// Matched probe: weft_mprobe, weft_improbe, weft_mrecv, weft_imrecv.
//
// The fabrics only have a non-destructive probe, so a matched probe probes and, in the same
// critical section of the endpoint, posts a receive for exactly the found message's match bits
// (nothing can match in between, and no earlier unexpected message has those bits, or the probe
// would have found it).  The receive lands in a buffer the message handle owns, which mrecv
// copies (unpacks) into the user's buffer.  (Receiving in place would need the user's buffer at
// probe time, or a fabric whose probe can take the message off its queue: a zero-copy path for
// such fabrics can come later.)
#include <cstdlib>
#include <memory>
#include <new>

#include "base/error.hpp"
#include "comm/errhandler.hpp"
#include "base/handle.hpp"
#include "base/match.hpp"
#include "comm/p2p_sync.hpp"
#include "comm/stream.hpp"
#include "transport/runtime.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

// A probed message, matched already by q (a pool request of c->local[0], counted as pending on
// c, so that the communicator outlives it).
struct matched_message {
    comm *c = nullptr;
    request *q = nullptr;
    void *buf = nullptr;  // owned: the whole message
    ~matched_message() { std::free(buf); }
};

// Slot 1 is WEFT_MESSAGE_NO_PROC (generation 0, never a dynamic handle).
handle_table<matched_message> g_messages(handle_kind::message, 2);
static_assert(WEFT_MESSAGE_NO_PROC == handle_make(handle_kind::message, 0, 1), "weft.h's WEFT_MESSAGE_NO_PROC");

void proc_null_status(weft_status *status) {
    if (status == WEFT_STATUS_IGNORE) return;
    status->source = WEFT_PROC_NULL;
    status->tag = WEFT_ANY_TAG;
    status->error = WEFT_SUCCESS;
    status->stream_index = 0;
    status->weft_bytes_ = 0;
    status->weft_cancelled_ = 0;
}

int improbe(const char *fn, int source, int tag, weft_comm handle, int *flag, weft_message *message,
            weft_status *status) {
    p2p_op op;
    if (int rc = check_p2p(fn, nullptr, 0, WEFT_BYTE, source, true, tag, handle, 0, WEFT_ANY_INDEX, op)) return rc;
    if (message == nullptr) return fail(WEFT_ERR_ARG, "%s: message must not be NULL", fn);
    if (source == WEFT_PROC_NULL) {
        *flag = 1;
        *message = WEFT_MESSAGE_NO_PROC;
        proc_null_status(status);
        return WEFT_SUCCESS;
    }
    stream_use use(op.s);
    if (use.conflict())
        return fail(WEFT_ERR_STREAM, "%s: another thread is using the same stream; a stream is a serial context", fn);
    comm &c = *op.c;
    bool any_source = source == WEFT_ANY_SOURCE, any_tag = tag == WEFT_ANY_TAG;
    uint64_t bits = match_bits(c.context_id, 0, any_source ? 0 : static_cast<uint32_t>(source),
                               any_tag ? 0 : static_cast<uint32_t>(tag));
    uint64_t ignore = match_ignore(any_source, any_tag, true) | g_user_recv_ignore;
    vci &v = *c.local[0];
    int found = 0;
    uint64_t msg_tag = 0;
    size_t msg_len = 0;
    weft_message h = WEFT_MESSAGE_NULL;
    v.enter();
    v.progress_held();  // with the hooks: acknowledgements owed go out while a thread polls
    int rc = v.ops->tag_probe(v.ep, bits, ignore, &found, &msg_tag, &msg_len);
    if (rc != WEFT_PLUGIN_OK) {
        rc = fail(plugin_error(rc), "%s: the fabric's probe failed (code %d)", fn, rc);
    } else if (found) {
        weft_request unused;
        auto m = std::shared_ptr<matched_message>(new (std::nothrow) matched_message);
        request *q = m ? p2p_request_alloc(v, &c, 0, &unused) : nullptr;
        if (q != nullptr && msg_len != 0) m->buf = std::malloc(msg_len);
        if (q != nullptr && (msg_len == 0 || m->buf != nullptr)) {
            m->c = &c;
            m->q = q;
            h = g_messages.insert(m);
        }
        if (h == WEFT_MESSAGE_NULL) {
            rc = fail(WEFT_ERR_NO_MEM, "%s: cannot hold a probed message of %zu bytes", fn, msg_len);
        } else if ((rc = p2p_recv_held(c, 0, match_source(msg_tag), msg_tag, 0, m->buf, msg_len, *q)) != 0) {
            g_messages.erase(h);
            h = WEFT_MESSAGE_NULL;
        }
        if (h == WEFT_MESSAGE_NULL && q != nullptr) request_release(*q);
    }
    v.leave();
    if (rc != WEFT_SUCCESS) return rc;
    *flag = found;
    if (!found) return WEFT_SUCCESS;
    *message = h;
    if (status != WEFT_STATUS_IGNORE) {
        status->source = match_source(msg_tag);
        status->tag = match_tag(msg_tag);
        status->stream_index = match_index(msg_tag);
        status->error = WEFT_SUCCESS;
        status->weft_bytes_ = msg_len;
        status->weft_cancelled_ = 0;
    }
    return WEFT_SUCCESS;
}

// The receive's arguments, checked before the message is taken (a refused call leaves it).
int check_buffer(const char *fn, void *buf, size_t count, weft_datatype type, weft_message *message,
                 const datatype *&t) {
    if (int rc = runtime_check(fn)) return rc;
    if (message == nullptr) return fail(WEFT_ERR_ARG, "%s: message must not be NULL", fn);
    t = datatype_get(type);
    if (t == nullptr) return fail(WEFT_ERR_TYPE, "%s: invalid datatype handle 0x%x", fn, type);
    if (!t->committed)
        return fail(WEFT_ERR_TYPE, "%s: datatype 0x%x is not committed (call weft_type_commit)", fn, type);
    size_t bytes;
    if (__builtin_mul_overflow(count, t->size, &bytes))
        return fail(WEFT_ERR_COUNT, "%s: count %zu of a %zu-byte datatype overflows", fn, count, t->size);
    if (buf == nullptr && bytes != 0) return fail(WEFT_ERR_BUFFER, "%s: buffer is NULL but count is %zu", fn, count);
    return WEFT_SUCCESS;
}

// Takes the message out of the table: of two threads receiving one handle, one gets it.
int take(const char *fn, weft_message *message, std::shared_ptr<matched_message> &m) {
    m = g_messages.get_shared(*message);
    if (m == nullptr || !g_messages.erase(*message)) {
        m.reset();
        return fail(WEFT_ERR_REQUEST, "%s: 0x%x is not a valid message handle%s", fn, *message,
                    *message == WEFT_MESSAGE_NULL
                        ? " (WEFT_MESSAGE_NULL)"
                        : " (received already, or never returned by weft_mprobe/weft_improbe)");
    }
    return WEFT_SUCCESS;
}

}  // namespace
}  // namespace weft

using namespace weft;

static int improbe_impl(int source, int tag, weft_comm handle, int *flag, weft_message *message, weft_status *status) {
    if (flag == nullptr) return fail(WEFT_ERR_ARG, "weft_improbe: flag must not be NULL");
    return improbe("weft_improbe", source, tag, handle, flag, message, status);
}

extern "C" int weft_improbe(int source, int tag, weft_comm handle, int *flag, weft_message *message,
                            weft_status *status) {
    return comm_entry(handle, "weft_improbe", [&] { return improbe_impl(source, tag, handle, flag, message, status); });
}

static int mprobe_impl(int source, int tag, weft_comm handle, weft_message *message, weft_status *status) {
    int flag = 0;
    for (unsigned polls = 1;; ++polls) {
        if (int rc = improbe("weft_mprobe", source, tag, handle, &flag, message, status)) return rc;
        if (flag) return WEFT_SUCCESS;
        if (polls % g_polls_before_yield == 0) sched_yield();  // see vci_progress_until
    }
}

extern "C" int weft_mprobe(int source, int tag, weft_comm handle, weft_message *message, weft_status *status) {
    return comm_entry(handle, "weft_mprobe", [&] { return mprobe_impl(source, tag, handle, message, status); });
}

static int mrecv_impl(void *buf, size_t count, weft_datatype type, weft_message *message, weft_status *status) {
    const datatype *t;
    if (int rc = check_buffer("weft_mrecv", buf, count, type, message, t)) return rc;
    if (*message == WEFT_MESSAGE_NO_PROC) {
        *message = WEFT_MESSAGE_NULL;
        proc_null_status(status);
        return WEFT_SUCCESS;
    }
    std::shared_ptr<matched_message> m;
    if (int rc = take("weft_mrecv", message, m)) return rc;
    *message = WEFT_MESSAGE_NULL;
    request &q = *m->q;
    vci &v = *q.endpoint;
    vci_progress_until(v, [&] {
        if (q.complete.load(std::memory_order_acquire)) return true;
        if (g_failure_epoch.load(std::memory_order_relaxed) != 0) p2p_fail_if_peer_dead(q);
        return false;
    });
    if (q.fabric_status == request_status_sync) {
        q.fabric_status = WEFT_PLUGIN_OK;
        v.progress();  // sends the acknowledgement, if no progress has yet
    }
    size_t capacity = count * t->size;
    q.user_buf = buf;
    q.user_count = count;
    q.type = t;
    q.staging = m->buf;  // request_finish unpacks it into buf and frees it
    m->buf = nullptr;
    if (q.fabric_status == WEFT_PLUGIN_OK && q.msg_bytes > capacity) q.fabric_status = WEFT_PLUGIN_ERR_TRUNCATE;
    int rc = request_finish(q, status);
    if (rc == WEFT_ERR_TRUNCATE)
        fail(rc, "weft_mrecv: a message of %zu bytes does not fit the %zu-byte buffer", q.msg_bytes, capacity);
    v.enter();
    request_release(q);
    v.leave();
    return rc;
}

extern "C" int weft_mrecv(void *buf, size_t count, weft_datatype type, weft_message *message, weft_status *status) {
    return self_entry("weft_mrecv", [&] { return mrecv_impl(buf, count, type, message, status); });
}

static int imrecv_impl(void *buf, size_t count, weft_datatype type, weft_message *message, weft_request *req) {
    const datatype *t;
    if (int rc = check_buffer("weft_imrecv", buf, count, type, message, t)) return rc;
    if (req == nullptr) return fail(WEFT_ERR_ARG, "weft_imrecv: request must not be NULL");
    if (*message == WEFT_MESSAGE_NO_PROC) {
        vci &v = *rt().vcis[0];
        v.enter();
        request *p = p2p_request_alloc(v, nullptr, 0, req);
        if (p != nullptr) {
            p->op = request::kind::done;
            p->complete.store(true, std::memory_order_relaxed);
        }
        v.leave();
        if (p == nullptr) return fail(WEFT_ERR_NO_MEM, "weft_imrecv: no request left on endpoint 0");
        *message = WEFT_MESSAGE_NULL;
        return WEFT_SUCCESS;
    }
    std::shared_ptr<matched_message> m;
    if (int rc = take("weft_imrecv", message, m)) return rc;
    comm &c = *m->c;
    vci &v = *m->q->endpoint;
    auto *x = new (std::nothrow) compound;
    v.enter();
    request *p = x != nullptr ? p2p_request_alloc(v, &c, 0, req) : nullptr;
    if (p != nullptr) {
        *x = compound{compound::kind::mrecv, p, {m->q, nullptr}, m->buf, nullptr};
        if (!compound_queue(v, x)) {
            request_release(*p);
            p = nullptr;
        }
    }
    if (p != nullptr) {
        p->user_buf = buf;
        p->user_count = count;
        p->type = t;
        if (!t->builtin) {
            p->type_hold = datatype_get_shared(type);
            p->extras = true;
        }
        m->buf = nullptr;  // the compound's now
        m->q = nullptr;
    }
    v.leave();
    if (p == nullptr) {
        delete x;
        *message = g_messages.insert(m);  // not received: the message stays the caller's, under a new handle
        *req = WEFT_REQUEST_NULL;
        return fail(WEFT_ERR_NO_MEM, "weft_imrecv: no request or endpoint hook left");
    }
    *message = WEFT_MESSAGE_NULL;
    return WEFT_SUCCESS;
}

extern "C" int weft_imrecv(void *buf, size_t count, weft_datatype type, weft_message *message, weft_request *req) {
    return self_entry("weft_imrecv", [&] { return imrecv_impl(buf, count, type, message, req); });
}
