/* Weft plugin ABI (C).  A plugin is a shared object that exports one symbol,
 *
 *     const weft_plugin_v1_t weft_plugin_v1 = { WEFT_PLUGIN_ABI_MAJOR, WEFT_PLUGIN_ABI_MINOR, ... };
 *
 * named libweft-<name>.so for a fabric and libweft-queue-<name>.so for a GPU queue runtime.
 * Plugins include only this header and their vendor library; they never link libweft.  No C++
 * types, exceptions or STL cross this boundary: an exception must not leave an operation.
 * Structs passed by the core begin with struct_size so that fields can be appended later.
 * A how-to with a running example is docs/plugins.md; the projects under
 * examples/plugin-skeleton/ build against an installed Weft (CMake weft::plugin_api, or
 * pkg-config weft-plugin), and `weft-conformance --fabric|--queue NAME|PATH` checks a plugin
 * against the contract written here.
 *
 * Common conventions
 *   - Every operation returns WEFT_PLUGIN_OK (0) or a negative WEFT_PLUGIN_ERR_*; it never
 *     aborts the process, whatever it was passed (NULL handles give ERR_INVALID).
 *   - Buffers passed to an operation stay the caller's.  A send or receive buffer (and its
 *     context) must stay valid until its completion was delivered; any other buffer only for
 *     the duration of the call.  Strings the plugin returns (name, version, types) are static.
 *   - Where an operation takes why/why_len, a failure writes one line into it: what is missing
 *     and which variable or package the user must change (weft_plugin_whyf below).
 *
 * Version policy
 *   abi_minor grows when operations are appended to an ops table, fields to a struct, or
 *   capability bits and error codes are added: a plugin built for an older minor keeps
 *   working.  The core knows each minor's table size and copies only that much of a
 *   plugin's table (the missing trailing operations count as NULL, i.e. unsupported), never
 *   reads a struct beyond its struct_size, and never passes a newer code to an older plugin
 *   in a place it could not expect.  Anything else (a changed signature, meaning or order)
 *   bumps abi_major, and the loader refuses a plugin whose abi_major differs from its own.
 *   A plugin built for a newer minor than the core's loads too: the core uses the part of its
 *   table it knows.  ABI history: 1.0 fabrics; 1.1 global kernels (kernel_*); 1.2 queue
 *   plugins and WEFT_PLUGIN_ERR_NO_DEVICE; 1.3 queue_create / queue_destroy; 1.4
 *   ep_peer_failed and stats; 1.5 tag_send_now; 1.6 weft_fabric_ep_attr_t.context_space; 1.7
 *   weft_fabric_caps_t.context_space (the fabric asks for its context space); 1.8 tag_sendv,
 *   tag_recvv and weft_fabric_caps_t.iov_limit (messages gathered from / scattered to a list
 *   of buffers: non-contiguous datatypes without packing); 1.9 tag_send_sync (synchronous
 *   sends by the fabric, so that receives need not ignore a sync bit). */
#ifndef WEFT_PLUGIN_H
#define WEFT_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_PLUGIN_ABI_MAJOR 1
#define WEFT_PLUGIN_ABI_MINOR 9

/* Return codes of plugin operations.  Negative: failure; the core maps them to WEFT_ERR_*. */
enum {
    WEFT_PLUGIN_OK = 0,
    WEFT_PLUGIN_ERR_AGAIN = -1, /* resources busy: progress and retry */
    WEFT_PLUGIN_ERR_NOMEM = -2,
    WEFT_PLUGIN_ERR_TRUNCATE = -3,    /* completion status: message longer than the buffer */
    WEFT_PLUGIN_ERR_CANCELED = -4,    /* completion status: operation canceled */
    WEFT_PLUGIN_ERR_UNREACHABLE = -5, /* peer address invalid or peer gone */
    WEFT_PLUGIN_ERR_UNSUPPORTED = -6,
    WEFT_PLUGIN_ERR_INVALID = -7,     /* bad argument */
    WEFT_PLUGIN_ERR_NOT_FOUND = -8,   /* cancel: no such pending operation */
    WEFT_PLUGIN_ERR_PEER_FAILED = -9, /* completion status: the peer process failed */
    WEFT_PLUGIN_ERR_OTHER = -10,
    WEFT_PLUGIN_ERR_NO_DEVICE = -11 /* (ABI minor 2) queue plugins: no driver or no device */
};

