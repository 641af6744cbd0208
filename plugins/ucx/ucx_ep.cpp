/* UCX fabric plugin: endpoints (one UCP worker each), connections, progress and wake-up. */
#include "ucx_internal.hpp"

#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <new>

namespace {

/* Disconnect flushes for at most this long; a dead peer must not hang the caller. */
constexpr auto UCX_DISCONNECT_TIMEOUT = std::chrono::seconds(5);
/* A forced close of a connection ep_peer_failed marked needs nothing from the peer: UCX
 * finishes it locally, at once in practice.  This only bounds a surprise. */
constexpr auto UCX_FAILED_CLOSE_TIMEOUT = std::chrono::milliseconds(500);

/* Progress the worker until request completes or the deadline passes; completions of
 * other operations are delivered on the way.  Returns the request's final status, or
 * UCS_INPROGRESS on timeout. */
ucs_status_t ucx_wait_request(weft_fabric_ep *ep, void *request, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        ucs_status_t status;
        {
            WEFT_KIT_EP_GUARD(g, &ep->lock);
            status = ucp_request_check_status(request);
        }
        if (status != UCS_INPROGRESS) return status;
        if (std::chrono::steady_clock::now() > deadline) return UCS_INPROGRESS;
        ucx_ep_progress(ep);
    }
}

void ucx_request_release(weft_fabric_ep *ep, void *request) {
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    ucp_request_free(request);
}

/* Starts closing uep; returns the request to wait for, nullptr when closed already, or an
 * error pointer. */
ucs_status_ptr_t ucx_peer_close_start(weft_fabric_ep *ep, weft_fabric_peer *peer, bool force) {
    ucp_request_param_t param{};
    if (force) {
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        param.flags = UCP_EP_CLOSE_FLAG_FORCE;
    }
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    weft_kit_list_unlink(&peer->link);
    return ucp_ep_close_nbx(peer->uep, &param);
}

/* After closing peer's UCP endpoint: sends UCX still holds will not complete on their own
 * in error mode NONE (a forced close there neither completes nor cancels them, and UCX 1.13's
 * ucp_request_cancel does not cancel sends), e.g. a rendezvous send nobody received.  Each
 * still gets its one completion: we queue it with status ourselves (CANCELED; PEER_FAILED
 * for ep_peer_failed) and mark its UCX request orphaned, so that a later UCX callback for it
 * is ignored.  (In mode PEER the forced close has completed them already, through the
 * callback.)  Returns how many were orphaned. */
size_t ucx_peer_orphan_sends(weft_fabric_ep *ep, weft_fabric_peer *peer, int status = WEFT_PLUGIN_ERR_CANCELED) {
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    size_t n = 0;
    while (weft_kit_link_t *first = weft_kit_list_first(&peer->sends)) {
        ucx_req *req = ucx_req_of(first);
        ucx_send_unlink(peer, req);
        req->status = status;
        req->orphaned = 1;
        ++ep->orphans;
        ++peer->held_orphans;
        /* ep_progress frees it (UCX keeps it until it completes) and completes it. */
        ucx_done_push(ep, req);
        ++n;
    }
    return n;
}

/* Frees a closed connection, or parks it until UCX has run the callbacks of its sends. */
void ucx_peer_release(weft_fabric_ep *ep, weft_fabric_peer *peer) {
    if (peer->pending_sends != 0) {
        ucx_ep_progress(ep); /* deliver what the close completed */
        size_t n = ucx_peer_orphan_sends(ep, peer);
        if (n)
            ucx_log(ep->fabric, WEFT_LOG_WARN,
                    "connection closed with %zu send(s) in flight (e.g. a rendezvous send "
                    "nobody received): completed as canceled",
                    n);
    }
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    if (peer->pending_sends == 0) {
        delete peer;
        return;
    }
    peer->closed = 1;
    weft_kit_list_push_front(&ep->zombies, &peer->link);
}

/* Closes a connection ep_peer_failed marked, never waiting for the peer, and frees or parks
 * the peer.  Mode PEER: the forced close started then finishes locally.  Mode NONE: while
 * UCX may still hold sends we orphaned, uep stays open and the peer is parked with it (as
 * ep_close does; the worker is then kept), else it is force-closed now. */
