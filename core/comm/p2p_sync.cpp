// Synchronous sends (weft_ssend, weft_issend and the multiplex forms), and the endpoint hook
// that every request made of parts shares (comm/p2p_sync.hpp).
//
// A synchronous message travels on its communicator's context + 2 (base/match.hpp), which user
// receives and probes match as they match context + 0: they ignore the sync bit, so a receiver
// needs nothing special.  When such a receive completes, its completion callback records the
// acknowledgement owed (p2p_sync_completed), and the receiving endpoint's next progress sends it:
// a zero-byte message on context + 3, never from inside the fabric's callback, and whether or
// not the receiver waits for its receive yet.  The sender posts the acknowledgement's receive
// with the send, and its request completes when both have (as MPICH pairs its sync bit and ack).
//
// Acknowledgements are paired with sends by their match bits alone (context + 3, the receiving
// endpoint, the receiver's rank, the tag), first posted first matched, although the acks of one
// (receiver, tag) may arrive in any order relative to the matching of later messages.  This is
// still correct: messages with equal bits from one endpoint to another match in the order sent
// (non-overtaking), and the sender posts each ack's receive in the same critical section as its
// send, so ack receives are posted in send order.  The k-th ack to arrive shows that k of those
// messages have been received, hence the first k have been matched, and it completes the k-th
// ack receive (fabrics match receives of equal bits in posting order): the k-th send's.
// A fabric that sends synchronously itself (tag_send_sync, e.g. UCX's ucp_tag_send_sync_nbx)
// takes all of this over: the message goes on context + 0 as a plain one would, its send
// completes once matched, and receives ignore no sync bit (g_user_recv_ignore), which lets UCX
// match exact receives in its hash table.  WEFT_SYNC_SEND=ack keeps the protocol below.
// One case is outside the argument: two local stream indexes of a multiplex communicator that
// share one endpoint (streams without an endpoint of their own) sending synchronous messages
// with the same tag to the same receiving endpoint, matched there out of order by receives
// that name the source stream index.
#include "comm/p2p_sync.hpp"

#include <cstdlib>
#include <new>
#include <vector>

#include "base/error.hpp"
#include "comm/errhandler.hpp"
#include "base/match.hpp"
#include "comm/p2p_persistent.hpp"
#include "comm/stream.hpp"
#include "transport/runtime.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

struct owed_ack {
    remote_ep to;  // the sender's endpoint
    uint64_t bits;
};

// The hook's state: acknowledgements owed and compounds in flight on one endpoint.
struct sync_state {
    std::vector<owed_ack> acks;
    compound *head = nullptr;
};

int sync_progress(vci &v, vci_hook &self);

// v's state, made (with the hook) when create; nullptr when v has no hook left (caller holds v).
sync_state *state_of(vci &v, bool create) {
    vci_hook *h = vci_hook_find(v, sync_progress);
    if (h != nullptr && h->state != nullptr) return static_cast<sync_state *>(h->state);
    if (!create) return nullptr;
    auto *st = new (std::nothrow) sync_state;
    if (st == nullptr) return nullptr;
    if (h == nullptr) h = vci_hook_add(v, vci_hook{sync_progress, nullptr, nullptr});
    if (h == nullptr) {
        delete st;
        return nullptr;
    }
    h->state = st;
    return st;
}

void drop_part(request &p) {
    std::free(p.staging);
    p.staging = nullptr;
    p.type_hold.reset();
    p.extras = false;
    request_release(p);
}

// Moves a finished receive's result (and with buffers, its buffer, type and staging) into p.
void take_receive(request &p, request &q, bool buffers) {
    p.op = request::kind::recv;
    p.peer = q.peer;
    p.group = q.group;
    p.msg_tag = q.msg_tag;
    p.msg_bytes = q.msg_bytes;
    p.fabric_status = q.fabric_status == request_status_sync ? WEFT_PLUGIN_OK : q.fabric_status;
    if (!buffers) return;
    p.user_buf = q.user_buf;
    p.user_count = q.user_count;
    p.type = q.type;
    p.staging = q.staging;
    p.type_hold = std::move(q.type_hold);
    p.extras = q.extras;
    q.staging = nullptr;
    q.extras = false;
}

