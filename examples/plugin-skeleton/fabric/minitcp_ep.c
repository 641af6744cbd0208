/* minitcp: endpoints.  An endpoint owns a listening socket and an epoll set holding it and
 * every socket of the endpoint; ep_progress drains that set without blocking, and the set's
 * descriptor is the endpoint's wait fd. */
#define _POSIX_C_SOURCE 200809L
#include "minitcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MT_EVENTS_PER_PROGRESS 64

/* Nonblocking (nothing may wait for a peer), close-on-exec (a launcher's children must not
 * inherit our ports) and TCP_NODELAY (small messages go out at once, not after 40 ms). */
int mt_socket_setup(int fd)
{
    int one = 1;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
        return -1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int mt_watch(mt_ep *ep, int op, int fd, uint32_t events, void *cookie)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.ptr = cookie;
    return epoll_ctl(ep->epfd, op, fd, &ev);
}

void mt_unwatch_close(mt_ep *ep, int fd)
{
    if (fd < 0)
        return;
    epoll_ctl(ep->epfd, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
}

/* Completions are queued and delivered by the next ep_progress (or ep_disconnect/ep_close):
 * never from inside another operation, as the contract requires. */
void mt_complete(mt_ep *ep, mt_op *op, int status, uint64_t tag, size_t len)
{
    op->result.status = status;
    op->result.tag = tag;
    op->result.length = len;
    weft_kit_list_push_back(&ep->done, &op->link);
}

static int mt_deliver(mt_ep *ep)
{
    int n = 0;
    weft_kit_link_t *first;
    while ((first = weft_kit_list_first(&ep->done))) {
        mt_op *op = WEFT_KIT_CONTAINER_OF(first, mt_op, link);
        weft_kit_list_unlink(&op->link);
        void *context = op->context;
        weft_fabric_completion_t c = op->result;
        free(op);
        ep->complete(context, &c);
        ++n;
    }
    return n;
}

/* An endpoint nonce needs to be unique per port and time, not secret: time, pid and port. */
static uint64_t mt_nonce(uint16_t port)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    x ^= (uint64_t)getpid() << 32 ^ (uint64_t)port << 16;
    /* splitmix64's finalizer spreads the bits */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x ? x : 1;
}

