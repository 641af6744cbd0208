/* Internal structures of the Galapagos fabric plugin.  Only api/weft/plugin.h (with the plugin
 * kit, api/weft/plugin_kit.h) is visible.
 *
 * One software node per process (the fabric) hosts up to 256 endpoints (slots).  Endpoints of
 * one node reach each other without the network: the sender matches straight into the
 * receiver's queues.  Remote nodes are reached over TCP, one connection per peer node (two
 * for a moment when both ends connect at once: each side then sends on the one it saw first
 * and reads both).  There is no router thread: any endpoint's progress reads every readable
 * connection of the node (epoll, one reader per connection at a time) and routes each packet
 * to its endpoint; a thread waiting for work sleeps on the endpoint's wait fd, an epoll set
 * holding the endpoint's eventfd and the node's epoll set.  A listener thread blocks in
 * poll() on the listening socket and does the handshakes.
 *
 * Locking: each endpoint's queues (posted, unexpected, done, free ops) are under ep->lock,
 * since packets for it are routed by whichever thread reads the connection.  A connection has
 * a send lock (writers, its send queue) and a read lock (taken with try_lock by progress). */
#ifndef WEFT_GAL_INTERNAL_HPP
#define WEFT_GAL_INTERNAL_HPP

#include <weft/plugin_kit.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "gal_auth.hpp"
#include "gal_wire.hpp"

constexpr const char *GAL_PLUGIN_NAME = "galapagos";
constexpr uint32_t GAL_MAX_SLOTS = 256;
constexpr uint32_t GAL_MAX_CONNS = 1024;
/* Sends queued behind a full socket per connection before tag_send answers AGAIN. */
constexpr size_t GAL_SENDQ_MAX = 4096;

struct gal_conn;
struct gal_cluster_state;

/* Where packets for one global kernel hosted by this node go (kernel_bind). */
struct gal_binding {
    weft_fabric_ep *ep;
    uint64_t tag_base;
    uint32_t source_shift;
};

enum gal_op_kind : uint8_t { GAL_OP_SEND = 1, GAL_OP_RECV = 2 };
/* Where an op is: cancel tells a matched receive (completes normally) from an unknown one. */
enum gal_op_state : uint8_t { OP_FREE = 0, OP_POSTED, OP_MATCHED, OP_QUEUED, OP_DONE };

/* One posted send or receive.  From a per-endpoint free list: posting allocates nothing. */
struct gal_op {
    weft_fabric_ep *ep; /* owner: its progress delivers the completion */
    void *context;
    weft_kit_link_t link; /* posted list, done queue, free chain or a connection's sends */
    gal_op_kind kind;
    uint8_t state;      /* gal_op_state */
    uint8_t dest_slot;  /* Weft messages: the receiving endpoint's slot */
    uint8_t raw;        /* a raw Galapagos packet (kernel_send): one packet, no fragments */
    uint8_t src_kernel; /* raw: the header's source; dest_slot is then the dest kernel */
    int status;
    uint64_t tag; /* recv: wanted bits; send: the message's bits */
    uint64_t ignore;
    size_t length;     /* recv: capacity; send: message length */
    size_t done_bytes; /* sends: bytes of the stream written */
    size_t msg_length; /* recv: the sender's length once matched */
    uint64_t msg_tag;
    void *buf;
    weft_fabric_peer *peer; /* sends: the connection's user (disconnect flushes) */
};

inline gal_op *gal_op_of(weft_kit_link_t *link) { return WEFT_KIT_CONTAINER_OF(link, gal_op, link); }

/* A message that arrived before its receive (or is still arriving). */
struct gal_unexp {
    weft_kit_link_t link; /* on its endpoint's unexpected list, in arrival order */
    uint64_t tag;
    size_t length;
    size_t arrived;  /* bytes in data so far */
    size_t capacity; /* bytes allocated: grows with what arrives, not what is announced */
    uint8_t *data;
    gal_op *recv;   /* a receive attached while the message was still arriving */
    gal_conn *from; /* the connection it came on (null: from this node), charged below */
    size_t charged; /* bytes counted against from's and the node's bounds (gal_budget.cpp) */
    bool reading;   /* a connection's reader still holds it (gal_rx::unexp): only
                                * the reader may free it, even when all bytes are in (an
                                * empty message is whole before its reader is done) */
};

