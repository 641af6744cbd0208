/* minitcp: the sending side.  A peer is one outgoing TCP connection, made by its first send.
 * Sends queue on it without a copy (the user's buffer stays valid until the completion) and
 * are written, header and payload gathered into one sendmsg, as far as the socket takes them:
 * at once when posted, then whenever epoll reports the socket writable again. */
#define _POSIX_C_SOURCE 200809L
#include "minitcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define MT_IOV 32                  /* iovecs per sendmsg (POSIX guarantees at least 16) */
#define MT_WRITES_PER_CALL 16      /* bounds one flush, so that progress returns quickly */

mt_peer *mt_peer_new(mt_ep *ep, const mt_addr *remote)
{
    mt_peer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->kind = MT_SOCK_PEER;
    p->fd = -1;
    p->magic = MT_PEER_MAGIC;
    p->ep = ep;
    p->remote = *remote;
    p->state = MT_PEER_IDLE;
    weft_kit_list_init(&p->sendq);
    weft_kit_list_push_back(&ep->peers, &p->link);
    return p;
}

/* Epoll interest: readable always (the receiving end never writes, so readable means it
 * closed or failed), writable while connecting or while the socket refused bytes. */
static void mt_peer_watch(mt_peer *p)
{
    uint32_t want = EPOLLIN;
    if (p->state == MT_PEER_CONNECTING || p->hello_left || !weft_kit_list_empty(&p->sendq))
        want |= EPOLLOUT;
    if (p->fd >= 0 && want != p->events && mt_watch(p->ep, EPOLL_CTL_MOD, p->fd, want, p) == 0)
        p->events = want;
}

/* The peer is unusable: its queued sends complete with status, and every later send fails at
 * once with it. */
static void mt_peer_fail(mt_peer *p, int status, const char *what)
{
    int pending = 0;
    mt_unwatch_close(p->ep, p->fd);
    p->fd = -1;
    p->state = MT_PEER_FAILED;
    p->error = status;
    p->hello_left = 0;
    WEFT_KIT_LIST_FOREACH(it, &p->sendq) {
        mt_op *op = WEFT_KIT_CONTAINER_OF(it, mt_op, link);
        weft_kit_list_unlink(&op->link);
        mt_complete(p->ep, op, status, 0, 0);
        ++pending;
    }
    struct in_addr ip = {p->remote.ipv4};
    char text[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &ip, text, sizeof text);
    /* A peer that closed with nothing queued is a normal end of a job, not worth a warning. */
    mt_log(p->ep->fab, pending ? WEFT_LOG_WARN : WEFT_LOG_DEBUG,
           "peer %s:%u: %s; %d pending send(s) failed", text, p->remote.port, what, pending);
}

/* A new connection to an endpoint waits until our previous one to it is fully closed (see
 * mt_peer_retire): otherwise its messages could overtake the old connection's last ones. */
static int mt_peer_has_predecessor(const mt_peer *p)
{
    WEFT_KIT_LIST_FOREACH(it, &p->ep->peers) {
        const mt_peer *o = WEFT_KIT_CONTAINER_OF(it, mt_peer, link);
        if (o->state == MT_PEER_CLOSING && o->remote.ipv4 == p->remote.ipv4 &&
            o->remote.port == p->remote.port && o->remote.nonce == p->remote.nonce)
            return 1;
    }
    return 0;
}

/* Starts a nonblocking connect (or leaves the peer IDLE behind its predecessor).  When that
 * fails at once (refused, out of descriptors) the peer fails: WEFT_PLUGIN_ERR_UNREACHABLE. */