// Every part has completed: the parent gets the result; the parts go back to the pool.
void finish(compound &x) {
    request *p = x.parent, *a = x.parts[0], *b = x.parts[1];
    if (p != nullptr) {
        switch (x.what) {
            case compound::kind::ssend:  // b: the acknowledgement, absent when the fabric sent synchronously
                p->fabric_status =
                    a->fabric_status != WEFT_PLUGIN_OK || b == nullptr ? a->fabric_status : b->fabric_status;
                break;
            case compound::kind::sendrecv:
                if (b != nullptr)
                    take_receive(*p, *b, true);
                else
                    p->op = request::kind::done;  // the receive was from WEFT_PROC_NULL
                if (a != nullptr && p->fabric_status == WEFT_PLUGIN_OK) p->fabric_status = a->fabric_status;
                break;
            case compound::kind::mrecv: {
                take_receive(*p, *a, false);
                size_t capacity = p->user_count * p->type->size;
                if (p->fabric_status == WEFT_PLUGIN_OK && p->msg_bytes > capacity)
                    p->fabric_status = WEFT_PLUGIN_ERR_TRUNCATE;
                p->staging = x.scratch;  // unpacked into the user's buffer by request_finish
                p->extras = true;
                x.scratch = nullptr;
                break;
            }
            case compound::kind::cleanup: break;
        }
    }
    for (request *part : x.parts)
        if (part != nullptr) drop_part(*part);
    std::free(x.scratch);
    if (p != nullptr) p->complete.store(true, std::memory_order_release);
}

bool parts_done(const compound &x) {
    for (const request *part : x.parts)
        if (part != nullptr && !part->complete.load(std::memory_order_acquire)) return false;
    return true;
}

// Sends one owed acknowledgement; false to retry it at the next progress.
bool send_ack(vci &v, sync_state &st, const owed_ack &a) {
    weft_fabric_peer_t *peer = nullptr;
    // Unreachable (the sender died): nobody waits for it any more.
    if (vci_peer(v, a.to, &peer) != WEFT_SUCCESS) return true;
    if (v.ops->tag_send_now != nullptr && v.ops->tag_send_now(v.ep, peer, nullptr, 0, a.bits) == WEFT_PLUGIN_OK)
        return true;
    weft_request handle;
    request *r = p2p_request_alloc(v, nullptr, 0, &handle);
    auto *x = r != nullptr ? new (std::nothrow) compound : nullptr;
    if (x == nullptr) {
        if (r != nullptr) request_release(*r);
        return false;
    }
    int rc = v.ops->tag_send(v.ep, peer, nullptr, 0, a.bits, request_context(*r));
    if (rc != WEFT_PLUGIN_OK) {
        request_release(*r);
        delete x;
        return rc != WEFT_PLUGIN_ERR_AGAIN;  // another error: the sender's endpoint is gone
    }
    x->parts[0] = r;
    x->next = st.head;
    st.head = x;
    return true;
}

int sync_progress(vci &v, vci_hook &self) {
    auto *st = static_cast<sync_state *>(self.state);
    int n = 0;
    for (compound **link = &st->head; compound *x = *link;) {
        if (!parts_done(*x)) {
            link = &x->next;
            continue;
        }
        *link = x->next;
        finish(*x);
        delete x;
        ++n;
    }
    // After the compounds: a receive of theirs that completed owes its ack already.
    if (!st->acks.empty()) {
        // Sending may complete receives that owe acks in turn: they queue on st->acks.
        std::vector<owed_ack> owed;
        owed.swap(st->acks);
        for (size_t i = 0; i < owed.size(); ++i) {
            if (!send_ack(v, *st, owed[i])) {
                st->acks.insert(st->acks.end(), owed.begin() + static_cast<ptrdiff_t>(i), owed.end());
                break;
            }
            ++n;
        }
    }
    if (st->acks.empty() && st->head == nullptr) {
        delete st;
        self.state = nullptr;  // the hook goes away until the next one
    }
    return n;
}

// A receive for a message from a process known dead: see recheck_failures in p2p.cpp.
void recheck_source(vci &v, const comm &c, int source) {
    if (source >= 0 && peer_failed(c.world_ranks[static_cast<size_t>(source)]))
        v.failure_epoch_seen = g_failure_epoch.load(std::memory_order_relaxed) - 1;
}

