/* OFI fabric plugin: endpoints (domain + RDM endpoint + tagged CQ + AV table each),
 * connections (AV entries), completion queue reading, progress and wake-up. */
#include "ofi_internal.hpp"

#include <chrono>
#include <cstring>
#include <new>
#include <thread>

namespace {

/* Disconnect waits this long for sends to the peer; a dead (or never receiving) peer must
 * not hang the caller. */
constexpr auto OFI_DISCONNECT_TIMEOUT = std::chrono::seconds(2);
/* ep_close gives canceled receives and unfinished sends this long before it completes
 * what is left itself. */
constexpr auto OFI_CLOSE_TIMEOUT = std::chrono::milliseconds(500);
constexpr int OFI_CQ_BATCH = 16;

} // namespace

void ofi_finish(weft_fabric_ep *ep, ofi_op *op, int status, uint64_t tag, size_t length)
{
    if (__builtin_expect(op->orphan != OFI_ORPHAN_NONE, 0)) {
        /* ep_peer_failed completed it already (its status stays PEER_FAILED): this is
         * libfabric letting go of it. */
        if (op->orphan == OFI_ORPHAN_HELD)
            ofi_op_put(ep, op);
        op->orphan = OFI_ORPHAN_NONE; /* QUEUED: ep_progress recycles it after delivery */
        return;
    }
    op->status = status;
    if (op == &ep->peek) { /* probe's answer: tag_probe reads it, nobody is completed */
        op->tag = tag;
        op->length = length;
        ep->peek_busy = 0;
        return;
    }
    ofi_pending_remove(op);
    if (op->kind == OFI_OP_RECV) {
        op->tag = tag;
        op->length = length;
    } else if (weft_fabric_peer *peer = op->peer) {
        op->peer = nullptr;
        if (--peer->pending_sends == 0 && peer->closed) {
            weft_kit_list_unlink(&peer->link); /* off ep->zombies */
            delete peer;
        }
    }
    ofi_done_push(ep, op);
}

namespace {

void ofi_finish_error(weft_fabric_ep *ep)
{
    struct fi_cq_err_entry err{};
    ssize_t ret = fi_cq_readerr(ep->cq, &err, 0);
    if (ret < 0)
        return;
    auto *op = static_cast<ofi_op *>(err.op_context);
    if (!op) { /* an inject that failed later: nobody waits for it */
        ofi_log(ep->fabric, WEFT_LOG_WARN, "completion error without context: %s",
                fi_strerror(err.err));
        return;
    }
    /* shm 1.17 reports some errors negated (-FI_ETRUNC); the spec says positive. */
    int code = err.err < 0 ? -err.err : err.err;
    switch (code) {
    case FI_ETRUNC:
    {
        /* The spec: len = bytes placed, olen = bytes that did not fit, so the sum is the
         * sent length.  rxm 1.17 puts the sent length into len itself (len > buffer
         * tells), shm 1.17 fills in neither (then the buffer's length is all we know). */
        size_t sent = err.len > op->length ? err.len : err.olen + err.len;
        ofi_finish(ep, op, WEFT_PLUGIN_ERR_TRUNCATE, err.tag, sent ? sent : op->length);
        break;
    }
    case FI_ECANCELED:
        ofi_finish(ep, op, WEFT_PLUGIN_ERR_CANCELED, op->tag, 0);
        break;
    case FI_ENOMSG: /* FI_PEEK found nothing */
        ofi_finish(ep, op, WEFT_PLUGIN_ERR_NOT_FOUND, 0, 0);
        break;
    default: {
        char buf[128];
        ofi_log(ep->fabric, WEFT_LOG_WARN, "operation failed: %s (%s)", fi_strerror(code),
                fi_cq_strerror(ep->cq, err.prov_errno, err.err_data, buf, sizeof(buf)));
        ofi_finish(ep, op, ofi_errno_to_plugin(code), err.tag, 0);
    }
    }
}

/* Completes the backlogged sends to peer (never handed to libfabric) with PEER_FAILED. */
void ofi_backlog_fail(weft_fabric_ep *ep, weft_fabric_peer *peer)
{
    for (weft_kit_link_t *l = weft_kit_queue_take(&ep->backlog), *next; l; l = next) {
        next = l->next;
        ofi_op *op = ofi_op_of(l);
        if (op->peer == peer)
            ofi_finish(ep, op, WEFT_PLUGIN_ERR_PEER_FAILED, op->tag, op->length);
        else
            weft_kit_queue_push(&ep->backlog, l); /* the others keep their order */
    }
}

void ofi_ep_free(weft_fabric_ep *ep)
{
    WEFT_KIT_LIST_FOREACH(it, &ep->peers)
        delete ofi_peer_of(it);
    WEFT_KIT_LIST_FOREACH(it, &ep->zombies)
        delete ofi_peer_of(it);
    while (ep->chunks) {
        ofi_op_chunk *c = ep->chunks;
        ep->chunks = c->next;
        delete c;
    }
    weft_kit_ep_lock_destroy(&ep->lock);
    delete ep;
}

} // namespace