static int mt_peer_connect(mt_peer *p)
{
    if (mt_peer_has_predecessor(p))
        return WEFT_PLUGIN_OK;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || mt_socket_setup(fd) != 0) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        mt_peer_fail(p, WEFT_PLUGIN_ERR_UNREACHABLE, strerror(err));
        return WEFT_PLUGIN_ERR_UNREACHABLE;
    }
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = p->remote.ipv4;
    sa.sin_port = htons(p->remote.port);
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    if (rc != 0 && errno != EINPROGRESS) {
        p->fd = fd; /* so that mt_peer_fail closes it */
        mt_peer_fail(p, WEFT_PLUGIN_ERR_UNREACHABLE, strerror(errno));
        return WEFT_PLUGIN_ERR_UNREACHABLE;
    }
    p->fd = fd;
    p->state = rc == 0 ? MT_PEER_OPEN : MT_PEER_CONNECTING;
    /* The first bytes name the endpoint we mean, so that a reused port cannot fool us. */
    mt_hdr_encode(p->hello, MT_FRAME_HELLO, p->remote.nonce, p->ep->self.nonce);
    p->hello_left = MT_HDR_SIZE;
    p->events = EPOLLIN | EPOLLOUT;
    if (mt_watch(p->ep, EPOLL_CTL_ADD, fd, p->events, p) != 0) {
        mt_peer_fail(p, WEFT_PLUGIN_ERR_UNREACHABLE, "epoll_ctl failed");
        return WEFT_PLUGIN_ERR_UNREACHABLE;
    }
    return WEFT_PLUGIN_OK;
}

/* Writes as much of the hello and the queued frames as the socket takes. */
static void mt_peer_flush(mt_peer *p)
{
    for (int round = 0; round < MT_WRITES_PER_CALL && p->state == MT_PEER_OPEN &&
                        (p->hello_left || !weft_kit_list_empty(&p->sendq));
         ++round) {
        struct iovec iov[MT_IOV];
        int n = 0;
        if (p->hello_left)
            iov[n++] = (struct iovec){p->hello + MT_HDR_SIZE - p->hello_left, p->hello_left};
        for (weft_kit_link_t *it = weft_kit_list_first(&p->sendq); it && n + 2 <= MT_IOV;
             it = weft_kit_list_next(&p->sendq, it)) {
            mt_op *op = WEFT_KIT_CONTAINER_OF(it, mt_op, link);
            if (op->sent < MT_HDR_SIZE)
                iov[n++] = (struct iovec){op->hdr + op->sent, MT_HDR_SIZE - op->sent};
            size_t off = op->sent > MT_HDR_SIZE ? op->sent - MT_HDR_SIZE : 0;
            if (op->len > off)
                iov[n++] = (struct iovec){(void *)(op->sbuf + off), op->len - off};
        }
        struct msghdr msg;
        memset(&msg, 0, sizeof msg);
        msg.msg_iov = iov;
        msg.msg_iovlen = n;
        ssize_t w = sendmsg(p->fd, &msg, MSG_NOSIGNAL); /* no SIGPIPE from a closed peer */
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break; /* full: EPOLLOUT tells us when to go on */
            mt_peer_fail(p, WEFT_PLUGIN_ERR_PEER_FAILED, strerror(errno));
            return;
        }
        /* Account the bytes written: the hello first, then the frames in order. */
        size_t left = (size_t)w;
        size_t take = left < p->hello_left ? left : p->hello_left;
        p->hello_left -= take;
        left -= take;
        while (left && !weft_kit_list_empty(&p->sendq)) {
            mt_op *op = WEFT_KIT_CONTAINER_OF(weft_kit_list_first(&p->sendq), mt_op, link);
            size_t rest = MT_HDR_SIZE + op->len - op->sent;
            take = left < rest ? left : rest;
            op->sent += take;
            left -= take;
            if (take == rest) {
                weft_kit_list_unlink(&op->link);
                mt_complete(p->ep, op, WEFT_PLUGIN_OK, 0, 0);
            }
        }
        /* An empty frame is complete once its header is out, even when nothing follows. */
    }
    mt_peer_watch(p);
}

