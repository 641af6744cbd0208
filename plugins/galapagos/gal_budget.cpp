/* Bounds on unexpected-message memory.  Messages that arrive before their receive are copied
 * into buffers of the receiving node; a peer that sends many (a token holder, or a program
 * that runs ahead) would grow it without limit.  Each connection's unexpected bytes, and the
 * node's, are counted; a connection over its bound (WEFT_GALAPAGOS_UNEXPECTED_PER_PEER), or any
 * connection while the node is over its own (WEFT_GALAPAGOS_UNEXPECTED_TOTAL), is not read
 * until receives bring it back under: TCP's flow control then holds the sender back, which is
 * back-pressure, not loss.  The message a connection is delivering into a posted receive keeps
 * flowing, so a receive that matched never waits for the bound.  Messages between endpoints of
 * one node are not counted (the process is its own sender). */
#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>

#include <sys/epoll.h>

#include "gal_internal.hpp"

namespace {

constexpr size_t default_peer_max = size_t(64) << 20;   /* 64 MiB */
constexpr size_t default_total_max = size_t(512) << 20; /* 512 MiB */
constexpr size_t min_max = size_t(64) << 10;            /* at least one read buffer */

/* A byte count: digits with an optional K, M or G (powers of 1024). */
bool parse_bytes(const char *text, size_t *out) {
    char *end = nullptr;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || errno || text[0] == '-') return false;
    unsigned shift = 0;
    switch (*end) {
        case 'K':
        case 'k':
            shift = 10;
            ++end;
            break;
        case 'M':
        case 'm':
            shift = 20;
            ++end;
            break;
        case 'G':
        case 'g':
            shift = 30;
            ++end;
            break;
        default: break;
    }
    if (*end || v > (SIZE_MAX >> shift)) return false;
    *out = size_t(v) << shift;
    return true;
}

bool read_bound(const char *name, size_t fallback, size_t *out, char *why, size_t why_len) {
    *out = fallback;
    const char *v = getenv(name);
    if (!v || !*v) return true;
    if (!parse_bytes(v, out) || *out < min_max) {
        weft_kit_whyf(why, why_len, 0, "%s='%s' is not a byte count of at least 64K (e.g. 64M)", name, v);
        return false;
    }
    return true;
}

bool over(const weft_fabric *f, const gal_conn *c) {
    return c->unexp_bytes.load(std::memory_order_relaxed) >= f->unexp_peer_max ||
        f->unexp_total.load(std::memory_order_relaxed) >= f->unexp_total_max;
}

void set_held(weft_fabric *f, gal_conn *c, bool held) {
    if (c->held.exchange(held) == held) return;
    if (held) {
        f->held_conns.fetch_add(1);
        uint64_t n = ++f->holds;
        if ((n & (n - 1)) == 0) /* the first time, then at every power of two */
            gal_log(f, WEFT_LOG_INFO,
                    "holding back node %016llx: %zu bytes of unexpected messages from it, %zu in all "
                    "(bounds: WEFT_GALAPAGOS_UNEXPECTED_PER_PEER=%zu, _TOTAL=%zu; %" PRIu64 " holds so far)",
                    (unsigned long long)c->peer_node, c->unexp_bytes.load(), f->unexp_total.load(), f->unexp_peer_max,
                    f->unexp_total_max, n);
    } else {
        f->held_conns.fetch_sub(1);
    }
    gal_conn_update_events(f, c);
}

/* Lets every held connection that is back under the bounds read again. */
void resume_under_bounds(weft_fabric *f) {
    if (f->held_conns.load() == 0) return;
    uint32_t n = f->nconns.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < n; ++i) {
        gal_conn *c = f->conns[i].load(std::memory_order_acquire);
        if (c->held.load() && !over(f, c)) set_held(f, c, false);
    }
}

}  // namespace

bool gal_budget_open(weft_fabric *f, char *why, size_t why_len) {
    f->unexp_total.store(0);
    f->held_conns.store(0);
    f->holds.store(0);
    return read_bound("WEFT_GALAPAGOS_UNEXPECTED_PER_PEER", default_peer_max, &f->unexp_peer_max, why, why_len) &&
        read_bound("WEFT_GALAPAGOS_UNEXPECTED_TOTAL", default_total_max, &f->unexp_total_max, why, why_len);
}

void gal_budget_charge(weft_fabric *f, gal_unexp *u, size_t bytes) {
    if (!u->from) return;
    u->charged += bytes;
    u->from->unexp_bytes.fetch_add(bytes, std::memory_order_relaxed);
    f->unexp_total.fetch_add(bytes, std::memory_order_relaxed);
}

void gal_budget_release(weft_fabric *f, gal_unexp *u) {
    if (!u->from || !u->charged) return;
    u->from->unexp_bytes.fetch_sub(u->charged, std::memory_order_relaxed);
    f->unexp_total.fetch_sub(u->charged, std::memory_order_relaxed);
    u->charged = 0;
    resume_under_bounds(f);
}

bool gal_budget_hold(weft_fabric *f, gal_conn *c) {
    if (!over(f, c)) return false;
    /* The message being delivered into a receive (matched at once, or attached while it
     * arrived) keeps flowing: the receive's buffer is the program's, not ours. */
    const gal_rx &rx = c->rx;
    if (rx.active && rx.recv) return false;
    if (rx.active && rx.unexp) {
        std::lock_guard<std::mutex> g(rx.ep->lock);
        if (rx.unexp->recv) return false;
    }
    set_held(f, c, true);
    /* A receive may have drained it between the check and the hold: look again. */
    if (!over(f, c)) {
        set_held(f, c, false);
        return false;
    }
    return true;
}

void gal_budget_attached(weft_fabric *f, gal_unexp *u) {
    if (u->from && u->from->held.load()) set_held(f, u->from, false);
}

void gal_unexp_free(weft_fabric *f, gal_unexp *u) {
    gal_budget_release(f, u);
    std::free(u->data);
    std::free(u);
}