int ofi_op_grow(weft_fabric_ep *ep)
{
    auto *c = new (std::nothrow) ofi_op_chunk();
    if (!c)
        return WEFT_PLUGIN_ERR_NOMEM;
    c->next = ep->chunks;
    ep->chunks = c;
    for (size_t i = 0; i < OFI_OP_CHUNK; ++i)
        ofi_op_put(ep, &c->ops[i]);
    return WEFT_PLUGIN_OK;
}

int ofi_cq_drain(weft_fabric_ep *ep, int max)
{
    struct fi_cq_tagged_entry e[OFI_CQ_BATCH];
    int total = 0;
    while (total < max) {
        ssize_t n = fi_cq_read(ep->cq, e, OFI_CQ_BATCH);
        if (n > 0) {
            for (ssize_t i = 0; i < n; ++i)
                ofi_finish(ep, static_cast<ofi_op *>(e[i].op_context), WEFT_PLUGIN_OK, e[i].tag,
                           e[i].len);
            total += static_cast<int>(n);
            if (n < OFI_CQ_BATCH)
                break;
        } else if (n == -FI_EAVAIL) {
            ofi_finish_error(ep);
            ++total;
        } else if (n == -FI_EAGAIN) {
            break;
        } else {
            ofi_log(ep->fabric, WEFT_LOG_ERROR, "fi_cq_read: %s", fi_strerror(static_cast<int>(-n)));
            return ofi_errno_to_plugin(static_cast<int>(n));
        }
    }
    return total;
}

int ofi_ep_resources_open(weft_fabric *fabric, weft_fabric_ep *ep, bool want_wait_fd,
                          const char **what)
{
    ep->wait_fd = -1;
    int ret = fi_domain(fabric->fabric, fabric->info, &ep->domain, nullptr);
    if (ret != 0) {
        *what = "fi_domain";
        goto fail;
    }
    {
        struct fi_cq_attr cq_attr{};
        cq_attr.format = FI_CQ_FORMAT_TAGGED;
        cq_attr.wait_obj = want_wait_fd ? FI_WAIT_FD : FI_WAIT_NONE;
        ret = fi_cq_open(ep->domain, &cq_attr, &ep->cq, nullptr);
        if (ret != 0) {
            *what = want_wait_fd ? "fi_cq_open (FI_WAIT_FD)" : "fi_cq_open";
            goto fail;
        }
        if (want_wait_fd) {
            int fd = -1;
            ret = fi_control(&ep->cq->fid, FI_GETWAIT, &fd);
            if (ret != 0 || fd < 0) {
                *what = "fi_control(FI_GETWAIT)";
                ret = ret ? ret : -FI_ENOSYS;
                goto fail;
            }
            ep->wait_fd = fd;
        }
    }
    {
        struct fi_av_attr av_attr{};
        av_attr.type = FI_AV_TABLE;
        ret = fi_av_open(ep->domain, &av_attr, &ep->av, nullptr);
        if (ret != 0) {
            *what = "fi_av_open";
            goto fail;
        }
    }
    ret = fi_endpoint(ep->domain, fabric->info, &ep->ep, nullptr);
    if (ret != 0) {
        *what = "fi_endpoint";
        goto fail;
    }
    ret = fi_ep_bind(ep->ep, &ep->av->fid, 0);
    if (ret != 0) {
        *what = "fi_ep_bind(av)";
        goto fail;
    }
    ret = fi_ep_bind(ep->ep, &ep->cq->fid, FI_TRANSMIT | FI_RECV);
    if (ret != 0) {
        *what = "fi_ep_bind(cq)";
        goto fail;
    }
    ret = fi_enable(ep->ep);
    if (ret != 0) {
        *what = "fi_enable";
        goto fail;
    }
    return WEFT_PLUGIN_OK;
fail:
    ofi_log(fabric, WEFT_LOG_INFO, "%s: %s", *what, fi_strerror(-ret));
    ofi_ep_resources_close(ep);
    return ofi_errno_to_plugin(ret);
}