void ucx_failed_peer_close(weft_fabric_ep *ep, weft_fabric_peer *peer) {
    ucs_status_ptr_t sp = peer->close_req;
    peer->close_req = nullptr;
    if (peer->uep && peer->held_orphans != 0) {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        weft_kit_list_unlink(&peer->link);
        peer->closed = 1;
        weft_kit_list_push_front(&ep->zombies, &peer->link);
        return;
    }
    if (peer->uep) {
        sp = ucx_peer_close_start(ep, peer, true);
        peer->uep = nullptr;
    } else {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        weft_kit_list_unlink(&peer->link);
    }
    if (UCS_PTR_IS_PTR(sp)) {
        if (ucx_wait_request(ep, sp, std::chrono::steady_clock::now() + UCX_FAILED_CLOSE_TIMEOUT) == UCS_INPROGRESS)
            ucx_log(ep->fabric, WEFT_LOG_WARN, "closing a failed peer's connection did not finish");
        ucx_request_release(ep, sp);
    }
    ucx_peer_release(ep, peer);
}

/* UCX error handler: remember the failure; the connection is closed (forcibly) by
 * ep_disconnect or ep_close, as UCX requires. */
void ucx_peer_failed(void *arg, ucp_ep_h, ucs_status_t status) {
    auto *peer = static_cast<weft_fabric_peer *>(arg);
    peer->failure = status;
    ucx_log(peer->owner->fabric, WEFT_LOG_WARN, "connection failed: %s", ucs_status_string(status));
}

/* Endpoints (with their workers) kept at ep_close, for the life of the process. */
std::mutex ucx_kept_lock;
weft_kit_list_t ucx_kept = WEFT_KIT_LIST_INITIALIZER(ucx_kept);

void ucx_keep_forever(weft_fabric_ep *ep) {
    /* Pin this plugin and with it libucp/libucs: the kept workers' UCX state (async
     * handlers included) must not be unmapped by a dlclose. */
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&ucx_keep_forever), &info) && info.dli_fname)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    std::lock_guard<std::mutex> g(ucx_kept_lock);
    weft_kit_list_push_front(&ucx_kept, &ep->link);
}

}  // namespace

