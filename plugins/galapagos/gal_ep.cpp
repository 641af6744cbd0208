/* Galapagos fabric: endpoints (one slot of the node each), their addresses and connections,
 * sends, progress and the wait descriptor. */
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "gal_internal.hpp"

namespace {

constexpr auto flush_timeout = std::chrono::seconds(10);

/* Delivers what is on ep's done list; returns how many. */
int deliver(weft_fabric_ep *ep) {
    weft_kit_link_t *list;
    {
        std::lock_guard<std::mutex> g(ep->lock);
        list = weft_kit_queue_take(&ep->done);
    }
    int n = 0;
    while (list) {
        gal_op *op = gal_op_of(list);
        list = list->next;
        weft_fabric_completion_t c{op->status, op->kind == GAL_OP_RECV ? op->msg_tag : op->tag, op->length};
        void *context = op->context;
        {
            std::lock_guard<std::mutex> g(ep->lock);
            gal_op_put(ep, op);
        }
        ep->complete(context, &c);
        ++n;
    }
    return n;
}

/* Local delivery: the receiving endpoint is in this node. */
int send_local(weft_fabric_ep *ep, weft_fabric_peer *peer, const void *buf, size_t len, uint64_t tag, void *context) {
    weft_fabric_ep *dst = ep->fabric->slots[peer->slot].load(std::memory_order_acquire);
    if (!dst || dst->closing) return WEFT_PLUGIN_ERR_UNREACHABLE;
    gal_rx rx{};
    {
        std::lock_guard<std::mutex> g(dst->lock);
        gal_deliver_begin_locked(dst, tag, len, rx);
    }
    gal_deliver_data(rx, static_cast<const uint8_t *>(buf), len);
    weft_fabric_completion_t c{WEFT_PLUGIN_OK, tag, len};
    ep->complete(context, &c);
    return WEFT_PLUGIN_OK;
}

}  // namespace

void gal_ep_wake_locked(weft_fabric_ep *ep) {
    if (!ep->armed) return;
    ep->armed = false;
    uint64_t one = 1;
    if (write(ep->event_fd, &one, sizeof one) < 0) { /* already readable: nothing lost */
    }
}

int gal_ep_open(weft_fabric_t *f, const weft_fabric_ep_attr_t *attr, weft_fabric_ep_t **out) {
    if (!f || !out || !weft_kit_ep_attr_valid(attr)) return WEFT_PLUGIN_ERR_INVALID;
    auto *ep = new (std::nothrow) weft_fabric_ep;
    if (!ep) return WEFT_PLUGIN_ERR_NOMEM;
    ep->fabric = f;
    ep->serial = attr->serial;
    ep->complete = attr->complete;
    weft_kit_list_init(&ep->posted);
    weft_kit_list_init(&ep->unexp);
    weft_kit_queue_init(&ep->done);
    ep->free_ops = nullptr;
    ep->chunks = nullptr;
    weft_kit_list_init(&ep->peers);
    ep->armed = false;
    ep->closing = false;
    ep->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    ep->wait_fd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev {};
    ev.events = EPOLLIN;
    if (ep->event_fd < 0 || ep->wait_fd < 0 || epoll_ctl(ep->wait_fd, EPOLL_CTL_ADD, ep->event_fd, &ev) != 0 ||
        epoll_ctl(ep->wait_fd, EPOLL_CTL_ADD, f->epoll_fd, &ev) != 0) {
        if (ep->event_fd >= 0) close(ep->event_fd);
        if (ep->wait_fd >= 0) close(ep->wait_fd);
        delete ep;
        return WEFT_PLUGIN_ERR_OTHER;
    }
    std::lock_guard<std::mutex> g(f->lock);
    for (uint32_t s = 0; s < GAL_MAX_SLOTS; ++s) {
        if (!f->slots[s].load()) {
            ep->slot = uint8_t(s);
            f->slots[s].store(ep, std::memory_order_release);
            *out = ep;
            return WEFT_PLUGIN_OK;
        }
    }
    gal_log(f, WEFT_LOG_WARN, "all %u endpoint slots of this node are open", GAL_MAX_SLOTS);
    close(ep->event_fd);
    close(ep->wait_fd);
    delete ep;
    return WEFT_PLUGIN_ERR_NOMEM;
}

