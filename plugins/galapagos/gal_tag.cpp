/* Galapagos fabric: tag matching.  Galapagos has no matching of its own, so the plugin keeps
 * MPI's two queues per endpoint, posted receives and unexpected messages, both in order, under
 * the endpoint's lock (packets are routed into them by whichever thread reads a connection). */
#include <cstdlib>
#include <cstring>
#include <new>

#include "gal_internal.hpp"

namespace {

/* An unexpected message's first buffer; it grows as more of the message arrives. */
constexpr size_t unexp_first_bytes = 64 * 1024;

void posted_remove(gal_op *op) {
    weft_kit_list_unlink(&op->link);
    op->state = OP_MATCHED;
}

void posted_append(weft_fabric_ep *ep, gal_op *op) {
    weft_kit_list_push_back(&ep->posted, &op->link);
    op->state = OP_POSTED;
}

/* Finishes receive op with a message of msg_length bytes (of which op got what fits). */
void recv_finish(gal_op *op) {
    op->status = op->msg_length > op->length ? WEFT_PLUGIN_ERR_TRUNCATE : WEFT_PLUGIN_OK;
    op->length = op->msg_length;
}

/* Copies bytes [offset, offset + n) of a message into receive op's buffer, as far as fits. */
void recv_copy(gal_op *op, size_t offset, const uint8_t *data, size_t n) {
    if (offset >= op->length) return;
    size_t take = n < op->length - offset ? n : op->length - offset;
    if (take) std::memcpy(static_cast<uint8_t *>(op->buf) + offset, data, take);
}

}  // namespace

gal_op *gal_op_get(weft_fabric_ep *ep) {
    if (!ep->free_ops) {
        auto *chunk = new (std::nothrow) gal_op_chunk;
        if (!chunk) return nullptr;
        chunk->next = ep->chunks;
        ep->chunks = chunk;
        for (gal_op &op : chunk->ops) {
            op.link.next = ep->free_ops;
            ep->free_ops = &op.link;
        }
    }
    gal_op *op = gal_op_of(ep->free_ops);
    ep->free_ops = op->link.next;
    std::memset(static_cast<void *>(op), 0, sizeof *op);
    op->ep = ep;
    return op;
}

void gal_op_put(weft_fabric_ep *ep, gal_op *op) {
    op->state = OP_FREE;
    op->link.next = ep->free_ops;
    ep->free_ops = &op->link;
}

void gal_done_push(weft_fabric_ep *ep, gal_op *op) {
    op->state = OP_DONE;
    weft_kit_queue_push(&ep->done, &op->link);
    gal_ep_wake_locked(ep);
}

void gal_deliver_begin_locked(weft_fabric_ep *ep, uint64_t tag, size_t length, gal_rx &rx) {
    rx.active = true;
    rx.ep = ep;
    rx.length = length;
    rx.arrived = 0;
    rx.recv = nullptr;
    rx.unexp = nullptr;
    rx.attached = false;
    WEFT_KIT_LIST_FOREACH(it, &ep->posted) {
        gal_op *op = gal_op_of(it);
        if (weft_kit_tag_matches(tag, op->tag, op->ignore)) {
            posted_remove(op);
            op->msg_tag = tag;
            op->msg_length = length;
            rx.recv = op;
            return;
        }
    }
    /* The buffer grows as the bytes arrive (gal_deliver_data): a header announcing a huge
     * length costs only what its sender really sends. */
    size_t first = length < unexp_first_bytes ? length : unexp_first_bytes;
    auto *u = static_cast<gal_unexp *>(std::calloc(1, sizeof(gal_unexp)));
    uint8_t *data = first ? static_cast<uint8_t *>(std::malloc(first)) : nullptr;
    if (!u || (first && !data)) {
        std::free(u);
        std::free(data);
        ++ep->fabric->bad_frames; /* out of memory: the message is lost, and counted */
        return;
    }
    u->tag = tag;
    u->length = length;
    u->capacity = first;
    u->data = data;
    u->reading = true;
    u->from = rx.from;
    gal_budget_charge(ep->fabric, u, sizeof(gal_unexp) + first);
    weft_kit_list_push_back(&ep->unexp, &u->link);
    rx.unexp = u;
    gal_ep_wake_locked(ep); /* a waiting thread may want to probe or post for it */
}

