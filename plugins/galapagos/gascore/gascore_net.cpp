/* TCP side of the model: blocking sockets, one reader thread per connection.  Readers block in
 * recv(); shut_down() wakes them with shutdown(2).  Nothing polls in a loop. */
#include "gascore_net.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace gascore {

namespace {

constexpr uint64_t node_id_base = 0x6a5c0de000000000ull;

/* Reads exactly n bytes.  timeout_ms < 0: block.  1: done; 0: orderly close before n bytes;
 * -1: error or timeout (errno ETIMEDOUT). */
int read_exact(int fd, uint8_t *buf, size_t n, int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    size_t got = 0;
    while (got < n) {
        if (timeout_ms >= 0) {
            auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            pollfd p{fd, POLLIN, 0};
            int r = left.count() > 0 ? poll(&p, 1, int(left.count())) : 0;
            if (r == 0) {
                errno = ETIMEDOUT;
                return -1;
            }
            if (r < 0) {
                if (errno == EINTR) continue;
                return -1;
            }
        }
        ssize_t k = recv(fd, buf + got, n - got, 0);
        if (k == 0) return 0;
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        got += size_t(k);
    }
    return 1;
}

std::string peer_name(const sockaddr_in &sa) {
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
    return std::string(ip) + ":" + std::to_string(ntohs(sa.sin_port));
}

void set_nodelay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void set_send_timeout(int fd, int ms) {
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

}  // namespace

connection::~connection() {
    if (fd >= 0) close(fd);
}

bool connection::write_packet(uint64_t header, const uint8_t *payload, size_t len) {
    uint8_t head[gal::flit_bytes];
    gal::put_u64(head, header);
    std::lock_guard<std::mutex> g(write_lock);
    iovec iov[2] = {{head, sizeof head}, {const_cast<uint8_t *>(payload), len}};
    size_t total = sizeof head + len, done = 0;
    while (done < total) {
        /* Skip what an earlier partial write already sent. */
        iovec rest[2];
        int n = 0;
        size_t skip = done;
        for (const iovec &v : iov) {
            if (skip >= v.iov_len) {
                skip -= v.iov_len;
                continue;
            }
            rest[n].iov_base = static_cast<uint8_t *>(v.iov_base) + skip;
            rest[n].iov_len = v.iov_len - skip;
            skip = 0;
            ++n;
        }
        msghdr msg{};
        msg.msg_iov = rest;
        msg.msg_iovlen = size_t(n);
        ssize_t k = sendmsg(fd, &msg, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR) continue;
            shutdown(fd, SHUT_RDWR); /* the reader sees it and forgets the connection */
            return false;
        }
        done += size_t(k);
    }
    return true;
}

network::network(const gal::cluster &cluster, int my_node, const gal::key &key, stats &counters)
    : cluster_(cluster), my_node_(my_node), key_(key), stats_(counters) {}

network::~network() {
    shut_down();
    join();
}

bool network::listen(std::string &why) {
    const gal::cluster_node *me = cluster_.node(my_node_);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(me->port);
    if (inet_pton(AF_INET, me->host.c_str(), &sa.sin_addr) != 1) {
        why = "node " + std::to_string(my_node_) + ": bad IPv4 address " + me->host;
        return false;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        why = std::string("socket: ") + strerror(errno);
        return false;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0 || ::listen(fd, 64) != 0) {
        why = "cannot listen on " + me->host + ":" + std::to_string(me->port) + ": " + strerror(errno);
        close(fd);
        return false;
    }
    listen_fd_ = fd;
    return true;
}

void network::accept_until(int signal_fd) {
    for (;;) {
        pollfd p[2] = {{listen_fd_, POLLIN, 0}, {signal_fd, POLLIN, 0}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            log_always("poll: %s", strerror(errno));
            return;
        }
        if (p[1].revents) return;
        if (!(p[0].revents & POLLIN)) continue;
        sockaddr_in sa{};
        socklen_t salen = sizeof sa;
        int fd = accept4(listen_fd_, reinterpret_cast<sockaddr *>(&sa), &salen, SOCK_CLOEXEC);
        if (fd < 0) continue; /* the peer gave up already, or out of descriptors: try again later */
        set_nodelay(fd);
        auto c = std::make_shared<connection>();
        c->fd = fd;
        c->peer = peer_name(sa);
        reap_readers();
        spawn_reader(std::move(c), true);
    }
}