typedef enum weft_plugin_kind { WEFT_PLUGIN_KIND_FABRIC = 1, WEFT_PLUGIN_KIND_QUEUE = 2 } weft_plugin_kind_t;

enum { WEFT_LOG_ERROR = 0, WEFT_LOG_WARN = 1, WEFT_LOG_INFO = 2, WEFT_LOG_DEBUG = 3 };

/* Services the core offers to a plugin at init.  Valid until the plugin is finalized; any
 * thread may call them at any time. */
typedef struct weft_plugin_host {
    uint32_t struct_size;
    /* Writes one line to Weft's log (WEFT_LOG=error|warn|info|debug); message is copied. */
    void (*log)(int level, const char *plugin_name, const char *message);
    /* Value of a hint given at init (info key, e.g. "weft_ucx_tls"), NULL when unset. */
    const char *(*hint)(void *hint_ctx, const char *key);
    void *hint_ctx;
} weft_plugin_host_t;

/* Header-only helpers, so that no plugin needs its own printf wrapper.  weft_plugin_logf:
 * formats one line and passes it to host->log (nothing when host or its log is missing). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static inline void
weft_plugin_logf(const weft_plugin_host_t *host, int level, const char *plugin_name, const char *fmt, ...) {
    char line[512];
    va_list ap;
    if (!host || host->struct_size < offsetof(weft_plugin_host_t, log) + sizeof(host->log) || !host->log) return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    host->log(level, plugin_name, line);
}

/* Formats a failure reason into why[why_len] (when why is not NULL) and returns rc, so that
 * `return weft_plugin_whyf(why, why_len, WEFT_PLUGIN_ERR_OTHER, "...", ...);` ends a call. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static inline int
weft_plugin_whyf(char *why, size_t why_len, int rc, const char *fmt, ...) {
    va_list ap;
    if (why && why_len) {
        va_start(ap, fmt);
        vsnprintf(why, why_len, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* ======================================================================== fabric plugins ==
 * Object model: fabric (from init; one open at a time) -> endpoint (one per Weft VCI, with
 * its own completion path) -> peer (a connection from one local endpoint to one remote
 * endpoint: another process's, another of this process's, or itself).
 * All messages are tagged with 64-bit match bits; a receive matches a message when
 * (msg_tag & ~ignore) == (tag & ~ignore).  Messages from one peer endpoint that match one
 * receive must match in the order they were sent (MPI's non-overtaking rule).
 *
 * Threads: init, finalize, query, ep_open and ep_close are called by one thread at a time.
 * Everything that takes an endpoint is serialized by the core per endpoint when the
 * endpoint was opened with attr->serial (always, today): no two threads are inside
 * operations on one endpoint at once, but successive calls may come from different threads
 * (a stream handed from thread to thread), so keep no thread-local state.  Different
 * endpoints are used by different threads concurrently, so state shared between endpoints
 * (the fabric, a node's connections) needs the plugin's own synchronization.
 *
 * Blocking: no operation may wait for a remote peer to act, except ep_disconnect (bounded in
 * time) and ep_close.  Where resources run out, return WEFT_PLUGIN_ERR_AGAIN; the core
 * progresses the endpoint and retries.
 *
 * Completions: every send and receive that was posted (returned OK) completes exactly once
 * through the endpoint's complete callback, from ep_progress, from the posting call itself,
 * or from ep_disconnect / ep_close, on the calling thread.  The core's callback only records
 * the result (it never calls back into the plugin), so it may run under the plugin's locks;
 * after it returns the context and buffer are the core's again.  A failure of the peer
 * completes its pending operations with WEFT_PLUGIN_ERR_PEER_FAILED or ERR_UNREACHABLE.  A
 * later tag_send to it either returns that code at once, with no completion to follow, or is
 * posted and completes with it: the core and the kit accept both (the user gets
 * WEFT_ERR_PROC_FAILED from the send call in the first case, from its wait in the second).
 * Prefer the first; every in-tree plugin does so after ep_peer_failed. */

