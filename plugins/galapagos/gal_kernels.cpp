/* Galapagos fabric: the global kernels of a cluster file (WEFT_GALAPAGOS_CLUSTER).  The file
 * numbers the kernels and places each on a node; software nodes are Weft ranks (the i-th "sw"
 * node is rank i), hardware nodes are FPGAs (or the GAScore model) that take no part in Weft's
 * bootstrap.  The core binds its kernels' endpoints here, raw packets for them arrive as tagged
 * messages, and packets for hardware kernels leave as raw Galapagos packets.  A hardware node
 * cannot learn where software kernels live, so binding one announces it to every hardware node
 * (a route packet on the connection the hardware node then answers on). */
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include <arpa/inet.h>

#include "gal_cluster.hpp"
#include "gal_internal.hpp"

struct gal_cluster_state {
    gal::cluster file;
    int my_rank = -1;
    gal_binding bindings[256] = {};             /* by kernel id; ep null: unbound */
    std::atomic<gal_conn *> hw_conns[256] = {}; /* by hardware node index */
};

namespace {

bool parse_ipv4(const std::string &host, uint32_t *ipv4) {
    in_addr in{};
    if (inet_pton(AF_INET, host.c_str(), &in) != 1) return false;
    *ipv4 = in.s_addr;
    return true;
}

/* The connection to hardware node `index` (made on first use). */
gal_conn *hw_conn(weft_fabric *f, int index) {
    gal_cluster_state &cs = *f->cluster;
    gal_conn *c = cs.hw_conns[index].load(std::memory_order_acquire);
    if (c && !c->dead.load(std::memory_order_acquire)) return c;
    const gal::cluster_node *n = cs.file.node(index);
    uint32_t ipv4;
    if (!n || !parse_ipv4(n->host, &ipv4)) return nullptr;
    c = gal_connect(f, ipv4, n->port, f->key, 0);
    if (c) cs.hw_conns[index].store(c, std::memory_order_release);
    return c;
}

/* Sends a route packet for `kernel` to every hardware node, so they can answer it. */
bool announce(weft_fabric *f, uint32_t kernel, char *why, size_t why_len) {
    for (const gal::cluster_node &n : f->cluster->file.nodes) {
        if (!n.hardware) continue;
        gal_conn *c = hw_conn(f, n.index);
        uint8_t packet[2 * gal::flit_bytes];
        gal::packet_header h;
        h.kind = gal::KIND_ROUTE;
        h.flits = 1;
        gal::put_u64(packet, gal::header_encode(h));
        gal::put_u64(packet + 8, kernel);
        bool sent = false;
        if (c) {
            std::lock_guard<std::mutex> g(c->send_lock);
            /* Tiny and rare: a blocking-mode write loop is fine here. */
            size_t done = 0;
            while (done < sizeof packet) {
                ssize_t k = send(c->fd, packet + done, sizeof packet - done, MSG_NOSIGNAL);
                if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
                if (k <= 0) break;
                done += size_t(k);
            }
            sent = done == sizeof packet && weft_kit_queue_empty(&c->sq);
        }
        if (!sent) {
            weft_kit_whyf(why, why_len, 0, "hardware node %d (%s:%u) of the cluster file cannot be reached", n.index,
                          n.host.c_str(), unsigned(n.port));
            return false;
        }
    }
    return true;
}

}  // namespace

bool gal_cluster_open(weft_fabric *f, char *why, size_t why_len) {
    const char *path = getenv("WEFT_GALAPAGOS_CLUSTER");
    if (!path || !*path) return true;
    auto *cs = new (std::nothrow) gal_cluster_state;
    if (!cs) {
        weft_kit_whyf(why, why_len, 0, "out of memory reading the cluster file");
        return false;
    }
    std::string err;
    if (!gal::cluster_load(path, cs->file, err)) {
        weft_kit_whyf(why, why_len, 0, "WEFT_GALAPAGOS_CLUSTER: %s", err.c_str());
        delete cs;
        return false;
    }
    const char *rank = weft_kit_host_hint(f->host, "weft_rank");
    cs->my_rank = rank ? atoi(rank) : 0;
    /* This process is the my_rank-th software node: listen where the file says, if it does. */
    const gal::cluster_node *me = nullptr;
    for (const gal::cluster_node &n : cs->file.nodes)
        if (!n.hardware && cs->file.software_rank(n.index) == cs->my_rank) me = &n;
    if (!me) {
        weft_kit_whyf(why, why_len, 0,
                      "WEFT_GALAPAGOS_CLUSTER=%s has no software node for rank "
                      "%d (the i-th \"sw\" node is rank i)",
                      path, cs->my_rank);
        delete cs;
        return false;
    }
    if (!parse_ipv4(me->host, &f->ipv4)) {
        weft_kit_whyf(why, why_len, 0, "WEFT_GALAPAGOS_CLUSTER=%s: node %d: bad address %s", path, me->index,
                      me->host.c_str());
        delete cs;
        return false;
    }
    f->port = me->port;
    f->cluster = cs;
    return true;
}