inline gal_unexp *gal_unexp_of(weft_kit_link_t *link) { return WEFT_KIT_CONTAINER_OF(link, gal_unexp, link); }

struct gal_op_chunk {
    gal_op_chunk *next;
    gal_op ops[256];
};

struct weft_fabric_peer {
    uint64_t node_id;
    uint32_t ipv4; /* network order */
    uint16_t port; /* host order */
    uint8_t slot;
    uint8_t local;                /* the peer endpoint lives in this node */
    gal::key key;                 /* proves this node to the peer's: the job's, or the peer's own */
    size_t pending_sends;         /* queued on a connection, not yet written */
    std::atomic<gal_conn *> conn; /* remote peers: the connection sends use, once known */
    /* ep_peer_failed: the process is dead.  Sends fail at once and never reconnect. */
    std::atomic<bool> failed;
    weft_kit_link_t link; /* on its endpoint's peers */
};

struct weft_fabric_ep {
    weft_fabric *fabric;
    uint8_t slot;
    int serial;
    weft_fabric_complete_fn complete;
    std::mutex lock;
    weft_kit_list_t posted;    /* receives in posting order (gal_op::link) */
    weft_kit_list_t unexp;     /* messages in arrival order (gal_unexp::link) */
    weft_kit_queue_t done;     /* completions for the next progress */
    weft_kit_link_t *free_ops; /* a chain through gal_op::link.next */
    gal_op_chunk *chunks;
    weft_kit_list_t peers; /* weft_fabric_peer::link */
    int event_fd;          /* written when work arrives while armed */
    int wait_fd;           /* epoll: event_fd + the node's epoll set */
    bool armed;
    bool closing;
};

/* Reassembly of the message whose fragments a connection is delivering. */
struct gal_rx {
    bool active;
    uint8_t slot;
    size_t length;
    size_t arrived;
    gal_op *recv;     /* matched receive, or null */
    gal_unexp *unexp; /* or the unexpected copy, or null (dropped: no endpoint) */
    bool attached;    /* unexp had a receive attached at the last chunk (seen under ep->lock) */
    weft_fabric_ep *ep;
    gal_conn *from; /* the connection delivering (null: a message from this node) */
};

struct gal_conn {
    int fd;
    uint64_t peer_node;
    std::atomic<bool> dead;
    std::mutex send_lock;
    weft_kit_queue_t sq; /* sends not yet fully written, in order (gal_op::link) */
    size_t sq_len;
    std::mutex read_lock;
    uint8_t *rbuf; /* partial packet carried between reads */
    size_t rlen;
    gal_rx rx;
    /* Unexpected-message memory from this connection; while it is over the bound the
     * connection is not read (held), so TCP holds its sender back (gal_budget.cpp). */
    std::atomic<size_t> unexp_bytes;
    std::atomic<bool> held;
    bool want_write;        /* sends are queued: report writable (under events_lock) */
    std::mutex events_lock; /* the socket's events in the node's epoll set */
};

struct weft_fabric {
    const weft_plugin_host_t *host;
    uint64_t node_id;
    gal::key key;                              /* the handshake key peers must prove: the job's, or from secret */
    uint8_t secret[gal::address_secret_bytes]; /* zero when the job shares a token */
    uint32_t ipv4;                             /* network order: the address endpoints advertise */
    uint16_t port;
    int listen_fd;
    int stop_fd;    /* eventfd: tells the listener to end */
    int epoll_fd;   /* every connection's socket */
    bool force_tcp; /* WEFT_GALAPAGOS_LOOPBACK=tcp: local endpoints also use TCP */
    std::thread listener;
    std::mutex lock;         /* slots, the connection tables */
    std::mutex connect_lock; /* one outgoing connect at a time (never held by the listener) */
    std::atomic<weft_fabric_ep *> slots[GAL_MAX_SLOTS];
    std::atomic<gal_conn *> conns[GAL_MAX_CONNS]; /* never shrinks until finalize */
    std::atomic<uint32_t> nconns;
    std::atomic<uint64_t> bad_frames;    /* packets dropped: malformed, unknown endpoint */
    std::atomic<uint64_t> refused_conns; /* connections refused: no handshake, wrong key */
    /* Unexpected-message memory (gal_budget.cpp): counted per connection and in total. */
    size_t unexp_peer_max, unexp_total_max;
    std::atomic<size_t> unexp_total;
    std::atomic<uint32_t> held_conns; /* connections held now */
    std::atomic<uint64_t> holds;      /* times a connection was held */
    uint64_t evicted_conns;           /* pending handshakes closed to make room (listener only) */
    /* node id -> the connection this node sends on (the first one established). */
    std::vector<std::pair<uint64_t, gal_conn *>> send_conns;
    /* Cluster description (WEFT_GALAPAGOS_CLUSTER), when given. */
    gal_cluster_state *cluster;
};

