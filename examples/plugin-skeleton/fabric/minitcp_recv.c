/* minitcp: the receiving side.  Accepted connections are read into a small staging buffer
 * (many small frames per recv call) and parsed frame by frame: a header is matched against
 * the posted receives in post order, and its payload goes straight into the matching
 * receive's buffer, or into a malloc'd unexpected message that a later receive (or probe)
 * finds in arrival order. */
#define _POSIX_C_SOURCE 200809L
#include "minitcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MT_STAGE (16 * 1024)       /* staging buffer of a connection */
#define MT_READS_PER_CALL 16       /* bounds one connection's work per progress call */
#define MT_ACCEPTS_PER_CALL 64

static size_t mt_min(size_t a, size_t b) { return a < b ? a : b; }

/* A receive got its message: OK, or ERR_TRUNCATE when the message was longer than its
 * buffer (which then holds the first bytes); the length reported is the sent length. */
static void mt_recv_finish(mt_ep *ep, mt_op *op, uint64_t tag, size_t len)
{
    mt_complete(ep, op, len > op->len ? WEFT_PLUGIN_ERR_TRUNCATE : WEFT_PLUGIN_OK, tag, len);
}

static void mt_unexp_free(mt_ep *ep, mt_unexp *ux)
{
    ep->unexpected_bytes -= ux->len;
    free(ux->data);
    free(ux);
    if (ep->paused)
        ep->recheck = 1; /* memory freed: a paused connection may go on */
}

/* Copies a complete unexpected message into the receive that claimed it. */
static void mt_unexp_deliver(mt_ep *ep, mt_unexp *ux, mt_op *op)
{
    if (ux->len && op->len)
        memcpy(op->rbuf, ux->data, mt_min(ux->len, op->len));
    mt_recv_finish(ep, op, ux->tag, ux->len);
    mt_unexp_free(ep, ux);
}

/* An unexpected message that will never be complete (its sender went away, or the endpoint
 * closes): a receive that claimed it completes with status. */
static void mt_unexp_drop(mt_ep *ep, mt_unexp *ux, int status)
{
    if (ux->claimed)
        mt_complete(ep, ux->claimed, status, ux->tag, ux->len);
    else
        weft_kit_list_unlink(&ux->link);
    mt_unexp_free(ep, ux);
}

static void mt_conn_close(mt_conn *c, int status, const char *why)
{
    mt_ep *ep = c->ep;
    int cut = c->state == MT_CONN_PAYLOAD || c->state == MT_CONN_PAUSED || c->hdr_got ||
              c->stage_pos < c->stage_end;
    if (c->state == MT_CONN_PAYLOAD && c->recv)
        mt_complete(ep, c->recv, status, c->tag, c->len);
    else if (c->state == MT_CONN_PAYLOAD && c->ux)
        mt_unexp_drop(ep, c->ux, status);
    if (c->state == MT_CONN_PAUSED)
        ep->paused--;
    if (why) /* a sender that stops between messages is normal: it disconnected */
        mt_log(ep->fab, cut ? WEFT_LOG_WARN : WEFT_LOG_DEBUG, "incoming connection %s%s", why,
               cut ? " in the middle of a message; the message is lost" : "");
    mt_unwatch_close(ep, c->fd);
    weft_kit_list_unlink(&c->link);
    free(c->stage);
    free(c);
}

void mt_conn_accept(mt_ep *ep)
{
    for (int i = 0; i < MT_ACCEPTS_PER_CALL; ++i) {
        int fd = accept(ep->listener.fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) { /* e.g. out of descriptors */
                mt_log(ep->fab, ep->accept_logged ? WEFT_LOG_DEBUG : WEFT_LOG_WARN,
                       "accept: %s", strerror(errno));
                ep->accept_logged = 1;
            }
            return;
        }
        mt_conn *c = calloc(1, sizeof *c);
        unsigned char *stage = c ? malloc(MT_STAGE) : NULL;
        if (stage) {
            c->kind = MT_SOCK_CONN;
            c->fd = fd;
            c->ep = ep;
            c->state = MT_CONN_HELLO;
            c->stage = stage;
        }
        if (!stage || mt_socket_setup(fd) != 0 ||
            mt_watch(ep, EPOLL_CTL_ADD, fd, EPOLLIN, c) != 0) {
            /* The sender sees the connection close and fails its sends. */
            mt_log(ep->fab, WEFT_LOG_WARN, "dropping an incoming connection: %s",
                   strerror(errno));
            free(stage);
            free(c);
            close(fd);
            continue;
        }
        weft_kit_list_push_back(&ep->conns, &c->link);
    }
}