typedef struct weft_fabric weft_fabric_t;       /* opaque, plugin-defined */
typedef struct weft_fabric_ep weft_fabric_ep_t; /* opaque, plugin-defined */
typedef struct weft_fabric_peer weft_fabric_peer_t;

/* Capability flags. */
#define WEFT_FABRIC_CAP_RMA (1u << 0)           /* put/get on registered memory */
#define WEFT_FABRIC_CAP_DEVICE_MEMORY (1u << 1) /* send/recv from GPU memory */
#define WEFT_FABRIC_CAP_THREAD_SAFE (1u << 2)   /* endpoint ops may run concurrently */
#define WEFT_FABRIC_CAP_ACTIVE_MESSAGES (1u << 3)
#define WEFT_FABRIC_CAP_WAIT_FD (1u << 4) /* ep_wait_fd/ep_arm supported */

typedef struct weft_fabric_caps {
    uint32_t struct_size;
    uint32_t flags; /* WEFT_FABRIC_CAP_* */
    /* Largest tagged message.  The core bounds PGAS active messages by it (weft_am_max_long;
     * 0: 4 GiB - 1) but passes any point-to-point size to tag_send, which refuses a longer
     * message (ERR_INVALID: WEFT_ERR_ARG for the user).  The kit sends 64 MiB. */
    size_t max_message_size;
    /* Informational (weft-info prints them; the core does not use them): sends up to
     * inject_size complete locally at once; above eager_size the fabric uses a rendezvous
     * protocol (the kit sizes a send that cannot finish without its receiver by it). */
    size_t inject_size;
    size_t eager_size;
    /* Upper bound of ep_address's length: the core's buffer for it (4096 when 0). */
    size_t max_address_size;
    /* ABI minor 7: bytes of context space (weft_fabric_ep_attr_t::context_space) the fabric
     * wants at the start of every operation context, 0 for none.  The core lays its requests
     * out around it (the query at init decides, for every endpoint): ep_open's
     * attr->context_space is then at least this much, or at least
     * WEFT_FABRIC_CONTEXT_SPACE_MAX when more was asked (the fabric keeps the rest of its
     * state elsewhere).  Write it only when struct_size covers it: an older core passes a
     * shorter struct, and gives what it gives regardless (336 bytes from a 1.6 core, none
     * from an older one). */
    size_t context_space;
    /* ABI minor 8: the most buffers one tag_sendv or tag_recvv takes (0: the fabric has
     * neither, or states no limit when it has them).  Write it only when struct_size covers
     * it.  The core passes at most this many and packs a message of more pieces. */
    size_t iov_limit;
} weft_fabric_caps_t;

/* The size of weft_fabric_caps_t before ABI minor 7. */
#define WEFT_FABRIC_CAPS_SIZE_V1_6 offsetof(weft_fabric_caps_t, context_space)
/* The size of weft_fabric_caps_t before ABI minor 8. */
#define WEFT_FABRIC_CAPS_SIZE_V1_7 offsetof(weft_fabric_caps_t, iov_limit)

/* The most context space a fabric can count on, whatever caps.context_space asks. */
#define WEFT_FABRIC_CONTEXT_SPACE_MAX 512

/* One buffer of a gathered send or scattered receive (ABI minor 8).  Laid out as POSIX's
 * struct iovec, libfabric's iovec and UCX's ucp_dt_iov_t, so a plugin may pass the list on. */
typedef struct weft_fabric_iov {
    void *base;
    size_t len;
} weft_fabric_iov_t;

/* How an operation ended, passed to the endpoint's completion callback. */
typedef struct weft_fabric_completion {
    int status;    /* WEFT_PLUGIN_OK or a WEFT_PLUGIN_ERR_* value */
    uint64_t tag;  /* receives: the sender's match bits */
    size_t length; /* receives: bytes delivered (the sent length when truncated) */
} weft_fabric_completion_t;

