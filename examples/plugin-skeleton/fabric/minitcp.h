/* minitcp: a small but complete Weft fabric plugin over plain TCP sockets, written as the
 * example to copy when writing a fabric plugin (see README.md).  Internal declarations shared
 * by its four source files:
 *
 *   minitcp_fabric.c  the exported descriptor, init/finalize/query, logging
 *   minitcp_ep.c      endpoints: open/close, addresses, connect/disconnect, progress, wait fd
 *   minitcp_send.c    the sending side: one outgoing connection per peer and its send queue
 *   minitcp_recv.c    the receiving side: accepted connections, matching, unexpected messages
 *
 * Wire protocol.  Every endpoint listens on a TCP port of its own.  A peer (ep_connect) is an
 * outgoing connection that carries only sends; accepted connections carry only receives, so
 * the order of one TCP stream is MPI's non-overtaking order for free.  A connection starts
 * with a HELLO header naming the endpoint it wants (its nonce, so a stale address that now
 * belongs to another endpoint is refused), then carries MSG frames: a header and the payload.
 * Headers are 24 bytes, big-endian: "MTCP", version, type, 2 reserved bytes, two u64 (HELLO:
 * target nonce, sender nonce; MSG: match bits, payload length).  An endpoint's address is the
 * plugin kit's header ("MTCP", version, the address family 4 as its info) and 14 bytes,
 * big-endian: port, IPv4 address, nonce.
 *
 * Boilerplate comes from the plugin kit, <weft/plugin_kit.h>: lists, logging, the address
 * header, the descriptor.  Only ABI 1.0 operations are used, and the kit builds against any
 * plugin.h 1.x, so the same source builds against the header of any Weft with plugin ABI 1.x
 * (given the kit beside it). */
#ifndef MINITCP_H
#define MINITCP_H

#include <weft/plugin_kit.h>

#include <stddef.h>
#include <stdint.h>

/* Internal functions shared between the files: the plugin exports one symbol only, even when
 * it is built without -fvisibility=hidden. */
#define MT_HIDDEN WEFT_KIT_HIDDEN

#define MT_NAME "minitcp"
#define MT_ADDR_PAYLOAD 14              /* after the kit's header: port, IPv4, nonce */
#define MT_ADDR_SIZE (WEFT_KIT_ADDR_HEADER_SIZE + MT_ADDR_PAYLOAD)
#define MT_ADDR_FAMILY_IPV4 4           /* the header's info; room for an IPv6 variant later */
#define MT_HDR_SIZE 24
#define MT_WIRE_VERSION 1
#define MT_MAX_MESSAGE (SIZE_MAX / 2)   /* a sanity bound on a frame's length field */
/* Unexpected messages are buffered up to this many bytes per endpoint; beyond it a connection
 * stops being read (TCP then holds the sender back) until a receive takes a message.  Without
 * a rendezvous protocol that can stall a program whose wanted message is queued behind the
 * paused one (the first pause logs a warning); the bound only has to be far above what
 * programs leave unreceived. */
#ifndef MT_UNEXPECTED_MAX
#define MT_UNEXPECTED_MAX ((size_t)1 << 30)
#endif
#define MT_DISCONNECT_SECONDS 5         /* ep_disconnect's bound for flushing a peer */

enum { MT_FRAME_HELLO = 'H', MT_FRAME_MSG = 'M' };

/* Its address: what ep_address writes and ep_connect accepts (see minitcp_ep.c). */
static const weft_kit_addr_format_t mt_addr_format = {
    MT_NAME, WEFT_KIT_MAGIC('M', 'T', 'C', 'P'), MT_WIRE_VERSION, MT_ADDR_PAYLOAD, MT_ADDR_PAYLOAD};

/* ------------------------------------------------------------------ objects ----------------
 * Lists are the kit's (weft_kit_list_t, circular: O(1) append and unlink, no allocation): an
 * object on one embeds a weft_kit_link_t and is found back with WEFT_KIT_CONTAINER_OF. */
typedef struct weft_fabric_ep mt_ep;
typedef struct weft_fabric_peer mt_peer;

/* What an epoll event's data.ptr points to: every watched object starts with its kind. */
enum { MT_SOCK_LISTEN = 1, MT_SOCK_PEER, MT_SOCK_CONN };