static void mt_conn_payload_done(mt_conn *c)
{
    if (c->recv) {
        mt_recv_finish(c->ep, c->recv, c->tag, c->len);
    } else {
        c->ux->complete = 1;
        if (c->ux->claimed)
            mt_unexp_deliver(c->ep, c->ux, c->ux->claimed);
    }
    c->recv = NULL;
    c->ux = NULL;
    c->state = MT_CONN_HEADER;
}

/* A frame header arrived (c->tag, c->len): pick where its payload goes. */
static void mt_conn_dispatch(mt_conn *c)
{
    mt_ep *ep = c->ep;
    c->recv = NULL;
    c->ux = NULL;
    WEFT_KIT_LIST_FOREACH(it, &ep->posted) {
        mt_op *op = WEFT_KIT_CONTAINER_OF(it, mt_op, link);
        if (weft_kit_tag_matches(c->tag, op->tag, op->ignore)) {
            weft_kit_list_unlink(&op->link);
            c->recv = op;
            c->dst = op->rbuf;
            c->keep = mt_min(c->len, op->len); /* the rest of a longer message is skipped */
            break;
        }
    }
    if (!c->recv) {
        /* Unexpected: buffer it, within the memory bound (one message is always allowed,
         * however large, so that no single message can wait forever). */
        size_t used = ep->unexpected_bytes;
        mt_unexp *ux = NULL;
        if (!used || (used < MT_UNEXPECTED_MAX && c->len <= MT_UNEXPECTED_MAX - used))
            ux = calloc(1, sizeof *ux);
        if (ux && c->len && !(ux->data = malloc(c->len))) {
            free(ux);
            ux = NULL;
        }
        if (!ux) {
            /* Stop reading this connection (TCP holds its sender back) until a receive is
             * posted or memory is freed; the header stays here meanwhile. */
            c->state = MT_CONN_PAUSED;
            ep->paused++;
            mt_watch(ep, EPOLL_CTL_MOD, c->fd, 0, c);
            mt_log(ep->fab, ep->pause_logged ? WEFT_LOG_DEBUG : WEFT_LOG_WARN,
                   "%zu bytes of unexpected messages held, a %zu-byte one waits until a "
                   "receive is posted (MT_UNEXPECTED_MAX)", used, c->len);
            ep->pause_logged = 1;
            return;
        }
        ux->tag = c->tag;
        ux->len = c->len;
        weft_kit_list_push_back(&ep->unexpected, &ux->link);
        ep->unexpected_bytes += c->len;
        c->ux = ux;
        c->dst = ux->data;
        c->keep = c->len;
    }
    c->left = c->len;
    c->state = MT_CONN_PAYLOAD;
    if (!c->left)
        mt_conn_payload_done(c);
}

/* A complete header in c->hdr.  Returns -1 when it closed the connection. */
static int mt_conn_header(mt_conn *c)
{
    uint64_t a, b;
    int type = mt_hdr_decode(c->hdr, &a, &b);
    if (c->state == MT_CONN_HELLO) {
        if (type != MT_FRAME_HELLO || a != c->ep->self.nonce) {
            mt_conn_close(c, WEFT_PLUGIN_ERR_PEER_FAILED,
                          type != MT_FRAME_HELLO ? "sent no minitcp hello: dropped"
                          : "was for another endpoint (a stale address): dropped");
            return -1;
        }
        c->state = MT_CONN_HEADER;
        return 0;
    }
    if (type != MT_FRAME_MSG || b > MT_MAX_MESSAGE) {
        mt_conn_close(c, WEFT_PLUGIN_ERR_PEER_FAILED,
                      "sent a bad frame header (magic, version, type or length): dropped");
        return -1;
    }
    c->tag = a;
    c->len = (size_t)b;
    mt_conn_dispatch(c);
    return 0;
}

