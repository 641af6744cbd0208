/* OFI fabric plugin: tagged send/receive, probe and cancel.  The hot path: no allocation
 * (op contexts come from the endpoint's free list) and no lock on serial endpoints. */
#include "ofi_internal.hpp"

#include <sys/uio.h>

#include <chrono>

static_assert(sizeof(weft_fabric_iov_t) == sizeof(struct iovec) &&
                  offsetof(weft_fabric_iov_t, base) == offsetof(struct iovec, iov_base) &&
                  offsetof(weft_fabric_iov_t, len) == offsetof(struct iovec, iov_len),
              "weft_fabric_iov_t must be laid out as struct iovec");

namespace {

/* A receive or probe that meets FI_EAGAIN reads the CQ (parking completions for the next ep_progress:
 * only the posted operation's own completion may be delivered from inside the post) and
 * tries again this many times before handing AGAIN to the core. */
constexpr int OFI_POST_RETRIES = 8;
/* Sends retry less: one refused after a CQ read goes to the backlog instead. */
constexpr int OFI_SEND_RETRIES = 1;

/* How long tag_probe waits for the FI_PEEK answer.  shm and rxm answer from within
 * fi_trecvmsg, so this only bounds a provider that answers late. */
constexpr auto OFI_PEEK_TIMEOUT = std::chrono::milliseconds(100);

}  // namespace

namespace {

/* Posts one send: 0 when posted (inject: already complete, *injected = 1), -FI_EAGAIN
 * when libfabric has no room, another -FI_E* on failure. */
inline ssize_t ofi_send_post(weft_fabric_ep *ep, ofi_op *op, int *injected) {
    if (__builtin_expect(op->iov_count != 0, 0)) { /* tag_sendv (weft_fabric_iov_t is an iovec) */
        *injected = 0;
        return fi_tsendv(ep->ep, static_cast<const struct iovec *>(op->buf), nullptr, op->iov_count, op->peer->addr,
                         op->tag, &op->fictx);
    }
    if (op->length <= ep->fabric->inject_size) {
        /* The buffer is free again when fi_tinject returns and no CQ entry follows. */
        *injected = 1;
        return fi_tinject(ep->ep, op->buf, op->length, op->peer->addr, op->tag);
    }
    *injected = 0;
    return fi_tsend(ep->ep, op->buf, op->length, nullptr, op->peer->addr, op->tag, &op->fictx);
}

}  // namespace

void ofi_backlog_flush(weft_fabric_ep *ep) {
    while (weft_kit_link_t *first = ep->backlog.first) {
        ofi_op *op = ofi_op_of(first);
        int injected;
        ssize_t ret = ofi_send_post(ep, op, &injected);
        if (ret == -FI_EAGAIN) return; /* the rest waits, in order */
        weft_kit_queue_pop(&ep->backlog);
        if (ret == 0 && !injected)
            ofi_pending_add(ep, op); /* the CQ entry finishes it */
        else
            ofi_finish(ep, op, ret == 0 ? WEFT_PLUGIN_OK : ofi_errno_to_plugin((int)ret), op->tag, op->length);
    }
}

int ofi_tag_send_now(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag) {
    if (!ep || !peer) return WEFT_PLUGIN_ERR_INVALID;
    if (len > ep->fabric->inject_size) /* only an inject is finished when the call returns */
        return WEFT_PLUGIN_ERR_AGAIN;
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    if (__builtin_expect(peer->failed, 0)) return WEFT_PLUGIN_ERR_PEER_FAILED;
    /* Sends keep their order: this one waits behind the backlog. */
    if (!weft_kit_queue_empty(&ep->backlog)) return WEFT_PLUGIN_ERR_AGAIN;
    ssize_t ret = fi_tinject(ep->ep, buf, len, peer->addr, tag);
    if (__builtin_expect(ret == 0, 1)) return WEFT_PLUGIN_OK;
    return ret == -FI_EAGAIN ? WEFT_PLUGIN_ERR_AGAIN : ofi_errno_to_plugin(static_cast<int>(ret));
}