void ofi_ep_resources_close(weft_fabric_ep *ep)
{
    /* Children before parents: libfabric refuses (FI_EBUSY) to close a bound CQ or AV. */
    if (ep->ep)
        fi_close(&ep->ep->fid);
    if (ep->av)
        fi_close(&ep->av->fid);
    if (ep->cq)
        fi_close(&ep->cq->fid);
    if (ep->domain)
        fi_close(&ep->domain->fid);
    ep->ep = nullptr;
    ep->av = nullptr;
    ep->cq = nullptr;
    ep->domain = nullptr;
    ep->wait_fd = -1;
}

int ofi_ep_open(weft_fabric_t *fabric, const weft_fabric_ep_attr_t *attr, weft_fabric_ep_t **out)
{
    if (!fabric || !out || !weft_kit_ep_attr_valid(attr))
        return WEFT_PLUGIN_ERR_INVALID;
    *out = nullptr;
    auto *ep = new (std::nothrow) weft_fabric_ep();
    if (!ep)
        return WEFT_PLUGIN_ERR_NOMEM;
    if (weft_kit_ep_lock_init(&ep->lock, attr->serial) != 0) {
        delete ep;
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    ep->fabric = fabric;
    ep->complete = attr->complete;
    ep->peek.kind = OFI_OP_PEEK;
    weft_kit_list_init(&ep->pending);
    weft_kit_list_init(&ep->peers);
    weft_kit_list_init(&ep->zombies);
    /* One chunk up front: most endpoints never need a second. */
    if (ofi_op_grow(ep) != WEFT_PLUGIN_OK) {
        ofi_ep_free(ep);
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    const char *what = "";
    int rc = ofi_ep_resources_open(fabric, ep, (fabric->flags & WEFT_FABRIC_CAP_WAIT_FD) != 0,
                                   &what);
    if (rc != WEFT_PLUGIN_OK) {
        ofi_log(fabric, WEFT_LOG_ERROR, "ep_open: %s failed", what);
        ofi_ep_free(ep);
        return rc;
    }
    {
        std::lock_guard<std::mutex> g(fabric->lock);
        weft_kit_list_push_front(&fabric->eps, &ep->link);
    }
    *out = ep;
    return WEFT_PLUGIN_OK;
}

int ofi_ep_close(weft_fabric_ep_t *ep)
{
    if (!ep)
        return WEFT_PLUGIN_ERR_INVALID;
    weft_fabric *fabric = ep->fabric;
    /* Every posted operation gets its one completion: receives are canceled, and what
     * libfabric has not finished when the deadline passes is completed here. */
    {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        WEFT_KIT_LIST_FOREACH(it, &ep->pending) {
            ofi_op *op = ofi_op_of(it);
            if (op->kind == OFI_OP_RECV)
                fi_cancel(&ep->ep->fid, &op->fictx);
        }
    }
    auto deadline = std::chrono::steady_clock::now() + OFI_CLOSE_TIMEOUT;
    for (;;) {
        ofi_ep_progress(ep);
        bool idle;
        {
            WEFT_KIT_EP_GUARD(g, &ep->lock);
            idle = weft_kit_list_empty(&ep->pending) && weft_kit_queue_empty(&ep->backlog) &&
                   !ep->peek_busy;
        }
        if (idle || std::chrono::steady_clock::now() > deadline)
            break;
        std::this_thread::yield();
    }
    {
        std::lock_guard<std::mutex> g(fabric->lock);
        weft_kit_list_unlink(&ep->link);
    }
    /* Close the endpoint before completing leftovers: until then the provider may still
     * read a send buffer the core frees once it sees the completion.  Entries the close
     * itself produced are read first, so nothing is completed twice. */
    fi_close(&ep->ep->fid);
    ep->ep = nullptr;
    ofi_cq_drain(ep, 1 << 20);
    int left = 0;
    WEFT_KIT_LIST_FOREACH(it, &ep->pending)
        ++left;
    for (weft_kit_link_t *l = ep->backlog.first; l; l = l->next)
        ++left;
    if (left)
        ofi_log(fabric, WEFT_LOG_INFO, "ep_close: completing %d unfinished operation(s) as canceled",
                left);
    while (weft_kit_link_t *first = weft_kit_list_first(&ep->pending)) {
        ofi_op *op = ofi_op_of(first);
        ofi_finish(ep, op, WEFT_PLUGIN_ERR_CANCELED, op->tag, 0);
    }
    while (weft_kit_link_t *first = weft_kit_queue_pop(&ep->backlog)) {
        ofi_op *op = ofi_op_of(first);
        ofi_finish(ep, op, WEFT_PLUGIN_ERR_CANCELED, op->tag, 0);
    }
    ofi_ep_progress(ep); /* delivers the done list; the CQ read finds nothing more */
    ofi_ep_resources_close(ep);
    ofi_ep_free(ep);
    return WEFT_PLUGIN_OK;
}

int ofi_ep_address(weft_fabric_ep_t *ep, void *buf, size_t *len)
{
    if (!ep || !len)
        return WEFT_PLUGIN_ERR_INVALID;
    char name[1024];
    size_t name_len = sizeof(name);
    int ret;
    {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        ret = fi_getname(&ep->ep->fid, name, &name_len);
    }
    if (ret != 0) {
        ofi_log(ep->fabric, WEFT_LOG_ERROR, "fi_getname: %s", fi_strerror(-ret));
        return ofi_errno_to_plugin(ret);
    }
    uint16_t addr_format = static_cast<uint16_t>(ep->fabric->info->addr_format);
    unsigned char *payload = weft_kit_addr_write(&ofi_address_format, addr_format, buf, len,
                                                 name_len);
    if (!payload)
        return WEFT_PLUGIN_ERR_INVALID; /* *len tells the caller how much to give */
    memcpy(payload, name, name_len);
    return WEFT_PLUGIN_OK;
}

int ofi_ep_connect(weft_fabric_ep_t *ep, const void *address, size_t len,
                   weft_fabric_peer_t **out)
{
    if (!ep || !address || !out)
        return WEFT_PLUGIN_ERR_INVALID;
    *out = nullptr;
    char why[256];
    uint16_t addr_format;
    const unsigned char *name = weft_kit_addr_read(&ofi_address_format, address, len,
                                                   &addr_format, nullptr, why, sizeof why);
    if (!name) {
        ofi_log(ep->fabric, WEFT_LOG_ERROR, "ep_connect: %s", why);
        return WEFT_PLUGIN_ERR_UNREACHABLE;
    }
    if (addr_format != static_cast<uint16_t>(ep->fabric->info->addr_format)) {
        ofi_log(ep->fabric, WEFT_LOG_ERROR,
                "ep_connect: an ofi address of libfabric address format %u, not %s's %u (does "
                "every process use the same WEFT_OFI_PROVIDER?)",
                unsigned(addr_format), ep->fabric->provider,
                unsigned(static_cast<uint16_t>(ep->fabric->info->addr_format)));
        return WEFT_PLUGIN_ERR_UNREACHABLE;
    }
    auto *peer = new (std::nothrow) weft_fabric_peer();
    if (!peer)
        return WEFT_PLUGIN_ERR_NOMEM;
    int ret;
    {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        ret = fi_av_insert(ep->av, name, 1, &peer->addr, 0, nullptr);
        if (ret == 1)
            weft_kit_list_push_front(&ep->peers, &peer->link);
    }
    if (ret != 1) {
        ofi_log(ep->fabric, WEFT_LOG_ERROR, "fi_av_insert: %s",
                ret < 0 ? fi_strerror(-ret) : "address rejected");
        delete peer;
        return WEFT_PLUGIN_ERR_UNREACHABLE;
    }
    *out = peer;
    return WEFT_PLUGIN_OK;
}

int ofi_ep_disconnect(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer)
{
    if (!ep || !peer)
        return WEFT_PLUGIN_ERR_INVALID;
    /* libfabric has no per-peer flush: wait (bounded) for our sends to that peer. */
    auto deadline = std::chrono::steady_clock::now() + OFI_DISCONNECT_TIMEOUT;
    for (;;) {
        {
            WEFT_KIT_EP_GUARD(g, &ep->lock);
            if (peer->pending_sends == 0 || peer->failed) /* failed: nothing will come */
                break;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            ofi_log(ep->fabric, WEFT_LOG_WARN,
                    "ep_disconnect: %zu send(s) to the peer unfinished after 2 s; they complete "
                    "when the peer takes them or at ep_close",
                    peer->pending_sends);
            break;
        }
        ofi_ep_progress(ep);
        std::this_thread::yield();
    }
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    /* Backlogged sends to this peer were never handed to libfabric and must not be after
     * the AV entry is gone (rxm crashes on a removed fi_addr): they fail now. */
    ofi_backlog_fail(ep, peer);
    int ret = fi_av_remove(ep->av, &peer->addr, 1, 0);
    if (ret != 0)
        ofi_log(ep->fabric, WEFT_LOG_WARN, "fi_av_remove: %s", fi_strerror(-ret));
    weft_kit_list_unlink(&peer->link);
    if (peer->pending_sends == 0) {
        delete peer;
    } else {
        peer->closed = 1; /* freed by the last send's completion, or by ep_close */
        weft_kit_list_push_front(&ep->zombies, &peer->link);
    }
    return WEFT_PLUGIN_OK;
}

int ofi_ep_progress(weft_fabric_ep_t *ep)
{
    weft_kit_link_t *head;
    {
        WEFT_KIT_EP_GUARD(g, &ep->lock);
        if (ep->ep) {
            if (!weft_kit_queue_empty(&ep->backlog))
                ofi_backlog_flush(ep);
            int rc = ofi_cq_drain(ep, 256);
            if (rc < 0 && weft_kit_queue_empty(&ep->done))
                return rc;
        }
        head = weft_kit_queue_take(&ep->done);
    }
    int n = 0;
    while (head) {
        ofi_op *op = ofi_op_of(head);
        head = head->next;
        void *context = op->context;
        weft_fabric_completion_t c{op->status, op->tag, op->length};
        /* Free before complete(): the core may post again from inside complete().  An
         * orphan stays out of the free list until libfabric lets go of it (ofi_finish). */
        {
            WEFT_KIT_EP_GUARD(g, &ep->lock);
            if (__builtin_expect(op->orphan == OFI_ORPHAN_QUEUED, 0))
                op->orphan = OFI_ORPHAN_HELD;
            else
                ofi_op_put(ep, op);
        }
        ep->complete(context, &c);
        ++n;
    }
    return n;
}

int ofi_ep_wait_fd(weft_fabric_ep_t *ep, int *fd)
{
    if (!ep || !fd)
        return WEFT_PLUGIN_ERR_INVALID;
    if (ep->wait_fd < 0)
        return WEFT_PLUGIN_ERR_UNSUPPORTED;
    *fd = ep->wait_fd;
    return WEFT_PLUGIN_OK;
}

int ofi_ep_arm(weft_fabric_ep_t *ep)
{
    if (!ep)
        return WEFT_PLUGIN_ERR_INVALID;
    if (ep->wait_fd < 0)
        return WEFT_PLUGIN_ERR_UNSUPPORTED;
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    if (!weft_kit_queue_empty(&ep->done))
        return WEFT_PLUGIN_ERR_AGAIN; /* completions wait for delivery: do not sleep */
    struct fid *fids[1] = {&ep->cq->fid};
    int ret = fi_trywait(ep->fabric->fabric, fids, 1);
    if (ret == 0)
        return WEFT_PLUGIN_OK;
    return ret == -FI_EAGAIN ? WEFT_PLUGIN_ERR_AGAIN : ofi_errno_to_plugin(ret);
}

int ofi_ep_peer_failed(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer)
{
    if (!ep || !peer)
        return WEFT_PLUGIN_ERR_INVALID;
    WEFT_KIT_EP_GUARD(g, &ep->lock);
    peer->failed = 1; /* tag_send refuses it from now on */
    /* Not handed to libfabric yet: they simply fail. */
    ofi_backlog_fail(ep, peer);
    /* Handed to libfabric, which will not finish them without the peer (a rendezvous send)
     * or only when its transport notices: they complete now, and the op waits, orphaned,
     * for libfabric's entry, which ofi_finish swallows.  fi_cancel drops it sooner where a
     * provider cancels sends (1.17's shm and rxm do not: it then does nothing). */
    size_t n = 0;
    WEFT_KIT_LIST_FOREACH(it, &ep->pending) {
        ofi_op *op = ofi_op_of(it);
        if (op->kind != OFI_OP_SEND || op->peer != peer)
            continue;
        ofi_pending_remove(op);
        op->peer = nullptr;
        --peer->pending_sends;
        op->status = WEFT_PLUGIN_ERR_PEER_FAILED;
        op->orphan = OFI_ORPHAN_QUEUED;
        ofi_done_push(ep, op); /* the next ep_progress delivers it */
        fi_cancel(&ep->ep->fid, &op->fictx);
        ++n;
    }
    if (n)
        ofi_log(ep->fabric, WEFT_LOG_INFO, "peer reported failed: %zu send(s) in flight fail", n);
    return WEFT_PLUGIN_OK;
}