/* Counters of input a fabric dropped (ABI minor 4; see stats below). */
typedef struct weft_fabric_stats {
    uint32_t struct_size;
    uint64_t dropped_packets;     /* malformed, oversized or truncated frames or packets */
    uint64_t refused_connections; /* connections without the job's token or a valid handshake */
} weft_fabric_stats_t;

/* A global kernel of a cluster description (ABI minor 1; a Galapagos cluster file): kernels
 * have ids fixed by the description, and live in a software process (a Weft rank) or in
 * hardware (an FPGA node that takes no part in Weft's bootstrap). */
typedef struct weft_fabric_kernel {
    uint32_t id;
    int32_t world_rank; /* the process hosting it, or -1 for a hardware kernel */
} weft_fabric_kernel_t;

/* Called by the plugin exactly once for every successfully posted send and receive, from
 * within ep_progress or from within the posting call itself (an operation that completes
 * at once), on the thread that called it.  context is the value given when posting. */
typedef void (*weft_fabric_complete_fn)(void *context, const weft_fabric_completion_t *c);

typedef struct weft_fabric_ep_attr {
    uint32_t struct_size;
    /* Non-zero: the core guarantees that no two threads use this endpoint at once, so the
     * plugin may open its resources in single-threaded mode (UCS_THREAD_MODE_SINGLE, ...). */
    int serial;
    weft_fabric_complete_fn complete;
    /* ABI minor 6 (absent, so 0, when struct_size is WEFT_FABRIC_EP_ATTR_SIZE_V1_0): every
     * context the core passes to tag_send and tag_recv on this endpoint points to this many
     * bytes, 64-byte aligned, that belong to the fabric from the posting call until the
     * operation's completion has been delivered (complete() was called for it).  A fabric
     * may keep its per-operation state there instead of allocating it (libfabric's
     * FI_CONTEXT2 does the same with 32 bytes).  The bytes are not initialized, and the core
     * may reuse them as soon as complete() returns.
     * How much: since ABI minor 7, at least what the fabric asked in caps.context_space, up
     * to WEFT_FABRIC_CONTEXT_SPACE_MAX (the core rounds up, so it may be a little more).  A
     * plugin built for minor 6, which cannot ask, gets 336 bytes, what 1.6 cores gave every
     * plugin; one built for an older minor gets none (it cannot read the field).  Use the
     * amount given here, not the one asked: an older core gives 336 bytes or none. */
    size_t context_space;
} weft_fabric_ep_attr_t;

/* The size of weft_fabric_ep_attr_t before ABI minor 6: plugins accept any struct_size from
 * this one up, and read context_space only when struct_size covers it. */
#define WEFT_FABRIC_EP_ATTR_SIZE_V1_0 offsetof(weft_fabric_ep_attr_t, context_space)

