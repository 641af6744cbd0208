/* UCX fabric plugin: tagged send/receive, probe and cancel.  The hot path: no allocation
 * (per-operation state lives in UCX's request memory) and no lock on serial endpoints. */
#include "ucx_internal.hpp"

namespace {

/* UCX callbacks record the outcome and queue the request for ep_progress to deliver, or, when
 * they run inside ep_progress on a serial endpoint (ep->direct, see ucx_internal.hpp), deliver
 * it themselves: free the UCX request and call complete(). */
void ucx_send_done(void *request, ucs_status_t status, void *user_data) {
    auto *req = static_cast<ucx_req *>(request);
    auto *ep = static_cast<weft_fabric_ep *>(user_data);
    if (ucs_unlikely(req->orphaned)) {
        /* A close (CANCELED) or ep_peer_failed (PEER_FAILED) completed it already and its
         * connection may be gone.  This runs only inside a progress of ep's worker, so ep is
         * still open. */
        req->orphaned = 0; /* the memory goes back to UCX's pool: start clean */
        --ep->orphans;
        return;
    }
    req->status = ucx_status_to_plugin_fast(status);
    weft_fabric_peer *peer = req->peer;
    /* ep_peer_failed force-closed the connection (UCS_ERR_CANCELED): the cause is the
     * peer's death, and that is what the core must see. */
    if (ucs_unlikely(status != UCS_OK) && peer->failed) req->status = WEFT_PLUGIN_ERR_PEER_FAILED;
    ucx_send_unlink(peer, req);
    if (peer->pending_sends == 0 && peer->closed) {
        weft_kit_list_unlink(&peer->link); /* off ep->zombies */
        delete peer;
    }
    if (ep->direct && !ep->posting) {
        weft_fabric_completion_t c{req->status, req->tag, req->length};
        void *context = req->context;
        ucp_request_free(req);
        ep->complete(context, &c);
        ++ep->delivered;
        return;
    }
    ucx_done_push(ep, req);
}

void ucx_recv_done(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info, void *user_data) {
    auto *req = static_cast<ucx_req *>(request);
    auto *ep = static_cast<weft_fabric_ep *>(user_data);
    weft_fabric_completion_t c;
    c.status = ucx_status_to_plugin_fast(status);
    if (ucs_likely(info && status != UCS_ERR_CANCELED)) {
        c.tag = info->sender_tag;
        c.length = info->length;
    } else {
        c.tag = req->tag;
        c.length = 0;
    }
    ucx_posted_unlink(req);
    if (ep->direct && !ep->posting) { /* inside ep_progress, not inside a post from complete() */
        void *context = req->context;
        ucx_req_free(req);
        ep->complete(context, &c);
        ++ep->delivered;
        return;
    }
    req->status = c.status;
    req->tag = c.tag;
    req->length = c.length;
    ucx_done_push(ep, req);
}

}  // namespace

void ucx_tag_params_init(weft_fabric_ep_t *ep) {
    ep->send_param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    ep->send_param.cb.send = ucx_send_done;
    ep->send_param.user_data = ep;
    /* UCX sends only what it can finish now and returns UCS_ERR_NO_RESOURCE otherwise. */
    ep->send_now_param.op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
    /* UCX 1.13 leaves recv_info unset when a receive completes at once, so ask for the
     * callback always (NO_IMM_CMPL): it runs inside ucp_tag_recv_nbx for a message that
     * had already arrived, and ucx_tag_recv delivers that completion itself, inline. */
    ep->recv_param.op_attr_mask =
        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    ep->recv_param.cb.recv = ucx_recv_done;
    ep->recv_param.user_data = ep;
    if (ep->ureq_offset != 0) /* the request memory is the core's context (ucx_tag_recv_post) */
        ep->recv_param.op_attr_mask |= UCP_OP_ATTR_FIELD_REQUEST;
}

namespace {

/* A send UCX did not complete at once: in flight (completes through ucx_send_done), or an
 * error.  Called with the endpoint guarded. */
int ucx_tag_send_posted(weft_fabric_peer_t *peer, size_t len, uint64_t tag, void *context, ucs_status_ptr_t sp) {
    if (UCS_PTR_IS_ERR(sp)) return ucx_status_to_plugin(UCS_PTR_STATUS(sp));
    /* Safe after the call: callbacks run only inside our own (guarded) UCX calls. */
    auto *req = static_cast<ucx_req *>(sp);
    req->context = context;
    req->peer = peer;
    ucx_send_link(peer, req);
    req->tag = tag;
    req->length = len;
    req->posted = 0;
    return WEFT_PLUGIN_OK;
}

}  // namespace

