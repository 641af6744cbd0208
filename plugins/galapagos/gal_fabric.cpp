/* Galapagos fabric: the software node.  Opens the listening socket and its thread (which
 * runs every pending handshake at once in one poll() loop), makes outgoing connections on
 * first use, and reads the connections for whichever endpoint progresses. */
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gal_internal.hpp"

#ifndef WEFT_VERSION_STRING
#define WEFT_VERSION_STRING "0"
#endif

namespace {

uint64_t random_node_id() {
    uint64_t v = 0;
    while (v == 0) gal::random_bytes(&v, sizeof v);
    return v;
}

/* The address to listen on and advertise: WEFT_GALAPAGOS_ADDR, else the first address of
 * WEFT_GALAPAGOS_IFACE, else the first non-loopback IPv4 interface that is up, else loopback. */
bool pick_address(uint32_t *ipv4, char *why, size_t why_len) {
    if (const char *a = getenv("WEFT_GALAPAGOS_ADDR"); a && *a) {
        in_addr in{};
        if (inet_pton(AF_INET, a, &in) != 1) {
            weft_kit_whyf(why, why_len, 0, "WEFT_GALAPAGOS_ADDR='%s' is not an IPv4 address", a);
            return false;
        }
        *ipv4 = in.s_addr;
        return true;
    }
    const char *iface = getenv("WEFT_GALAPAGOS_IFACE");
    if (iface && !*iface) iface = nullptr;
    ifaddrs *list = nullptr;
    if (getifaddrs(&list) != 0) {
        weft_kit_whyf(why, why_len, 0, "getifaddrs failed: %s", strerror(errno));
        return false;
    }
    bool found = false;
    for (ifaddrs *i = list; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
        if (iface ? strcmp(i->ifa_name, iface) != 0 : (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
        *ipv4 = reinterpret_cast<sockaddr_in *>(i->ifa_addr)->sin_addr.s_addr;
        found = true;
    }
    freeifaddrs(list);
    if (!found && iface) {
        weft_kit_whyf(why, why_len, 0, "WEFT_GALAPAGOS_IFACE='%s' has no IPv4 address that is up", iface);
        return false;
    }
    if (!found) *ipv4 = htonl(INADDR_LOOPBACK);
    return true;
}

void set_nodelay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

const char *peer_text(const sockaddr_in &sa, char *buf, size_t len) {
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
    snprintf(buf, len, "%s:%u", ip, unsigned(ntohs(sa.sin_port)));
    return buf;
}

/* Adds a handshaken connection to the node: readable through the epoll set, and the one to
 * send on if the node has none for that peer yet.  Returns the connection to send on. */
gal_conn *register_conn(weft_fabric *f, int fd, uint64_t peer_node) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    gal_conn *c = gal_conn_new(fd, peer_node);
    if (!c) {
        close(fd);
        return nullptr;
    }
    std::lock_guard<std::mutex> g(f->lock);
    uint32_t n = f->nconns.load();
    if (n == GAL_MAX_CONNS) {
        gal_log(f, WEFT_LOG_WARN, "more than %u connections: refusing one", GAL_MAX_CONNS);
        gal_conn_free(c);
        return nullptr;
    }
    f->conns[n].store(c, std::memory_order_release);
    f->nconns.store(n + 1, std::memory_order_release);
    struct epoll_event ev {};
    ev.events = EPOLLIN;
    ev.data.ptr = c;
    epoll_ctl(f->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
    for (auto &e : f->send_conns) {
        if (e.first == peer_node) {
            if (!e.second->dead.load()) return e.second;
            e.second = c; /* replaces a lost connection: reconnected */
            return c;
        }
    }
    f->send_conns.emplace_back(peer_node, c);
    return c;
}

/* Logged the first time, then at every power of two, so that a flood cannot flood the log;
 * every refusal is counted (weft_get_stats). */
bool worth_logging(uint64_t n) { return (n & (n - 1)) == 0; }

void note_refusal(weft_fabric *f, const sockaddr_in &sa, const char *why) {
    uint64_t n = ++f->refused_conns;
    if (!worth_logging(n)) return;
    char who[64];
    gal_log(f, WEFT_LOG_WARN, "refused a connection from %s: %s (%" PRIu64 " refused so far)",
            peer_text(sa, who, sizeof who), why, n);
}

/* A connection accepted and not yet authenticated. */
struct pending_handshake {
    int fd;
    sockaddr_in peer;
    std::chrono::steady_clock::time_point deadline;
    gal::acceptor side;
};

/* Connections still handshaking, at most: beyond, the oldest is closed.  A peer of the job
 * completes its handshake within a round trip, so a local flood of silent or slow connections
 * can neither exhaust this process's descriptors nor keep a peer out for long. */
constexpr size_t max_pending_handshakes = 64;

std::unique_ptr<pending_handshake> new_pending(weft_fabric *f, int fd, const sockaddr_in &sa) {
    uint8_t nonce[gal::nonce_bytes];
    gal::random_bytes(nonce, sizeof nonce);
    return std::unique_ptr<pending_handshake>(new pending_handshake{
        fd, sa, std::chrono::steady_clock::now() + std::chrono::milliseconds(gal::handshake_deadline_ms),
        gal::acceptor(f->key, f->node_id, nonce)});
}

/* Moves what the socket allows; returns false once the connection is finished with (handed to
 * the node, or refused and closed). */
bool drive_pending(weft_fabric *f, pending_handshake &p) {
    for (;;) {
        gal::hs_status s = p.side.status();
        if (s == gal::hs_status::done) {
            register_conn(f, p.fd, p.side.peer_node());
            return false;
        }
        if (s == gal::hs_status::refused) {
            note_refusal(f, p.peer, p.side.why());
            close(p.fd);
            return false;
        }
        const bool reading = s == gal::hs_status::need_input;
        ssize_t k = reading ? recv(p.fd, p.side.input_at(), p.side.input_missing(), MSG_DONTWAIT)
                            : send(p.fd, p.side.output_at(), p.side.output_left(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
        if (k <= 0) {
            note_refusal(f, p.peer, "no complete handshake (the connection closed)");
            close(p.fd);
            return false;
        }
        if (reading)
            p.side.consumed(size_t(k));
        else
            p.side.sent(size_t(k));
    }
}

void evict_oldest(weft_fabric *f, std::vector<std::unique_ptr<pending_handshake>> &pending) {
    pending_handshake &p = *pending.front();
    uint64_t n = ++f->evicted_conns;
    ++f->refused_conns;
    if (worth_logging(n)) {
        char who[64];
        gal_log(f, WEFT_LOG_WARN,
                "closed the handshake of %s to make room (%" PRIu64
                " such so far: more than %zu connections "
                "handshaking at once)",
                peer_text(p.peer, who, sizeof who), n, max_pending_handshakes);
    }
    close(p.fd);
    pending.erase(pending.begin());
}

/* Takes every waiting connection off the backlog.  Returns false when out of descriptors with
 * nothing left to close: the caller then stops accepting for a moment instead of spinning. */
bool accept_waiting(weft_fabric *f, std::vector<std::unique_ptr<pending_handshake>> &pending) {
    for (;;) {
        sockaddr_in sa{};
        socklen_t sl = sizeof sa;
        int fd = accept4(f->listen_fd, reinterpret_cast<sockaddr *>(&sa), &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if ((errno == EMFILE || errno == ENFILE) && !pending.empty()) {
                evict_oldest(f, pending);
                continue;
            }
            return errno == EAGAIN || errno == EWOULDBLOCK;
        }
        set_nodelay(fd);
        if (pending.size() >= max_pending_handshakes) evict_oldest(f, pending);
        auto p = new_pending(f, fd, sa);
        if (drive_pending(f, *p)) pending.push_back(std::move(p));
    }
}

/* The listener: every handshake at once, each bounded by one deadline for the whole of it. */
void listener_main(weft_fabric *f) {
    using clock = std::chrono::steady_clock;
    std::vector<std::unique_ptr<pending_handshake>> pending;
    std::vector<pollfd> pfds;
    clock::time_point accept_paused_until{};
    for (;;) {
        const auto now = clock::now();
        const bool accepting = now >= accept_paused_until;
        pfds.assign({{f->stop_fd, POLLIN, 0}, {accepting ? f->listen_fd : -1, POLLIN, 0}});
        int timeout = accepting
            ? -1
            : int(std::chrono::duration_cast<std::chrono::milliseconds>(accept_paused_until - now).count()) + 1;
        for (auto &p : pending) {
            bool reading = p->side.status() == gal::hs_status::need_input;
            pfds.push_back({p->fd, short(reading ? POLLIN : POLLOUT), 0});
            int left = int(std::chrono::duration_cast<std::chrono::milliseconds>(p->deadline - now).count()) + 1;
            if (timeout < 0 || left < timeout) timeout = left < 0 ? 0 : left;
        }
        int r = poll(pfds.data(), nfds_t(pfds.size()), timeout);
        if (r < 0 && errno != EINTR) break;
        if (r > 0 && (pfds[0].revents & POLLIN)) break;
        const auto after = clock::now();
        std::vector<std::unique_ptr<pending_handshake>> still;
        for (size_t i = 0; i < pending.size(); ++i) {
            pending_handshake &p = *pending[i];
            bool keep = true;
            if (r > 0 && pfds[i + 2].revents) keep = drive_pending(f, p);
            if (keep && after >= p.deadline) {
                static const std::string late =
                    "no complete handshake within " + std::to_string(gal::handshake_deadline_ms / 1000) + " s";
                note_refusal(f, p.peer, late.c_str());
                close(p.fd);
                keep = false;
            }
            if (keep) still.push_back(std::move(pending[i]));
        }
        pending.swap(still);
        if (r > 0 && (pfds[1].revents & POLLIN) && !accept_waiting(f, pending)) {
            if (errno == EMFILE || errno == ENFILE)
                gal_log(f, WEFT_LOG_WARN, "this process is out of file descriptors: not accepting for 100 ms");
            accept_paused_until = after + std::chrono::milliseconds(100);
        }
    }
    for (auto &p : pending) close(p->fd);
}

int fail_init(weft_fabric *f, int rc) {
    gal_cluster_close(f);
    if (f->listen_fd >= 0) close(f->listen_fd);
    if (f->stop_fd >= 0) close(f->stop_fd);
    if (f->epoll_fd >= 0) close(f->epoll_fd);
    delete f;
    return rc;
}

}  // namespace

int gal_init(const weft_plugin_host_t *host, weft_fabric_t **fabric, char *why, size_t why_len) {
    int rc = weft_kit_fabric_init_begin(GAL_PLUGIN_NAME, fabric, &host, why, why_len);
    if (rc != WEFT_PLUGIN_OK) return rc;
    auto *f = new (std::nothrow) weft_fabric;
    if (!f) return weft_kit_whyf(why, why_len, WEFT_PLUGIN_ERR_NOMEM, "galapagos: out of memory");
    f->host = host;
    f->listen_fd = f->stop_fd = f->epoll_fd = -1;
    f->ipv4 = 0;
    f->port = 0;
    for (auto &s : f->slots) s.store(nullptr);
    for (auto &c : f->conns) c.store(nullptr);
    f->nconns.store(0);
    f->bad_frames.store(0);
    f->refused_conns.store(0);
    f->node_id = random_node_id();
    /* The key every node of the job proves in handshakes comes from the token they share:
     * WEFT_GALAPAGOS_TOKEN (also given to hardware nodes, which have no launcher), else the
     * launcher's job token, else from a secret of our own (peers learn it from our addresses,
     * which only the job's bootstrap distributes). */
    const char *token = getenv("WEFT_GALAPAGOS_TOKEN");
    if (!token || !*token) token = weft_kit_host_hint(host, "weft_job_token");
    if (!token || !*token) token = getenv("WEFT_JOB_TOKEN");
    memset(f->secret, 0, sizeof f->secret);
    if (token && *token) {
        f->key = gal::key_from_text(token);
    } else {
        gal::random_bytes(f->secret, sizeof f->secret);
        f->secret[0] |= 1; /* never all zero: zero means the job's token */
        f->key = gal::key_from_secret(f->secret);
    }
    f->evicted_conns = 0;
    f->cluster = nullptr;
    if (!gal_budget_open(f, why, why_len) || !gal_cluster_open(f, why, why_len))
        return fail_init(f, WEFT_PLUGIN_ERR_INVALID);
    const char *loop = getenv("WEFT_GALAPAGOS_LOOPBACK");
    f->force_tcp = loop && strcmp(loop, "tcp") == 0;
    uint16_t port = f->port; /* the cluster file's, or 0: any */
    if (!f->ipv4 && !pick_address(&f->ipv4, why, why_len)) return fail_init(f, WEFT_PLUGIN_ERR_INVALID);
    if (const char *p = getenv("WEFT_GALAPAGOS_PORT"); p && *p) {
        char *end = nullptr;
        long v = strtol(p, &end, 10);
        if (*end || v < 0 || v > 65535) {
            weft_kit_whyf(why, why_len, 0, "WEFT_GALAPAGOS_PORT='%s' is not a port number", p);
            return fail_init(f, WEFT_PLUGIN_ERR_INVALID);
        }
        port = uint16_t(v);
    }
    f->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0); /* accept until EAGAIN */
    f->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    f->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (f->listen_fd < 0 || f->stop_fd < 0 || f->epoll_fd < 0) {
        weft_kit_whyf(why, why_len, 0, "socket/eventfd/epoll: %s", strerror(errno));
        return fail_init(f, WEFT_PLUGIN_ERR_OTHER);
    }
    int one = 1;
    setsockopt(f->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = f->ipv4; /* the job's interface only, not INADDR_ANY */
    sa.sin_port = htons(port);
    if (bind(f->listen_fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0 || listen(f->listen_fd, 128) != 0) {
        char ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
        weft_kit_whyf(why, why_len, 0,
                      "cannot listen on %s:%u: %s (set WEFT_GALAPAGOS_ADDR or "
                      "WEFT_GALAPAGOS_PORT)",
                      ip, unsigned(port), strerror(errno));
        return fail_init(f, WEFT_PLUGIN_ERR_UNREACHABLE);
    }
    socklen_t sl = sizeof sa;
    getsockname(f->listen_fd, reinterpret_cast<sockaddr *>(&sa), &sl);
    f->port = ntohs(sa.sin_port);
    try {
        f->listener = std::thread(listener_main, f);
    } catch (...) {
        weft_kit_whyf(why, why_len, 0, "cannot start the listener thread");
        return fail_init(f, WEFT_PLUGIN_ERR_OTHER);
    }
    *fabric = f;
    return WEFT_PLUGIN_OK;
}

int gal_finalize(weft_fabric_t *f) {
    if (!f) return WEFT_PLUGIN_ERR_INVALID;
    uint64_t one = 1;
    if (write(f->stop_fd, &one, sizeof one) < 0) { /* the listener then returns */
    }
    if (f->listener.joinable()) f->listener.join();
    uint32_t n = f->nconns.load();
    for (uint32_t i = 0; i < n; ++i) {
        gal_conn *c = f->conns[i].load();
        gal_deliver_abort(c->rx);
        gal_conn_free(c);
    }
    if (f->bad_frames.load() || f->refused_conns.load())
        gal_log(f, WEFT_LOG_INFO, "%" PRIu64 " packets were dropped as malformed and %" PRIu64 " connections refused",
                f->bad_frames.load(), f->refused_conns.load());
    return fail_init(f, WEFT_PLUGIN_OK);
}

int gal_query(weft_fabric_t *f, weft_fabric_caps_t *caps) {
    if (!f) return WEFT_PLUGIN_ERR_INVALID;
    weft_fabric_caps_t all{};
    all.flags = WEFT_FABRIC_CAP_THREAD_SAFE | WEFT_FABRIC_CAP_WAIT_FD;
    all.max_message_size = SIZE_MAX / 2;
    all.inject_size = 0;
    all.eager_size = SIZE_MAX / 2; /* no rendezvous: the receiver buffers what is unexpected */
    all.max_address_size = gal::address_bytes;
    all.context_space = 0; /* per-operation state (gal_op) comes from the endpoint's free list */
    /* An older core passes a shorter struct: nothing past its struct_size is written. */
    return weft_kit_caps_write(caps, &all);
}

gal_conn *gal_connect(weft_fabric *f, uint32_t ipv4, uint16_t port, const gal::key &key, uint64_t expect_node) {
    /* One connect at a time, so two threads never connect to one node at once; the table
     * lock is not held across the handshake (the listener needs it to register). */
    std::lock_guard<std::mutex> connecting(f->connect_lock);
    if (expect_node) {
        std::lock_guard<std::mutex> g(f->lock);
        for (auto &e : f->send_conns)
            if (e.first == expect_node && !e.second->dead.load()) return e.second;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return nullptr;
    set_nodelay(fd);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = ipv4;
    sa.sin_port = htons(port);
    char who[64];
    if (connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0) {
        gal_log(f, WEFT_LOG_WARN, "cannot connect to the node at %s: %s", peer_text(sa, who, sizeof who),
                strerror(errno));
        close(fd);
        return nullptr;
    }
    uint8_t nonce[gal::nonce_bytes];
    gal::random_bytes(nonce, sizeof nonce);
    gal::connector side(key, f->node_id, nonce, expect_node);
    const char *why = nullptr;
    if (!gal::handshake_run(fd, side, gal::handshake_deadline_ms, &why)) {
        gal_log(f, WEFT_LOG_WARN, "no connection to the node at %s: %s", peer_text(sa, who, sizeof who), why);
        close(fd);
        return nullptr;
    }
    return register_conn(f, fd, side.peer_node());
}

gal_conn *gal_conn_for(weft_fabric *f, const weft_fabric_peer *peer) {
    return gal_connect(f, peer->ipv4, peer->port, peer->key, peer->node_id);
}

int gal_node_progress(weft_fabric *f) {
    struct epoll_event ev[16];
    int n = epoll_wait(f->epoll_fd, ev, 16, 0);
    int handled = 0;
    bool flush = false;
    for (int i = 0; i < n; ++i) {
        auto *c = static_cast<gal_conn *>(ev[i].data.ptr);
        if (ev[i].events & EPOLLOUT) flush = true;
        if (!(ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))) continue;
        std::unique_lock<std::mutex> g(c->read_lock, std::try_to_lock);
        if (!g.owns_lock() || c->dead.load(std::memory_order_acquire)) continue;
        int k = gal_conn_read(f, c, (ev[i].events & (EPOLLERR | EPOLLHUP)) != 0);
        if (k < 0)
            gal_conn_fail(f, c, "the peer closed the connection or sent a malformed packet", true);
        else
            handled += k;
    }
    if (flush) gal_node_flush(f);
    return handled;
}

void gal_node_flush(weft_fabric *f) {
    uint32_t n = f->nconns.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < n; ++i) gal_conn_flush(f, f->conns[i].load(std::memory_order_acquire));
}

namespace {

/* Counters of hostile input (ABI 1.4), for weft_get_stats. */
int gal_stats(weft_fabric_t *f, weft_fabric_stats_t *out) {
    if (!f || !out || out->struct_size < offsetof(weft_fabric_stats_t, refused_connections) + sizeof(uint64_t))
        return WEFT_PLUGIN_ERR_INVALID;
    out->dropped_packets = f->bad_frames.load();
    out->refused_connections = f->refused_conns.load();
    return WEFT_PLUGIN_OK;
}

/* Every operation by name, in the order of weft_fabric_ops_v1_t; NULL: not supported. */
const weft_fabric_ops_v1_t gal_ops = {
    .init = gal_init,
    .finalize = gal_finalize,
    .query = gal_query,
    .ep_open = gal_ep_open,
    .ep_close = gal_ep_close,
    .ep_address = gal_ep_address,
    .ep_connect = gal_ep_connect,
    .ep_disconnect = gal_ep_disconnect,
    .tag_send = gal_tag_send,
    .tag_recv = gal_tag_recv,
    .tag_probe = gal_tag_probe,
    .cancel = gal_tag_cancel,
    .ep_progress = gal_ep_progress,
    .ep_wait_fd = gal_ep_wait_fd,
    .ep_arm = gal_ep_arm,
    .kernel_table = gal_kernel_table,
    .kernel_bind = gal_kernel_bind,
    .kernel_unbind = gal_kernel_unbind,
    .kernel_send = gal_kernel_send,
    .ep_peer_failed = gal_ep_peer_failed,
    .stats = gal_stats,
    .tag_send_now = nullptr, /* optional; the core sends through tag_send */
    .tag_sendv = nullptr,    /* optional; the core packs non-contiguous datatypes */
    .tag_recvv = nullptr,
    .tag_send_sync = nullptr, /* optional; the core acknowledges synchronous messages */
};

}  // namespace

WEFT_KIT_PLUGIN_DEFINE(WEFT_PLUGIN_KIND_FABRIC, GAL_PLUGIN_NAME, "1.0 (Galapagos packets over TCP)", 10, &gal_ops);