// The first local index whose endpoint is v: the same number on both sides of a connection.
uint32_t local_endpoint_index(const comm &c, const vci *v) {
    for (size_t i = 0; i < c.local.size(); ++i)
        if (c.local[i] == v) return static_cast<uint32_t>(i);
    return 0;
}
// The same, seen from a sender: the first index of rank r whose endpoint is that of ri.
uint32_t remote_endpoint_index(const comm &c, int r, int ri) {
    size_t first = c.remote_offset[static_cast<size_t>(r)];
    uint32_t vci_index = c.remote[first + static_cast<size_t>(ri)].vci_index;
    for (int i = 0; i < ri; ++i)
        if (c.remote[first + static_cast<size_t>(i)].vci_index == vci_index) return static_cast<uint32_t>(i);
    return static_cast<uint32_t>(ri);
}

}  // namespace

bool compound_queue(vci &v, compound *x) {
    sync_state *st = state_of(v, true);
    if (st == nullptr) return false;
    x->next = st->head;
    st->head = x;
    return true;
}

request *p2p_request_alloc(vci &v, comm *c, size_t li, weft_request *handle) {
    request *r = v.requests.alloc(handle);
    if (r == nullptr) return nullptr;
    r->endpoint = &v;
    r->op = request::kind::send;  // nothing for the failure sweep until a receive is posted
    r->group = nullptr;
    r->staging = nullptr;
    r->comm_pending = nullptr;
    if (c != nullptr) {
        r->comm_pending = &c->pending[li];
        ++*r->comm_pending;
    }
    return r;
}

int p2p_send_held(comm &c, size_t li, int dest, int dst_idx, uint64_t bits, const void *data, size_t bytes, request &r,
                  bool synchronous) {
    if (g_failure_epoch.load(std::memory_order_relaxed) != 0 && peer_failed(c.world_ranks[static_cast<size_t>(dest)]))
        return fail_proc("send", dest, c.world_ranks[static_cast<size_t>(dest)]);
    vci &v = *c.local[li];
    weft_fabric_peer_t *peer = nullptr;
    if (int rc = comm_peer(c, li, dest, dst_idx, &peer)) return rc;
    r.op = request::kind::send;
    auto send = synchronous ? v.ops->tag_send_sync : v.ops->tag_send;
    int rc;
    while ((rc = send(v.ep, peer, data, bytes, bits, request_context(r))) == WEFT_PLUGIN_ERR_AGAIN)
        v.ops->ep_progress(v.ep);
    if (rc != WEFT_PLUGIN_OK)
        return fail(plugin_error(rc), "send to rank %d: the fabric refused the message (code %d)", dest, rc);
    return WEFT_SUCCESS;
}

int p2p_recv_held(comm &c, size_t li, int source, uint64_t bits, uint64_t ignore, void *data, size_t bytes,
                  request &r) {
    vci &v = *c.local[li];
    r.op = request::kind::recv;
    r.group = &c;
    r.peer = source;
    r.failing = false;
    int rc;
    while ((rc = v.ops->tag_recv(v.ep, data, bytes, bits, ignore, request_context(r))) == WEFT_PLUGIN_ERR_AGAIN)
        v.ops->ep_progress(v.ep);
    if (g_failure_epoch.load(std::memory_order_relaxed) != 0) recheck_source(v, c, source);
    if (rc != WEFT_PLUGIN_OK) {
        r.op = request::kind::send;
        return fail(plugin_error(rc), "recv: the fabric refused the receive (code %d)", rc);
    }
    return WEFT_SUCCESS;
}

