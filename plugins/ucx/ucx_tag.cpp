/* UCX fabric plugin: tagged send/receive, probe and cancel.  The hot path: no allocation
 * (per-operation state lives in UCX's request memory) and no lock on serial endpoints. */
#include "ucx_internal.hpp"

namespace {

/* UCX callbacks only record the outcome and queue the request; ep_progress delivers it. */
void ucx_send_done(void *request, ucs_status_t status, void *user_data)
{
    auto *req = static_cast<ucx_req *>(request);
    auto *ep = static_cast<weft_fabric_ep *>(user_data);
    if (ucs_unlikely(req->orphaned)) {
        /* A close completed it already (CANCELED) and its connection is gone.  This runs
         * only inside a progress of ep's worker, so ep is still open. */
        req->orphaned = 0; /* the memory goes back to UCX's pool: start clean */
        --ep->orphans;
        return;
    }
    req->status = ucx_status_to_plugin(status);
    weft_fabric_peer *peer = req->peer;
    ucx_send_unlink(peer, req);
    if (peer->pending_sends == 0 && peer->closed) {
        ucx_peer_list_remove(&ep->zombies, peer);
        delete peer;
    }
    ucx_done_push(ep, req);
}

void ucx_recv_done(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info,
                   void *user_data)
{
    auto *req = static_cast<ucx_req *>(request);
    auto *ep = static_cast<weft_fabric_ep *>(user_data);
    req->status = ucx_status_to_plugin(status);
    if (info && status != UCS_ERR_CANCELED) {
        req->tag = info->sender_tag;
        req->length = info->length;
    } else {
        req->length = 0;
    }
    ucx_posted_unlink(ep, req);
    ucx_done_push(ep, req);
}

} // namespace

int ucx_tag_send(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len,
                 uint64_t tag, void *context)
{
    ucp_request_param_t param;
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = ucx_send_done;
    param.user_data = ep;
    ucs_status_ptr_t sp;
    {
        ucx_ep_guard g(ep);
        sp = ucp_tag_send_nbx(peer->uep, buf, len, tag, &param);
        if (ucs_likely(UCS_PTR_IS_PTR(sp))) {
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
    }
    if (ucs_likely(sp == nullptr)) {
        weft_fabric_completion_t c{WEFT_PLUGIN_OK, tag, len};
        ep->complete(context, &c);
        return WEFT_PLUGIN_OK;
    }
    return ucx_status_to_plugin(UCS_PTR_STATUS(sp));
}

int ucx_tag_recv(weft_fabric_ep_t *ep, void *buf, size_t len, uint64_t tag, uint64_t ignore,
                 void *context)
{
    /* UCX 1.13 leaves recv_info unset when a receive completes at once, so ask for the
     * callback always (NO_IMM_CMPL): it runs inside ucp_tag_recv_nbx for a message that
     * had already arrived, and we deliver that completion here, inline. */
    ucp_request_param_t param;
    param.op_attr_mask =
        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    param.cb.recv = ucx_recv_done;
    param.user_data = ep;
    ucx_req *now = nullptr;
    weft_fabric_completion_t c;
    {
        ucx_ep_guard g(ep);
        ep->posting = 1;
        /* UCX's mask names the bits that must match; ours names the bits to ignore. */
        ucs_status_ptr_t sp = ucp_tag_recv_nbx(ep->worker, buf, len, tag, ~ignore, &param);
        ep->posting = 0;
        ucx_req *early = ep->inline_head;
        ep->inline_head = nullptr;
        if (ucs_unlikely(!UCS_PTR_IS_PTR(sp))) {
            /* Not posted (NO_IMM_CMPL never gives NULL): no callback may follow. */
            for (ucx_req *r = early; r; r = r->next)
                ucx_done_push(ep, r);
            return ucx_status_to_plugin(sp ? UCS_PTR_STATUS(sp) : UCS_ERR_NO_MESSAGE);
        }
        auto *req = static_cast<ucx_req *>(sp);
        req->context = context;
        while (early) { /* normally just req itself */
            ucx_req *next = early->next;
            if (early == req)
                now = req;
            else
                ucx_done_push(ep, early);
            early = next;
        }
        if (ucs_likely(!now)) {
            req->prev = nullptr;
            req->next = ep->posted;
            if (ep->posted)
                ep->posted->prev = req;
            ep->posted = req;
            req->posted = 1;
            return WEFT_PLUGIN_OK;
        }
        c = {now->status, now->tag, now->length};
        ucp_request_free(now);
    }
    ep->complete(context, &c);
    return WEFT_PLUGIN_OK;
}

int ucx_tag_probe(weft_fabric_ep_t *ep, uint64_t tag, uint64_t ignore, int *found,
                  uint64_t *msg_tag, size_t *msg_len)
{
    if (!ep || !found)
        return WEFT_PLUGIN_ERR_INVALID;
    ucp_tag_recv_info_t info;
    ucp_tag_message_h msg;
    {
        ucx_ep_guard g(ep);
        msg = ucp_tag_probe_nb(ep->worker, tag, ~ignore, 0, &info);
    }
    *found = msg != nullptr;
    if (msg) {
        if (msg_tag)
            *msg_tag = info.sender_tag;
        if (msg_len)
            *msg_len = info.length;
    }
    return WEFT_PLUGIN_OK;
}

int ucx_tag_cancel(weft_fabric_ep_t *ep, void *context)
{
    if (!ep)
        return WEFT_PLUGIN_ERR_INVALID;
    ucx_ep_guard g(ep);
    for (ucx_req *req = ep->posted; req; req = req->next) {
        if (req->context == context) {
            /* UCX runs the callback at once for a receive it removes; the callback only
             * queues it, so the CANCELED completion arrives at the next ep_progress.  A
             * receive already matched stays posted and completes normally. */
            ucp_request_cancel(ep->worker, req);
            return WEFT_PLUGIN_OK;
        }
    }
    /* Finished but not yet delivered: its completion (OK) still comes. */
    for (ucx_req *req = ep->done_head; req; req = req->next)
        if (req->context == context)
            return WEFT_PLUGIN_OK;
    return WEFT_PLUGIN_ERR_NOT_FOUND;
}

void ucx_tag_cancel_all(weft_fabric_ep_t *ep)
{
    ucx_ep_guard g(ep);
    /* Each cancel unlinks its request through the callback; a matched one stays. */
    ucx_req *req = ep->posted;
    while (req) {
        ucx_req *next = req->next;
        ucp_request_cancel(ep->worker, req);
        req = next;
    }
}
