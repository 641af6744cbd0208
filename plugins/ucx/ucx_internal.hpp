/* Internal structures of the UCX fabric plugin.  Only api/weft/plugin.h (with the plugin kit,
 * api/weft/plugin_kit.h) and UCX are visible. */
#ifndef WEFT_UCX_INTERNAL_HPP
#define WEFT_UCX_INTERNAL_HPP

#include <weft/plugin_kit.h>

#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <mutex>

/* Per-operation state, kept right after UCX's request: either in UCX's request pool (UCX
 * reserves request_size bytes per request), or, for receives on an endpoint whose core gives
 * context space (weft_fabric_ep_attr_t::context_space), in the core's context itself, with
 * UCX's request before it (UCP_OP_ATTR_FIELD_REQUEST).  Either way posting allocates
 * nothing; the second also spares UCX's pool and keeps one operation's state together. */
struct ucx_req {
    /* The posted-receive list or the peer's in-flight sends (lists), the done queue, or the
     * receive's inline chain (through next).  First, so that a link is its request. */
    weft_kit_link_t link;
    void *context;          /* the core's context, given back in complete() */
    weft_fabric_peer *peer; /* sends: the connection, for its pending-send count */
    uint64_t tag;
    size_t length;
    int status; /* WEFT_PLUGIN_* once the UCX callback has run */
    int posted; /* on the endpoint's posted-receive list (cancel finds it there) */
    /* A send that ep_close completed itself (CANCELED) and released to UCX while UCX still
     * held it: the UCX callback, if it ever runs, must ignore it. */
    int orphaned;
    int user_mem; /* in the core's context space: never given back to UCX */
};

inline ucx_req *ucx_req_of(weft_kit_link_t *link) { return WEFT_KIT_CONTAINER_OF(link, ucx_req, link); }

/* Returns a finished request's memory to UCX, unless it is the core's. */
inline void ucx_req_free(ucx_req *req) {
    if (!req->user_mem) ucp_request_free(req);
}

struct weft_fabric {
    const weft_plugin_host_t *host;
    ucp_context_h context;
    uint32_t flags;      /* WEFT_FABRIC_CAP_* */
    size_t address_size; /* bound reported by query; measured on the first query */
    /* Error-handling mode of every UCP endpoint (WEFT_UCX_ERROR_MODE, see ucx_fabric_init):
     * UCP_ERR_HANDLING_MODE_NONE (default, allows shared memory) or _PEER. */
    ucp_err_handling_mode_t err_mode;
    std::mutex lock;     /* the endpoint list: endpoints open/close from any thread */
    weft_kit_list_t eps; /* open endpoints (weft_fabric_ep::link) */
    size_t kept_workers; /* workers kept at ep_close (sends in flight): no ucp_cleanup */
    size_t request_size; /* UCX's ucp_request_t (ucp_context_query), 0 when unknown */
};

/* The context space receives can use (weft_fabric_caps_t::context_space): UCX's request, then
 * our ucx_req, aligned by UCX's request size; 0 when UCX did not say its size. */
inline size_t ucx_context_space_wanted(const weft_fabric *fabric) {
    size_t rsz = fabric->request_size;
    return rsz != 0 && rsz % alignof(ucx_req) == 0 ? rsz + sizeof(ucx_req) : 0;
}

struct weft_fabric_peer {
    ucp_ep_h uep;
    weft_fabric_ep *owner;
    ucs_status_t failure;  /* set by UCX's error handler: the peer is gone */
    size_t pending_sends;  /* sends UCX has not completed yet */
    weft_kit_list_t sends; /* those sends (ucx_req::link), newest first */
    int closed;            /* disconnected, kept (on ep->zombies) until pending_sends is 0 */
    /* ep_peer_failed: the core says the process is dead.  Sends fail at once, nothing waits
     * for it.  In mode PEER uep was force-closed then (nullptr; close_req, if any, is
     * released at disconnect); in mode NONE uep stays open while UCX may hold sends we
     * orphaned (held_orphans), since closing it would lose track of them. */
    int failed;
    void *close_req;
    size_t held_orphans;
    weft_kit_link_t link; /* on its endpoint's peers or zombies */
};

/* The fields the send, receive and progress paths use keep the offsets they had before the
 * kit's types came in (its lists are 8 bytes longer than a head pointer): the posted list
 * went to the end of the receive parameters, ureq_offset to where it was. */
struct weft_fabric_ep {
    weft_fabric *fabric;
    ucp_worker_h worker;
    weft_fabric_complete_fn complete;
    /* lock.serial: the core promises one thread at a time, and no lock is taken.  Shared
     * endpoints only: every UCX call on the worker runs under lock, so UCX callbacks (which
     * only queue work) never race with the posting code. */
    weft_kit_ep_lock_t lock;
    /* UCX callbacks queue finished requests here; ep_progress delivers them to the core
     * outside any lock, so complete() may post new operations.  Exception, the hot path:
     * while ep_progress runs UCX on a serial endpoint (direct set), callbacks deliver at once
     * (free the UCX request, call complete(), count it in delivered).  The core's complete()
     * only records the result, and a serial endpoint holds no lock; a plugin user whose
     * complete() posted on the same endpoint would post from inside a UCX callback. */
    weft_kit_queue_t done;
    int direct;
    int delivered;
    /* Receives keep UCX's request and their ucx_req in the core's context: the ucx_req sits
     * this many bytes into it, after UCX's request.  0: the core gives no (or too little)
     * context space, and receives use UCX's pool. */
    size_t ureq_offset;
    /* While tag_recv is inside UCX, callbacks chain here (newest first, through link.next)
     * instead, so the receive that UCX completes at once is delivered by tag_recv itself. */
    int posting;
    weft_kit_link_t *inline_head;
    /* Parameters of every tagged send and receive, filled once at ep_open (UCX only reads
     * them): posting copies nothing. */
    ucp_request_param_t send_param;
    ucp_request_param_t send_now_param; /* FORCE_IMM_CMPL: tag_send_now */
    ucp_request_param_t recv_param;
    weft_kit_list_t posted;  /* receives that may still be canceled (ucx_req::link) */
    weft_kit_list_t peers;   /* connections still open, force-closed by ep_close */
    weft_kit_list_t zombies; /* disconnected, but UCX still owes send callbacks naming them */
    /* Sends completed as CANCELED by a close while UCX still held them (ucx_req::orphaned)
     * and whose UCX callback has not run yet.  Non-zero at ep_close: UCX 1.13 cannot cancel
     * them, so the worker is kept, not destroyed (see ucx_ep_close). */
    size_t orphans;
    weft_kit_link_t link; /* on the fabric's eps, or (kept at ep_close) on the kept list */
};