typedef struct weft_fabric_ops_v1 {
    /* Open the fabric (at weft_init; host stays valid until finalize).  Never called while a
     * fabric of this plugin is open, but it may be called again in the same process after
     * finalize or after a failed init: weft-info opens each fabric twice, a failed weft_init
     * may be retried, and the conformance kit opens one per test.  On failure return a
     * WEFT_PLUGIN_ERR_* code and write a one-line reason (what is missing, which variable to
     * set) into why[why_len]: the loader then tries the next plugin, or, when the user asked
     * for this one, fails weft_init with that reason.  WEFT_PLUGIN_ERR_INVALID means a setting
     * meant for this plugin (its variable or hint) is wrong: weft_init then fails with the
     * reason even when no plugin was asked for, instead of running on another fabric. */
    int (*init)(const weft_plugin_host_t *host, weft_fabric_t **fabric, char *why, size_t why_len);
    /* After every endpoint was closed. */
    int (*finalize)(weft_fabric_t *fabric);
    /* Fills caps (the core sets caps->struct_size; write no field beyond it). */
    int (*query)(weft_fabric_t *fabric, weft_fabric_caps_t *caps);

    /* An endpoint with its own completion path; attr is only read during the call. */
    int (*ep_open)(weft_fabric_t *fabric, const weft_fabric_ep_attr_t *attr, weft_fabric_ep_t **ep);
    /* Releases the endpoint; peers not yet disconnected are closed forcibly, without a flush.
     * Every operation still pending completes before it returns, exactly once: receives with
     * WEFT_PLUGIN_ERR_CANCELED, unfinished sends with an error status (in-tree: CANCELED,
     * or PEER_FAILED where the connection had broken).  The core reads no status here: it
     * closes endpoints only at weft_finalize or a failed weft_init, when no user waits on
     * them.  After ep_close the fabric touches no buffer or context. */
    int (*ep_close)(weft_fabric_ep_t *ep);
    /* Writes the endpoint's address into buf; *len: in buf's size, out the address length.
     * buf NULL or too small: an error (WEFT_PLUGIN_ERR_INVALID, as queue_create; ERR_NOMEM is
     * accepted too), nothing written, *len set to the length needed.  The core gives
     * caps.max_address_size bytes.  The core publishes these bytes to the other processes
     * (bootstrap key-value space); they must be enough for ep_connect in another process,
     * even on another node. */
    int (*ep_address)(weft_fabric_ep_t *ep, void *buf, size_t *len);
    /* A connection from ep to the endpoint at address: another process's, another endpoint
     * of this process, or ep's own address (required: a send to one's own rank goes through
     * the fabric like any other).  Must not wait for the remote side: connect lazily when
     * needed.  The core connects each of its endpoints at most once to each remote endpoint
     * and keeps the peer until weft_finalize; ep_connect to an address already connected
     * comes only after ep_disconnect of the first peer, and must then work. */
    int (*ep_connect)(weft_fabric_ep_t *ep, const void *address, size_t len, weft_fabric_peer_t **peer);
    /* Flushes what was sent to peer and closes the connection.  May progress the endpoint
     * (and so run completion callbacks); returns within a bounded time even if the peer is
     * gone.  When the flush does not finish in that time, the connection is closed anyway;
     * each send that did not finish completes exactly once, either then with an error status
     * (CANCELED or PEER_FAILED: UCX, Galapagos, the skeleton) or later, when it finishes or
     * at ep_close (OFI).  The return value may report the failed flush (PEER_FAILED: UCX,
     * Galapagos).  The core disconnects only at weft_finalize and ignores the result. */
    int (*ep_disconnect)(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer);

    /* Post a send/receive.  Returns WEFT_PLUGIN_OK once posted (completion follows through
     * the callback, possibly before this call returns), WEFT_PLUGIN_ERR_AGAIN when the caller
     * should progress and retry, or another error (no callback follows). */
    int (*tag_send)(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag,
                    void *context);
    int (*tag_recv)(weft_fabric_ep_t *ep, void *buf, size_t len, uint64_t tag, uint64_t ignore, void *context);
    /* Non-destructive probe for an unexpected message: *found = 1 and its match bits and
     * length when one is there. */
    int (*tag_probe)(weft_fabric_ep_t *ep, uint64_t tag, uint64_t ignore, int *found, uint64_t *msg_tag,
                     size_t *msg_len);
    /* Cancel a posted receive.  On success its completion arrives later with status
     * WEFT_PLUGIN_ERR_CANCELED (or OK if it matched first). */
    int (*cancel)(weft_fabric_ep_t *ep, void *context);
    /* Make progress; returns the number of completions delivered (>= 0) or an error.  Called
     * in a loop by waiting threads: when there is nothing to do it must return quickly, and
     * it never blocks. */
    int (*ep_progress)(weft_fabric_ep_t *ep);

    /* Optional (WEFT_FABRIC_CAP_WAIT_FD), NULL otherwise: a file descriptor that becomes
     * readable when ep_arm returned OK and new work arrived; ep_arm returns
     * WEFT_PLUGIN_ERR_AGAIN when there is work to progress now. */
    int (*ep_wait_fd)(weft_fabric_ep_t *ep, int *fd);
    int (*ep_arm)(weft_fabric_ep_t *ep);

    /* ---- ABI minor 1: global kernels (optional: NULL, or kernel_table reporting 0) ----
     * Fabrics that route packets between globally numbered kernels (Galapagos) let the core
     * address hardware kernels, which have no Weft endpoint and no match bits.
     *
     * kernel_table: the kernels of the fabric's cluster description; writes up to max entries
     * (in id order) and the total into *count, 0 when there is no description. */
    int (*kernel_table)(weft_fabric_t *fabric, weft_fabric_kernel_t *out, size_t max, size_t *count);
    /* Packets for `kernel` (one of this process's, per kernel_table) are delivered on ep from
     * now on as received tagged messages, the packet's bytes as the message and match bits
     * tag_base | (uint64_t)source_kernel << source_shift.  kernel_unbind stops that. */
    int (*kernel_bind)(weft_fabric_ep_t *ep, uint32_t kernel, uint64_t tag_base, uint32_t source_shift);
    int (*kernel_unbind)(weft_fabric_ep_t *ep, uint32_t kernel);
    /* Sends one packet of len bytes (a multiple of 8, at most 8992) from src_kernel (bound on
     * ep) to dst_kernel.  Posting and completion as tag_send. */
    int (*kernel_send)(weft_fabric_ep_t *ep, uint32_t dst_kernel, uint32_t src_kernel, const void *buf, size_t len,
                       void *context);

    /* ---- ABI minor 4: peer failure (optional, NULL otherwise) ----
     * The core learned, from outside the fabric (its liveness monitor), that the process
     * behind peer has died.  Complete every send to peer still in flight with
     * WEFT_PLUGIN_ERR_PEER_FAILED before returning or from the next ep_progress, without
     * waiting for anything from the peer (no flush), and fail later sends to it with
     * PEER_FAILED (at once, preferred, or through their completion; see Completions above).
     * Receives are not affected (the core cancels those it posted for the peer).  The peer
     * object stays valid until ep_disconnect or ep_close, which must then be quick.  May be
     * called more than once for one peer.  Without this operation a send to a dead peer
     * completes only when the fabric notices the death itself (TCP does; shared memory may
     * never). */
    int (*ep_peer_failed)(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer);

    /* ---- ABI minor 4: counters of hostile input (optional, NULL otherwise) ----
     * What the fabric dropped or refused since init, for weft_get_stats.  The core zeroes
     * *stats and sets struct_size; write no field beyond it.  Any thread, any time: keep
     * the counters in atomics. */
    int (*stats)(weft_fabric_t *fabric, weft_fabric_stats_t *stats);

    /* ---- ABI minor 5: send completed at once (optional, NULL otherwise) ----
     * Sends like tag_send only if the fabric can finish the send before returning (buf may be
     * reused at once): returns WEFT_PLUGIN_OK when sent, with no completion to follow, and
     * WEFT_PLUGIN_ERR_AGAIN when it cannot finish now, having sent nothing (the caller then
     * uses tag_send), so that it never overtakes a send queued before it.  Blocking sends and
     * weft_isend of small messages use it to skip the request and its completion. */
    int (*tag_send_now)(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag);

    /* ---- ABI minor 8: gathered sends and scattered receives (optional, NULL otherwise) ----
     * As tag_send and tag_recv, for the message made of iov[0..count) in order: its length is
     * the sum of the lengths; a receive fills the buffers in order (the completion's length
     * is the bytes delivered; longer than all of them: WEFT_PLUGIN_ERR_TRUNCATE).  count is
     * 1 .. caps.iov_limit (when not 0), no buffer has length 0.  The array itself, like the
     * buffers, stays valid until the completion was delivered (UCX reads it while sending).
     * The message matches receives posted with tag_recv and tag_recvv alike: the wire does
     * not show how it was gathered. */
    int (*tag_sendv)(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const weft_fabric_iov_t *iov, size_t count,
                     uint64_t tag, void *context);
    int (*tag_recvv)(weft_fabric_ep_t *ep, const weft_fabric_iov_t *iov, size_t count, uint64_t tag, uint64_t ignore,
                     void *context);

    /* ---- ABI minor 9: synchronous send (optional, NULL otherwise) ----
     * As tag_send, but the completion comes only once a receive at the peer has matched the
     * message (MPI_Ssend; UCX's ucp_tag_send_sync_nbx), or with an error when the peer failed.
     * The message matches receives exactly as tag_send's would.  With it, the core sends its
     * synchronous messages here on the plain context and posts receives that ignore no sync
     * bit (a fabric whose matching is faster for exact tags, like UCX's hashed expected queue,
     * then matches them so); without it, the core runs its own acknowledgement protocol. */
    int (*tag_send_sync)(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len, uint64_t tag,
                         void *context);
} weft_fabric_ops_v1_t;

