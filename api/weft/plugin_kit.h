/* Weft plugin kit: header-only helpers for plugin authors, in C (C99 and later) and usable
 * from C++.  Nothing here is part of the ABI: every helper is a static inline function or a
 * macro compiled into the plugin, so using the kit adds no dependency and a plugin built with
 * it loads in any Weft of the same ABI major.  It needs only <weft/plugin.h> (of any ABI 1.x:
 * it also builds against the ABI 1.0 header) and POSIX threads.
 *
 *     #include <weft/plugin_kit.h>      (CMake: weft::plugin_api; pkg-config: weft-plugin)
 *
 * What it holds, in the order of this file:
 *   1. export and printf-checking macros, and the plugin descriptor (WEFT_KIT_PLUGIN_DEFINE);
 *   2. log lines through the core (weft_kit_logf, weft_kit_log_warn, ...) and init's one-line
 *      reasons (weft_kit_whyf);
 *   3. what init, ep_open and query check in the core's structs (weft_kit_host_*,
 *      weft_kit_fabric_init_begin, weft_kit_ep_attr_*, weft_kit_caps_write);
 *   4. byte order (weft_kit_store_le32, weft_kit_load_be64, ...) and tag matching;
 *   5. intrusive lists: a doubly linked list (weft_kit_list_t) and a FIFO queue
 *      (weft_kit_queue_t) threaded through one weft_kit_link_t per element;
 *   6. the endpoint lock: taken only when the endpoint is shared (weft_kit_ep_lock_t and the
 *      scoped WEFT_KIT_EP_GUARD; WEFT_KIT_MUTEX_GUARD for a mutex always taken);
 *   7. the endpoint address header: magic, version and length, written by ep_address and
 *      checked by ep_connect with a clear reason (weft_kit_addr_write / weft_kit_addr_read).
 * The fabric skeleton examples/plugin-skeleton/fabric (minitcp) and the in-tree fabrics
 * (plugins/ucx, plugins/ofi, plugins/galapagos) are built on it; docs/plugins.md is the
 * how-to. */
#ifndef WEFT_PLUGIN_KIT_H
#define WEFT_PLUGIN_KIT_H

/* Angle brackets on purpose: the plugin.h that the include path names (an older ABI's, say)
 * is the one the kit builds against, not necessarily the one installed beside it. */
#include <weft/plugin.h>

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ================================================================ 1. exports, descriptor == */

#if defined(__GNUC__)
/* The descriptor, the one symbol a plugin exports (even without -fvisibility=hidden). */
#define WEFT_KIT_EXPORT __attribute__((visibility("default")))
/* Functions shared by a plugin's files: never exported, whatever the build's default. */
#define WEFT_KIT_HIDDEN __attribute__((visibility("hidden")))
/* printf-style checking of a format argument (1-based positions, as GCC's attribute). */
#define WEFT_KIT_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define WEFT_KIT_EXPORT
#define WEFT_KIT_HIDDEN
#define WEFT_KIT_PRINTF(fmt, args)
#endif

#ifdef __cplusplus
#define WEFT_KIT_EXTERN_C extern "C"
#else
#define WEFT_KIT_EXTERN_C
#endif

/* Defines the exported descriptor weft_plugin_v1 with the ABI of the plugin.h compiled
 * against, e.g.
 *     WEFT_KIT_PLUGIN_DEFINE(WEFT_PLUGIN_KIND_FABRIC, "minitcp", "1.0", 1, &minitcp_ops);
 * kind: WEFT_PLUGIN_KIND_*; name: the <name> of libweft-<name>.so; version: any text (it may
 * be a char array filled by a constructor); priority: see docs/plugins.md; ops: the address of
 * the plugin's const ops table.  In C and C++ alike (extern "C", default visibility). */
#define WEFT_KIT_PLUGIN_DEFINE(kind, name, version, priority, ops)                           \
    WEFT_KIT_EXTERN_C WEFT_KIT_EXPORT const weft_plugin_v1_t weft_plugin_v1 = {              \
        WEFT_PLUGIN_ABI_MAJOR, WEFT_PLUGIN_ABI_MINOR, (kind), (name), (version), (priority),  \
        (ops)}

