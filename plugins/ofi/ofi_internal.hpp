/* Internal structures of the libfabric (OFI) fabric plugin.  Only api/weft/plugin.h (with the
 * plugin kit, api/weft/plugin_kit.h) and libfabric are visible. */
#ifndef WEFT_OFI_INTERNAL_HPP
#define WEFT_OFI_INTERNAL_HPP

#include <weft/plugin_kit.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <cstddef>
#include <cstdint>
#include <mutex>

enum ofi_op_kind : uint8_t { OFI_OP_SEND = 1, OFI_OP_RECV = 2, OFI_OP_PEEK = 3 };

/* Per-operation state.  fictx comes first: it is the op_context libfabric hands back, and
 * providers that ask for FI_CONTEXT/FI_CONTEXT2 use it as scratch.  Ops come from a
 * per-endpoint free list, so posting allocates nothing. */
struct ofi_op {
    struct fi_context2 fictx;
    weft_kit_link_t link;   /* pending list (posted), done or backlog queue, or free chain */
    void *context;          /* the core's context, given back in complete() */
    weft_fabric_peer *peer; /* sends: the connection, for its pending-send count */
    const void *buf;        /* backlogged sends: what to post */
    uint64_t tag;
    size_t length;
    int status; /* WEFT_PLUGIN_* once libfabric reported the completion */
    ofi_op_kind kind;
    uint8_t pending;  /* on ep->pending: posted, not yet completed by libfabric */
    uint8_t orphan;   /* ofi_orphan: completed by ep_peer_failed, libfabric holds it */
    size_t iov_count; /* gathered sends (tag_sendv): buf is an iovec list of this many; else 0 */
};

inline ofi_op *ofi_op_of(weft_kit_link_t *link) { return WEFT_KIT_CONTAINER_OF(link, ofi_op, link); }

/* A send ep_peer_failed completed itself while libfabric still holds its op (1.17's shm and
 * rxm cancel receives only).  The op leaves the free list until libfabric's own entry for it
 * arrives, which is then swallowed: QUEUED, the completion waits on the done list; HELD, it
 * was delivered.  ep_close's fi_close ends libfabric's hold on whatever is left. */
enum ofi_orphan : uint8_t { OFI_ORPHAN_NONE = 0, OFI_ORPHAN_QUEUED = 1, OFI_ORPHAN_HELD = 2 };

/* Ops are allocated in chunks, only when the free list runs dry (never per message). */
constexpr size_t OFI_OP_CHUNK = 256;
struct ofi_op_chunk {
    ofi_op_chunk *next;
    ofi_op ops[OFI_OP_CHUNK];
};

struct weft_fabric {
    const weft_plugin_host_t *host;
    struct fi_info *info; /* the provider chosen at init; endpoints open from it */
    struct fid_fabric *fabric;
    uint32_t flags;     /* WEFT_FABRIC_CAP_* */
    size_t inject_size; /* fi_tinject limit (0: never inject) */
    size_t eager_size;
    size_t address_size; /* bound of ep_address, measured at init */
    size_t iov_limit;    /* fi_tsendv/fi_trecvv entries the provider takes (tx and rx) */
    char provider[64];   /* fabric_attr->prov_name, for messages */
    std::mutex lock;     /* the endpoint list: endpoints open/close from any thread */
    weft_kit_list_t eps; /* open endpoints (weft_fabric_ep::link) */
};

struct weft_fabric_peer {
    fi_addr_t addr;       /* index in the owning endpoint's AV */
    size_t pending_sends; /* fi_tsend operations not completed yet */
    int closed;           /* disconnected, kept (on ep->zombies) until pending_sends is 0 */
    int failed;           /* ep_peer_failed: the process is dead, sends fail at once */
    weft_kit_link_t link; /* on its endpoint's peers or zombies */
};

inline weft_fabric_peer *ofi_peer_of(weft_kit_link_t *link) {
    return WEFT_KIT_CONTAINER_OF(link, weft_fabric_peer, link);
}

struct weft_fabric_ep {
    weft_fabric *fabric;
    /* A domain per endpoint, opened FI_THREAD_DOMAIN: the core uses one endpoint from one
     * thread at a time, and nothing else shares these objects, so the provider may skip
     * its locks.  One domain shared by endpoints on different threads would not be
     * FI_THREAD_DOMAIN-safe. */
    struct fid_domain *domain;
    struct fid_ep *ep;
    struct fid_cq *cq;
    struct fid_av *av;
    int wait_fd; /* CQ wait object (FI_WAIT_FD), -1 when none */
    weft_fabric_complete_fn complete;
    /* lock.serial: the core promises one thread at a time, and no lock is taken.  Shared
     * endpoints only: every libfabric call runs under lock. */
    weft_kit_ep_lock_t lock;
    weft_kit_link_t *free_ops; /* free ops, a chain through ofi_op::link.next */
    ofi_op_chunk *chunks;
    weft_kit_list_t pending; /* posted sends and receives (cancel, close find them here) */
    /* Completions read from the CQ but not delivered yet: reads made outside ep_progress
     * (probe, a retried post, the shared path) park them here. */
    weft_kit_queue_t done;
    /* Sends libfabric refused with FI_EAGAIN, posted in order by ep_progress.  rxm and shm
     * both refuse sends until the peer endpoint has answered the first contact, and that
     * needs the peer to progress: the sender must not have to wait for it. */
    weft_kit_queue_t backlog;
    ofi_op peek;             /* tag_probe's FI_PEEK operation */
    int peek_busy;           /* the FI_PEEK answer has not arrived yet */
    weft_kit_list_t peers;   /* connections still open, freed by ep_close */
    weft_kit_list_t zombies; /* disconnected with sends still pending */
    weft_kit_link_t link;    /* on the fabric's eps */
};