int gal_ep_close(weft_fabric_ep_t *ep) {
    if (!ep) return WEFT_PLUGIN_ERR_INVALID;
    weft_fabric *f = ep->fabric;
    {
        std::lock_guard<std::mutex> g(f->lock);
        ep->closing = true;
        f->slots[ep->slot].store(nullptr, std::memory_order_release);
    }
    gal_unbind_all(f, ep);
    /* A reader may have found ep just before: every reader holds its connection's read lock
     * while it uses an endpoint, so taking each once waits them out.  A message a reader is
     * still delivering to ep is dropped from here on (its memory goes with ep below). */
    for (uint32_t i = 0, n = f->nconns.load(); i < n; ++i) {
        gal_conn *c = f->conns[i].load();
        std::lock_guard<std::mutex> g(c->read_lock);
        if (c->rx.active && c->rx.ep == ep) {
            c->rx.ep = nullptr;
            c->rx.recv = nullptr;
            c->rx.unexp = nullptr;
        }
    }
    /* Sends still queued: whatever has begun to go out must finish (a half-written message
     * would break the stream for everyone on that connection); the rest are canceled. */
    uint32_t n = f->nconns.load();
    for (uint32_t i = 0; i < n; ++i) {
        gal_conn *c = f->conns[i].load();
        auto deadline = std::chrono::steady_clock::now() + flush_timeout;
        for (;;) {
            bool busy = false;
            {
                std::lock_guard<std::mutex> g(c->send_lock);
                /* Takes the queue and puts back, in order, what is not canceled. */
                for (weft_kit_link_t *l = weft_kit_queue_take(&c->sq), *next; l; l = next) {
                    next = l->next;
                    gal_op *op = gal_op_of(l);
                    if (op->ep == ep && op->done_bytes == 0) {
                        --c->sq_len;
                        std::lock_guard<std::mutex> h(ep->lock);
                        op->status = WEFT_PLUGIN_ERR_CANCELED;
                        gal_done_push(ep, op);
                        continue;
                    }
                    busy |= op->ep == ep;
                    weft_kit_queue_push(&c->sq, l);
                }
            }
            if (!busy || c->dead.load() || std::chrono::steady_clock::now() > deadline) {
                if (busy) gal_conn_fail(f, c, "an endpoint closed with a send it could not finish", false);
                break;
            }
            gal_node_progress(f);
            gal_conn_flush(f, c);
        }
    }
    {
        std::lock_guard<std::mutex> g(ep->lock);
        WEFT_KIT_LIST_FOREACH(it, &ep->posted) {
            gal_op *op = gal_op_of(it);
            weft_kit_list_unlink(it);
            op->status = WEFT_PLUGIN_ERR_CANCELED;
            op->length = 0;
            op->msg_tag = op->tag;
            gal_done_push(ep, op);
        }
    }
    deliver(ep);
    /* Messages a reader is still filling for this endpoint keep their buffers until the
     * reader finishes (the slot is empty, so no new ones begin); queued ones go now. */
    WEFT_KIT_LIST_FOREACH(it, &ep->unexp) {
        gal_unexp *u = gal_unexp_of(it);
        gal_unexp_free(f, u);
    }
    WEFT_KIT_LIST_FOREACH(it, &ep->peers)
    delete WEFT_KIT_CONTAINER_OF(it, weft_fabric_peer, link);
    while (gal_op_chunk *ch = ep->chunks) {
        ep->chunks = ch->next;
        delete ch;
    }
    close(ep->event_fd);
    close(ep->wait_fd);
    delete ep;
    return WEFT_PLUGIN_OK;
}