struct weft_fabric {
    const weft_plugin_host_t *host;
    uint32_t ipv4;                      /* bind address, network byte order (read-only) */
};

typedef struct mt_addr {
    uint32_t ipv4;                      /* network byte order */
    uint16_t port;                      /* host byte order */
    uint64_t nonce;                     /* tells this endpoint from a later one on the port */
} mt_addr;

/* One posted send or receive.  It is in one list at a time: its peer's send queue, the
 * posted receives, or the endpoint's completion queue. */
typedef struct mt_op {
    weft_kit_link_t link;
    void *context;
    size_t len;                         /* the user's buffer length */
    const unsigned char *sbuf;          /* send: payload */
    size_t sent;                        /* send: bytes of header + payload written */
    unsigned char hdr[MT_HDR_SIZE];     /* send: its frame header */
    unsigned char *rbuf;                /* receive: buffer */
    uint64_t tag, ignore;               /* receive: match bits and ignore mask */
    weft_fabric_completion_t result;    /* filled when it completes */
} mt_op;

/* A message that arrived before a receive for it (a malloc'd copy, maybe still arriving). */
typedef struct mt_unexp {
    weft_kit_link_t link;               /* in ep->unexpected until a receive claims it */
    uint64_t tag;
    size_t len;
    unsigned char *data;
    int complete;                       /* all of the payload is in data */
    mt_op *claimed;                     /* the receive that matched it while it arrived */
} mt_unexp;

/* An accepted connection: the receiving end of some peer's outgoing connection. */
enum { MT_CONN_HELLO, MT_CONN_HEADER, MT_CONN_PAYLOAD, MT_CONN_PAUSED };
typedef struct mt_conn {
    int kind;                           /* MT_SOCK_CONN */
    int fd;
    mt_ep *ep;
    weft_kit_link_t link;               /* ep->conns */
    int state;
    unsigned char hdr[MT_HDR_SIZE];     /* the header being read */
    size_t hdr_got;
    uint64_t tag;                       /* the frame being received (or waiting, PAUSED) */
    size_t len;
    size_t left;                        /* payload bytes still to read */
    size_t keep;                        /* of those, bytes still to store at dst */
    unsigned char *dst;
    mt_op *recv;                        /* the payload goes to this receive... */
    mt_unexp *ux;                       /* ...or into this unexpected message */
    unsigned char *stage;               /* reads land here first (many small frames, 1 call) */
    size_t stage_pos, stage_end;
} mt_conn;

/* A peer: the outgoing connection from one local endpoint to one remote endpoint. */
enum { MT_PEER_IDLE, MT_PEER_CONNECTING, MT_PEER_OPEN, MT_PEER_CLOSING, MT_PEER_FAILED };
struct weft_fabric_peer {
    int kind;                           /* MT_SOCK_PEER */
    int fd;                             /* -1 until the first send connects */
    uint32_t magic;                     /* MT_PEER_MAGIC while the handle is the user's */
    mt_ep *ep;
    weft_kit_link_t link;               /* ep->peers */
    mt_addr remote;
    int state;
    int error;                          /* FAILED: what every later send returns */
    uint32_t events;                    /* the epoll interest set now */
    weft_kit_list_t sendq;              /* posted sends, oldest first; the first may be partial */
    unsigned char hello[MT_HDR_SIZE];
    size_t hello_left;                  /* bytes of hello not yet written */
};

struct weft_fabric_ep {
    uint32_t magic;                     /* MT_EP_MAGIC while open */
    weft_fabric_t *fab;
    weft_fabric_complete_fn complete;
    int epfd;                           /* the wait fd: the listener and every socket */
    struct {
        int kind;                       /* MT_SOCK_LISTEN */
        int fd;
    } listener;
    mt_addr self;
    weft_kit_list_t peers, conns;
    weft_kit_list_t posted;             /* receives waiting for a message, in post order */
    weft_kit_list_t unexpected;         /* messages waiting for a receive, in arrival order */
    weft_kit_list_t done;               /* completed ops, delivered by the next progress */
    size_t unexpected_bytes;
    int paused;                         /* connections in MT_CONN_PAUSED */
    int pause_logged, accept_logged;    /* warn the first time only, then debug */
    int recheck;                        /* paused connections or waiting peers may go on */
};