/* ========================================================================= queue plugins ==
 * (ABI minor 2.)  A queue plugin drives one GPU runtime's serial execution queues (CUDA
 * streams, HIP streams, Level Zero command lists) for the enqueue API: the core appends
 * "tell the host this point was reached" and "wait until the host releases this point" to a
 * queue, and async copies between host and device memory; a core progress thread polls
 * `reached` and calls `release`.
 *
 * Points are numbered by the core with 32-bit serial numbers that start at 1 and increase
 * per appended signal or wait on a queue (signals and waits share the sequence; the core
 * steps by one, a plugin must accept steps below 2^30); 0 is never a point (1 follows
 * 0xFFFFFFFF), and a freshly attached queue has reached nothing and released nothing (0).
 * Compare points as (int32_t)(a - b) >= 0, never with >=, since they wrap.  Appends to one
 * queue come from one thread at a time and may block (a full launch queue); reached and
 * release may run on another thread at the same time, must never block, and the plugin makes
 * that safe.  A release may come before the append_wait it covers (the core registers an
 * operation before appending its points): that wait must then not stop the queue.  An append
 * that answers WEFT_PLUGIN_ERR_AGAIN is retried after reached() was called again (the plugin
 * may reclaim resources there).  A wait on one queue should not hold up another queue; where
 * the runtime cannot promise that (CUDA host functions), say so in the plugin's docs.
 * NULL handles give WEFT_PLUGIN_ERR_INVALID, except reached(NULL), which returns 0. */