/* An endpoint's address (gal_wire.hpp, docs/galapagos-wire.md) as the kit's address header
 * reads it: word 0 (magic "WGAL", version, slot) is the kit's 8-byte header with the slot as
 * its info, and 32 bytes follow.  ep_connect checks it with weft_kit_addr_read. */
constexpr weft_kit_addr_format_t gal_address_format = {GAL_PLUGIN_NAME, gal::address_magic, gal::address_version,
                                                       gal::address_bytes - WEFT_KIT_ADDR_HEADER_SIZE,
                                                       gal::address_bytes - WEFT_KIT_ADDR_HEADER_SIZE};
static_assert(gal::address_magic == WEFT_KIT_MAGIC('W', 'G', 'A', 'L') &&
                  gal::address_bytes > WEFT_KIT_ADDR_HEADER_SIZE,
              "the galapagos address starts with the kit's header");

/* ---- gal_fabric.cpp ---- */
/* gal_log(f, level, fmt, ...): one line to Weft's log through the fabric's host. */
#define gal_log(f, level, ...) weft_kit_logf((f) ? (f)->host : nullptr, level, GAL_PLUGIN_NAME, __VA_ARGS__)
/* The connection used to send to node (connecting and handshaking if there is none);
 * nullptr when the node cannot be reached. */
gal_conn *gal_conn_for(weft_fabric *f, const weft_fabric_peer *peer);
/* Reads and routes whatever the node's connections have; returns packets handled. */
int gal_node_progress(weft_fabric *f);
/* Writes queued sends of every connection as far as the sockets take them. */
void gal_node_flush(weft_fabric *f);

/* ---- gal_conn.cpp ---- */
gal_conn *gal_conn_new(int fd, uint64_t peer_node);
void gal_conn_free(gal_conn *c);
/* Sends op (a message of op->length bytes from op->buf) on c: written at once when the
 * socket takes it (returns 1: done), else queued (returns 0), or an error. */
int gal_conn_send(weft_fabric *f, gal_conn *c, gal_op *op);
/* Writes c's queued sends until the socket is full; completes those done. */
void gal_conn_flush(weft_fabric *f, gal_conn *c);
/* Reads what c has and routes it (caller holds c->read_lock); -1 when c died.  closing: the
 * socket reported an error or hang-up, so it is read to its end whatever the bounds. */
int gal_conn_read(weft_fabric *f, gal_conn *c, bool closing);
/* c is gone: fail its queued sends and the message it was delivering. */
void gal_conn_fail(weft_fabric *f, gal_conn *c, const char *why, bool holding_read_lock);
/* Asks the node's epoll set to report c writable too (while sends are queued on it). */
void gal_conn_want_write(weft_fabric *f, gal_conn *c, bool want);
/* Sets c's events in the node's epoll set from c->held and c->want_write. */
void gal_conn_update_events(weft_fabric *f, gal_conn *c);

/* ---- gal_budget.cpp (bounds on unexpected-message memory) ---- */
/* Reads WEFT_GALAPAGOS_UNEXPECTED_PER_PEER and _TOTAL; false + why when malformed. */
bool gal_budget_open(weft_fabric *f, char *why, size_t why_len);
/* u now holds `bytes` more (it was created, or its buffer grew). */
void gal_budget_charge(weft_fabric *f, gal_unexp *u, size_t bytes);
/* u is freed: its charge goes back, and held connections under their bounds resume. */
void gal_budget_release(weft_fabric *f, gal_unexp *u);
/* Before reading c: true when c is over a bound and must not be read now (it is then held
 * until receives drain it).  The message c is delivering into a posted receive keeps
 * flowing.  Caller holds c->read_lock. */