// Called by request_on_complete for a completion whose match bits carry the sync bit, before
// the request is marked complete (its owner may release it right after).  A synchronous
// message received: the acknowledgement is owed (the fabric's callback must not send).
void p2p_sync_completed(request &r) {
    if (r.op != request::kind::recv || r.group == nullptr || r.endpoint == nullptr) return;
    if ((r.msg_tag & match_ack_bit) != 0) return;  // an acknowledgement itself
    if (r.fabric_status != WEFT_PLUGIN_OK && r.fabric_status != WEFT_PLUGIN_ERR_TRUNCATE) return;  // not received
    const comm &c = static_cast<const comm &>(*r.group);
    int src = match_source(r.msg_tag), idx = match_index(r.msg_tag);
    if (src >= c.size) return;
    size_t first = c.remote_offset[static_cast<size_t>(src)];
    if (first + static_cast<size_t>(idx) >= c.remote_offset[static_cast<size_t>(src) + 1]) return;
    auto ctx = static_cast<uint16_t>((r.msg_tag >> match_ctx_shift) | match_ctx_ack);
    uint64_t bits = match_bits(ctx, local_endpoint_index(c, r.endpoint), static_cast<uint32_t>(c.rank),
                               static_cast<uint32_t>(match_tag(r.msg_tag)));
    sync_state *st = state_of(*r.endpoint, true);
    if (st == nullptr) {
        log(WEFT_LOG_WARN, "endpoint %u has no hook left: the acknowledgement of a synchronous message is lost",
            r.endpoint->index);
        return;
    }
    st->acks.push_back(owed_ack{c.remote[first + static_cast<size_t>(idx)], bits});
    if (r.fabric_status == WEFT_PLUGIN_OK) r.fabric_status = request_status_sync;
}

int p2p_stream_conflict(const char *fn) {
    return fail(WEFT_ERR_STREAM, "%s: another thread is using the same stream; a stream is a serial context", fn);
}

int p2p_pack_send(request &r, const p2p_buffer &b, const void *&data) {
    data = b.buf;
    r.staging = nullptr;
    if (b.type->contiguous || b.bytes == 0) return WEFT_SUCCESS;
    r.staging = std::malloc(b.bytes);
    if (r.staging == nullptr)
        return fail(WEFT_ERR_NO_MEM, "send: cannot allocate %zu bytes to pack a derived datatype", b.bytes);
    datatype_pack(*b.type, b.buf, b.count, r.staging);
    data = r.staging;
    return WEFT_SUCCESS;
}