namespace {

/* Makes room for `need` bytes of the unexpected message rx is filling (doubling, at most its
 * length).  Readers copy from u->data under ep->lock, so it moves only under the lock.  Out of
 * memory: the message is dropped and counted, a receive already attached to it fails. */
bool unexp_grow(gal_rx &rx, size_t need) {
    weft_fabric_ep *ep = rx.ep;
    gal_unexp *u = rx.unexp;
    size_t want = u->capacity * 2 > need ? u->capacity * 2 : need;
    if (want > rx.length) want = rx.length;
    std::lock_guard<std::mutex> g(ep->lock);
    if (void *p = std::realloc(u->data, want)) {
        u->data = static_cast<uint8_t *>(p);
        gal_budget_charge(ep->fabric, u, want - u->capacity);
        u->capacity = want;
        return true;
    }
    gal_op *op = u->recv;
    weft_kit_list_unlink(&u->link);
    gal_unexp_free(ep->fabric, u);
    rx.unexp = nullptr;
    ++ep->fabric->bad_frames;
    if (op) {
        op->status = WEFT_PLUGIN_ERR_NOMEM;
        op->length = 0;
        gal_done_push(ep, op);
    }
    return false;
}

}  // namespace

void gal_deliver_data(gal_rx &rx, const uint8_t *data, size_t n) {
    if (n > rx.length - rx.arrived) n = rx.length - rx.arrived;
    weft_fabric_ep *ep = rx.ep;
    if (rx.recv) {
        /* Only this reader writes into a matched receive: no lock for the copy. */
        recv_copy(rx.recv, rx.arrived, data, n);
        rx.arrived += n;
        if (rx.arrived == rx.length) {
            std::lock_guard<std::mutex> g(ep->lock);
            recv_finish(rx.recv);
            gal_done_push(ep, rx.recv);
            rx.active = false;
        }
        return;
    }
    if (!rx.unexp) { /* no endpoint, or no memory: drop */
        rx.arrived += n;
        rx.active = rx.arrived < rx.length;
        return;
    }
    /* Once a receive is attached it gets the bytes directly (below), and the buffer stops
     * growing; until then only this reader writes past u->arrived, so no lock for the copy.
     * An attachment is for good, so the one seen at the last chunk will do (a chunk that just
     * missed it is copied both ways, harmlessly). */
    if (!rx.attached) {
        if (n && rx.arrived + n > rx.unexp->capacity && !unexp_grow(rx, rx.arrived + n))
            return gal_deliver_data(rx, data, n); /* dropped now: the rest goes to the drop path */
        if (n)                                    /* an empty message has no buffer */
            std::memcpy(rx.unexp->data + rx.arrived, data, n);
    }
    rx.arrived += n;
    std::lock_guard<std::mutex> g(ep->lock);
    gal_unexp *u = rx.unexp;
    u->arrived = rx.arrived;
    rx.attached = u->recv != nullptr;
    if (u->recv) { /* a receive matched it while it was arriving: it now gets the bytes */
        recv_copy(u->recv, rx.arrived - n, data, n);
    }
    if (rx.arrived == rx.length) {
        rx.active = false;
        u->reading = false;
        if (u->recv) {
            weft_kit_list_unlink(&u->link);
            recv_finish(u->recv);
            gal_done_push(ep, u->recv);
            gal_unexp_free(ep->fabric, u);
        }
    }
}

void gal_deliver_abort(gal_rx &rx) {
    if (!rx.active) return;
    rx.active = false;
    weft_fabric_ep *ep = rx.ep;
    if (!ep) return;
    std::lock_guard<std::mutex> g(ep->lock);
    gal_op *op = rx.recv;
    gal_unexp *u = rx.unexp;
    if (u) {
        op = u->recv;
        weft_kit_list_unlink(&u->link);
        gal_unexp_free(ep->fabric, u);
    }
    if (op) {
        op->status = WEFT_PLUGIN_ERR_PEER_FAILED;
        op->length = 0;
        gal_done_push(ep, op);
    }
}