namespace {

/* tag_send (iov_count 0) and tag_sendv (buf: an iovec list of iov_count entries, len bytes). */
inline __attribute__((always_inline)) int ofi_send(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf,
                                                   size_t len, size_t iov_count, uint64_t tag, void *context) {
    int injected = 0;
    {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        if (__builtin_expect(peer->failed, 0)) /* ep_peer_failed */
            return WEFT_PLUGIN_ERR_PEER_FAILED;
        ofi_op *op = ofi_op_get(ep);
        if (!op) return WEFT_PLUGIN_ERR_NOMEM;
        op->context = context;
        op->peer = peer;
        op->buf = buf;
        op->tag = tag;
        op->length = len;
        op->iov_count = iov_count;
        op->kind = OFI_OP_SEND;
        ssize_t ret = -FI_EAGAIN;
        /* Behind a backlog a send waits its turn: sends keep their order. */
        if (__builtin_expect(weft_kit_queue_empty(&ep->backlog), 1)) {
            for (int i = 0;; ++i) {
                ret = ofi_send_post(ep, op, &injected);
                if (__builtin_expect(ret != -FI_EAGAIN, 1) || i == OFI_SEND_RETRIES) break;
                ofi_cq_drain(ep, 256);
            }
        }
        if (__builtin_expect(ret == 0, 1)) {
            if (injected) {
                op->peer = nullptr;
                ofi_op_put(ep, op);
            } else {
                /* Safe after the call: completions are read only by our (guarded) calls. */
                ofi_pending_add(ep, op);
                ++peer->pending_sends;
                return WEFT_PLUGIN_OK;
            }
        } else if (ret == -FI_EAGAIN) {
            /* ep_progress posts it; its completion follows from there. */
            weft_kit_queue_push(&ep->backlog, &op->link);
            ++peer->pending_sends;
            return WEFT_PLUGIN_OK;
        } else {
            op->peer = nullptr;
            ofi_op_put(ep, op);
            return ofi_errno_to_plugin(static_cast<int>(ret));
        }
    }
    /* Injected: complete now, outside the guard (complete() may post again). */
    weft_fabric_completion_t c{WEFT_PLUGIN_OK, tag, len};
    ep->complete(context, &c);
    return WEFT_PLUGIN_OK;
}

}  // namespace

int ofi_tag_send(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag,
                 void *context) {
    return ofi_send(ep, peer, buf, len, 0, tag, context);
}

int ofi_tag_sendv(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const weft_fabric_iov_t *iov, size_t count,
                  uint64_t tag, void *context) {
    if (!ep || !peer || !iov || count == 0 || count > ep->fabric->iov_limit) return WEFT_PLUGIN_ERR_INVALID;
    size_t len = 0;
    for (size_t i = 0; i < count; ++i) len += iov[i].len;
    return ofi_send(ep, peer, iov, len, count, tag, context);
}

namespace {

/* tag_recv (iov_count 0) and tag_recvv (buf: an iovec list of iov_count entries, len bytes). */
inline __attribute__((always_inline)) int ofi_recv(weft_fabric_ep_t *ep, void *buf, size_t len, size_t iov_count,
                                                   uint64_t tag, uint64_t ignore, void *context) {
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    ofi_op *op = ofi_op_get(ep);
    if (!op) return WEFT_PLUGIN_ERR_NOMEM;
    op->context = context;
    op->peer = nullptr;
    op->tag = tag;
    op->length = len;
    op->kind = OFI_OP_RECV;
    ssize_t ret;
    for (int i = 0;; ++i) {
        /* libfabric's ignore bits mean what ours mean: (tag | ignore) == (msg | ignore). */
        ret = iov_count == 0 ? fi_trecv(ep->ep, buf, len, nullptr, FI_ADDR_UNSPEC, tag, ignore, &op->fictx)
                             : fi_trecvv(ep->ep, static_cast<const struct iovec *>(buf), nullptr, iov_count,
                                         FI_ADDR_UNSPEC, tag, ignore, &op->fictx);
        if (__builtin_expect(ret != -FI_EAGAIN, 1) || i == OFI_POST_RETRIES) break;
        ofi_cq_drain(ep, 256);
    }
    if (__builtin_expect(ret == 0, 1)) {
        ofi_pending_add(ep, op);
        return WEFT_PLUGIN_OK;
    }
    ofi_op_put(ep, op);
    return ofi_errno_to_plugin(static_cast<int>(ret));
}

}  // namespace