void gal_cluster_close(weft_fabric *f) {
    delete f->cluster;
    f->cluster = nullptr;
}

void gal_unbind_all(weft_fabric *f, weft_fabric_ep *ep) {
    if (!f->cluster) return;
    std::lock_guard<std::mutex> g(f->lock);
    for (gal_binding &b : f->cluster->bindings)
        if (b.ep == ep) b = {};
}

bool gal_binding_of(weft_fabric *f, uint8_t dest, gal_binding &out) {
    if (!f->cluster) return false;
    std::lock_guard<std::mutex> g(f->lock);
    out = f->cluster->bindings[dest];
    return out.ep != nullptr;
}

int gal_kernel_table(weft_fabric_t *f, weft_fabric_kernel_t *out, size_t max, size_t *count) {
    if (!f || !count || (max && !out)) return WEFT_PLUGIN_ERR_INVALID;
    *count = 0;
    if (!f->cluster) return WEFT_PLUGIN_OK;
    const gal::cluster &file = f->cluster->file;
    size_t n = 0;
    for (int id = 0; id < 256; ++id) {
        const gal::cluster_kernel *k = file.kernel(id);
        if (!k) continue;
        if (n < max) out[n] = {uint32_t(id), int32_t(file.software_rank(k->node))};
        ++n;
    }
    *count = n;
    return WEFT_PLUGIN_OK;
}

int gal_kernel_bind(weft_fabric_ep_t *ep, uint32_t kernel, uint64_t tag_base, uint32_t shift) {
    if (!ep || kernel > 255 || shift > 56) return WEFT_PLUGIN_ERR_INVALID;
    weft_fabric *f = ep->fabric;
    if (!f->cluster) return WEFT_PLUGIN_ERR_UNSUPPORTED;
    const gal::cluster_kernel *k = f->cluster->file.kernel(int(kernel));
    if (!k || f->cluster->file.software_rank(k->node) != f->cluster->my_rank)
        return WEFT_PLUGIN_ERR_INVALID; /* not one of this process's kernels */
    {
        std::lock_guard<std::mutex> g(f->lock);
        f->cluster->bindings[kernel] = {ep, tag_base, shift};
    }
    char why[256];
    if (!announce(f, kernel, why, sizeof why)) {
        gal_log(f, WEFT_LOG_ERROR, "kernel %u: %s", kernel, why);
        std::lock_guard<std::mutex> g(f->lock);
        f->cluster->bindings[kernel] = {};
        return WEFT_PLUGIN_ERR_UNREACHABLE;
    }
    return WEFT_PLUGIN_OK;
}

int gal_kernel_unbind(weft_fabric_ep_t *ep, uint32_t kernel) {
    if (!ep || kernel > 255 || !ep->fabric->cluster) return WEFT_PLUGIN_ERR_INVALID;
    std::lock_guard<std::mutex> g(ep->fabric->lock);
    gal_binding &b = ep->fabric->cluster->bindings[kernel];
    if (b.ep != ep) return WEFT_PLUGIN_ERR_NOT_FOUND;
    b = {};
    return WEFT_PLUGIN_OK;
}

int gal_kernel_send(weft_fabric_ep_t *ep, uint32_t dst_kernel, uint32_t src_kernel, const void *buf, size_t len,
                    void *context) {
    if (!ep || dst_kernel > 255 || src_kernel > 255 || len % gal::flit_bytes || len > gal::max_packet_bytes ||
        (len && !buf))
        return WEFT_PLUGIN_ERR_INVALID;
    weft_fabric *f = ep->fabric;
    if (!f->cluster) return WEFT_PLUGIN_ERR_UNSUPPORTED;
    const gal::cluster_kernel *k = f->cluster->file.kernel(int(dst_kernel));
    const gal::cluster_node *n = k ? f->cluster->file.node(k->node) : nullptr;
    if (!n || !n->hardware) return WEFT_PLUGIN_ERR_UNREACHABLE; /* software kernels are reached by tagged messages */
    gal_conn *c = hw_conn(f, n->index);
    if (!c) return WEFT_PLUGIN_ERR_PEER_FAILED;
    gal_op *op;
    {
        std::lock_guard<std::mutex> g(ep->lock);
        op = gal_op_get(ep);
        if (!op) return WEFT_PLUGIN_ERR_NOMEM;
    }
    op->kind = GAL_OP_SEND;
    op->raw = 1;
    op->context = context;
    op->buf = const_cast<void *>(buf);
    op->length = len;
    op->tag = 0;
    op->dest_slot = uint8_t(dst_kernel);
    op->src_kernel = uint8_t(src_kernel);
    int rc = gal_conn_send(f, c, op);
    if (rc == 0) return WEFT_PLUGIN_OK; /* queued */
    {
        std::lock_guard<std::mutex> g(ep->lock);
        gal_op_put(ep, op);
    }
    if (rc < 0) return rc;
    weft_fabric_completion_t done{WEFT_PLUGIN_OK, 0, len};
    ep->complete(context, &done);
    return WEFT_PLUGIN_OK;
}
