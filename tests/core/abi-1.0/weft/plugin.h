/* Weft plugin ABI (C).  A plugin is a shared object libweft-<name>.so that exports one symbol,
 *
 *     const weft_plugin_v1_t weft_plugin_v1 = { WEFT_PLUGIN_ABI_MAJOR, WEFT_PLUGIN_ABI_MINOR, ... };
 *
 * Plugins include only this header and their vendor library; they never link libweft.  No C++
 * types, exceptions or STL cross this boundary.  Structs passed by the core begin with
 * struct_size so that fields can be appended in later minor versions.
 *
 * Version policy: appending operations to an ops table or fields to a struct, or adding a
 * capability bit, bumps abi_minor; the core adapts plugins of an older minor (missing trailing
 * operations are treated as NULL = not supported).  Any other change bumps abi_major, and the
 * loader refuses a plugin whose abi_major differs from its own. */
#ifndef WEFT_PLUGIN_H
#define WEFT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_PLUGIN_ABI_MAJOR 1
#define WEFT_PLUGIN_ABI_MINOR 0

/* Return codes of plugin operations.  Negative: failure; the core maps them to WEFT_ERR_*. */
enum {
    WEFT_PLUGIN_OK = 0,
    WEFT_PLUGIN_ERR_AGAIN = -1,       /* resources busy: progress and retry */
    WEFT_PLUGIN_ERR_NOMEM = -2,
    WEFT_PLUGIN_ERR_TRUNCATE = -3,    /* completion status: message longer than the buffer */
    WEFT_PLUGIN_ERR_CANCELED = -4,    /* completion status: operation canceled */
    WEFT_PLUGIN_ERR_UNREACHABLE = -5, /* peer address invalid or peer gone */
    WEFT_PLUGIN_ERR_UNSUPPORTED = -6,
    WEFT_PLUGIN_ERR_INVALID = -7,     /* bad argument */
    WEFT_PLUGIN_ERR_NOT_FOUND = -8,   /* cancel: no such pending operation */
    WEFT_PLUGIN_ERR_PEER_FAILED = -9, /* completion status: the peer process failed */
    WEFT_PLUGIN_ERR_OTHER = -10
};

typedef enum weft_plugin_kind {
    WEFT_PLUGIN_KIND_FABRIC = 1,
    WEFT_PLUGIN_KIND_QUEUE = 2
} weft_plugin_kind_t;

enum { WEFT_LOG_ERROR = 0, WEFT_LOG_WARN = 1, WEFT_LOG_INFO = 2, WEFT_LOG_DEBUG = 3 };

/* Services the core offers to a plugin at init.  Valid until the plugin is finalized. */
typedef struct weft_plugin_host {
    uint32_t struct_size;
    /* Writes one line to Weft's log (WEFT_LOG=error|warn|info|debug). */
    void (*log)(int level, const char *plugin_name, const char *message);
    /* Value of a hint given at init (info key, e.g. "weft_ucx_tls"), NULL when unset. */
    const char *(*hint)(void *hint_ctx, const char *key);
    void *hint_ctx;
} weft_plugin_host_t;

/* ======================================================================== fabric plugins ==
 * Object model: fabric (one per process) -> endpoint (one per Weft VCI, with its own
 * completion path) -> peer (a connection from one local endpoint to one remote endpoint).
 * All messages are tagged with 64-bit match bits; a receive matches a message when
 * (msg_tag & ~ignore) == (tag & ~ignore).  Messages from one peer endpoint that match one
 * receive must match in the order they were sent (MPI's non-overtaking rule). */

typedef struct weft_fabric weft_fabric_t;       /* opaque, plugin-defined */
typedef struct weft_fabric_ep weft_fabric_ep_t; /* opaque, plugin-defined */
typedef struct weft_fabric_peer weft_fabric_peer_t;

/* Capability flags. */
#define WEFT_FABRIC_CAP_RMA (1u << 0)           /* put/get on registered memory */
#define WEFT_FABRIC_CAP_DEVICE_MEMORY (1u << 1) /* send/recv from GPU memory */
#define WEFT_FABRIC_CAP_THREAD_SAFE (1u << 2)   /* endpoint ops may run concurrently */
#define WEFT_FABRIC_CAP_ACTIVE_MESSAGES (1u << 3)
#define WEFT_FABRIC_CAP_WAIT_FD (1u << 4)       /* ep_wait_fd/ep_arm supported */