namespace {

__attribute__((noinline)) int ucx_tag_send_locked(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf,
                                                  size_t len, uint64_t tag, void *context) {
    ucs_status_ptr_t sp;
    {
        WEFT_KIT_MUTEX_GUARD(g, &ep->lock.mutex); /* a shared endpoint */
        if (ucs_unlikely(peer->failed))           /* ep_peer_failed: its uep may be gone */
            return WEFT_PLUGIN_ERR_PEER_FAILED;
        sp = ucp_tag_send_nbx(peer->uep, buf, len, tag, &ep->send_param);
        if (sp != nullptr) return ucx_tag_send_posted(peer, len, tag, context, sp);
    }
    weft_fabric_completion_t c{WEFT_PLUGIN_OK, tag, len};
    ep->complete(context, &c);
    return WEFT_PLUGIN_OK;
}

}  // namespace

namespace {

/* tag_send_now's answer to what ucp_tag_send_nbx returned under FORCE_IMM_CMPL. */
int ucx_send_now_result(weft_fabric_ep_t *ep, ucs_status_ptr_t sp) {
    if (sp == nullptr) return WEFT_PLUGIN_OK;
    if (UCS_PTR_IS_PTR(sp)) { /* FORCE_IMM_CMPL never posts; should UCX do so, finish it */
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        while (ucp_request_check_status(sp) == UCS_INPROGRESS) ucp_worker_progress(ep->worker);
        ucp_request_free(sp);
        return WEFT_PLUGIN_OK;
    }
    ucs_status_t st = UCS_PTR_STATUS(sp);
    return st == UCS_ERR_NO_RESOURCE ? WEFT_PLUGIN_ERR_AGAIN : ucx_status_to_plugin(st);
}

__attribute__((noinline)) int ucx_tag_send_now_locked(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf,
                                                      size_t len, uint64_t tag) {
    ucs_status_ptr_t sp;
    {
        WEFT_KIT_MUTEX_GUARD(g, &ep->lock.mutex); /* a shared endpoint */
        if (peer->failed) return WEFT_PLUGIN_ERR_PEER_FAILED;
        sp = ucp_tag_send_nbx(peer->uep, buf, len, tag, &ep->send_now_param);
    }
    return ucx_send_now_result(ep, sp);
}

}  // namespace

int ucx_tag_send_now(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag) {
    if (ucs_unlikely(!ep || !peer)) return WEFT_PLUGIN_ERR_INVALID;
    if (ucs_unlikely(!ep->lock.serial)) return ucx_tag_send_now_locked(ep, peer, buf, len, tag);
    if (ucs_unlikely(peer->failed)) /* ep_peer_failed: its uep may be gone */
        return WEFT_PLUGIN_ERR_PEER_FAILED;
    ucs_status_ptr_t sp = ucp_tag_send_nbx(peer->uep, buf, len, tag, &ep->send_now_param);
    if (ucs_likely(sp == nullptr)) return WEFT_PLUGIN_OK;
    return ucx_send_now_result(ep, sp);
}

int ucx_tag_send(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag,
                 void *context) {
    if (ucs_unlikely(!ep->lock.serial)) return ucx_tag_send_locked(ep, peer, buf, len, tag, context);
    if (ucs_unlikely(peer->failed)) /* ep_peer_failed: its uep may be gone */
        return WEFT_PLUGIN_ERR_PEER_FAILED;
    weft_fabric_completion_t c{WEFT_PLUGIN_OK, tag, len};
    ucs_status_ptr_t sp = ucp_tag_send_nbx(peer->uep, buf, len, tag, &ep->send_param);
    if (ucs_unlikely(sp != nullptr)) return ucx_tag_send_posted(peer, c.length, c.tag, context, sp);
    /* Completed at once (the usual case for small messages): deliver it now. */
    ep->complete(context, &c);
    return WEFT_PLUGIN_OK;
}

/* tag_send_sync (ABI 1.9): UCX's synchronous send, which completes once the peer matched the
 * message; as tag_send otherwise (the same callback and bookkeeping, failed with its peer). */
int ucx_tag_send_sync(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag,
                      void *context) {
    if (ucs_unlikely(!ep || !peer)) return WEFT_PLUGIN_ERR_INVALID;
    ucs_status_ptr_t sp;
    {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        if (ucs_unlikely(peer->failed)) /* ep_peer_failed: its uep may be gone */
            return WEFT_PLUGIN_ERR_PEER_FAILED;
        sp = ucp_tag_send_sync_nbx(peer->uep, buf, len, tag, &ep->send_param);
        if (sp != nullptr) return ucx_tag_send_posted(peer, len, tag, context, sp);
    }
    weft_fabric_completion_t c{WEFT_PLUGIN_OK, tag, len}; /* matched already (a self send) */
    ep->complete(context, &c);
    return WEFT_PLUGIN_OK;
}