constexpr const char *OFI_PLUGIN_NAME = "ofi";

/* The address we hand out is the kit's header ("WOFI", version 1, info: the provider's
 * addr_format, FI_ADDR_STR, FI_SOCKADDR_IN, ...) followed by fi_getname's bytes, so that
 * ep_connect rejects junk, or an address of another fabric or provider format, instead of
 * passing it to fi_av_insert.  ofi_ep_address reads names of up to 1024 bytes. */
constexpr weft_kit_addr_format_t ofi_address_format = {OFI_PLUGIN_NAME, WEFT_KIT_MAGIC('W', 'O', 'F', 'I'), 1, 1, 1024};

int ofi_errno_to_plugin(int fi_err); /* takes a positive or negative FI_E* value */
/* ofi_log(fabric, level, fmt, ...): one line to Weft's log through the fabric's host. */
#define ofi_log(fabric, level, ...) \
    weft_kit_logf((fabric) ? (fabric)->host : nullptr, level, OFI_PLUGIN_NAME, __VA_ARGS__)

/* ---- op lists (callers hold the guard) ---- */
int ofi_op_grow(weft_fabric_ep *ep);

inline ofi_op *ofi_op_get(weft_fabric_ep *ep) {
    if (__builtin_expect(!ep->free_ops, 0) && ofi_op_grow(ep) != WEFT_PLUGIN_OK) return nullptr;
    weft_kit_link_t *first = ep->free_ops;
    ep->free_ops = first->next;
    return ofi_op_of(first);
}

inline void ofi_op_put(weft_fabric_ep *ep, ofi_op *op) {
    op->link.next = ep->free_ops;
    ep->free_ops = &op->link;
}

inline void ofi_pending_add(weft_fabric_ep *ep, ofi_op *op) {
    weft_kit_list_push_front(&ep->pending, &op->link);
    op->pending = 1;
}

inline void ofi_pending_remove(ofi_op *op) {
    if (!op->pending) return;
    weft_kit_list_unlink(&op->link);
    op->pending = 0;
}

inline void ofi_done_push(weft_fabric_ep *ep, ofi_op *op) { weft_kit_queue_push(&ep->done, &op->link); }

/* Reads the CQ until it is empty (or max entries), moving every finished op onto the done
 * list.  Returns the number of entries read, or a WEFT_PLUGIN_ERR_* code.  Guard held. */
int ofi_cq_drain(weft_fabric_ep *ep, int max);
/* Records how libfabric finished op and queues it for delivery.  Guard held. */
void ofi_finish(weft_fabric_ep *ep, ofi_op *op, int status, uint64_t tag, size_t length);
/* Posts backlogged sends until libfabric refuses one.  Guard held. */
void ofi_backlog_flush(weft_fabric_ep *ep);

/* Operations, one file per group. */
int ofi_fabric_init(const weft_plugin_host_t *host, weft_fabric_t **fabric, char *why, size_t why_len);
int ofi_fabric_finalize(weft_fabric_t *fabric);
int ofi_fabric_query(weft_fabric_t *fabric, weft_fabric_caps_t *caps);

/* Opens the libfabric objects of one endpoint (also used by init's trial endpoint). */
int ofi_ep_resources_open(weft_fabric *fabric, weft_fabric_ep *ep, bool want_wait_fd, const char **what);
void ofi_ep_resources_close(weft_fabric_ep *ep);
int ofi_ep_open(weft_fabric_t *fabric, const weft_fabric_ep_attr_t *attr, weft_fabric_ep_t **ep);
int ofi_ep_close(weft_fabric_ep_t *ep);
int ofi_ep_address(weft_fabric_ep_t *ep, void *buf, size_t *len);
int ofi_ep_connect(weft_fabric_ep_t *ep, const void *address, size_t len, weft_fabric_peer_t **peer);
int ofi_ep_disconnect(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer);
int ofi_ep_progress(weft_fabric_ep_t *ep);
int ofi_ep_wait_fd(weft_fabric_ep_t *ep, int *fd);
int ofi_ep_arm(weft_fabric_ep_t *ep);
int ofi_ep_peer_failed(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer);

int ofi_tag_send_now(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag);
int ofi_tag_send(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag,
                 void *context);
int ofi_tag_recv(weft_fabric_ep_t *ep, void *buf, size_t len, uint64_t tag, uint64_t ignore, void *context);
int ofi_tag_sendv(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const weft_fabric_iov_t *iov, size_t count,
                  uint64_t tag, void *context);
int ofi_tag_recvv(weft_fabric_ep_t *ep, const weft_fabric_iov_t *iov, size_t count, uint64_t tag, uint64_t ignore,
                  void *context);
int ofi_tag_probe(weft_fabric_ep_t *ep, uint64_t tag, uint64_t ignore, int *found, uint64_t *msg_tag, size_t *msg_len);
int ofi_tag_cancel(weft_fabric_ep_t *ep, void *context);

#endif