void network::spawn_reader(std::shared_ptr<connection> c, bool accepted) {
    {
        std::lock_guard<std::mutex> g(routes_lock_);
        live_[c.get()] = c;
        if (stopping_) shutdown(c->fd, SHUT_RDWR);
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::lock_guard<std::mutex> g(readers_lock_);
    readers_.push_back({std::thread([this, c, accepted, done] {
                            serve(c, accepted);
                            *done = true;
                        }),
                        done});
}

void network::reap_readers() {
    std::lock_guard<std::mutex> g(readers_lock_);
    for (auto it = readers_.begin(); it != readers_.end();) {
        if (*it->done) {
            it->thread.join();
            it = readers_.erase(it);
        } else {
            ++it;
        }
    }
}

bool network::accept_handshake(connection &c) {
    uint8_t nonce[gal::nonce_bytes];
    gal::random_bytes(nonce, sizeof nonce);
    gal::acceptor side(key_, node_id_base | uint64_t(my_node_), nonce);
    const char *reason = nullptr;
    bool ok;
    {
        std::lock_guard<std::mutex> g(c.write_lock); /* nothing else writes before it is done */
        ok = gal::handshake_run(c.fd, side, gal::handshake_deadline_ms, &reason);
    }
    if (!ok) {
        if (!stopping_) log_line("refused a connection from %s: %s", c.peer.c_str(), reason);
        stats_.refused_connections++;
    }
    return ok;
}

void network::serve(std::shared_ptr<connection> c, bool accepted) {
    if (!accepted || accept_handshake(*c)) {
        std::vector<uint8_t> buf(gal::max_packet_bytes);
        for (;;) {
            uint8_t head[gal::flit_bytes];
            if (read_exact(c->fd, head, sizeof head, -1) != 1) break;
            gal::packet_header h;
            gal::header_error e = gal::header_decode(gal::get_u64(head), h);
            if (e != gal::header_error::none) {
                if (!stopping_)
                    log_line("bad packet header from %s: %s; closing the connection", c->peer.c_str(),
                             gal::header_error_text(e));
                stats_.bad_headers++;
                break;
            }
            size_t len = size_t(h.flits) * gal::flit_bytes;
            if (len && read_exact(c->fd, buf.data(), len, -1) != 1) break;
            if (h.kind == gal::KIND_ROUTE) {
                std::lock_guard<std::mutex> g(routes_lock_);
                for (size_t i = 0; i < h.flits; ++i) {
                    uint8_t id = buf[i * gal::flit_bytes]; /* low 8 bits of the flit */
                    bool local = false;
                    for (int k : local_kernels_) local |= k == id;
                    if (!local) routes_[id] = c;
                }
                routes_changed_.notify_all();
            } else if (h.kind == gal::KIND_RAW) {
                deliver_(h, buf.data(), len);
            } else {
                stats_.weft_messages++; /* Weft tagged messages are not for hardware */
            }
        }
    }
    forget(c);
}

void network::forget(const std::shared_ptr<connection> &c) {
    shutdown(c->fd, SHUT_RDWR);
    std::lock_guard<std::mutex> g(routes_lock_);
    live_.erase(c.get());
    for (auto &r : routes_)
        if (r.lock() == c) r.reset();
    for (auto it = outbound_.begin(); it != outbound_.end(); ++it)
        if (it->second == c) {
            outbound_.erase(it);
            break;
        }
}

std::shared_ptr<connection> network::connect_to(int node_index) {
    const gal::cluster_node *n = cluster_.node(node_index);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(n->port);
    if (inet_pton(AF_INET, n->host.c_str(), &sa.sin_addr) != 1) return nullptr;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return nullptr;
    auto c = std::make_shared<connection>();
    c->fd = fd;
    c->peer = peer_name(sa);
    c->hw_node = node_index;
    set_send_timeout(fd, gal::handshake_deadline_ms); /* bounds connect() too */
    if (::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0) return nullptr;
    uint8_t nonce[gal::nonce_bytes];
    gal::random_bytes(nonce, sizeof nonce);
    gal::connector side(key_, node_id_base | uint64_t(my_node_), nonce, 0);
    const char *why = nullptr;
    if (!gal::handshake_run(fd, side, gal::handshake_deadline_ms, &why)) {
        log_line("no connection to node %d (%s): %s", node_index, c->peer.c_str(), why);
        return nullptr;
    }
    set_send_timeout(fd, 0);
    set_nodelay(fd);
    /* Announce the kernels hosted here, so the peer answers on this connection. */
    std::vector<uint8_t> ids(local_kernels_.size() * gal::flit_bytes, 0);
    for (size_t i = 0; i < local_kernels_.size(); ++i) ids[i * gal::flit_bytes] = uint8_t(local_kernels_[i]);
    gal::packet_header rh;
    rh.flits = uint16_t(local_kernels_.size());
    rh.kind = gal::KIND_ROUTE;
    if (!c->write_packet(gal::header_encode(rh), ids.data(), ids.size())) return nullptr;
    spawn_reader(c, false);
    return c;
}

std::shared_ptr<connection> network::route_for(uint8_t dst, bool patient) {
    const gal::cluster_kernel *k = cluster_.kernel(dst);
    const gal::cluster_node *n = k ? cluster_.node(k->node) : nullptr;
    const bool other_hw = n && n->hardware && n->index != my_node_;
    auto waited_since = std::chrono::steady_clock::now();
    bool told = false;
    std::unique_lock<std::mutex> lk(routes_lock_);
    for (;;) {
        if (stopping_) return nullptr;
        if (auto c = routes_[dst].lock()) return c;
        if (other_hw) {
            auto it = outbound_.find(n->index);
            if (it != outbound_.end()) return it->second;
            lk.unlock();
            std::shared_ptr<connection> c;
            {
                std::lock_guard<std::mutex> g(connect_lock_);
                {
                    std::lock_guard<std::mutex> g2(routes_lock_);
                    auto again = outbound_.find(n->index);
                    if (again != outbound_.end()) return again->second;
                }
                c = connect_to(n->index);
                if (c) {
                    std::lock_guard<std::mutex> g2(routes_lock_);
                    outbound_[n->index] = c;
                }
            }
            if (c) return c;
            lk.lock();
        } else if (!n || n->index == my_node_) {
            return nullptr; /* not in the cluster file: nobody will ever announce it */
        }
        if (!patient) return nullptr;
        if (!told && std::chrono::steady_clock::now() - waited_since > std::chrono::seconds(5)) {
            log_line("still waiting for a route to kernel %d (node %d)", dst, n->index);
            told = true;
        }
        /* Announcements notify; the timeout paces connection retries to hardware nodes. */
        routes_changed_.wait_for(lk, std::chrono::milliseconds(200));
    }
}

bool network::send(uint8_t dst, uint8_t src, const uint8_t *data, size_t len, bool patient) {
    std::shared_ptr<connection> c = route_for(dst, patient);
    if (!c) return false;
    gal::packet_header h;
    h.dest = dst;
    h.src = src;
    h.flits = uint16_t(len / gal::flit_bytes);
    h.kind = gal::KIND_RAW;
    return c->write_packet(gal::header_encode(h), data, len);
}

void network::shut_down() {
    std::lock_guard<std::mutex> g(routes_lock_);
    stopping_ = true;
    if (listen_fd_ >= 0) {
        close(listen_fd_);
        listen_fd_ = -1;
    }
    for (auto &[raw, weak] : live_)
        if (auto c = weak.lock()) shutdown(c->fd, SHUT_RDWR);
    routes_changed_.notify_all();
}

void network::join() {
    for (;;) {
        std::list<reader> finished;
        {
            std::lock_guard<std::mutex> g(readers_lock_);
            if (readers_.empty()) return;
            finished.splice(finished.end(), readers_);
        }
        for (reader &r : finished) r.thread.join();
    }
}

}  // namespace gascore