/* Moves staged bytes into the current header or payload.  Returns -1 when it closed c. */
static int mt_conn_consume(mt_conn *c)
{
    size_t avail = c->stage_end - c->stage_pos;
    const unsigned char *src = c->stage + c->stage_pos;
    if (c->state == MT_CONN_PAYLOAD) {
        size_t take = mt_min(avail, c->left), kept = mt_min(take, c->keep);
        if (kept) {
            memcpy(c->dst, src, kept);
            c->dst += kept;
            c->keep -= kept;
        }
        c->left -= take;
        c->stage_pos += take;
        if (!c->left)
            mt_conn_payload_done(c);
        return 0;
    }
    size_t take = mt_min(avail, MT_HDR_SIZE - c->hdr_got);
    memcpy(c->hdr + c->hdr_got, src, take);
    c->hdr_got += take;
    c->stage_pos += take;
    if (c->hdr_got < MT_HDR_SIZE)
        return 0;
    c->hdr_got = 0;
    return mt_conn_header(c);
}

static void mt_conn_read(mt_conn *c)
{
    int drained = 0;
    for (int reads = 0; c->state != MT_CONN_PAUSED;) {
        if (c->stage_pos < c->stage_end) {
            if (mt_conn_consume(c) != 0)
                return;
            continue;
        }
        /* A short read emptied the socket: skip the recv that would only say EAGAIN.  The
         * epoll set is level-triggered, so whatever comes later is reported anyway. */
        if (drained || reads++ == MT_READS_PER_CALL)
            return;
        /* A large payload goes straight into its destination, skipping the staging copy;
         * never read past it (the next frame's bytes belong to the staging buffer). */
        int direct = c->state == MT_CONN_PAYLOAD && c->keep >= MT_STAGE / 2;
        size_t want = direct ? c->keep : MT_STAGE;
        ssize_t r = recv(c->fd, direct ? c->dst : c->stage, want, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                mt_conn_close(c, WEFT_PLUGIN_ERR_PEER_FAILED, strerror(errno));
            return;
        }
        if (r == 0) {
            mt_conn_close(c, WEFT_PLUGIN_ERR_PEER_FAILED, "closed by its sender");
            return;
        }
        drained = (size_t)r < want;
        if (direct) {
            c->dst += r;
            c->keep -= (size_t)r;
            c->left -= (size_t)r;
            if (!c->left)
                mt_conn_payload_done(c);
        } else {
            c->stage_pos = 0;
            c->stage_end = (size_t)r;
        }
    }
}

void mt_conn_event(mt_conn *c, uint32_t events)
{
    /* A paused connection is not watched for input, but epoll always reports errors and
     * hang-ups: its sender is gone, and so are the messages it held back. */
    if (c->state == MT_CONN_PAUSED) {
        if (events & (EPOLLERR | EPOLLHUP))
            mt_conn_close(c, WEFT_PLUGIN_ERR_PEER_FAILED, "failed");
        return;
    }
    mt_conn_read(c);
}

/* A receive was posted or unexpected memory freed: paused connections try their waiting
 * header again. */
void mt_conn_resume(mt_ep *ep)
{
    if (!ep->paused)
        return;
    WEFT_KIT_LIST_FOREACH(it, &ep->conns) {
        mt_conn *c = WEFT_KIT_CONTAINER_OF(it, mt_conn, link);
        if (c->state != MT_CONN_PAUSED)
            continue;
        ep->paused--;
        c->state = MT_CONN_HEADER;
        mt_conn_dispatch(c);
        if (c->state == MT_CONN_PAUSED)
            continue;
        mt_watch(ep, EPOLL_CTL_MOD, c->fd, EPOLLIN, c);
        mt_conn_read(c); /* the bytes staged behind that header */
    }
}