namespace {

/* Posts a receive (the caller guards the endpoint).  Returns WEFT_PLUGIN_OK when posted, 1
 * when it completed at once (*c filled: the caller delivers it, outside the guard), or an
 * error (nothing posted, no completion follows). */
/* A receive not yet matched goes on the posted list, where cancel finds it. */
inline void ucx_posted_push(weft_fabric_ep_t *ep, ucx_req *req) {
    weft_kit_list_push_front(&ep->posted, &req->link);
    req->posted = 1;
}

/* param: ep->recv_param, or a copy of it with another datatype (tag_recvv); len counts param's
 * datatype's units (bytes, or iov entries). */
inline __attribute__((always_inline)) int ucx_tag_recv_post(weft_fabric_ep_t *ep, void *buf, size_t len, uint64_t tag,
                                                            uint64_t ignore, void *context, weft_fabric_completion_t *c,
                                                            ucp_request_param_t *param) {
    if (ep->ureq_offset != 0) {
        auto *own = reinterpret_cast<ucx_req *>(static_cast<char *>(context) + ep->ureq_offset);
        own->user_mem = 1;
        own->orphaned = 0;
        own->posted = 0;
        param->request = own;
    }
    ep->posting = 1;
    /* UCX's mask names the bits that must match; ours names the bits to ignore. */
    ucs_status_ptr_t sp = ucp_tag_recv_nbx(ep->worker, buf, len, tag, ~ignore, param);
    ep->posting = 0;
    weft_kit_link_t *early = ep->inline_head;
    if (ucs_likely(UCS_PTR_IS_PTR(sp) && !early)) {
        /* Not matched yet: cancel finds it on the posted list. */
        auto *req = static_cast<ucx_req *>(sp);
        req->context = context;
        ucx_posted_push(ep, req);
        return WEFT_PLUGIN_OK;
    }
    ep->inline_head = nullptr;
    if (!UCS_PTR_IS_PTR(sp)) {
        /* Not posted (NO_IMM_CMPL never gives NULL): no callback may follow. */
        while (early) {
            weft_kit_link_t *next = early->next;
            ucx_done_push(ep, ucx_req_of(early));
            early = next;
        }
        return ucx_status_to_plugin(sp ? UCS_PTR_STATUS(sp) : UCS_ERR_NO_MESSAGE);
    }
    auto *req = static_cast<ucx_req *>(sp);
    req->context = context;
    ucx_req *now = nullptr;
    while (early) { /* normally just req itself */
        weft_kit_link_t *next = early->next;
        if (early == &req->link)
            now = req;
        else
            ucx_done_push(ep, ucx_req_of(early));
        early = next;
    }
    if (!now) {
        ucx_posted_push(ep, req);
        return WEFT_PLUGIN_OK;
    }
    *c = {now->status, now->tag, now->length};
    ucx_req_free(now);
    return 1;
}

__attribute__((noinline)) int ucx_tag_recv_locked(weft_fabric_ep_t *ep, void *buf, size_t len, uint64_t tag,
                                                  uint64_t ignore, void *context, ucp_request_param_t *param) {
    weft_fabric_completion_t c;
    int rc;
    {
        WEFT_KIT_MUTEX_GUARD(g, &ep->lock.mutex); /* a shared endpoint */
        rc = ucx_tag_recv_post(ep, buf, len, tag, ignore, context, &c, param);
    }
    if (rc <= 0) return rc;
    ep->complete(context, &c);
    return WEFT_PLUGIN_OK;
}

}  // namespace

int ucx_tag_recv(weft_fabric_ep_t *ep, void *buf, size_t len, uint64_t tag, uint64_t ignore, void *context) {
    if (ucs_unlikely(!ep->lock.serial)) return ucx_tag_recv_locked(ep, buf, len, tag, ignore, context, &ep->recv_param);
    weft_fabric_completion_t c;
    int rc = ucx_tag_recv_post(ep, buf, len, tag, ignore, context, &c, &ep->recv_param);
    if (ucs_likely(rc <= 0)) return rc;
    /* The message had arrived: UCX completed the receive inside the call; deliver it now. */
    ep->complete(context, &c);
    return WEFT_PLUGIN_OK;
}

