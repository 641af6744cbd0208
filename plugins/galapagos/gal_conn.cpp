/* Galapagos fabric: one TCP connection to a peer node.  Messages become packets on the way out
 * (writev of header, data and padding pieces, never a copy of the data) and are reassembled on
 * the way in.  A send the socket cannot take at once waits on the connection's queue, which
 * holds the caller's buffer (valid until completion), so nothing is buffered twice. */
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "gal_internal.hpp"

namespace {

constexpr size_t rbuf_capacity = 64 * 1024; /* at least one whole packet */
constexpr size_t full_packet_bytes = gal::flit_bytes + gal::max_packet_bytes;
constexpr size_t packets_per_write = 64;
const uint8_t zero_pad[gal::flit_bytes] = {};

size_t packet_count(size_t length) {
    if (length <= gal::first_fragment_data) return 1;
    return 1 + (length - gal::first_fragment_data + gal::max_packet_bytes - 1) / gal::max_packet_bytes;
}

/* Data bytes carried by packet i of a message of length bytes, and where they start. */
size_t packet_data(size_t length, size_t i, size_t *offset) {
    if (i == 0) {
        *offset = 0;
        return length < gal::first_fragment_data ? length : gal::first_fragment_data;
    }
    *offset = gal::first_fragment_data + (i - 1) * gal::max_packet_bytes;
    size_t left = length - *offset;
    return left < gal::max_packet_bytes ? left : gal::max_packet_bytes;
}

/* Bytes of packet i on the wire; every packet but the last is full_packet_bytes. */
size_t packet_wire_bytes(size_t length, size_t i) {
    size_t offset;
    size_t data = packet_data(length, i, &offset);
    return gal::flit_bytes + (i == 0 ? gal::first_fragment_overhead : 0) + gal::flits_for(data) * gal::flit_bytes;
}

size_t stream_bytes(size_t length) {
    size_t n = packet_count(length);
    return (n - 1) * full_packet_bytes + packet_wire_bytes(length, n - 1);
}

/* Writes what of iov the socket takes and advances op->done_bytes.  1: go on (wrote, or was
 * interrupted); 0: the socket is full; -1: the connection failed. */
int send_pieces(gal_conn *c, gal_op *op, struct iovec *iov, size_t n) {
    struct msghdr m {};
    m.msg_iov = iov;
    m.msg_iovlen = n;
    ssize_t k = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0) {
        if (errno == EINTR) return 1;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    }
    op->done_bytes += size_t(k);
    return 1;
}

/* One raw Galapagos packet: header flit and the payload, nothing of Weft's. */
int write_raw(gal_conn *c, gal_op *op) {
    gal::packet_header h;
    h.dest = op->dest_slot;
    h.src = op->src_kernel;
    h.flits = uint16_t(op->length / gal::flit_bytes);
    h.kind = gal::KIND_RAW;
    uint8_t head[gal::flit_bytes];
    gal::put_u64(head, gal::header_encode(h));
    const size_t total = gal::flit_bytes + op->length;
    while (op->done_bytes < total) {
        struct iovec iov[2];
        size_t n = 0, skip = op->done_bytes;
        if (skip < gal::flit_bytes) {
            iov[n++] = {head + skip, gal::flit_bytes - skip};
            skip = 0;
        } else {
            skip -= gal::flit_bytes;
        }
        iov[n++] = {static_cast<uint8_t *>(op->buf) + skip, op->length - skip};
        if (int rc = send_pieces(c, op, iov, n); rc != 1) return rc;
    }
    return 1;
}

/* Writes as much of op's packets as the socket takes.  1: all written; 0: the socket is full;
 * -1: the connection failed. */
int write_some(gal_conn *c, gal_op *op) {
    if (op->raw) return write_raw(c, op);
    const size_t length = op->length;
    const size_t total = stream_bytes(length);
    const size_t npackets = packet_count(length);
    while (op->done_bytes < total) {
        struct iovec iov[packets_per_write * 3];
        uint8_t heads[packets_per_write][3 * gal::flit_bytes];
        size_t niov = 0;
        size_t skip = op->done_bytes % full_packet_bytes;
        for (size_t p = op->done_bytes / full_packet_bytes, k = 0; p < npackets && k < packets_per_write; ++p, ++k) {
            size_t offset;
            size_t data = packet_data(length, p, &offset);
            size_t flits = gal::flits_for(data) + (p == 0 ? 2 : 0);
            gal::packet_header h;
            h.dest = op->dest_slot;
            h.src = op->ep->slot;
            h.flits = uint16_t(flits);
            h.kind = p == 0 ? gal::KIND_MSG_FIRST : gal::KIND_MSG_NEXT;
            uint8_t *head = heads[k];
            gal::put_u64(head, gal::header_encode(h));
            size_t head_len = gal::flit_bytes;
            if (p == 0) {
                gal::put_u64(head + 8, op->tag);
                gal::put_u64(head + 16, length);
                head_len += gal::first_fragment_overhead;
            }
            size_t pad = gal::flits_for(data) * gal::flit_bytes - data;
            struct iovec pieces[3] = {{head, head_len},
                                      {static_cast<uint8_t *>(op->buf) + offset, data},
                                      {const_cast<uint8_t *>(zero_pad), pad}};
            for (auto &piece : pieces) {
                if (skip >= piece.iov_len) {
                    skip -= piece.iov_len;
                    continue;
                }
                iov[niov].iov_base = static_cast<uint8_t *>(piece.iov_base) + skip;
                iov[niov].iov_len = piece.iov_len - skip;
                skip = 0;
                ++niov;
            }
        }
        if (int rc = send_pieces(c, op, iov, niov); rc != 1) return rc;
    }
    return 1;
}