int ucx_ep_open(weft_fabric_t *fabric, const weft_fabric_ep_attr_t *attr, weft_fabric_ep_t **out) {
    if (!fabric || !out || !weft_kit_ep_attr_valid(attr)) return WEFT_PLUGIN_ERR_INVALID;
    size_t context_space = weft_kit_ep_attr_context_space(attr);
    *out = nullptr;
    auto *ep = new (std::nothrow) weft_fabric_ep();
    if (!ep) return WEFT_PLUGIN_ERR_NOMEM;
    if (weft_kit_ep_lock_init(&ep->lock, attr->serial) != 0) {
        delete ep;
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    ep->fabric = fabric;
    ep->complete = attr->complete;
    weft_kit_queue_init(&ep->done);
    weft_kit_list_init(&ep->posted);
    weft_kit_list_init(&ep->peers);
    weft_kit_list_init(&ep->zombies);
    /* UCX's request at the start of the context, our state after it (UCX wants request_size
     * bytes before the pointer it is given); the context is 64-byte aligned, and UCX's
     * request size keeps ucx_req aligned. */
    size_t wanted = ucx_context_space_wanted(fabric);
    if (wanted != 0 && wanted <= context_space) ep->ureq_offset = fabric->request_size;
    ucx_tag_params_init(ep);

    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE | UCP_WORKER_PARAM_FIELD_USER_DATA;
    /* Serial endpoints skip UCX's worker lock: that is the point of a stream. */
    wp.thread_mode = ep->lock.serial ? UCS_THREAD_MODE_SINGLE : UCS_THREAD_MODE_MULTI;
    wp.user_data = ep;
    ucs_status_t status = ucp_worker_create(fabric->context, &wp, &ep->worker);
    if (status != UCS_OK) {
        ucx_log(fabric, WEFT_LOG_ERROR, "ucp_worker_create: %s", ucs_status_string(status));
        weft_kit_ep_lock_destroy(&ep->lock);
        delete ep;
        return ucx_status_to_plugin(status);
    }
    {
        std::lock_guard<std::mutex> g(fabric->lock);
        weft_kit_list_push_front(&fabric->eps, &ep->link);
    }
    *out = ep;
    return WEFT_PLUGIN_OK;
}

int ucx_ep_close(weft_fabric_ep_t *ep) {
    if (!ep) return WEFT_PLUGIN_ERR_INVALID;
    weft_fabric *fabric = ep->fabric;
    /* Every posted operation still gets its one completion: receives as CANCELED, sends
     * on force-closed connections with the status UCX gives them. */
    ucx_tag_cancel_all(ep);
    auto deadline = std::chrono::steady_clock::now() + UCX_DISCONNECT_TIMEOUT;
    while (weft_kit_link_t *first = weft_kit_list_first(&ep->peers)) {
        weft_fabric_peer *peer = ucx_peer_of(first);
        if (peer->failed) { /* its sends were completed by ep_peer_failed */
            ucx_failed_peer_close(ep, peer);
            continue;
        }
        if (fabric->err_mode == UCP_ERR_HANDLING_MODE_NONE && peer->pending_sends != 0) {
            /* In mode NONE, UCX cannot close a connection that still holds a send without
             * losing track of its memory: leave it open on the worker, which is kept (the
             * sends are orphaned, so the worker is), and park the peer with it. */
            size_t n = ucx_peer_orphan_sends(ep, peer);
            ucx_log(fabric, WEFT_LOG_WARN,
                    "ep_close: connection closed with %zu send(s) in flight (e.g. a rendezvous "
                    "send nobody received): completed as canceled",
                    n);
            WEFT_KIT_EP_GUARD(g, &ep->lock);
            weft_kit_list_unlink(&peer->link);
            peer->closed = 1;
            /* On zombies it holds peer->uep for the kept worker. */
            weft_kit_list_push_front(&ep->zombies, &peer->link);
            continue;
        }
        ucs_status_ptr_t sp = ucx_peer_close_start(ep, peer, true);
        if (UCS_PTR_IS_PTR(sp)) {
            if (ucx_wait_request(ep, sp, deadline) == UCS_INPROGRESS)
                ucx_log(fabric, WEFT_LOG_WARN, "ep_close: a connection did not close in time");
            ucx_request_release(ep, sp);
        }
        ucx_peer_release(ep, peer);
    }
    ucx_ep_progress(ep); /* deliver what the cancels, closes and orphanings completed */

    bool keep = ep->orphans != 0;
    {
        std::lock_guard<std::mutex> g(fabric->lock);
        weft_kit_list_unlink(&ep->link);
        if (keep) ++fabric->kept_workers;
    }
    if (keep) {
        /* UCX still holds sends that were completed as canceled (orphaned): destroying
         * the worker now would free their requests under UCX's feet (UCX 1.13 warns or
         * asserts in ucp_worker_destroy).  Keep the worker, never progressed again, until
         * the process exits; the core got every completion already. */
        ucx_log(fabric, WEFT_LOG_WARN,
                "ep_close: endpoint closed with %zu send(s) in flight; its UCX worker is "
                "kept until the process exits",
                ep->orphans);
        ucx_keep_forever(ep);
        return WEFT_PLUGIN_OK;
    }
    ucp_worker_destroy(ep->worker);
    WEFT_KIT_LIST_FOREACH(it, &ep->zombies) /* no callback can name them any more */
    delete ucx_peer_of(it);
    weft_kit_ep_lock_destroy(&ep->lock);
    delete ep;
    return WEFT_PLUGIN_OK;
}

int ucx_ep_address(weft_fabric_ep_t *ep, void *buf, size_t *len) {
    if (!ep || !len) return WEFT_PLUGIN_ERR_INVALID;
    ucp_address_t *addr;
    size_t addr_len;
    ucs_status_t status;
    {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        status = ucp_worker_get_address(ep->worker, &addr, &addr_len);
    }
    if (status != UCS_OK) {
        ucx_log(ep->fabric, WEFT_LOG_ERROR, "ucp_worker_get_address: %s", ucs_status_string(status));
        return ucx_status_to_plugin(status);
    }
    /* Too small: *len tells the caller how much to give. */
    unsigned char *payload = weft_kit_addr_write(&ucx_address_format, 0, buf, len, addr_len);
    if (payload) memcpy(payload, addr, addr_len);
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    ucp_worker_release_address(ep->worker, addr);
    return payload ? WEFT_PLUGIN_OK : WEFT_PLUGIN_ERR_INVALID;
}

int ucx_ep_connect(weft_fabric_ep_t *ep, const void *address, size_t len, weft_fabric_peer_t **out) {
    if (!ep || !address || !out) return WEFT_PLUGIN_ERR_INVALID;
    *out = nullptr;
    char why[256];
    const unsigned char *worker_address =
        weft_kit_addr_read(&ucx_address_format, address, len, nullptr, nullptr, why, sizeof why);
    if (!worker_address) {
        ucx_log(ep->fabric, WEFT_LOG_ERROR, "ep_connect: %s", why);
        return WEFT_PLUGIN_ERR_UNREACHABLE;
    }
    auto *peer = new (std::nothrow) weft_fabric_peer();
    if (!peer) return WEFT_PLUGIN_ERR_NOMEM;

    ucp_ep_params_t params{};
    /* Error mode NONE by default (shared memory usable); PEER on request
     * (WEFT_UCX_ERROR_MODE=peer): a dead peer then fails pending operations instead of
     * hanging them.  See ucx_fabric_init. */
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    params.err_mode = ep->fabric->err_mode;
    if (params.err_mode == UCP_ERR_HANDLING_MODE_PEER) {
        params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
        params.err_handler.cb = ucx_peer_failed;
        params.err_handler.arg = peer;
    }
    peer->owner = ep;
    weft_kit_list_init(&peer->sends);
    params.address = reinterpret_cast<const ucp_address_t *>(worker_address);
    ucs_status_t status;
    {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        status = ucp_ep_create(ep->worker, &params, &peer->uep);
        if (status == UCS_OK) weft_kit_list_push_front(&ep->peers, &peer->link);
    }
    if (status != UCS_OK) {
        ucx_log(ep->fabric, WEFT_LOG_ERROR, "ucp_ep_create: %s", ucs_status_string(status));
        delete peer;
        return ucx_status_to_plugin(status);
    }
    *out = peer;
    return WEFT_PLUGIN_OK;
}

int ucx_ep_disconnect(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer) {
    if (!ep || !peer) return WEFT_PLUGIN_ERR_INVALID;
    if (peer->failed) {
        /* ep_peer_failed completed its sends already: nothing to flush, nothing to wait for. */
        ucx_failed_peer_close(ep, peer);
        ucx_ep_progress(ep);
        return WEFT_PLUGIN_OK;
    }
    auto deadline = std::chrono::steady_clock::now() + UCX_DISCONNECT_TIMEOUT;
    int rc = WEFT_PLUGIN_OK;
    /* Flush first, bounded: what was sent reaches the peer unless it is gone or never
     * takes it (a rendezvous send nobody receives). */
    if (peer->failure == UCS_OK) {
        ucp_request_param_t param{};
        ucs_status_ptr_t sp;
        {
            WEFT_KIT_EP_GUARD(g, &ep->lock);
            sp = ucp_ep_flush_nbx(peer->uep, &param);
        }
        ucs_status_t status = UCS_PTR_STATUS(sp);
        if (UCS_PTR_IS_PTR(sp)) {
            status = ucx_wait_request(ep, sp, deadline);
            if (status == UCS_INPROGRESS)
                ucx_log(ep->fabric, WEFT_LOG_WARN, "ep_disconnect: flush did not finish within 5 s, closing forcibly");
            ucx_request_release(ep, sp); /* UCX drops an unfinished flush on force close */
        }
        if (status != UCS_OK)
            rc = status == UCS_INPROGRESS ? WEFT_PLUGIN_ERR_PEER_FAILED : ucx_status_to_plugin(status);
    } else {
        rc = WEFT_PLUGIN_ERR_PEER_FAILED;
    }
    /* Flushed and idle: a normal close.  Otherwise force, which completes pending sends
     * with an error; a normal close would leave a rendezvous send nobody received attached
     * to the connection, and UCX asserts on that when the worker is destroyed. */
    ucs_status_ptr_t sp = ucx_peer_close_start(ep, peer, rc != WEFT_PLUGIN_OK || peer->pending_sends != 0);
    if (UCS_PTR_IS_PTR(sp)) {
        ucs_status_t status = ucx_wait_request(ep, sp, std::chrono::steady_clock::now() + UCX_DISCONNECT_TIMEOUT);
        if (status == UCS_INPROGRESS) ucx_log(ep->fabric, WEFT_LOG_WARN, "ep_disconnect: close did not finish in 5 s");
        ucx_request_release(ep, sp);
    }
    ucx_peer_release(ep, peer);
    ucx_ep_progress(ep); /* deliver what the close completed or canceled */
    return rc;
}

namespace {

/* Delivers the completions queued on ep (see ucx_done_push); n were delivered already. */
__attribute__((noinline)) int ucx_ep_deliver_queued(weft_fabric_ep_t *ep, int n) {
    weft_kit_link_t *head;
    {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        head = weft_kit_queue_take(&ep->done);
    }
    while (head) {
        ucx_req *req = ucx_req_of(head);
        head = head->next;
        void *context = req->context;
        weft_fabric_completion_t c{req->status, req->tag, req->length};
        /* Free before complete(): the core may post again from inside complete().  An
         * orphan UCX still holds keeps its callback (ucp_request_free would drop it), so that
         * its end is seen (ucx_send_done) and ep_close need not keep the worker for it. */
        {
            WEFT_KIT_EP_GUARD(g, &ep->lock);
            if (ucs_unlikely(req->orphaned))
                ucp_request_release(req);
            else
                ucx_req_free(req);
        }
        ep->complete(context, &c);
        ++n;
    }
    return n;
}

__attribute__((noinline)) int ucx_ep_progress_locked(weft_fabric_ep_t *ep) {
    {
        WEFT_KIT_MUTEX_GUARD(g, &ep->lock.mutex); /* a shared endpoint */
        ucp_worker_progress(ep->worker);
        if (weft_kit_queue_empty(&ep->done)) return 0;
    }
    return ucx_ep_deliver_queued(ep, 0);
}

}  // namespace

/* Waiting threads call this in a loop, so the serial path keeps to what an idle poll needs:
 * the rest lives out of line, and this function saves one register instead of six. */
int ucx_ep_progress(weft_fabric_ep_t *ep) {
    if (ucs_unlikely(!ep->lock.serial)) return ucx_ep_progress_locked(ep);
    ep->direct = 1;
    ep->delivered = 0;
    ucp_worker_progress(ep->worker);
    ep->direct = 0;
    if (ucs_likely(weft_kit_queue_empty(&ep->done))) return ep->delivered;
    return ucx_ep_deliver_queued(ep, ep->delivered);
}

int ucx_ep_wait_fd(weft_fabric_ep_t *ep, int *fd) {
    if (!ep || !fd) return WEFT_PLUGIN_ERR_INVALID;
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    ucs_status_t status = ucp_worker_get_efd(ep->worker, fd);
    if (status != UCS_OK) ucx_log(ep->fabric, WEFT_LOG_WARN, "ucp_worker_get_efd: %s", ucs_status_string(status));
    return ucx_status_to_plugin(status);
}

int ucx_ep_arm(weft_fabric_ep_t *ep) {
    if (!ep) return WEFT_PLUGIN_ERR_INVALID;
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    if (!weft_kit_queue_empty(&ep->done))
        return WEFT_PLUGIN_ERR_AGAIN; /* completions wait for delivery: do not sleep */
    ucs_status_t status = ucp_worker_arm(ep->worker);
    if (status == UCS_ERR_BUSY) return WEFT_PLUGIN_ERR_AGAIN;
    return ucx_status_to_plugin(status);
}

int ucx_ep_peer_failed(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer) {
    if (!ep || !peer) return WEFT_PLUGIN_ERR_INVALID;
    {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        if (peer->failed) return WEFT_PLUGIN_OK; /* told before */
        peer->failed = 1;                        /* from now on tag_send fails at once */
        if (ep->fabric->err_mode == UCP_ERR_HANDLING_MODE_PEER) {
            /* A forced close completes what UCX holds for the peer at once, through the send
             * callback (CANCELED, reported as PEER_FAILED), and sends the peer nothing.  Its
             * request, if any, finishes locally: ep_disconnect or ep_close releases it. */
            ucp_request_param_t param{};
            param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            param.flags = UCP_EP_CLOSE_FLAG_FORCE;
            ucs_status_ptr_t sp = ucp_ep_close_nbx(peer->uep, &param);
            peer->uep = nullptr;
            if (UCS_PTR_IS_PTR(sp))
                peer->close_req = sp;
            else if (UCS_PTR_IS_ERR(sp))
                ucx_log(ep->fabric, WEFT_LOG_WARN, "ep_peer_failed: forced close: %s",
                        ucs_status_string(UCS_PTR_STATUS(sp)));
            /* UCX 1.13 completes some of them (a rendezvous send) from its next progress: a
             * few local rounds let it, so that fewer are orphaned (an orphan UCX still holds
             * keeps the worker at ep_close).  Callbacks only queue here (ep->direct is 0);
             * nothing waits for the peer. */
            for (int i = 0; i < 4 && !weft_kit_list_empty(&peer->sends); ++i) ucp_worker_progress(ep->worker);
        }
    }
    /* Mode NONE has no safe forced close (UCX would neither complete nor cancel the sends), so
     * the sends UCX holds (mode PEER: none left, normally) complete here as PEER_FAILED; UCX's
     * own completion of them, if it ever comes, is ignored (orphaned). */
    size_t n = ucx_peer_orphan_sends(ep, peer, WEFT_PLUGIN_ERR_PEER_FAILED);
    ucx_log(ep->fabric, WEFT_LOG_INFO, "peer reported failed: %zu send(s) in flight fail", n);
    return WEFT_PLUGIN_OK;
}