typedef struct weft_fabric_caps {
    uint32_t struct_size;
    uint32_t flags;           /* WEFT_FABRIC_CAP_* */
    size_t max_message_size;  /* largest tagged message */
    size_t inject_size;       /* sends up to this size complete locally at once */
    size_t eager_size;        /* above this the fabric uses a rendezvous protocol */
    size_t max_address_size;  /* upper bound of ep_address's length */
} weft_fabric_caps_t;

/* How an operation ended, passed to the endpoint's completion callback. */
typedef struct weft_fabric_completion {
    int status;        /* WEFT_PLUGIN_OK or a WEFT_PLUGIN_ERR_* value */
    uint64_t tag;      /* receives: the sender's match bits */
    size_t length;     /* receives: bytes delivered (the sent length when truncated) */
} weft_fabric_completion_t;

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
} weft_fabric_ep_attr_t;

typedef struct weft_fabric_ops_v1 {
    /* Open the fabric.  On failure return a WEFT_PLUGIN_ERR_* code and write a one-line
     * reason (what is missing, which variable to set) into why[why_len]. */
    int (*init)(const weft_plugin_host_t *host, weft_fabric_t **fabric, char *why,
                size_t why_len);
    int (*finalize)(weft_fabric_t *fabric);
    int (*query)(weft_fabric_t *fabric, weft_fabric_caps_t *caps);

    int (*ep_open)(weft_fabric_t *fabric, const weft_fabric_ep_attr_t *attr,
                   weft_fabric_ep_t **ep);
    /* Releases the endpoint; peers not yet disconnected are closed forcibly. */
    int (*ep_close)(weft_fabric_ep_t *ep);
    /* Writes the endpoint's address into buf; *len: in buf's size, out the address length. */
    int (*ep_address)(weft_fabric_ep_t *ep, void *buf, size_t *len);
    int (*ep_connect)(weft_fabric_ep_t *ep, const void *address, size_t len,
                      weft_fabric_peer_t **peer);
    /* Flushes what was sent to peer and closes the connection.  May progress the endpoint
     * (and so run completion callbacks); returns within a bounded time even if the peer is
     * gone. */
    int (*ep_disconnect)(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer);

    /* Post a send/receive.  Returns WEFT_PLUGIN_OK once posted (completion follows through
     * the callback, possibly before this call returns), WEFT_PLUGIN_ERR_AGAIN when the caller
     * should progress and retry, or another error (no callback follows). */
    int (*tag_send)(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf,
                    size_t len, uint64_t tag, void *context);
    int (*tag_recv)(weft_fabric_ep_t *ep, void *buf, size_t len, uint64_t tag,
                    uint64_t ignore, void *context);
    /* Non-destructive probe for an unexpected message: *found = 1 and its match bits and
     * length when one is there. */
    int (*tag_probe)(weft_fabric_ep_t *ep, uint64_t tag, uint64_t ignore, int *found,
                     uint64_t *msg_tag, size_t *msg_len);
    /* Cancel a posted receive.  On success its completion arrives later with status
     * WEFT_PLUGIN_ERR_CANCELED (or OK if it matched first). */
    int (*cancel)(weft_fabric_ep_t *ep, void *context);
    /* Make progress; returns the number of completions delivered (>= 0) or an error. */
    int (*ep_progress)(weft_fabric_ep_t *ep);

    /* Optional (WEFT_FABRIC_CAP_WAIT_FD), NULL otherwise: a file descriptor that becomes
     * readable when ep_arm returned OK and new work arrived; ep_arm returns
     * WEFT_PLUGIN_ERR_AGAIN when there is work to progress now. */
    int (*ep_wait_fd)(weft_fabric_ep_t *ep, int *fd);
    int (*ep_arm)(weft_fabric_ep_t *ep);
} weft_fabric_ops_v1_t;

/* ========================================================================= the plugin ==== */
typedef struct weft_plugin_v1 {
    uint32_t abi_major;       /* WEFT_PLUGIN_ABI_MAJOR the plugin was built with */
    uint32_t abi_minor;       /* WEFT_PLUGIN_ABI_MINOR the plugin was built with */
    weft_plugin_kind_t kind;
    const char *name;         /* short name used in WEFT_FABRIC, e.g. "ucx" */
    const char *version;      /* plugin version, e.g. "1.0 (UCX 1.13.1)" */
    int priority;             /* higher is preferred when the user states no preference */
    const void *ops;          /* kind FABRIC: const weft_fabric_ops_v1_t * */
} weft_plugin_v1_t;

#define WEFT_PLUGIN_SYMBOL "weft_plugin_v1"

#ifdef __cplusplus
}
#endif
#endif /* WEFT_PLUGIN_H */
