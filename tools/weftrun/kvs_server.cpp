// weftrun's key-value server (see kvs_server.hpp and wire/kvs_wire.hpp).
#include "kvs_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kvs_wire.hpp"

namespace weftrun {

namespace kvs = weft::kvs;
using clock_type = std::chrono::steady_clock;

// More unauthenticated connections than this at once: the oldest is closed to make room (a
// local flood of idle connections must never keep a rank, which says hello at once, out).
constexpr size_t max_pending_conns = 256;

struct kvs_server::conn {
    int fd = -1;
    int rank = -1;  // set once the hello is accepted
    std::string in, out;
    bool closing = false;  // flush `out`, then close
    bool dead = false;     // remove at the next sweep
    clock_type::time_point hello_by;
    sockaddr_in peer{};
};

kvs_server::kvs_server() : log_([](const std::string &m) { std::fprintf(stderr, "weftrun: %s\n", m.c_str()); }) {}

kvs_server::~kvs_server() {
    for (auto &c : conns_)
        if (c->fd >= 0) ::close(c->fd);
    if (listen_fd_ >= 0) ::close(listen_fd_);
}

bool kvs_server::open(int nranks, std::string token, const std::string &host, std::string &why) {
    nranks_ = nranks;
    token_ = std::move(token);
    state_.assign(nranks, rank_state::waiting);
    by_rank_.assign(nranks, nullptr);
    kv_.assign(nranks, {});
    in_fence_.assign(nranks, 0);
    reported_.assign(nranks, 0);
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) {
        why = std::string("socket: ") + std::strerror(errno);
        return false;
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
        why = "'" + host + "' is not an IPv4 address";
        return false;
    }
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || ::listen(listen_fd_, 1024) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr *>(&a), &len) != 0) {
        why = "cannot listen on " + host + ": " + std::strerror(errno);
        return false;
    }
    port_ = ntohs(a.sin_port);
    return true;
}

void kvs_server::add_pollfds(std::vector<pollfd> &fds) {
    // Sweep connections closed during the previous round first.
    conns_.erase(std::remove_if(conns_.begin(), conns_.end(), [](const auto &c) { return c->dead; }), conns_.end());
    polled_.clear();
    fds.push_back({listen_fd_, POLLIN, 0});
    for (auto &c : conns_) {
        short ev = c->closing ? 0 : POLLIN;
        if (!c->out.empty()) ev |= POLLOUT;
        fds.push_back({c->fd, ev, 0});
        polled_.push_back(c.get());
    }
}

int kvs_server::timeout_ms() const {
    auto now = clock_type::now();
    long long best = -1;
    for (auto &c : conns_) {
        if (c->rank >= 0 || c->dead) continue;
        long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(c->hello_by - now).count();
        ms = std::max(ms, 0LL) + 1;
        if (best < 0 || ms < best) best = ms;
    }
    return static_cast<int>(std::min(best, 1LL << 30));
}

void kvs_server::process(const std::vector<pollfd> &fds, size_t first) {
    if (fds[first].revents & POLLIN) accept_all();
    for (size_t i = 0; i < polled_.size() && first + 1 + i < fds.size(); ++i) {
        conn &c = *polled_[i];
        short re = fds[first + 1 + i].revents;
        if (c.dead) continue;
        if (re & (POLLIN | POLLHUP | POLLERR)) read_conn(c);
        if (!c.dead && (re & POLLOUT)) write_conn(c);
    }
    auto now = clock_type::now();
    for (auto &c : conns_)
        if (!c->dead && c->rank < 0 && !c->closing && now >= c->hello_by)
            drop(*c, "closed a connection from " + peer_name(*c) + " that sent no job token in time");
}

void kvs_server::accept_all() {
    for (;;) {
        sockaddr_in peer{};
        socklen_t len = sizeof peer;
        int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr *>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) log_(std::string("accept failed: ") + std::strerror(errno));
            return;
        }
        size_t pending =
            std::count_if(conns_.begin(), conns_.end(), [](const auto &c) { return !c->dead && c->rank < 0; });
        if (pending >= max_pending_conns) evict_oldest_unauthenticated();
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        auto c = std::make_unique<conn>();
        c->fd = fd;
        c->peer = peer;
        c->hello_by = clock_type::now() + hello_timeout_;
        conns_.push_back(std::move(c));
    }
}