/* A queued send is written: its owner's progress delivers the completion. */
void send_done(gal_op *op, int status) {
    weft_fabric_ep *ep = op->ep;
    std::lock_guard<std::mutex> g(ep->lock);
    op->status = status;
    if (op->peer) --op->peer->pending_sends;
    gal_done_push(ep, op);
}

/* Fails every queued send (caller holds c->send_lock). */
void fail_queue(gal_conn *c) {
    while (weft_kit_link_t *l = weft_kit_queue_pop(&c->sq)) send_done(gal_op_of(l), WEFT_PLUGIN_ERR_PEER_FAILED);
    c->sq_len = 0;
}

void bad_frame(weft_fabric *f, gal_conn *c, const char *why) {
    ++f->bad_frames;
    gal_log(f, WEFT_LOG_WARN, "dropped a packet from node %016llx: %s", (unsigned long long)c->peer_node, why);
}

/* Handles one whole packet (header decoded).  false: the stream cannot be trusted any more. */
bool handle_packet(weft_fabric *f, gal_conn *c, const gal::packet_header &h, const uint8_t *p) {
    size_t bytes = size_t(h.flits) * gal::flit_bytes;
    gal_rx &rx = c->rx;
    switch (h.kind) {
        case gal::KIND_MSG_FIRST: {
            if (rx.active) {
                bad_frame(f, c, "a message began before the previous one ended");
                return false;
            }
            if (h.flits < 2) {
                bad_frame(f, c, "first fragment shorter than its two header flits");
                return false;
            }
            uint64_t tag = gal::get_u64(p);
            uint64_t length = gal::get_u64(p + 8);
            size_t first = length < gal::first_fragment_data ? size_t(length) : gal::first_fragment_data;
            if (bytes - gal::first_fragment_overhead != gal::flits_for(first) * gal::flit_bytes) {
                bad_frame(f, c, "first fragment size does not match the message length");
                return false;
            }
            weft_fabric_ep *ep = f->slots[h.dest].load(std::memory_order_acquire);
            if (!ep) {
                bad_frame(f, c, "no endpoint in the destination slot");
                rx = gal_rx{};
                rx.from = c;
                rx.active = true;
                rx.length = size_t(length);
            } else {
                std::lock_guard<std::mutex> g(ep->lock);
                gal_deliver_begin_locked(ep, tag, size_t(length), rx);
            }
            rx.slot = h.dest;
            gal_deliver_data(rx, p + gal::first_fragment_overhead, first);
            return true;
        }
        case gal::KIND_MSG_NEXT: {
            if (!rx.active || h.dest != rx.slot) {
                bad_frame(f, c, "a continuation fragment without its message");
                return false;
            }
            size_t left = rx.length - rx.arrived;
            size_t data = left < gal::max_packet_bytes ? left : gal::max_packet_bytes;
            if (bytes != gal::flits_for(data) * gal::flit_bytes) {
                bad_frame(f, c, "continuation fragment size does not match the message length");
                return false;
            }
            gal_deliver_data(rx, p, data);
            return true;
        }
        case gal::KIND_ROUTE: return true; /* software nodes know the cluster; only hardware nodes learn routes */
        default: {
            /* A raw Galapagos packet: an active message for a global kernel hosted here. */
            gal_binding b;
            if (!gal_binding_of(f, h.dest, b)) {
                bad_frame(f, c, "raw Galapagos packet for a kernel this node does not host");
                return true; /* skipped whole: the stream stays in step */
            }
            gal_rx one{};
            one.from = c;
            {
                std::lock_guard<std::mutex> g(b.ep->lock);
                gal_deliver_begin_locked(b.ep, b.tag_base | uint64_t(h.src) << b.source_shift, bytes, one);
            }
            gal_deliver_data(one, p, bytes);
            return true;
        }
    }
}

}  // namespace

gal_conn *gal_conn_new(int fd, uint64_t peer_node) {
    auto *c = new (std::nothrow) gal_conn;
    if (!c) return nullptr;
    c->rbuf = static_cast<uint8_t *>(std::malloc(rbuf_capacity));
    if (!c->rbuf) {
        delete c;
        return nullptr;
    }
    c->fd = fd;
    c->peer_node = peer_node;
    c->dead.store(false);
    weft_kit_queue_init(&c->sq);
    c->sq_len = 0;
    c->rlen = 0;
    c->rx = gal_rx{};
    c->rx.from = c;
    c->unexp_bytes.store(0);
    c->held.store(false);
    c->want_write = false;
    return c;
}