namespace {

// Posts the acknowledgement's receive (a), then the synchronous message (s), holding v.
// On an error nothing is left posted but a, cancelled (*a_posted tells).
int post_ssend_held(comm &c, size_t li, int dest, int dst_idx, int tag, const void *data, size_t bytes, request &s,
                    request &a, bool *a_posted) {
    *a_posted = false;
    if (g_sync_by_fabric) {  // one send, on the plain context, that completes once matched
        uint64_t bits = match_bits(c.context_id, static_cast<uint32_t>(li), static_cast<uint32_t>(c.rank),
                                   static_cast<uint32_t>(tag));
        return p2p_send_held(c, li, dest, dst_idx, bits, data, bytes, s, true);
    }
    auto sync_ctx = static_cast<uint16_t>(c.context_id + match_ctx_sync);
    auto ack_ctx = static_cast<uint16_t>(c.context_id + match_ctx_ack);
    uint64_t ack = match_bits(ack_ctx, remote_endpoint_index(c, dest, dst_idx), static_cast<uint32_t>(dest),
                              static_cast<uint32_t>(tag));
    if (int rc = p2p_recv_held(c, li, dest, ack, 0, nullptr, 0, a)) return rc;
    *a_posted = true;
    uint64_t bits =
        match_bits(sync_ctx, static_cast<uint32_t>(li), static_cast<uint32_t>(c.rank), static_cast<uint32_t>(tag));
    int rc = p2p_send_held(c, li, dest, dst_idx, bits, data, bytes, s);
    if (rc != WEFT_SUCCESS) {
        vci &v = *c.local[li];
        v.ops->cancel(v.ep, request_context(a));
    }
    return rc;
}

int ssend_error(const char *fn, const comm &c, int dest, int status) {
    if (status == WEFT_PLUGIN_ERR_PEER_FAILED) return fail_proc(fn, dest, c.world_ranks[static_cast<size_t>(dest)]);
    return fail(plugin_error(status), "%s to rank %d failed (fabric code %d)", fn, dest, status);
}

int do_ssend(const char *fn, const p2p_op &op, int dest, int tag) {
    stream_use use(op.s);
    if (use.conflict()) return p2p_stream_conflict(fn);
    comm &c = *op.c;
    vci &v = *c.local[op.li];
    local_request s, a;
    s.endpoint = a.endpoint = &v;
    const void *data;
    if (int rc = p2p_pack_send(s, op.b, data)) return rc;
    bool a_posted = false;
    v.enter();
    // The hook sends the acks this endpoint owes, a self-send's included: make sure it can run.
    int rc = state_of(v, true) != nullptr
        ? post_ssend_held(c, op.li, dest, op.peer_idx, tag, data, op.b.bytes, s, a, &a_posted)
        : fail(WEFT_ERR_NO_MEM, "%s: endpoint %u has no hook left", fn, v.index);
    v.leave();
    bool sent = rc == WEFT_SUCCESS;
    vci_progress_until(v, [&] {
        if (a_posted && !a.complete.load(std::memory_order_acquire)) {
            if (g_failure_epoch.load(std::memory_order_relaxed) != 0) p2p_fail_if_peer_dead(a);
            return false;
        }
        return !sent || s.complete.load(std::memory_order_acquire);
    });
    std::free(s.staging);
    if (!sent) return rc;
    int status = s.fabric_status != WEFT_PLUGIN_OK || !a_posted ? s.fabric_status : a.fabric_status;
    return status == WEFT_PLUGIN_OK ? WEFT_SUCCESS : ssend_error(fn, c, dest, status);
}

int too_many(const char *fn) {
    return fail(WEFT_ERR_NO_MEM,
                "%s: more than %u requests pending on one endpoint (spread them over more: WEFT_NUM_VCIS, streams)", fn,
                request_pool::max_slots - 1);
}

// Posts the parts of a synchronous send whose user request is p (a new one, or a persistent
// request's run), holding v = c.local[op.li].  On an error nothing of it is left posted (a
// cancelled part is released by the hook) and p is untouched.
int post_ssend_parent(const char *fn, const p2p_op &op, int dest, int tag, request &p) {
    comm &c = *op.c;
    vci &v = *c.local[op.li];
    weft_request unused;
    request *s = p2p_request_alloc(v, nullptr, 0, &unused);
    request *a = s != nullptr ? p2p_request_alloc(v, nullptr, 0, &unused) : nullptr;
    auto *x = a != nullptr ? new (std::nothrow) compound : nullptr;
    int rc = WEFT_SUCCESS;
    bool a_posted = false;
    const void *data = nullptr;
    if (x == nullptr)
        rc = too_many(fn);
    else if (state_of(v, true) == nullptr)
        rc = fail(WEFT_ERR_NO_MEM, "%s: endpoint %u has no hook left", fn, v.index);
    else if ((rc = p2p_pack_send(*s, op.b, data)) == WEFT_SUCCESS)
        rc = post_ssend_held(c, op.li, dest, op.peer_idx, tag, data, op.b.bytes, *s, *a, &a_posted);
    if (rc == WEFT_SUCCESS) {
        if (!a_posted) {  // the fabric's synchronous send: no acknowledgement to receive
            drop_part(*a);
            a = nullptr;
        }
        *x = compound{compound::kind::ssend, &p, {s, a}, nullptr, nullptr};
        compound_queue(v, x);
        return rc;
    }
    if (a_posted) {  // cancelled: released once the fabric gives it back
        *x = compound{compound::kind::cleanup, nullptr, {a, nullptr}, nullptr, nullptr};
        compound_queue(v, x);
        a = nullptr;
        x = nullptr;
    }
    for (request *r : {s, a})
        if (r != nullptr) drop_part(*r);
    delete x;
    return rc;
}

int start_ssend(const char *fn, const p2p_op &op, int dest, int tag, weft_request *req) {
    if (req == nullptr) return fail(WEFT_ERR_ARG, "%s: request must not be NULL", fn);
    stream_use use(op.s);
    if (use.conflict()) return p2p_stream_conflict(fn);
    comm &c = *op.c;
    vci &v = *c.local[op.li];
    v.enter();
    request *p = p2p_request_alloc(v, &c, op.li, req);
    if (p == nullptr) {
        v.leave();
        return too_many(fn);
    }
    if (dest == WEFT_PROC_NULL) {
        p->op = request::kind::done;
        p->complete.store(true, std::memory_order_relaxed);
        v.leave();
        return WEFT_SUCCESS;
    }
    int rc = post_ssend_parent(fn, op, dest, tag, *p);
    if (rc != WEFT_SUCCESS) {
        drop_part(*p);
        *req = WEFT_REQUEST_NULL;
    }
    v.leave();
    return rc;
}

}  // namespace