/* ================================================================ 2. log lines, reasons == */

/* One line to Weft's log through host->log (shown according to WEFT_LOG); nothing when host
 * is NULL or has no log.  name is the plugin's name, shown with the line.  The line is cut at
 * 511 bytes.  Any thread, any time (the core copies the line).  The same as plugin.h's
 * weft_plugin_logf (ABI 1.3), but usable with every plugin.h 1.x, and with a va_list. */
WEFT_KIT_PRINTF(4, 0)
static inline void weft_kit_vlogf(const weft_plugin_host_t *host, int level, const char *name,
                                  const char *fmt, va_list ap)
{
    char line[512];
    if (!host || host->struct_size < offsetof(weft_plugin_host_t, log) + sizeof host->log ||
        !host->log)
        return;
    vsnprintf(line, sizeof line, fmt, ap);
    host->log(level, name, line);
}

/* weft_kit_logf(host, WEFT_LOG_WARN, "myfabric", "peer %s: %s", who, what) */
WEFT_KIT_PRINTF(4, 5)
static inline void weft_kit_logf(const weft_plugin_host_t *host, int level, const char *name,
                                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    weft_kit_vlogf(host, level, name, fmt, ap);
    va_end(ap);
}

/* One per level (macros over weft_kit_logf, checked as printf formats):
 *     weft_kit_log_warn(fabric->host, "myfabric", "peer %s: %s", who, what); */
#define weft_kit_log_error(host, name, ...) weft_kit_logf(host, WEFT_LOG_ERROR, name, __VA_ARGS__)
#define weft_kit_log_warn(host, name, ...) weft_kit_logf(host, WEFT_LOG_WARN, name, __VA_ARGS__)
#define weft_kit_log_info(host, name, ...) weft_kit_logf(host, WEFT_LOG_INFO, name, __VA_ARGS__)
#define weft_kit_log_debug(host, name, ...) weft_kit_logf(host, WEFT_LOG_DEBUG, name, __VA_ARGS__)

/* The one-line reason of a failed init or attach: formats into why[why_len] (when why is not
 * NULL) and returns rc, so that a failure is one statement:
 *     return weft_kit_whyf(why, why_len, WEFT_PLUGIN_ERR_UNSUPPORTED,
 *                          "no NIC found: set MYFABRIC_DEVICE (see `myfabric-info`)");
 * Say what is missing and which variable or package the user must change.  The same as
 * plugin.h's weft_plugin_whyf (ABI 1.3), usable with every plugin.h 1.x. */