void gal_conn_free(gal_conn *c) {
    if (!c) return;
    if (c->fd >= 0) close(c->fd);
    std::free(c->rbuf);
    delete c;
}

int gal_conn_send(weft_fabric *f, gal_conn *c, gal_op *op) {
    std::lock_guard<std::mutex> g(c->send_lock);
    if (c->dead.load(std::memory_order_acquire)) return WEFT_PLUGIN_ERR_PEER_FAILED;
    if (weft_kit_queue_empty(&c->sq)) {
        int rc = write_some(c, op);
        if (rc == 1) return 1;
        if (rc < 0) return WEFT_PLUGIN_ERR_PEER_FAILED;
    } else if (c->sq_len >= GAL_SENDQ_MAX) {
        return WEFT_PLUGIN_ERR_AGAIN; /* bounded: the caller progresses and retries */
    }
    op->state = OP_QUEUED;
    weft_kit_queue_push(&c->sq, &op->link);
    if (c->sq_len++ == 0) gal_conn_want_write(f, c, true); /* wake waiting threads when the socket drains */
    return 0;
}

void gal_conn_flush(weft_fabric *f, gal_conn *c) {
    if (c->dead.load(std::memory_order_acquire)) return;
    std::unique_lock<std::mutex> g(c->send_lock, std::try_to_lock);
    if (!g.owns_lock()) return; /* another thread is writing to it */
    while (weft_kit_link_t *first = c->sq.first) {
        gal_op *op = gal_op_of(first);
        int rc = write_some(c, op);
        if (rc == 0) return;
        if (rc < 0) {
            g.unlock();
            gal_conn_fail(f, c, "write failed", false);
            return;
        }
        weft_kit_queue_pop(&c->sq);
        if (--c->sq_len == 0) gal_conn_want_write(f, c, false);
        send_done(op, WEFT_PLUGIN_OK);
    }
}

int gal_conn_read(weft_fabric *f, gal_conn *c, bool closing) {
    int handled = 0;
    for (;;) {
        /* Over its unexpected-message bound: not read until receives drain it (a connection
         * that is closing is read to its end: what is in it cannot wait). */
        if (!closing && gal_budget_hold(f, c)) return handled;
        ssize_t n = recv(c->fd, c->rbuf + c->rlen, rbuf_capacity - c->rlen, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return handled;
            return -1;
        }
        if (n == 0) {
            if (c->rlen || c->rx.active) bad_frame(f, c, "connection closed in the middle of a packet or message");
            return -1;
        }
        c->rlen += size_t(n);
        size_t pos = 0;
        while (c->rlen - pos >= gal::flit_bytes) {
            gal::packet_header h;
            gal::header_error e = gal::header_decode(gal::get_u64(c->rbuf + pos), h);
            if (e != gal::header_error::none) {
                bad_frame(f, c, gal::header_error_text(e));
                return -1;
            }
            size_t need = gal::flit_bytes + size_t(h.flits) * gal::flit_bytes;
            if (c->rlen - pos < need) break;
            if (!handle_packet(f, c, h, c->rbuf + pos + gal::flit_bytes)) return -1;
            pos += need;
            ++handled;
        }
        if (pos) {
            std::memmove(c->rbuf, c->rbuf + pos, c->rlen - pos);
            c->rlen -= pos;
        }
        if (size_t(n) < rbuf_capacity / 2)
            return handled; /* drained for now: the next recv would most likely say EAGAIN */
    }
}

void gal_conn_fail(weft_fabric *f, gal_conn *c, const char *why, bool holding_read_lock) {
    if (c->dead.exchange(true)) return;
    gal_log(f, WEFT_LOG_WARN, "lost the connection to node %016llx: %s", (unsigned long long)c->peer_node, why);
    epoll_ctl(f->epoll_fd, EPOLL_CTL_DEL, c->fd, nullptr);
    shutdown(c->fd, SHUT_RDWR);
    {
        std::lock_guard<std::mutex> g(c->send_lock);
        fail_queue(c);
    }
    if (holding_read_lock) {
        gal_deliver_abort(c->rx);
    } else {
        std::lock_guard<std::mutex> g(c->read_lock);
        gal_deliver_abort(c->rx);
    }
}

void gal_conn_want_write(weft_fabric *f, gal_conn *c, bool want) {
    std::lock_guard<std::mutex> g(c->events_lock);
    c->want_write = want;
    struct epoll_event ev {};
    ev.events = (c->held.load() ? 0u : uint32_t(EPOLLIN)) | (want ? uint32_t(EPOLLOUT) : 0u);
    ev.data.ptr = c;
    epoll_ctl(f->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
}

void gal_conn_update_events(weft_fabric *f, gal_conn *c) {
    std::lock_guard<std::mutex> g(c->events_lock);
    if (c->dead.load()) return; /* out of the set already */
    struct epoll_event ev {};
    ev.events = (c->held.load() ? 0u : uint32_t(EPOLLIN)) | (c->want_write ? uint32_t(EPOLLOUT) : 0u);
    ev.data.ptr = c;
    epoll_ctl(f->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
}