typedef struct weft_queue_runtime weft_queue_runtime_t; /* opaque: the opened runtime */
typedef struct weft_queue weft_queue_t;                 /* opaque: one attached native queue */

typedef enum weft_mem_kind {
    WEFT_MEM_HOST = 0,        /* ordinary host memory, or memory the runtime does not know */
    WEFT_MEM_HOST_PINNED = 1, /* page-locked host memory registered with the runtime */
    WEFT_MEM_DEVICE = 2,      /* device memory: the host must not touch it */
    WEFT_MEM_MANAGED = 3      /* managed (unified, shared) memory: host-accessible */
} weft_mem_kind_t;

/* How the queue synchronizes with the host (WEFT_ENQUEUE=memops|hostfn). */
enum {
    WEFT_QUEUE_SYNC_MEMOPS = 1, /* stream memory operations / host-signalled events */
    WEFT_QUEUE_SYNC_HOSTFN = 2  /* host callbacks run by the runtime (cuLaunchHostFunc, ...) */
};

typedef struct weft_queue_attach_args {
    uint32_t struct_size;
    const char *type;   /* info "type": one of the plugin's types */
    const void *handle; /* info "value", hex-decoded: the native handle's bytes */
    size_t handle_size;
    int sync; /* WEFT_QUEUE_SYNC_* requested; the plugin may fall back */
    /* Reads another info key of the stream being created, hex-decoded into buf[size]:
     * WEFT_PLUGIN_OK, WEFT_PLUGIN_ERR_NOT_FOUND (key unset) or WEFT_PLUGIN_ERR_INVALID (not
     * hex, or another size). */
    int (*get_hex)(void *ctx, const char *key, void *buf, size_t size);
    void *get_hex_ctx;
} weft_queue_attach_args_t;