inline weft_fabric_peer *ucx_peer_of(weft_kit_link_t *link) {
    return WEFT_KIT_CONTAINER_OF(link, weft_fabric_peer, link);
}

constexpr const char *UCX_PLUGIN_NAME = "ucx";

/* The address we hand out is the kit's header ("WUCX", version 1, info 0) followed by the
 * UCP worker address, so that ep_connect rejects another fabric's address or junk instead of
 * letting UCX unpack garbage. */
constexpr weft_kit_addr_format_t ucx_address_format = {UCX_PLUGIN_NAME, WEFT_KIT_MAGIC('W', 'U', 'C', 'X'), 1, 1,
                                                       SIZE_MAX - WEFT_KIT_ADDR_HEADER_SIZE};

int ucx_status_to_plugin(ucs_status_t status);
/* The same, with UCS_OK (every completion on the hot path) decided inline. */
inline int ucx_status_to_plugin_fast(ucs_status_t status) {
    return ucs_likely(status == UCS_OK) ? WEFT_PLUGIN_OK : ucx_status_to_plugin(status);
}
/* ucx_log(fabric, level, fmt, ...): one line to Weft's log through the fabric's host. */
#define ucx_log(fabric, level, ...) \
    weft_kit_logf((fabric) ? (fabric)->host : nullptr, level, UCX_PLUGIN_NAME, __VA_ARGS__)

/* Queue a finished request on its endpoint (called from UCX callbacks, under the guard). */
inline void ucx_done_push(weft_fabric_ep *ep, ucx_req *req) {
    if (ep->posting) {
        req->link.next = ep->inline_head;
        ep->inline_head = &req->link;
        return;
    }
    weft_kit_queue_push(&ep->done, &req->link);
}

inline void ucx_send_link(weft_fabric_peer *peer, ucx_req *req) {
    weft_kit_list_push_front(&peer->sends, &req->link);
    ++peer->pending_sends;
}

inline void ucx_send_unlink(weft_fabric_peer *peer, ucx_req *req) {
    weft_kit_list_unlink(&req->link);
    --peer->pending_sends;
}

inline void ucx_posted_unlink(ucx_req *req) {
    if (!req->posted) return;
    weft_kit_list_unlink(&req->link);
    req->posted = 0;
}

/* Operations, one file per group. */
int ucx_fabric_init(const weft_plugin_host_t *host, weft_fabric_t **fabric, char *why, size_t why_len);
int ucx_fabric_finalize(weft_fabric_t *fabric);
int ucx_fabric_query(weft_fabric_t *fabric, weft_fabric_caps_t *caps);

int ucx_ep_open(weft_fabric_t *fabric, const weft_fabric_ep_attr_t *attr, weft_fabric_ep_t **ep);
int ucx_ep_close(weft_fabric_ep_t *ep);
int ucx_ep_address(weft_fabric_ep_t *ep, void *buf, size_t *len);
int ucx_ep_connect(weft_fabric_ep_t *ep, const void *address, size_t len, weft_fabric_peer_t **peer);
int ucx_ep_disconnect(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer);
int ucx_ep_progress(weft_fabric_ep_t *ep);
int ucx_ep_wait_fd(weft_fabric_ep_t *ep, int *fd);
int ucx_ep_arm(weft_fabric_ep_t *ep);
int ucx_ep_peer_failed(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer);

int ucx_tag_send_now(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag);
int ucx_tag_send(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag,
                 void *context);
int ucx_tag_recv(weft_fabric_ep_t *ep, void *buf, size_t len, uint64_t tag, uint64_t ignore, void *context);
int ucx_tag_send_sync(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag,
                      void *context);
int ucx_tag_sendv(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const weft_fabric_iov_t *iov, size_t count,
                  uint64_t tag, void *context);
int ucx_tag_recvv(weft_fabric_ep_t *ep, const weft_fabric_iov_t *iov, size_t count, uint64_t tag, uint64_t ignore,
                  void *context);
int ucx_tag_probe(weft_fabric_ep_t *ep, uint64_t tag, uint64_t ignore, int *found, uint64_t *msg_tag, size_t *msg_len);
int ucx_tag_cancel(weft_fabric_ep_t *ep, void *context);
/* Fills ep->send_param and ep->recv_param (ep_open). */
void ucx_tag_params_init(weft_fabric_ep_t *ep);
/* Cancels every posted receive (ep_close); their completions join the done list. */
void ucx_tag_cancel_all(weft_fabric_ep_t *ep);

#endif