/* ep_close: every receive still pending completes canceled, every buffer is freed. */
void mt_recv_close_all(mt_ep *ep)
{
    WEFT_KIT_LIST_FOREACH(it, &ep->conns)
        mt_conn_close(WEFT_KIT_CONTAINER_OF(it, mt_conn, link), WEFT_PLUGIN_ERR_CANCELED, NULL);
    WEFT_KIT_LIST_FOREACH(it, &ep->posted) {
        mt_op *op = WEFT_KIT_CONTAINER_OF(it, mt_op, link);
        weft_kit_list_unlink(&op->link);
        mt_complete(ep, op, WEFT_PLUGIN_ERR_CANCELED, 0, 0);
    }
    WEFT_KIT_LIST_FOREACH(it, &ep->unexpected)
        mt_unexp_drop(ep, WEFT_KIT_CONTAINER_OF(it, mt_unexp, link), WEFT_PLUGIN_ERR_CANCELED);
}

int mt_tag_recv(mt_ep *ep, void *buf, size_t len, uint64_t tag, uint64_t ignore, void *context)
{
    if (!mt_ep_valid(ep) || (!buf && len))
        return WEFT_PLUGIN_ERR_INVALID;
    mt_op *op = calloc(1, sizeof *op);
    if (!op)
        return WEFT_PLUGIN_ERR_NOMEM;
    op->context = context;
    op->rbuf = buf;
    op->len = len;
    op->tag = tag;
    op->ignore = ignore;
    /* Messages that arrived before this receive come first, oldest first. */
    WEFT_KIT_LIST_FOREACH(it, &ep->unexpected) {
        mt_unexp *ux = WEFT_KIT_CONTAINER_OF(it, mt_unexp, link);
        if (!weft_kit_tag_matches(ux->tag, tag, ignore))
            continue;
        weft_kit_list_unlink(&ux->link);
        if (ux->complete)
            mt_unexp_deliver(ep, ux, op); /* completes at the next progress */
        else
            ux->claimed = op;             /* completes when the rest of it arrived */
        return WEFT_PLUGIN_OK;
    }
    weft_kit_list_push_back(&ep->posted, &op->link);
    if (ep->paused)
        ep->recheck = 1; /* it may match a paused connection's waiting header */
    return WEFT_PLUGIN_OK;
}

int mt_tag_probe(mt_ep *ep, uint64_t tag, uint64_t ignore, int *found, uint64_t *msg_tag,
                 size_t *msg_len)
{
    if (!mt_ep_valid(ep) || !found)
        return WEFT_PLUGIN_ERR_INVALID;
    *found = 0;
    /* The buffered messages, then the headers that paused connections hold back. */
    WEFT_KIT_LIST_FOREACH(it, &ep->unexpected) {
        mt_unexp *ux = WEFT_KIT_CONTAINER_OF(it, mt_unexp, link);
        if (weft_kit_tag_matches(ux->tag, tag, ignore)) {
            *found = 1;
            if (msg_tag)
                *msg_tag = ux->tag;
            if (msg_len)
                *msg_len = ux->len;
            return WEFT_PLUGIN_OK;
        }
    }
    WEFT_KIT_LIST_FOREACH(it, &ep->conns) {
        mt_conn *c = WEFT_KIT_CONTAINER_OF(it, mt_conn, link);
        if (c->state == MT_CONN_PAUSED && weft_kit_tag_matches(c->tag, tag, ignore)) {
            *found = 1;
            if (msg_tag)
                *msg_tag = c->tag;
            if (msg_len)
                *msg_len = c->len;
            return WEFT_PLUGIN_OK;
        }
    }
    return WEFT_PLUGIN_OK;
}

/* Only a receive still waiting for a message can be canceled; one that matched completes
 * normally, and the core takes ERR_NOT_FOUND as "it matched meanwhile". */
int mt_cancel(mt_ep *ep, void *context)
{
    if (!mt_ep_valid(ep))
        return WEFT_PLUGIN_ERR_INVALID;
    WEFT_KIT_LIST_FOREACH(it, &ep->posted) {
        mt_op *op = WEFT_KIT_CONTAINER_OF(it, mt_op, link);
        if (op->context == context) {
            weft_kit_list_unlink(&op->link);
            mt_complete(ep, op, WEFT_PLUGIN_ERR_CANCELED, 0, 0);
            return WEFT_PLUGIN_OK;
        }
    }
    return WEFT_PLUGIN_ERR_NOT_FOUND;
}