void kvs_server::evict_oldest_unauthenticated() {
    conn *oldest = nullptr;
    for (auto &c : conns_)
        if (!c->dead && c->rank < 0 && (oldest == nullptr || c->hello_by < oldest->hello_by)) oldest = c.get();
    if (oldest == nullptr) return;
    // Logged the first time, then at every power of two, so that a flood cannot flood the log.
    ++evicted_;
    std::string why;
    if (evicted_ == 1)
        why = "closed a connection from " + peer_name(*oldest) + " that sent no job token, to make room: more than " +
            std::to_string(max_pending_conns) + " connections without one at once (a local flood?)";
    else if ((evicted_ & (evicted_ - 1)) == 0)
        why = "closed " + std::to_string(evicted_) + " connections that sent no job token so far, to make room (the " +
            "latest from " + peer_name(*oldest) + ")";
    drop(*oldest, why);
}

std::string kvs_server::peer_name(const conn &c) const {
    char ip[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &c.peer.sin_addr, ip, sizeof ip);
    std::string s = std::string(ip) + ":" + std::to_string(ntohs(c.peer.sin_port));
    if (c.rank >= 0) s = "rank " + std::to_string(c.rank) + " (" + s + ")";
    return s;
}

void kvs_server::read_conn(conn &c) {
    char buf[65536];
    for (;;) {
        ssize_t n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
            c.in.append(buf, static_cast<size_t>(n));
            if (static_cast<size_t>(n) < sizeof buf) break;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        // EOF or error: drop() marks a rank that leaves without finalize as gone for fences.
        drop(c, "");
        return;
    }
    size_t off = 0;
    while (!c.dead && !c.closing) {
        std::string_view body;
        size_t used = 0;
        uint32_t limit = c.rank >= 0 ? kvs::max_frame : kvs::max_hello_frame;
        int r = kvs::next_frame(std::string_view(c.in).substr(off), limit, body, used);
        if (r == 0) break;
        if (r < 0) {
            reply_error(c, "frame length out of range");
            c.closing = true;
            log_("closed the connection of " + peer_name(c) + ": frame length out of range");
            break;
        }
        handle_frame(c, body);
        off += used;
    }
    c.in.erase(0, off);
    if (!c.dead && !c.out.empty()) write_conn(c);
}