/* Gathered sends and scattered receives: UCX's IOV datatype over the core's list (the same
 * layout as ucp_dt_iov_t), with the parameters of tag_send/tag_recv otherwise.  UCX reads the
 * list while the operation runs; the core keeps it until the completion. */
static_assert(sizeof(weft_fabric_iov_t) == sizeof(ucp_dt_iov_t) &&
                  offsetof(weft_fabric_iov_t, base) == offsetof(ucp_dt_iov_t, buffer) &&
                  offsetof(weft_fabric_iov_t, len) == offsetof(ucp_dt_iov_t, length),
              "weft_fabric_iov_t must match ucp_dt_iov_t");

int ucx_tag_sendv(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const weft_fabric_iov_t *iov, size_t count,
                  uint64_t tag, void *context) {
    if (ucs_unlikely(!ep || !peer || !iov || count == 0)) return WEFT_PLUGIN_ERR_INVALID;
    size_t len = 0;
    for (size_t i = 0; i < count; ++i) len += iov[i].len;
    ucp_request_param_t param = ep->send_param;
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    param.datatype = ucp_dt_make_iov();
    ucs_status_ptr_t sp;
    {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        if (ucs_unlikely(peer->failed)) /* ep_peer_failed: its uep may be gone */
            return WEFT_PLUGIN_ERR_PEER_FAILED;
        sp = ucp_tag_send_nbx(peer->uep, iov, count, tag, &param);
        if (sp != nullptr) return ucx_tag_send_posted(peer, len, tag, context, sp);
    }
    /* Completed at once: deliver it outside the guard. */
    weft_fabric_completion_t c{WEFT_PLUGIN_OK, tag, len};
    ep->complete(context, &c);
    return WEFT_PLUGIN_OK;
}

int ucx_tag_recvv(weft_fabric_ep_t *ep, const weft_fabric_iov_t *iov, size_t count, uint64_t tag, uint64_t ignore,
                  void *context) {
    if (ucs_unlikely(!ep || !iov || count == 0)) return WEFT_PLUGIN_ERR_INVALID;
    ucp_request_param_t param = ep->recv_param;
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    param.datatype = ucp_dt_make_iov();
    void *list = const_cast<weft_fabric_iov_t *>(iov);
    if (ucs_unlikely(!ep->lock.serial)) return ucx_tag_recv_locked(ep, list, count, tag, ignore, context, &param);
    weft_fabric_completion_t c;
    int rc = ucx_tag_recv_post(ep, list, count, tag, ignore, context, &c, &param);
    if (rc <= 0) return rc;
    ep->complete(context, &c);
    return WEFT_PLUGIN_OK;
}

int ucx_tag_probe(weft_fabric_ep_t *ep, uint64_t tag, uint64_t ignore, int *found, uint64_t *msg_tag, size_t *msg_len) {
    if (!ep || !found) return WEFT_PLUGIN_ERR_INVALID;
    ucp_tag_recv_info_t info;
    ucp_tag_message_h msg;
    {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        msg = ucp_tag_probe_nb(ep->worker, tag, ~ignore, 0, &info);
    }
    *found = msg != nullptr;
    if (msg) {
        if (msg_tag) *msg_tag = info.sender_tag;
        if (msg_len) *msg_len = info.length;
    }
    return WEFT_PLUGIN_OK;
}

int ucx_tag_cancel(weft_fabric_ep_t *ep, void *context) {
    if (!ep) return WEFT_PLUGIN_ERR_INVALID;
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    WEFT_KIT_LIST_FOREACH(it, &ep->posted) {
        ucx_req *req = ucx_req_of(it);
        if (req->context == context) {
            /* UCX runs the callback at once for a receive it removes; the callback only
             * queues it, so the CANCELED completion arrives at the next ep_progress.  A
             * receive already matched stays posted and completes normally. */
            ucp_request_cancel(ep->worker, req);
            return WEFT_PLUGIN_OK;
        }
    }
    /* Finished but not yet delivered: its completion (OK) still comes. */
    for (weft_kit_link_t *l = ep->done.first; l; l = l->next)
        if (ucx_req_of(l)->context == context) return WEFT_PLUGIN_OK;
    return WEFT_PLUGIN_ERR_NOT_FOUND;
}

void ucx_tag_cancel_all(weft_fabric_ep_t *ep) {
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    /* Each cancel unlinks its request through the callback; a matched one stays. */
    WEFT_KIT_LIST_FOREACH(it, &ep->posted)
    ucp_request_cancel(ep->worker, ucx_req_of(it));
}