int ofi_tag_recv(weft_fabric_ep_t *ep, void *buf, size_t len, uint64_t tag, uint64_t ignore, void *context) {
    return ofi_recv(ep, buf, len, 0, tag, ignore, context);
}

int ofi_tag_recvv(weft_fabric_ep_t *ep, const weft_fabric_iov_t *iov, size_t count, uint64_t tag, uint64_t ignore,
                  void *context) {
    if (!ep || !iov || count == 0 || count > ep->fabric->iov_limit) return WEFT_PLUGIN_ERR_INVALID;
    size_t len = 0;
    for (size_t i = 0; i < count; ++i) len += iov[i].len;
    return ofi_recv(ep, const_cast<weft_fabric_iov_t *>(iov), len, count, tag, ignore, context);
}

int ofi_tag_probe(weft_fabric_ep_t *ep, uint64_t tag, uint64_t ignore, int *found, uint64_t *msg_tag, size_t *msg_len) {
    if (!ep || !found) return WEFT_PLUGIN_ERR_INVALID;
    *found = 0;
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    auto deadline = std::chrono::steady_clock::now() + OFI_PEEK_TIMEOUT;
    /* A previous probe gave up on its answer: it must arrive before the peek op is reused. */
    while (ep->peek_busy) {
        if (ofi_cq_drain(ep, 256) < 0 || std::chrono::steady_clock::now() > deadline)
            return WEFT_PLUGIN_OK; /* nothing found (yet); the core probes again */
    }
    struct fi_msg_tagged msg {};
    msg.msg_iov = nullptr;
    msg.iov_count = 0;
    msg.addr = FI_ADDR_UNSPEC;
    msg.tag = tag;
    msg.ignore = ignore;
    msg.context = &ep->peek.fictx;
    ssize_t ret;
    for (int i = 0;; ++i) {
        ret = fi_trecvmsg(ep->ep, &msg, FI_PEEK);
        if (ret != -FI_EAGAIN || i == OFI_POST_RETRIES) break;
        ofi_cq_drain(ep, 256);
    }
    if (ret != 0) {
        if (ret != -FI_EAGAIN)
            ofi_log(ep->fabric, WEFT_LOG_WARN, "fi_trecvmsg(FI_PEEK): %s", fi_strerror(static_cast<int>(-ret)));
        return ofi_errno_to_plugin(static_cast<int>(ret));
    }
    /* The answer (found, or FI_ENOMSG) comes as a CQ entry; other entries read on the way
     * wait on the done list for the next ep_progress. */
    ep->peek_busy = 1;
    while (ep->peek_busy) {
        if (ofi_cq_drain(ep, 256) < 0 || std::chrono::steady_clock::now() > deadline) return WEFT_PLUGIN_OK;
    }
    if (ep->peek.status == WEFT_PLUGIN_OK) {
        *found = 1;
        if (msg_tag) *msg_tag = ep->peek.tag;
        if (msg_len) *msg_len = ep->peek.length;
        return WEFT_PLUGIN_OK;
    }
    return ep->peek.status == WEFT_PLUGIN_ERR_NOT_FOUND ? WEFT_PLUGIN_OK : ep->peek.status;
}

int ofi_tag_cancel(weft_fabric_ep_t *ep, void *context) {
    if (!ep) return WEFT_PLUGIN_ERR_INVALID;
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    WEFT_KIT_LIST_FOREACH(it, &ep->pending) {
        ofi_op *op = ofi_op_of(it);
        if (op->kind == OFI_OP_RECV && op->context == context) {
            /* The FI_ECANCELED entry arrives through the CQ at a later ep_progress.  A
             * receive already matched is not canceled and completes normally. */
            ssize_t ret = fi_cancel(&ep->ep->fid, &op->fictx);
            if (ret != 0 && ret != -FI_ENOENT)
                ofi_log(ep->fabric, WEFT_LOG_WARN, "fi_cancel: %s", fi_strerror(static_cast<int>(-ret)));
            return WEFT_PLUGIN_OK;
        }
    }
    /* Finished but not yet delivered: its completion (OK) still comes. */
    for (weft_kit_link_t *l = ep->done.first; l; l = l->next)
        if (ofi_op_of(l)->context == context) return WEFT_PLUGIN_OK;
    return WEFT_PLUGIN_ERR_NOT_FOUND;
}