// A run of weft_ssend_init's request (persistent_p2p::start; the stream is in use already).
int p2p_persistent_post_ssend(const persistent_p2p &p, request &r) {
    vci &v = *p.op.c->local[p.op.li];
    v.enter();
    r.op = request::kind::send;
    int rc = post_ssend_parent("weft_start", p.op, p.peer, p.tag, r);
    v.leave();
    return rc;
}

}  // namespace weft

using namespace weft;

static int ssend_impl(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm handle) {
    p2p_op op;
    if (int rc = check_p2p("weft_ssend", buf, count, type, dest, false, tag, handle, 0, 0, op)) return rc;
    return dest == WEFT_PROC_NULL ? WEFT_SUCCESS : do_ssend("weft_ssend", op, dest, tag);
}

extern "C" int weft_ssend(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm handle) {
    return comm_entry(handle, "weft_ssend", [&] { return ssend_impl(buf, count, type, dest, tag, handle); });
}

static int issend_impl(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm handle,
                       weft_request *request) {
    p2p_op op;
    if (int rc = check_p2p("weft_issend", buf, count, type, dest, false, tag, handle, 0, 0, op)) return rc;
    return start_ssend("weft_issend", op, dest, tag, request);
}

extern "C" int weft_issend(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm handle,
                           weft_request *request) {
    return comm_entry(handle, "weft_issend", [&] { return issend_impl(buf, count, type, dest, tag, handle, request); });
}

static int stream_ssend_impl(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm handle,
                             int src_idx, int dst_idx) {
    p2p_op op;
    if (int rc = check_p2p("weft_stream_ssend", buf, count, type, dest, false, tag, handle, src_idx, dst_idx, op))
        return rc;
    return dest == WEFT_PROC_NULL ? WEFT_SUCCESS : do_ssend("weft_stream_ssend", op, dest, tag);
}

extern "C" int weft_stream_ssend(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm handle,
                                 int src_idx, int dst_idx) {
    return comm_entry(handle, "weft_stream_ssend",
                      [&] { return stream_ssend_impl(buf, count, type, dest, tag, handle, src_idx, dst_idx); });
}

static int stream_issend_impl(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm handle,
                              int src_idx, int dst_idx, weft_request *request) {
    p2p_op op;
    if (int rc = check_p2p("weft_stream_issend", buf, count, type, dest, false, tag, handle, src_idx, dst_idx, op))
        return rc;
    return start_ssend("weft_stream_issend", op, dest, tag, request);
}

extern "C" int weft_stream_issend(const void *buf, size_t count, weft_datatype type, int dest, int tag,
                                  weft_comm handle, int src_idx, int dst_idx, weft_request *request) {
    return comm_entry(handle, "weft_stream_issend", [&] {
        return stream_issend_impl(buf, count, type, dest, tag, handle, src_idx, dst_idx, request);
    });
}

static int ssend_init_impl(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm comm,
                           weft_request *request) {
    return p2p_persistent_init("weft_ssend_init", false, buf, count, type, dest, tag, comm, 0, 0,
                               p2p_persistent_post_ssend, request);
}

extern "C" int weft_ssend_init(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm comm,
                               weft_request *request) {
    return comm_entry(comm, "weft_ssend_init",
                      [&] { return ssend_init_impl(buf, count, type, dest, tag, comm, request); });
}

static int stream_ssend_init_impl(const void *buf, size_t count, weft_datatype type, int dest, int tag, weft_comm comm,
                                  int src_idx, int dst_idx, weft_request *request) {
    return p2p_persistent_init("weft_stream_ssend_init", false, buf, count, type, dest, tag, comm, src_idx, dst_idx,
                               p2p_persistent_post_ssend, request);
}

extern "C" int weft_stream_ssend_init(const void *buf, size_t count, weft_datatype type, int dest, int tag,
                                      weft_comm comm, int src_idx, int dst_idx, weft_request *request) {
    return comm_entry(comm, "weft_stream_ssend_init", [&] {
        return stream_ssend_init_impl(buf, count, type, dest, tag, comm, src_idx, dst_idx, request);
    });
}