#define MT_EP_MAGIC 0x6d746570u         /* "mtep" */
#define MT_PEER_MAGIC 0x6d747072u       /* "mtpr" */

/* ------------------------------------------------------------------ wire encoding ---------- */
static inline void mt_hdr_encode(unsigned char *h, int type, uint64_t a, uint64_t b)
{
    h[0] = 'M', h[1] = 'T', h[2] = 'C', h[3] = 'P';
    h[4] = MT_WIRE_VERSION, h[5] = (unsigned char)type, h[6] = 0, h[7] = 0;
    weft_kit_store_be64(h + 8, a);
    weft_kit_store_be64(h + 16, b);
}
/* The frame type, or -1 when the header is not ours (wrong magic or version). */
static inline int mt_hdr_decode(const unsigned char *h, uint64_t *a, uint64_t *b)
{
    if (h[0] != 'M' || h[1] != 'T' || h[2] != 'C' || h[3] != 'P' || h[4] != MT_WIRE_VERSION)
        return -1;
    *a = weft_kit_load_be64(h + 8);
    *b = weft_kit_load_be64(h + 16);
    return h[5];
}

/* ------------------------------------------------------------------ shared functions ------- */
/* mt_log(fab, level, fmt, ...): one line to Weft's log through the host init was given. */
#define mt_log(fab, level, ...) weft_kit_logf((fab)->host, level, MT_NAME, __VA_ARGS__)

/* minitcp_ep.c */
MT_HIDDEN int mt_socket_setup(int fd);
MT_HIDDEN int mt_watch(mt_ep *ep, int op, int fd, uint32_t events, void *cookie);
MT_HIDDEN void mt_unwatch_close(mt_ep *ep, int fd);
MT_HIDDEN void mt_complete(mt_ep *ep, mt_op *op, int status, uint64_t tag, size_t len);
MT_HIDDEN int mt_ep_open(weft_fabric_t *fab, const weft_fabric_ep_attr_t *attr, mt_ep **out);
MT_HIDDEN int mt_ep_close(mt_ep *ep);
MT_HIDDEN int mt_ep_address(mt_ep *ep, void *buf, size_t *len);
MT_HIDDEN int mt_ep_connect(mt_ep *ep, const void *address, size_t len, mt_peer **peer);
MT_HIDDEN int mt_ep_disconnect(mt_ep *ep, mt_peer *peer);
MT_HIDDEN int mt_ep_progress(mt_ep *ep);
MT_HIDDEN int mt_ep_wait_fd(mt_ep *ep, int *fd);
MT_HIDDEN int mt_ep_arm(mt_ep *ep);

/* minitcp_send.c */
MT_HIDDEN mt_peer *mt_peer_new(mt_ep *ep, const mt_addr *remote);
MT_HIDDEN void mt_peer_event(mt_peer *p, uint32_t events);
MT_HIDDEN void mt_peer_kick(mt_ep *ep);
MT_HIDDEN void mt_peer_retire(mt_peer *p);
MT_HIDDEN void mt_peer_destroy(mt_peer *p, int status);
MT_HIDDEN int mt_tag_send(mt_ep *ep, mt_peer *peer, const void *buf, size_t len, uint64_t tag,
                          void *context);

/* minitcp_recv.c */
MT_HIDDEN void mt_conn_accept(mt_ep *ep);
MT_HIDDEN void mt_conn_event(mt_conn *c, uint32_t events);
MT_HIDDEN void mt_conn_resume(mt_ep *ep);
MT_HIDDEN void mt_recv_close_all(mt_ep *ep);
MT_HIDDEN int mt_tag_recv(mt_ep *ep, void *buf, size_t len, uint64_t tag, uint64_t ignore,
                          void *context);
MT_HIDDEN int mt_tag_probe(mt_ep *ep, uint64_t tag, uint64_t ignore, int *found,
                           uint64_t *msg_tag, size_t *msg_len);
MT_HIDDEN int mt_cancel(mt_ep *ep, void *context);

static inline int mt_ep_valid(const mt_ep *ep) { return ep && ep->magic == MT_EP_MAGIC; }

#endif