WEFT_KIT_PRINTF(4, 5)
static inline int weft_kit_whyf(char *why, size_t why_len, int rc, const char *fmt, ...)
{
    va_list ap;
    if (why && why_len) {
        va_start(ap, fmt);
        vsnprintf(why, why_len, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* ====================================================== 3. the core's structs (struct_size) ==
 * The core's structs start with struct_size: a core older or newer than the plugin passes a
 * shorter or longer one.  Read no field beyond struct_size, write none beyond it. */

/* host as init got it, or NULL when it is NULL or too short to hold log (keep the result:
 * the kit's log helpers then simply drop lines). */
static inline const weft_plugin_host_t *weft_kit_host_checked(const weft_plugin_host_t *host)
{
    if (host && host->struct_size < offsetof(weft_plugin_host_t, log) + sizeof host->log)
        return NULL;
    return host;
}

/* The value of an init hint (an info key given to weft_init_info, e.g. "weft_ucx_tls"), or
 * NULL when it is unset or host cannot tell. */
static inline const char *weft_kit_host_hint(const weft_plugin_host_t *host, const char *key)
{
    if (!host ||
        host->struct_size < offsetof(weft_plugin_host_t, hint_ctx) + sizeof host->hint_ctx ||
        !host->hint)
        return NULL;
    return host->hint(host->hint_ctx, key);
}

/* The first lines of a fabric's init: refuses a NULL fabric pointer (with a reason naming the
 * plugin), clears *fabric, and replaces *host by weft_kit_host_checked(*host).  Returns
 * WEFT_PLUGIN_OK or WEFT_PLUGIN_ERR_INVALID:
 *     int rc = weft_kit_fabric_init_begin("myfabric", fabric, &host, why, why_len);
 *     if (rc != WEFT_PLUGIN_OK) return rc; */
static inline int weft_kit_fabric_init_begin(const char *name, weft_fabric_t **fabric,
                                             const weft_plugin_host_t **host, char *why,
                                             size_t why_len)
{
    if (!fabric)
        return weft_kit_whyf(why, why_len, WEFT_PLUGIN_ERR_INVALID,
                             "%s: init called without a fabric pointer", name);
    *fabric = NULL;
    if (host)
        *host = weft_kit_host_checked(*host);
    return WEFT_PLUGIN_OK;
}

/* ep_open's attr is usable: not NULL, long enough for serial and complete (every core gives
 * that much: ABI 1.0), and complete set.  Refuse the others with WEFT_PLUGIN_ERR_INVALID. */
static inline int weft_kit_ep_attr_valid(const weft_fabric_ep_attr_t *attr)
{
    return attr &&
           attr->struct_size >= offsetof(weft_fabric_ep_attr_t, complete) + sizeof attr->complete &&
           attr->complete;
}

/* attr->context_space (ABI 1.6) when the core's attr has the field, else 0 (a core older than
 * 1.6, or a plugin.h older than 1.6). */
static inline size_t weft_kit_ep_attr_context_space(const weft_fabric_ep_attr_t *attr)
{
#if WEFT_PLUGIN_ABI_MINOR >= 6
    if (attr && attr->struct_size >=
                    offsetof(weft_fabric_ep_attr_t, context_space) + sizeof attr->context_space)
        return attr->context_space;
#else
    (void)attr;
#endif
    return 0;
}

/* query's answer: copies the plugin's complete caps (all; its struct_size is ignored) into
 * the core's caps, as far as caps->struct_size reaches, and keeps caps->struct_size.  Returns
 * WEFT_PLUGIN_ERR_INVALID for a NULL caps or a struct_size below its own field. */
static inline int weft_kit_caps_write(weft_fabric_caps_t *caps, const weft_fabric_caps_t *all)
{
    weft_fabric_caps_t c;
    size_t n;
    if (!caps || !all || caps->struct_size < sizeof caps->struct_size)
        return WEFT_PLUGIN_ERR_INVALID;
    c = *all;
    c.struct_size = caps->struct_size;
    n = caps->struct_size < sizeof c ? caps->struct_size : sizeof c;
    memcpy(caps, &c, n);
    return WEFT_PLUGIN_OK;
}

/* ===================================================== 4. byte order, tag matching ======== */

/* Fixed-width integers at any (unaligned) address, in a stated byte order: what goes on a
 * wire or into an address, which other hosts read, must not depend on this host's order. */
static inline void weft_kit_store_le16(void *p, uint16_t v)
{
    unsigned char *b = (unsigned char *)p;
    b[0] = (unsigned char)v;
    b[1] = (unsigned char)(v >> 8);
}
static inline void weft_kit_store_le32(void *p, uint32_t v)
{
    weft_kit_store_le16(p, (uint16_t)v);
    weft_kit_store_le16((unsigned char *)p + 2, (uint16_t)(v >> 16));
}
static inline void weft_kit_store_le64(void *p, uint64_t v)
{
    weft_kit_store_le32(p, (uint32_t)v);
    weft_kit_store_le32((unsigned char *)p + 4, (uint32_t)(v >> 32));
}
static inline uint16_t weft_kit_load_le16(const void *p)
{
    const unsigned char *b = (const unsigned char *)p;
    return (uint16_t)(b[0] | b[1] << 8);
}
static inline uint32_t weft_kit_load_le32(const void *p)
{
    return weft_kit_load_le16(p) | (uint32_t)weft_kit_load_le16((const unsigned char *)p + 2) << 16;
}
static inline uint64_t weft_kit_load_le64(const void *p)
{
    return weft_kit_load_le32(p) | (uint64_t)weft_kit_load_le32((const unsigned char *)p + 4) << 32;
}
static inline void weft_kit_store_be16(void *p, uint16_t v)
{
    unsigned char *b = (unsigned char *)p;
    b[0] = (unsigned char)(v >> 8);
    b[1] = (unsigned char)v;
}
static inline void weft_kit_store_be32(void *p, uint32_t v)
{
    weft_kit_store_be16(p, (uint16_t)(v >> 16));
    weft_kit_store_be16((unsigned char *)p + 2, (uint16_t)v);
}
static inline void weft_kit_store_be64(void *p, uint64_t v)
{
    weft_kit_store_be32(p, (uint32_t)(v >> 32));
    weft_kit_store_be32((unsigned char *)p + 4, (uint32_t)v);
}
static inline uint16_t weft_kit_load_be16(const void *p)
{
    const unsigned char *b = (const unsigned char *)p;
    return (uint16_t)(b[0] << 8 | b[1]);
}
static inline uint32_t weft_kit_load_be32(const void *p)
{
    return (uint32_t)weft_kit_load_be16(p) << 16 | weft_kit_load_be16((const unsigned char *)p + 2);
}
static inline uint64_t weft_kit_load_be64(const void *p)
{
    return (uint64_t)weft_kit_load_be32(p) << 32 | weft_kit_load_be32((const unsigned char *)p + 4);
}

/* Weft's matching rule, for fabrics that match in the plugin: a message with match bits
 * msg_tag matches a receive of (tag, ignore) when (msg_tag & ~ignore) == (tag & ~ignore). */
static inline int weft_kit_tag_matches(uint64_t msg_tag, uint64_t tag, uint64_t ignore)
{
    return ((msg_tag ^ tag) & ~ignore) == 0;
}

/* ============================================================ 5. intrusive lists ========== *
 * An element embeds a weft_kit_link_t (one per list it can be on at a time) and is found
 * back from its link with WEFT_KIT_CONTAINER_OF.  Nothing is allocated; the caller keeps
 * lists and elements in place while linked, and guards them with its own locks.
 *
 * weft_kit_list_t: doubly linked and circular, through a head link of its own (so no NULL
 * checks): push at either end, unlink any element, in O(1).  Initialize it first
 * (weft_kit_list_init, or WEFT_KIT_LIST_INITIALIZER for a static one).  For posted receives,
 * operations in flight, peers, endpoints: whatever may leave from the middle.
 *
 * weft_kit_queue_t: a first-in first-out queue linked through next only, NULL-terminated;
 * zero bytes are an empty queue.  Push at the back, pop at the front, or take the whole chain
 * at once.  For completions waiting for ep_progress, and for backlogs.  The same link may
 * serve both kinds in turn (a receive leaves the posted list for the done queue). */

typedef struct weft_kit_link {
    struct weft_kit_link *next;
    struct weft_kit_link *prev; /* lists only; queues leave it alone */
} weft_kit_link_t;

/* The element (of type `type`) whose link `member` ptr points to. */
#define WEFT_KIT_CONTAINER_OF(ptr, type, member)                                              \
    ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

typedef struct weft_kit_list {
    weft_kit_link_t head; /* head.next: the first element, head.prev: the last (or &head) */
} weft_kit_list_t;

/* static weft_kit_list_t all = WEFT_KIT_LIST_INITIALIZER(all); */
#define WEFT_KIT_LIST_INITIALIZER(list) {{&(list).head, &(list).head}}

static inline void weft_kit_list_init(weft_kit_list_t *l)
{
    l->head.next = l->head.prev = &l->head;
}

static inline int weft_kit_list_empty(const weft_kit_list_t *l)
{
    return l->head.next == &l->head;
}

/* The first element's link, or NULL when the list is empty. */
static inline weft_kit_link_t *weft_kit_list_first(const weft_kit_list_t *l)
{
    return l->head.next == &l->head ? NULL : l->head.next;
}

/* The link after n on l, or NULL when n is the last. */
static inline weft_kit_link_t *weft_kit_list_next(const weft_kit_list_t *l,
                                                  const weft_kit_link_t *n)
{
    return n->next == &l->head ? NULL : n->next;
}

/* (The stores are ordered so that GCC does not pair n's two into one vector store, which
 * takes more instructions than the two it replaces: these run on receive paths.) */
static inline void weft_kit_list_push_front(weft_kit_list_t *l, weft_kit_link_t *n)
{
    weft_kit_link_t *first = l->head.next;
    n->next = first;
    first->prev = n;
    n->prev = &l->head;
    l->head.next = n;
}

static inline void weft_kit_list_push_back(weft_kit_list_t *l, weft_kit_link_t *n)
{
    weft_kit_link_t *last = l->head.prev;
    n->prev = last;
    last->next = n;
    n->next = &l->head;
    l->head.prev = n;
}

/* Takes n off the list it is on.  n's own pointers are left as they were: keep a flag of your
 * own if you need to know whether an element is linked, and unlink it once. */
static inline void weft_kit_list_unlink(weft_kit_link_t *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
}

/* for each link `it` of list, first to last; the body may unlink (and free) `it`, not others:
 *     WEFT_KIT_LIST_FOREACH(it, &ep->posted) {
 *         struct op *op = WEFT_KIT_CONTAINER_OF(it, struct op, link);
 *         ...
 *     } */
#define WEFT_KIT_LIST_FOREACH(it, list)                                                       \
    for (weft_kit_link_t *it = (list)->head.next, *it##_next_ = it->next;                     \
         it != &(list)->head; it = it##_next_, it##_next_ = it->next)

typedef struct weft_kit_queue {
    weft_kit_link_t *first; /* NULL when empty; the chain runs through next to NULL */
    weft_kit_link_t *last;
} weft_kit_queue_t;

static inline void weft_kit_queue_init(weft_kit_queue_t *q)
{
    q->first = q->last = NULL;
}

static inline int weft_kit_queue_empty(const weft_kit_queue_t *q)
{
    return !q->first;
}

static inline void weft_kit_queue_push(weft_kit_queue_t *q, weft_kit_link_t *n)
{
    n->next = NULL;
    if (q->last)
        q->last->next = n;
    else
        q->first = n;
    q->last = n;
}

/* The first link, taken off the queue, or NULL when it is empty. */
static inline weft_kit_link_t *weft_kit_queue_pop(weft_kit_queue_t *q)
{
    weft_kit_link_t *n = q->first;
    if (n) {
        q->first = n->next;
        if (!q->first)
            q->last = NULL;
    }
    return n;
}

/* Empties the queue and returns its chain (first link, through next to NULL), e.g. to walk
 * after releasing the lock that guards the queue:
 *     for (weft_kit_link_t *n = weft_kit_queue_take(&q), *next; n; n = next) {
 *         next = n->next;
 *         ...
 *     } */
static inline weft_kit_link_t *weft_kit_queue_take(weft_kit_queue_t *q)
{
    weft_kit_link_t *n = q->first;
    q->first = q->last = NULL;
    return n;
}

/* =========================================================== 6. the endpoint lock ========= *
 * The core serializes the calls on an endpoint it opened with attr->serial (always, today), so
 * such an endpoint needs no lock; one opened without it is shared by threads.  The lock below
 * costs a serial endpoint one test of a flag, no atomic operation.  It guards the endpoint's
 * own state; state shared by endpoints (the fabric) needs locks of its own, always taken. */

typedef struct weft_kit_ep_lock {
    int serial;            /* attr->serial at ep_open: non-zero, the lock is never taken */
    pthread_mutex_t mutex; /* shared endpoints only */
} weft_kit_ep_lock_t;

/* At ep_open: serial = attr->serial.  Returns 0, or an errno value (then do not use it). */
static inline int weft_kit_ep_lock_init(weft_kit_ep_lock_t *l, int serial)
{
    l->serial = serial != 0;
    return pthread_mutex_init(&l->mutex, NULL);
}

/* At ep_close, once no thread can hold it. */
static inline void weft_kit_ep_lock_destroy(weft_kit_ep_lock_t *l)
{
    pthread_mutex_destroy(&l->mutex);
}

/* Takes the lock when the endpoint is shared; nothing when it is serial. */
static inline void weft_kit_ep_lock(weft_kit_ep_lock_t *l)
{
    if (!l->serial)
        pthread_mutex_lock(&l->mutex);
}

static inline void weft_kit_ep_unlock(weft_kit_ep_lock_t *l)
{
    if (!l->serial)
        pthread_mutex_unlock(&l->mutex);
}

#if defined(__GNUC__)
static inline weft_kit_ep_lock_t *weft_kit_ep_guard_take_(weft_kit_ep_lock_t *l)
{
    weft_kit_ep_lock(l);
    return l;
}
static inline void weft_kit_ep_guard_release_(weft_kit_ep_lock_t **l)
{
    weft_kit_ep_unlock(*l);
}
/* A scoped guard (GNU C and C++; a C compiler without GNU extensions calls
 * weft_kit_ep_lock/unlock itself): takes the endpoint lock as weft_kit_ep_lock does, and
 * releases it when `name` goes out of scope, on every return:
 *     WEFT_KIT_EP_GUARD(g, &ep->lock);
 *     if (!ep->posted_count) return WEFT_PLUGIN_ERR_NOT_FOUND;   (unlocks) */
#define WEFT_KIT_EP_GUARD(name, lock)                                                         \
    weft_kit_ep_lock_t *name __attribute__((cleanup(weft_kit_ep_guard_release_), unused)) =  \
        weft_kit_ep_guard_take_(lock)

static inline pthread_mutex_t *weft_kit_mutex_guard_take_(pthread_mutex_t *m)
{
    pthread_mutex_lock(m);
    return m;
}
static inline void weft_kit_mutex_guard_release_(pthread_mutex_t **m)
{
    pthread_mutex_unlock(*m);
}
/* The same for a mutex that is always taken: a lock of the fabric's, or &ep_lock->mutex on a
 * path only shared endpoints take (after testing serial once, out of the serial fast path):
 *     WEFT_KIT_MUTEX_GUARD(g, &fabric->mutex); */
#define WEFT_KIT_MUTEX_GUARD(name, mutex)                                                     \
    pthread_mutex_t *name __attribute__((cleanup(weft_kit_mutex_guard_release_), unused)) =  \
        weft_kit_mutex_guard_take_(mutex)
#endif

/* ===================================================== 7. the endpoint address header ===== *
 * ep_address's bytes travel through Weft's bootstrap to processes that may run another build
 * or another plugin, and ep_connect must refuse what is not its own instead of handing junk to
 * the network library.  The kit's header, 8 bytes, all little-endian:
 *     bytes 0..3  magic    4 characters of the plugin's, e.g. WEFT_KIT_MAGIC('W','U','C','X')
 *     bytes 4..5  version  of the layout of what follows: change it when that changes
 *     bytes 6..7  info     the plugin's (an address family, a slot; 0 when unused)
 * then the payload, whose length is the address length less 8: ep_connect gets the exact
 * length ep_address reported, and weft_kit_addr_read checks it against the bounds the format
 * gives.  A format is described once and used by both ends: */

#define WEFT_KIT_ADDR_HEADER_SIZE 8

/* Four characters as the magic that stores as those bytes, in that order. */
#define WEFT_KIT_MAGIC(a, b, c, d)                                                            \
    ((uint32_t)(unsigned char)(a) | (uint32_t)(unsigned char)(b) << 8 |                       \
     (uint32_t)(unsigned char)(c) << 16 | (uint32_t)(unsigned char)(d) << 24)

typedef struct weft_kit_addr_format {
    const char *name;   /* what the errors call it, e.g. "ucx" */
    uint32_t magic;     /* WEFT_KIT_MAGIC(...) */
    uint16_t version;
    size_t min_payload; /* payload bytes ep_connect accepts: exactly this many when equal */
    size_t max_payload;
} weft_kit_addr_format_t;

/* ep_address: sets *len to the address length (header + payload_len) and, when buf holds
 * that much (*len on entry), writes the header and returns where the payload_len bytes of
 * payload go; returns NULL, with *len the length needed, when buf is NULL or too small (answer
 * that with an error code: the core then knows how much to give). */
static inline unsigned char *weft_kit_addr_write(const weft_kit_addr_format_t *f, uint16_t info,
                                                 void *buf, size_t *len, size_t payload_len)
{
    unsigned char *b = (unsigned char *)buf;
    size_t cap = *len;
    *len = WEFT_KIT_ADDR_HEADER_SIZE + payload_len;
    if (!b || cap < *len)
        return NULL;
    weft_kit_store_le32(b, f->magic);
    weft_kit_store_le16(b + 4, f->version);
    weft_kit_store_le16(b + 6, info);
    return b + WEFT_KIT_ADDR_HEADER_SIZE;
}

/* The magic as text for messages: printable characters as they are, others as '?'. */
static inline void weft_kit_magic_text_(uint32_t magic, char out[5])
{
    int i;
    for (i = 0; i < 4; ++i) {
        unsigned char c = (unsigned char)(magic >> (8 * i));
        out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    out[4] = 0;
}

/* ep_connect: checks that address[len] is an address of format f (long enough for the
 * header, f's magic and version, a payload within f's bounds) and returns its payload, with
 * *payload_len and *info (either may be NULL); or returns NULL with a one-line reason in
 * why[why_len] (when why is not NULL), to log before answering WEFT_PLUGIN_ERR_UNREACHABLE. */
static inline const unsigned char *weft_kit_addr_read(const weft_kit_addr_format_t *f,
                                                      const void *address, size_t len,
                                                      uint16_t *info, size_t *payload_len,
                                                      char *why, size_t why_len)
{
    const unsigned char *b = (const unsigned char *)address;
    char want[5], got[5];
    uint32_t magic;
    uint16_t version;
    size_t payload;
    if (!b || len < WEFT_KIT_ADDR_HEADER_SIZE) {
        weft_kit_whyf(why, why_len, 0, "a %zu-byte address is no %s address (they start with an "
                      "%d-byte header)", b ? len : 0, f->name, WEFT_KIT_ADDR_HEADER_SIZE);
        return NULL;
    }
    magic = weft_kit_load_le32(b);
    version = weft_kit_load_le16(b + 4);
    payload = len - WEFT_KIT_ADDR_HEADER_SIZE;
    if (magic != f->magic) {
        weft_kit_magic_text_(f->magic, want);
        weft_kit_magic_text_(magic, got);
        weft_kit_whyf(why, why_len, 0, "a %zu-byte address that starts with '%s', not '%s', "
                      "is no %s address (one of another fabric plugin?)", len, got, want, f->name);
        return NULL;
    }
    if (version != f->version) {
        weft_kit_whyf(why, why_len, 0, "a %s address of version %u, this plugin reads version "
                      "%u (do all processes of the job load the same plugin build?)", f->name,
                      (unsigned)version, (unsigned)f->version);
        return NULL;
    }
    if (payload < f->min_payload || payload > f->max_payload) {
        char bounds[48];
        if (f->min_payload == f->max_payload)
            snprintf(bounds, sizeof bounds, "%zu", f->min_payload);
        else
            snprintf(bounds, sizeof bounds, "%zu to %zu", f->min_payload, f->max_payload);
        weft_kit_whyf(why, why_len, 0, "a %s address with %zu bytes after its header, not %s "
                      "(cut short or padded on the way?)", f->name, payload, bounds);
        return NULL;
    }
    if (info)
        *info = weft_kit_load_le16(b + 6);
    if (payload_len)
        *payload_len = payload;
    return b + WEFT_KIT_ADDR_HEADER_SIZE;
}

#ifdef __cplusplus
}
#endif
#endif /* WEFT_PLUGIN_KIT_H */