void kvs_server::write_conn(conn &c) {
    while (!c.out.empty()) {
        ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            c.out.erase(0, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        drop(c, "");
        return;
    }
    if (c.closing) drop(c, "");
}

void kvs_server::drop(conn &c, const std::string &why) {
    if (c.dead) return;
    if (!why.empty()) log_(why);
    ::close(c.fd);
    c.fd = -1;
    c.dead = true;
    if (c.rank >= 0) {
        by_rank_[c.rank] = nullptr;
        if (state_[c.rank] == rank_state::connected) rank_left(c.rank);
    }
}

void kvs_server::rank_exited(int rank) {
    if (rank < 0 || rank >= nranks_) return;
    if (state_[rank] != rank_state::finalized) rank_left(rank);
}

void kvs_server::rank_left(int rank) {
    if (state_[rank] != rank_state::finalized) state_[rank] = rank_state::gone;
    check_fence();
}

std::optional<abort_request> kvs_server::take_abort() {
    auto a = std::move(abort_);
    abort_.reset();
    return a;
}

std::optional<failure_report> kvs_server::take_failure_report() {
    if (reports_.empty()) return std::nullopt;
    failure_report f = std::move(reports_.front());
    reports_.erase(reports_.begin());
    return f;
}

void kvs_server::reply_ok(conn &c, const std::string *value) {
    kvs::writer w(kvs::op_ok);
    if (value) w.bytes(*value);
    c.out += w.finish();
}

void kvs_server::reply_error(conn &c, const std::string &message) {
    c.out += kvs::writer(kvs::op_error).bytes(message).finish();
}

void kvs_server::handle_hello(conn &c, std::string_view body) {
    kvs::reader r(body);
    uint8_t op;
    uint32_t version = 0, rank = 0;
    std::string_view token;
    std::string refusal;
    if (!r.op(op) || op != kvs::op_hello || !r.u32(version) || !r.bytes(token) || !r.u32(rank) || !r.done())
        refusal = "malformed hello (not a weft client?)";
    else if (version != kvs::protocol_version)
        refusal = "protocol version " + std::to_string(version) + " (weftrun speaks " +
            std::to_string(kvs::protocol_version) + "; use the weftrun of the same Weft build)";
    else if (!kvs::token_equal(token, token_))
        refusal = "wrong job token";
    else if (rank >= static_cast<uint32_t>(nranks_))
        refusal = "rank " + std::to_string(rank) + " out of range for a job of " + std::to_string(nranks_);
    else if (state_[rank] != rank_state::waiting)
        refusal = "rank " + std::to_string(rank) + " already connected";
    if (!refusal.empty()) {
        log_("refused a connection from " + peer_name(c) + ": " + refusal);
        reply_error(c, "weftrun refused the connection: " + refusal);
        c.closing = true;
        return;
    }
    c.rank = static_cast<int>(rank);
    state_[rank] = rank_state::connected;
    by_rank_[rank] = &c;
    reply_ok(c);
}

void kvs_server::handle_frame(conn &c, std::string_view body) {
    if (c.rank < 0) {
        handle_hello(c, body);
        return;
    }
    kvs::reader r(body);
    uint8_t op = 0;
    r.op(op);
    bool ok = true;
    switch (op) {
        case kvs::op_put: {
            std::string_view key, value;
            if (!(ok = r.bytes(key) && r.bytes(value) && r.done())) break;
            kv_[c.rank][std::string(key)] = std::string(value);
            reply_ok(c);
            break;
        }
        case kvs::op_fence:
            if (!(ok = r.done())) break;
            if (in_fence_[c.rank]) {
                reply_error(c, "rank already in this fence");
                break;
            }
            in_fence_[c.rank] = 1;
            ++fence_count_;
            check_fence();
            break;
        case kvs::op_get: {
            uint32_t rank;
            std::string_view key;
            if (!(ok = r.u32(rank) && r.bytes(key) && r.done())) break;
            if (rank >= static_cast<uint32_t>(nranks_)) {
                reply_error(c,
                            "rank " + std::to_string(rank) + " out of range for a job of " + std::to_string(nranks_));
                break;
            }
            auto it = kv_[rank].find(std::string(key));
            if (it == kv_[rank].end())
                reply_error(c,
                            "key '" + std::string(key) + "' of rank " + std::to_string(rank) +
                                " not found (not put, or read before a fence)");
            else
                reply_ok(c, &it->second);
            break;
        }
        case kvs::op_abort: {
            uint32_t code;
            std::string_view message;
            if (!(ok = r.u32(code) && r.bytes(message) && r.done())) break;
            if (!abort_) abort_ = abort_request{c.rank, static_cast<int>(code), std::string(message)};
            reply_ok(c);
            break;
        }
        case kvs::op_failed: {  // no reply (see kvs_wire.hpp)
            uint32_t rank;
            std::string_view why;
            if (!(ok = r.u32(rank) && r.bytes(why) && r.done())) break;
            if (rank >= static_cast<uint32_t>(nranks_) || static_cast<int>(rank) == c.rank || reported_[c.rank] ||
                reported_[rank] || state_[rank] == rank_state::finalized || state_[rank] == rank_state::gone)
                break;
            reported_[rank] = 1;
            reports_.push_back({static_cast<int>(rank), c.rank, std::string(why)});
            rank_left(static_cast<int>(rank));
            break;
        }
        case kvs::op_finalize:
            if (!(ok = r.done())) break;
            state_[c.rank] = rank_state::finalized;
            reply_ok(c);
            c.closing = true;
            check_fence();
            break;
        default: ok = false;
    }
    if (!ok) {
        log_("closed the connection of " + peer_name(c) + ": malformed '" + kvs::op_name(op) + "' request");
        reply_error(c, std::string("malformed '") + kvs::op_name(op) + "' request");
        c.closing = true;
        // The rank can no longer take part in fences.
        state_[c.rank] = rank_state::gone;
        check_fence();
    }
}

void kvs_server::check_fence() {
    if (fence_count_ == 0) return;
    std::string fail;
    int needed = nranks_;  // --keep-going: the dead are not waited for
    if (keep_going_)
        for (int r = 0; r < nranks_; ++r)
            if (!in_fence_[r] && state_[r] == rank_state::gone) --needed;
    if (fence_count_ == needed) {
        // complete
    } else {
        for (int r = 0; r < nranks_; ++r)
            if (!in_fence_[r] &&
                (state_[r] == rank_state::finalized || (state_[r] == rank_state::gone && !keep_going_))) {
                fail = "rank " + std::to_string(r) +
                    (state_[r] == rank_state::finalized ? " finalized"
                         : reported_[r]                 ? " was found failed"
                                                        : " exited or disconnected") +
                    " before joining this fence";
                break;
            }
        if (fail.empty()) return;  // still waiting for live ranks
    }
    for (int r = 0; r < nranks_; ++r) {
        if (!in_fence_[r]) continue;
        in_fence_[r] = 0;
        conn *c = by_rank_[r];
        if (c == nullptr || c->dead) continue;
        if (fail.empty())
            reply_ok(*c);
        else
            reply_error(*c, fail);
        // Flushed when poll reports POLLOUT: writing here could drop a connection and re-enter.
    }
    fence_count_ = 0;
}

}  // namespace weftrun