int gal_ep_address(weft_fabric_ep_t *ep, void *buf, size_t *len) {
    if (!ep || !len) return WEFT_PLUGIN_ERR_INVALID;
    if (!buf || *len < gal::address_bytes) {
        *len = gal::address_bytes;
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    gal::address a;
    a.slot = ep->slot;
    a.port = ep->fabric->port;
    a.ipv4 = ep->fabric->ipv4;
    a.node_id = ep->fabric->node_id;
    memcpy(a.secret, ep->fabric->secret, sizeof a.secret);
    gal::address_encode(a, static_cast<uint8_t *>(buf));
    *len = gal::address_bytes;
    return WEFT_PLUGIN_OK;
}

int gal_ep_connect(weft_fabric_ep_t *ep, const void *address, size_t len, weft_fabric_peer_t **out) {
    if (!ep || !address || !out) return WEFT_PLUGIN_ERR_INVALID;
    /* The kit checks the header (word 0 of gal_wire.hpp's address: magic, version, and the
     * slot as its info) and the length, and says what is wrong; address_decode the rest. */
    char why[256];
    if (!weft_kit_addr_read(&gal_address_format, address, len, nullptr, nullptr, why, sizeof why)) {
        gal_log(ep->fabric, WEFT_LOG_ERROR, "ep_connect: %s", why);
        return WEFT_PLUGIN_ERR_UNREACHABLE;
    }
    gal::address a;
    if (!gal::address_decode(static_cast<const uint8_t *>(address), len, a)) {
        gal_log(ep->fabric, WEFT_LOG_ERROR,
                "ep_connect: a galapagos address with reserved bits "
                "set, or without a port or node id");
        return WEFT_PLUGIN_ERR_UNREACHABLE;
    }
    auto *p = new (std::nothrow) weft_fabric_peer{};
    if (!p) return WEFT_PLUGIN_ERR_NOMEM;
    p->slot = a.slot;
    p->port = a.port;
    p->ipv4 = a.ipv4;
    p->node_id = a.node_id;
    p->key = gal::address_has_secret(a) ? gal::key_from_secret(a.secret) : ep->fabric->key;
    p->local = p->node_id == ep->fabric->node_id && !ep->fabric->force_tcp;
    std::lock_guard<std::mutex> g(ep->lock);
    weft_kit_list_push_front(&ep->peers, &p->link);
    *out = p;
    return WEFT_PLUGIN_OK;
}

int gal_ep_disconnect(weft_fabric_ep_t *ep, weft_fabric_peer_t *p) {
    if (!ep || !p) return WEFT_PLUGIN_ERR_INVALID;
    /* Flush: sends still queued to this peer go out first (bounded: a dead connection fails
     * them).  The connection stays for the node's other users. */
    auto deadline = std::chrono::steady_clock::now() + flush_timeout;
    int rc = WEFT_PLUGIN_OK;
    for (;;) {
        {
            std::lock_guard<std::mutex> g(ep->lock);
            if (p->pending_sends == 0 || p->failed.load(std::memory_order_relaxed))
                break; /* failed: ep_peer_failed failed its sends, nothing to flush */
        }
        if (std::chrono::steady_clock::now() > deadline) {
            rc = WEFT_PLUGIN_ERR_PEER_FAILED;
            if (gal_conn *c = p->conn.load()) gal_conn_fail(ep->fabric, c, "disconnect could not flush", false);
            break;
        }
        gal_ep_progress(ep);
        std::this_thread::yield();
    }
    std::lock_guard<std::mutex> g(ep->lock);
    /* Completed sends that still name the peer must not touch it later. */
    for (weft_kit_link_t *l = ep->done.first; l; l = l->next)
        if (gal_op_of(l)->peer == p) gal_op_of(l)->peer = nullptr;
    weft_kit_list_unlink(&p->link);
    delete p;
    return rc;
}

int gal_tag_send(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag,
                 void *context) {
    if (!ep || !peer || (len && !buf)) return WEFT_PLUGIN_ERR_INVALID;
    if (__builtin_expect(peer->failed.load(std::memory_order_relaxed), 0))
        return WEFT_PLUGIN_ERR_PEER_FAILED; /* ep_peer_failed: do not reconnect to it */
    if (peer->local) return send_local(ep, peer, buf, len, tag, context);
    weft_fabric *f = ep->fabric;
    gal_conn *c = peer->conn.load(std::memory_order_acquire);
    if (!c || c->dead.load(std::memory_order_acquire)) {
        c = gal_conn_for(f, peer);
        if (!c) return WEFT_PLUGIN_ERR_PEER_FAILED;
        peer->conn.store(c, std::memory_order_release);
    }
    gal_op *op;
    {
        std::lock_guard<std::mutex> g(ep->lock);
        op = gal_op_get(ep);
        if (!op) return WEFT_PLUGIN_ERR_NOMEM;
        ++peer->pending_sends;
    }
    op->kind = GAL_OP_SEND;
    op->context = context;
    op->buf = const_cast<void *>(buf);
    op->length = len;
    op->tag = tag;
    op->dest_slot = peer->slot;
    op->peer = peer;
    int rc = gal_conn_send(f, c, op);
    if (rc == WEFT_PLUGIN_ERR_PEER_FAILED && op->done_bytes == 0 && !peer->failed.load(std::memory_order_relaxed)) {
        /* The connection broke before any byte of this message left: drop it and reconnect
         * once.  A peer that is alive accepts (a dropped connection); one that is gone
         * refuses, and the send fails. */
        gal_conn_fail(f, c, "a write failed", false);
        c = gal_conn_for(f, peer);
        if (c) {
            peer->conn.store(c, std::memory_order_release);
            rc = gal_conn_send(f, c, op);
        }
    }
    if (rc == 0) return WEFT_PLUGIN_OK; /* queued: completes from a progress */
    {
        std::lock_guard<std::mutex> g(ep->lock);
        --peer->pending_sends;
        gal_op_put(ep, op);
    }
    if (rc < 0) return rc;
    weft_fabric_completion_t done{WEFT_PLUGIN_OK, tag, len};
    ep->complete(context, &done);
    return WEFT_PLUGIN_OK;
}

int gal_ep_peer_failed(weft_fabric_ep_t *ep, weft_fabric_peer_t *p) {
    if (!ep || !p) return WEFT_PLUGIN_ERR_INVALID;
    p->failed.store(true, std::memory_order_relaxed);
    /* A peer in this node got its messages at once: nothing is in flight.  A remote one: its
     * process (the node) is dead, so its connection is too, for every endpoint here.  Dropping
     * it fails the sends queued on it (PEER_FAILED, delivered by their endpoints' next
     * progress) without a write to the peer; a later send to that node by another endpoint
     * reconnects, and is refused.  Done before: gal_conn_fail does nothing twice. */
    if (!p->local)
        if (gal_conn *c = p->conn.load(std::memory_order_acquire))
            gal_conn_fail(ep->fabric, c, "the core reported the peer process failed", false);
    return WEFT_PLUGIN_OK;
}

int gal_ep_progress(weft_fabric_ep_t *ep) {
    if (!ep) return WEFT_PLUGIN_ERR_INVALID;
    gal_node_progress(ep->fabric);
    return deliver(ep);
}

int gal_ep_wait_fd(weft_fabric_ep_t *ep, int *fd) {
    if (!ep || !fd) return WEFT_PLUGIN_ERR_INVALID;
    *fd = ep->wait_fd;
    return WEFT_PLUGIN_OK;
}

int gal_ep_arm(weft_fabric_ep_t *ep) {
    if (!ep) return WEFT_PLUGIN_ERR_INVALID;
    uint64_t v;
    while (read(ep->event_fd, &v, sizeof v) > 0) {}
    struct epoll_event ev;
    if (epoll_wait(ep->fabric->epoll_fd, &ev, 1, 0) > 0)
        return WEFT_PLUGIN_ERR_AGAIN; /* a connection has bytes (or room) to handle now */
    std::lock_guard<std::mutex> g(ep->lock);
    if (!weft_kit_queue_empty(&ep->done)) return WEFT_PLUGIN_ERR_AGAIN;
    ep->armed = true;
    return WEFT_PLUGIN_OK;
}