int gal_tag_recv(weft_fabric_ep_t *ep, void *buf, size_t len, uint64_t tag, uint64_t ignore, void *context) {
    if (!ep || (len && !buf)) return WEFT_PLUGIN_ERR_INVALID;
    gal_op *now = nullptr;
    {
        std::lock_guard<std::mutex> g(ep->lock);
        gal_op *op = gal_op_get(ep);
        if (!op) return WEFT_PLUGIN_ERR_NOMEM;
        op->kind = GAL_OP_RECV;
        op->context = context;
        op->buf = buf;
        op->length = len;
        op->tag = tag;
        op->ignore = ignore;
        bool matched = false;
        WEFT_KIT_LIST_FOREACH(it, &ep->unexp) {
            gal_unexp *u = gal_unexp_of(it);
            if (u->recv || !weft_kit_tag_matches(u->tag, tag, ignore)) continue;
            matched = true;
            op->state = OP_MATCHED;
            op->msg_tag = u->tag;
            op->msg_length = u->length;
            recv_copy(op, 0, u->data, u->arrived);
            if (!u->reading) { /* whole and its reader done: off the queue, complete now */
                weft_kit_list_unlink(&u->link);
                gal_unexp_free(ep->fabric, u);
                recv_finish(op);
                now = op;
            } else {
                /* Still arriving: it stays queued (its reader holds it) with op attached,
                 * and the reader completes op with the last bytes (its connection may be
                 * held for the bound: it flows again for this receive). */
                u->recv = op;
                gal_budget_attached(ep->fabric, u);
            }
            break;
        }
        if (!matched) posted_append(ep, op);
        if (now) {
            weft_fabric_completion_t c{now->status, now->msg_tag, now->length};
            gal_op_put(ep, now);
            ep->lock.unlock();
            ep->complete(context, &c); /* completed at once: deliver from the posting call */
            ep->lock.lock();
        }
    }
    return WEFT_PLUGIN_OK;
}

int gal_tag_probe(weft_fabric_ep_t *ep, uint64_t tag, uint64_t ignore, int *found, uint64_t *msg_tag, size_t *msg_len) {
    if (!ep || !found) return WEFT_PLUGIN_ERR_INVALID;
    gal_node_progress(ep->fabric);
    std::lock_guard<std::mutex> g(ep->lock);
    *found = 0;
    WEFT_KIT_LIST_FOREACH(it, &ep->unexp) {
        gal_unexp *u = gal_unexp_of(it);
        if (u->recv || !weft_kit_tag_matches(u->tag, tag, ignore)) continue;
        *found = 1;
        if (msg_tag) *msg_tag = u->tag;
        if (msg_len) *msg_len = u->length;
        break;
    }
    return WEFT_PLUGIN_OK;
}

int gal_tag_cancel(weft_fabric_ep_t *ep, void *context) {
    if (!ep) return WEFT_PLUGIN_ERR_INVALID;
    std::lock_guard<std::mutex> g(ep->lock);
    WEFT_KIT_LIST_FOREACH(it, &ep->posted) {
        gal_op *op = gal_op_of(it);
        if (op->context == context) {
            posted_remove(op);
            op->status = WEFT_PLUGIN_ERR_CANCELED;
            op->length = 0;
            op->msg_tag = op->tag;
            gal_done_push(ep, op); /* delivered by the next progress */
            return WEFT_PLUGIN_OK;
        }
    }
    /* Matched and still arriving, or done and not yet delivered: it completes normally.
     * (A scan of every op: cancel is rare, and the hot path keeps no list for this.) */
    for (gal_op_chunk *ch = ep->chunks; ch; ch = ch->next)
        for (gal_op &op : ch->ops)
            if (op.kind == GAL_OP_RECV && op.context == context && (op.state == OP_MATCHED || op.state == OP_DONE))
                return WEFT_PLUGIN_OK;
    return WEFT_PLUGIN_ERR_NOT_FOUND;
}