int mt_ep_open(weft_fabric_t *fab, const weft_fabric_ep_attr_t *attr, mt_ep **out)
{
    /* The attr of any core: long enough for serial and complete, complete set. */
    if (!fab || !out || !weft_kit_ep_attr_valid(attr))
        return WEFT_PLUGIN_ERR_INVALID;
    *out = NULL;
    mt_ep *ep = calloc(1, sizeof *ep);
    if (!ep)
        return WEFT_PLUGIN_ERR_NOMEM;
    ep->fab = fab;
    ep->complete = attr->complete;
    ep->listener.kind = MT_SOCK_LISTEN;
    weft_kit_list_init(&ep->peers);
    weft_kit_list_init(&ep->conns);
    weft_kit_list_init(&ep->posted);
    weft_kit_list_init(&ep->unexpected);
    weft_kit_list_init(&ep->done);

    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = fab->ipv4;
    sa.sin_port = 0; /* any free port: several endpoints and processes share the node */
    const char *step = "epoll_create1";
    ep->epfd = epoll_create1(EPOLL_CLOEXEC);
    ep->listener.fd = ep->epfd < 0 ? -1 : socket(AF_INET, SOCK_STREAM, 0);
    if (ep->listener.fd < 0)
        step = ep->epfd < 0 ? "epoll_create1" : "socket";
    else if (mt_socket_setup(ep->listener.fd) != 0)
        step = "fcntl/setsockopt";
    else if (bind(ep->listener.fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        step = "bind";
    else if (listen(ep->listener.fd, SOMAXCONN) != 0)
        step = "listen";
    else if (getsockname(ep->listener.fd, (struct sockaddr *)&sa, &sl) != 0)
        step = "getsockname";
    else if (mt_watch(ep, EPOLL_CTL_ADD, ep->listener.fd, EPOLLIN, &ep->listener) != 0)
        step = "epoll_ctl";
    else
        step = NULL;
    if (step) {
        mt_log(fab, WEFT_LOG_ERROR, "ep_open: %s: %s", step, strerror(errno));
        if (ep->listener.fd >= 0)
            close(ep->listener.fd);
        if (ep->epfd >= 0)
            close(ep->epfd);
        free(ep);
        return WEFT_PLUGIN_ERR_OTHER;
    }
    ep->self.ipv4 = fab->ipv4;
    ep->self.port = ntohs(sa.sin_port);
    ep->self.nonce = mt_nonce(ep->self.port);
    ep->magic = MT_EP_MAGIC;
    *out = ep;
    return WEFT_PLUGIN_OK;
}

/* Closes everything at once; what is still pending completes with ERR_CANCELED. */
int mt_ep_close(mt_ep *ep)
{
    if (!mt_ep_valid(ep))
        return WEFT_PLUGIN_ERR_INVALID;
    WEFT_KIT_LIST_FOREACH(it, &ep->peers)
        mt_peer_destroy(WEFT_KIT_CONTAINER_OF(it, mt_peer, link), WEFT_PLUGIN_ERR_CANCELED);
    mt_recv_close_all(ep);
    mt_deliver(ep);
    mt_unwatch_close(ep, ep->listener.fd);
    close(ep->epfd);
    ep->magic = 0;
    free(ep);
    return WEFT_PLUGIN_OK;
}

int mt_ep_address(mt_ep *ep, void *buf, size_t *len)
{
    if (!mt_ep_valid(ep) || !len)
        return WEFT_PLUGIN_ERR_INVALID;
    /* The kit's header, then the payload; *len is the address length either way. */
    unsigned char *a = weft_kit_addr_write(&mt_addr_format, MT_ADDR_FAMILY_IPV4, buf, len,
                                           MT_ADDR_PAYLOAD);
    if (!a)
        return WEFT_PLUGIN_ERR_NOMEM; /* *len tells the caller how much it needs */
    weft_kit_store_be16(a, ep->self.port);
    memcpy(a + 2, &ep->self.ipv4, 4); /* already network byte order */
    weft_kit_store_be64(a + 6, ep->self.nonce);
    return WEFT_PLUGIN_OK;
}

/* Records the address only: the connection is made by the first send (ep_connect must not
 * wait for the remote side, and most peers of a large job never exchange a message). */
int mt_ep_connect(mt_ep *ep, const void *address, size_t len, mt_peer **peer)
{
    if (!mt_ep_valid(ep) || !address || !peer)
        return WEFT_PLUGIN_ERR_INVALID;
    /* The kit checks magic, version and length, and says what is wrong. */
    char why[256];
    uint16_t family;
    const unsigned char *a = weft_kit_addr_read(&mt_addr_format, address, len, &family, NULL,
                                                why, sizeof why);
    if (!a || family != MT_ADDR_FAMILY_IPV4) {
        mt_log(ep->fab, WEFT_LOG_WARN, "ep_connect: %s",
               a ? "a minitcp address of an address family other than IPv4" : why);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    mt_addr remote;
    remote.port = weft_kit_load_be16(a);
    memcpy(&remote.ipv4, a + 2, 4);
    remote.nonce = weft_kit_load_be64(a + 6);
    *peer = mt_peer_new(ep, &remote);
    return *peer ? WEFT_PLUGIN_OK : WEFT_PLUGIN_ERR_NOMEM;
}

static double mt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Writes out the peer's queued sends (progressing the endpoint, so that a peer in this very
 * process can take them), for at most MT_DISCONNECT_SECONDS, then hands the connection to
 * mt_peer_retire.  Never waits for anything else: the remote side reading the bytes is the
 * kernel's job from here. */
int mt_ep_disconnect(mt_ep *ep, mt_peer *p)
{
    if (!mt_ep_valid(ep) || !p || p->magic != MT_PEER_MAGIC || p->ep != ep)
        return WEFT_PLUGIN_ERR_INVALID;
    double deadline = mt_now() + MT_DISCONNECT_SECONDS;
    while (!weft_kit_list_empty(&p->sendq) && p->state != MT_PEER_FAILED) {
        if (mt_now() > deadline) {
            mt_log(ep->fab, WEFT_LOG_WARN, "ep_disconnect: the peer did not take our data "
                   "within %d s; the sends still pending are canceled", MT_DISCONNECT_SECONDS);
            break;
        }
        if (mt_ep_progress(ep) == 0) {
            struct pollfd pfd = {ep->epfd, POLLIN, 0};
            poll(&pfd, 1, 1); /* sleep until a socket is ready, not spin */
        }
    }
    mt_peer_retire(p);
    mt_deliver(ep); /* sends canceled by a timeout complete here */
    return WEFT_PLUGIN_OK;
}

int mt_ep_progress(mt_ep *ep)
{
    if (!mt_ep_valid(ep))
        return WEFT_PLUGIN_ERR_INVALID;
    struct epoll_event ev[MT_EVENTS_PER_PROGRESS];
    int n = epoll_wait(ep->epfd, ev, MT_EVENTS_PER_PROGRESS, 0);
    for (int i = 0; i < n; ++i) {
        /* Each handler may free only its own object, which no other event of this batch
         * names (one event per descriptor). */
        switch (*(int *)ev[i].data.ptr) {
        case MT_SOCK_LISTEN: mt_conn_accept(ep); break;
        case MT_SOCK_PEER: mt_peer_event(ev[i].data.ptr, ev[i].events); break;
        case MT_SOCK_CONN: mt_conn_event(ev[i].data.ptr, ev[i].events); break;
        }
    }
    if (ep->recheck) {
        ep->recheck = 0;
        mt_peer_kick(ep);
        mt_conn_resume(ep);
    }
    return mt_deliver(ep);
}

int mt_ep_wait_fd(mt_ep *ep, int *fd)
{
    if (!mt_ep_valid(ep) || !fd)
        return WEFT_PLUGIN_ERR_INVALID;
    *fd = ep->epfd; /* an epoll descriptor polls readable while any of its sockets is ready */
    return WEFT_PLUGIN_OK;
}

/* The epoll set is level-triggered and always armed, so arming only checks for work the
 * descriptor cannot show: queued completions and connections that may resume. */
int mt_ep_arm(mt_ep *ep)
{
    if (!mt_ep_valid(ep))
        return WEFT_PLUGIN_ERR_INVALID;
    if (!weft_kit_list_empty(&ep->done) || ep->recheck)
        return WEFT_PLUGIN_ERR_AGAIN;
    struct epoll_event ev;
    return epoll_wait(ep->epfd, &ev, 1, 0) > 0 ? WEFT_PLUGIN_ERR_AGAIN : WEFT_PLUGIN_OK;
}