void mt_peer_event(mt_peer *p, uint32_t events)
{
    if (p->state == MT_PEER_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err) {
            mt_peer_fail(p, WEFT_PLUGIN_ERR_UNREACHABLE, strerror(err));
            return;
        }
        if (!(events & EPOLLOUT))
            return; /* still connecting */
        p->state = MT_PEER_OPEN;
    }
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        /* Nothing is ever sent to us on this connection: readable means end of file, an
         * error, or a protocol violation, and any of them ends the connection. */
        unsigned char buf[64];
        ssize_t r = recv(p->fd, buf, sizeof buf, 0);
        if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            if (p->state == MT_PEER_CLOSING) { /* the receiver saw our end of file: done */
                p->ep->recheck = 1; /* a successor may connect now (mt_peer_kick) */
                mt_unwatch_close(p->ep, p->fd);
                weft_kit_list_unlink(&p->link);
                free(p);
            } else {
                mt_peer_fail(p, WEFT_PLUGIN_ERR_PEER_FAILED,
                             r == 0 ? "connection closed by the peer"
                             : r > 0 ? "unexpected data from the receiving side"
                                     : strerror(errno));
            }
            return;
        }
    }
    if (events & EPOLLOUT)
        mt_peer_flush(p);
}

/* Something that held peers back changed (a predecessor closed): connect the waiting ones. */
void mt_peer_kick(mt_ep *ep)
{
    WEFT_KIT_LIST_FOREACH(it, &ep->peers) {
        mt_peer *p = WEFT_KIT_CONTAINER_OF(it, mt_peer, link);
        if (p->state == MT_PEER_IDLE && !weft_kit_list_empty(&p->sendq) &&
            mt_peer_connect(p) == WEFT_PLUGIN_OK && p->state == MT_PEER_OPEN)
            mt_peer_flush(p);
    }
}

/* ep_disconnect's end of a peer, its sends written (or given up).  An open connection is
 * half-closed and kept until the receiver has read everything and closed its end (a later
 * connection to that endpoint waits for this, see mt_peer_has_predecessor); the handle is no
 * longer the user's either way. */
void mt_peer_retire(mt_peer *p)
{
    p->magic = 0;
    if (p->state == MT_PEER_OPEN && weft_kit_list_empty(&p->sendq) && !p->hello_left &&
        shutdown(p->fd, SHUT_WR) == 0) {
        p->state = MT_PEER_CLOSING;
        mt_watch(p->ep, EPOLL_CTL_MOD, p->fd, EPOLLIN, p);
        p->events = EPOLLIN;
        return;
    }
    mt_peer_destroy(p, WEFT_PLUGIN_ERR_CANCELED);
}

/* Frees the peer now; queued sends complete with status (the endpoint delivers them). */
void mt_peer_destroy(mt_peer *p, int status)
{
    WEFT_KIT_LIST_FOREACH(it, &p->sendq) {
        mt_op *op = WEFT_KIT_CONTAINER_OF(it, mt_op, link);
        weft_kit_list_unlink(&op->link);
        mt_complete(p->ep, op, status, 0, 0);
    }
    mt_unwatch_close(p->ep, p->fd);
    weft_kit_list_unlink(&p->link);
    free(p);
}

int mt_tag_send(mt_ep *ep, mt_peer *p, const void *buf, size_t len, uint64_t tag, void *context)
{
    if (!mt_ep_valid(ep) || !p || p->magic != MT_PEER_MAGIC || p->ep != ep || (!buf && len) ||
        len > MT_MAX_MESSAGE)
        return WEFT_PLUGIN_ERR_INVALID;
    if (p->state == MT_PEER_FAILED)
        return p->error;
    if (p->state == MT_PEER_IDLE && weft_kit_list_empty(&p->sendq)) {
        int rc = mt_peer_connect(p);
        if (rc != WEFT_PLUGIN_OK)
            return rc;
    }
    mt_op *op = calloc(1, sizeof *op);
    if (!op)
        return WEFT_PLUGIN_ERR_NOMEM;
    op->context = context;
    op->sbuf = buf;
    op->len = len;
    mt_hdr_encode(op->hdr, MT_FRAME_MSG, tag, (uint64_t)len);
    weft_kit_list_push_back(&p->sendq, &op->link);
    if (p->state == MT_PEER_OPEN)
        mt_peer_flush(p); /* most sends leave right here; the completion waits for progress */
    return WEFT_PLUGIN_OK;
}