typedef struct weft_queue_ops_v1 {
    /* NULL-terminated list of the info "type" values this plugin decodes, e.g. "cudaStream_t". */
    const char *const *types;
    /* Open the runtime.  Without a driver or a device: WEFT_PLUGIN_ERR_NO_DEVICE and a reason
     * in why[why_len] ("no CUDA device: cuInit: CUDA_ERROR_NO_DEVICE").  As a fabric's init:
     * never while a runtime of this plugin is open, but possibly again after finalize (the
     * core opens it once per process; weft-info and the kit open it again). */
    int (*init)(const weft_plugin_host_t *host, weft_queue_runtime_t **rt, char *why, size_t why_len);
    int (*finalize)(weft_queue_runtime_t *rt);
    /* Decode and check a native queue (wrong size, undecodable or invalid: an error and a
     * reason).  *sync_used: the mechanism the plugin will use (the requested one, or the
     * other one where the runtime lacks it: HOSTFN without memory operations, MEMOPS (events)
     * without host functions).  The native queue stays the user's: detach never destroys it. */
    int (*attach)(weft_queue_runtime_t *rt, const weft_queue_attach_args_t *args, weft_queue_t **q, int *sync_used,
                  char *why, size_t why_len);
    /* Called once everything appended has executed (the last point was reached). */
    int (*detach)(weft_queue_t *q);
    /* Appends are called on the thread that enqueues, one at a time per queue. */
    /* Append: when execution reaches this point, reached() becomes value. */
    int (*append_signal)(weft_queue_t *q, uint32_t value);
    /* Append: execution stops here until release(v) with (int32_t)(v - value) >= 0. */
    int (*append_wait)(weft_queue_t *q, uint32_t value);
    /* Append an asynchronous copy of bytes from src to dst (host, pinned or device memory). */
    int (*append_copy)(weft_queue_t *q, void *dst, const void *src, size_t bytes);
    /* Host side, never blocks: the value of the last signal executed, 0 before the first. */
    uint32_t (*reached)(weft_queue_t *q);
    /* Host side: lets every wait of value <= value go on.  Never blocks. */
    int (*release)(weft_queue_t *q, uint32_t value);
    /* What kind of memory ptr points to, as seen from q's device and context. */
    int (*mem_kind)(weft_queue_t *q, const void *ptr, weft_mem_kind_t *kind);
    /* Page-locked host memory for staging device buffers through q's copies.  host_free may
     * wait for the device; the core calls both on user threads only. */
    int (*host_alloc)(weft_queue_t *q, size_t bytes, void **ptr);
    int (*host_free)(weft_queue_t *q, void *ptr);

    /* ---- ABI minor 3: native queues for conformance tools (optional, NULL otherwise) ----
     * The core never calls these; weft-conformance --queue does, to get a queue to attach to.
     * queue_create: a new native queue of types[0] on the runtime's first device; writes the
     * handle's bytes, as attach takes them, into handle[*size] (in: its capacity, out: the
     * handle's size; too small: WEFT_PLUGIN_ERR_INVALID with *size set to the size needed).
     * Such a handle attaches with no other info key (get_hex answers NOT_FOUND for all).
     * queue_destroy: the queue is detached first; waits a bounded time for the queue's work
     * and destroys it, or answers WEFT_PLUGIN_ERR_AGAIN and keeps it when the work does not
     * end; a handle the plugin did not create is refused. */
    int (*queue_create)(weft_queue_runtime_t *rt, void *handle, size_t *size);
    int (*queue_destroy)(weft_queue_runtime_t *rt, const void *handle, size_t size);
} weft_queue_ops_v1_t;

/* ========================================================================= the plugin ==== */
typedef struct weft_plugin_v1 {
    uint32_t abi_major; /* WEFT_PLUGIN_ABI_MAJOR the plugin was built with */
    uint32_t abi_minor; /* WEFT_PLUGIN_ABI_MINOR the plugin was built with */
    weft_plugin_kind_t kind;
    const char *name;    /* short name used in WEFT_FABRIC, e.g. "ucx" */
    const char *version; /* plugin version, e.g. "1.0 (UCX 1.13.1)" */
    int priority;        /* higher is preferred when the user states no preference */
    const void *ops;     /* kind FABRIC: const weft_fabric_ops_v1_t *;
                                 kind QUEUE: const weft_queue_ops_v1_t * (ABI minor 2) */
} weft_plugin_v1_t;

#define WEFT_PLUGIN_SYMBOL "weft_plugin_v1"

#ifdef __cplusplus
}
#endif
#endif /* WEFT_PLUGIN_H */