bool gal_budget_hold(weft_fabric *f, gal_conn *c);
/* A receive was attached to u while it is still arriving: its connection may read again. */
void gal_budget_attached(weft_fabric *f, gal_unexp *u);
/* Frees an unexpected message (ep->lock held, or ep private to the caller). */
void gal_unexp_free(weft_fabric *f, gal_unexp *u);

/* ---- gal_tag.cpp (matching; callers of the _locked forms hold ep->lock) ---- */
gal_op *gal_op_get(weft_fabric_ep *ep);
void gal_op_put(weft_fabric_ep *ep, gal_op *op);
void gal_done_push(weft_fabric_ep *ep, gal_op *op);
/* A message for ep begins: matches a posted receive or becomes unexpected.  Fills rx. */
void gal_deliver_begin_locked(weft_fabric_ep *ep, uint64_t tag, size_t length, gal_rx &rx);
/* More bytes of rx's message (in order); completes it when whole. */
void gal_deliver_data(gal_rx &rx, const uint8_t *data, size_t n);
/* rx's message will never finish (connection lost). */
void gal_deliver_abort(gal_rx &rx);

/* ---- gal_kernels.cpp (global kernels of a cluster file) ---- */
/* Reads WEFT_GALAPAGOS_CLUSTER when set (false + why when it is malformed); sets the address
 * to listen on when the file gives this node's. */
bool gal_cluster_open(weft_fabric *f, char *why, size_t why_len);
void gal_cluster_close(weft_fabric *f);
/* Forgets every binding to ep (it is closing). */
void gal_unbind_all(weft_fabric *f, weft_fabric_ep *ep);
/* A raw packet arrived for kernel dest: its binding (copied out), false when none. */
bool gal_binding_of(weft_fabric *f, uint8_t dest, gal_binding &out);
int gal_kernel_table(weft_fabric_t *fabric, weft_fabric_kernel_t *out, size_t max, size_t *count);
int gal_kernel_bind(weft_fabric_ep_t *ep, uint32_t kernel, uint64_t tag_base, uint32_t shift);
int gal_kernel_unbind(weft_fabric_ep_t *ep, uint32_t kernel);
int gal_kernel_send(weft_fabric_ep_t *ep, uint32_t dst_kernel, uint32_t src_kernel, const void *buf, size_t len,
                    void *context);
/* Connects to ipv4:port and proves key in the handshake; expect_node 0: any node id. */
gal_conn *gal_connect(weft_fabric *f, uint32_t ipv4, uint16_t port, const gal::key &key, uint64_t expect_node);

/* ---- gal_ep.cpp ---- */
void gal_ep_wake_locked(weft_fabric_ep *ep);

int gal_init(const weft_plugin_host_t *host, weft_fabric_t **fabric, char *why, size_t why_len);
int gal_finalize(weft_fabric_t *fabric);
int gal_query(weft_fabric_t *fabric, weft_fabric_caps_t *caps);
int gal_ep_open(weft_fabric_t *fabric, const weft_fabric_ep_attr_t *attr, weft_fabric_ep_t **ep);
int gal_ep_close(weft_fabric_ep_t *ep);
int gal_ep_address(weft_fabric_ep_t *ep, void *buf, size_t *len);
int gal_ep_connect(weft_fabric_ep_t *ep, const void *address, size_t len, weft_fabric_peer_t **peer);
int gal_ep_disconnect(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer);
int gal_tag_send(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag,
                 void *context);
int gal_tag_recv(weft_fabric_ep_t *ep, void *buf, size_t len, uint64_t tag, uint64_t ignore, void *context);
int gal_tag_probe(weft_fabric_ep_t *ep, uint64_t tag, uint64_t ignore, int *found, uint64_t *msg_tag, size_t *msg_len);
int gal_tag_cancel(weft_fabric_ep_t *ep, void *context);
int gal_ep_progress(weft_fabric_ep_t *ep);
int gal_ep_wait_fd(weft_fabric_ep_t *ep, int *fd);
int gal_ep_arm(weft_fabric_ep_t *ep);
int gal_ep_peer_failed(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer);

#endif
