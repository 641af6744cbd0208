#include "transport/liveness.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "base/error.hpp"
#include "base/net_address.hpp"
#include "transport/peer_failure.hpp"
#include "base/stats.hpp"
#include "weft/plugin.h"
#include "weft/weft.h"

namespace weft {
namespace {

using clock_type = std::chrono::steady_clock;

// The protocol, on each connection (the higher rank connects to the lower):
//   the connecting side first sends its hello: "WLIV", its rank (u32), the listener's token (u64);
//   then each side sends 'H' every WEFT_PEER_TIMEOUT/4 s (the heartbeat; from the monitor
//   thread, so it goes on while the application computes) and 'B' when it finalizes (goodbye),
//   then closes.  Other bytes are ignored.
// A side that hears nothing for WEFT_PEER_TIMEOUT s declares the peer failed: "not responding"
// when the peer's kernel still acknowledges what this side sends (a stopped or wedged process,
// which TCP keepalive cannot see), "unreachable" when nothing comes back (node or link down).
// A build from before the heartbeat sends no 'H': its ranks would be reported not responding,
// so all the processes of a job must run the same Weft.
constexpr const char *key = "weft_liveness";
constexpr char magic[4] = {'W', 'L', 'I', 'V'};
constexpr size_t hello_size = 16;  // magic, the connecting rank (u32), the listener's token (u64)
constexpr char goodbye = 'B';
constexpr char heartbeat = 'H';

struct link {
    int fd = -1;
    int rank = -1;  // -1: accepted, hello not yet read
    size_t hello_got = 0;
    char hello[hello_size];
    clock_type::time_point hello_deadline;
    clock_type::time_point heard;          // when the peer last sent anything (hello, heartbeat)
    char peer[INET_ADDRSTRLEN + 8] = "?";  // "IPv4:port" of an accepted connection, for the log
    bool said_goodbye = false;
};

struct monitor {
    int rank = 0, size = 0;
    int timeout_s = 5;
    int listen_fd = -1, wake_fd = -1;
    uint64_t token = 0;
    std::vector<link> links;
    std::vector<bool> connected;  // per rank: its connection is established
    clock_type::time_point connect_deadline;
    clock_type::time_point next_beat, last_wake;
    bootstrap *boot = nullptr;  // told of the peers that may still run (bootstrap::report_failed)
    std::thread thread;
    bool running = false;
    std::string address;  // "IPv4:port", for weft_get_runtime_info
    // Kept open to be closed when accept fails for want of descriptors: it makes room to take
    // the waiting connection off the backlog and close it, so the listener stops being
    // readable (otherwise poll returns at once, for ever: the monitor spun at ~42% CPU).
    int spare_fd = -1;
    bool out_of_fds = false;  // seen EMFILE/ENFILE: missing peers are not blamed for it
    bool pending_cap_logged = false;
    uint64_t refused = 0;  // connections dropped for a bad or missing hello
};

// Connections that have not said hello yet, at most: beyond, the oldest is closed.  The
// ranks that connect to this one are at most size - 1, so a local flood of idle connections
// can neither exhaust this process's descriptors nor keep a rank out.
constexpr size_t max_pending_hellos = 64;

// On the heap and never destroyed by exit(): a program may exit without weft_finalize while
// the thread runs (a global's destructor would end it with std::terminate).
monitor *g_mon = nullptr;

int read_timeout(int &seconds) {
    seconds = 5;
    const char *v = std::getenv("WEFT_PEER_TIMEOUT");
    if (v == nullptr || *v == '\0') return WEFT_SUCCESS;
    char *end = nullptr;
    errno = 0;
    long s = std::strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || s < 0 || s > 3600)
        return fail(WEFT_ERR_ARG, "WEFT_PEER_TIMEOUT='%s' is not a whole number of seconds in 0..3600", v);
    seconds = static_cast<int>(s);
    return WEFT_SUCCESS;
}

// Keepalive probes end a connection whose node stopped answering within about timeout_s.
void tune(int fd, int timeout_s) {
    int one = 1;
    int idle = timeout_s >= 3 ? timeout_s / 3 : 1, intvl = timeout_s >= 6 ? timeout_s / 6 : 1, cnt = 3;
    unsigned user_timeout_ms = static_cast<unsigned>(timeout_s) * 1000u;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
}

void close_link(link &l) {
    if (l.fd >= 0) ::close(l.fd);
    l.fd = -1;
}

// Drops an accepted connection that did not say a valid hello: counted, and logged with its
// address the first time and then at every power of two (a flood cannot flood the log).
void refuse(monitor &m, link &l, const char *why) {
    g_stats.liveness_refused.fetch_add(1, std::memory_order_relaxed);
    const uint64_t n = ++m.refused;
    if ((n & (n - 1)) == 0)
        log(WEFT_LOG_WARN, "liveness: dropped a connection from %s that %s (%llu dropped so far)", l.peer, why,
            static_cast<unsigned long long>(n));
    close_link(l);
}

// A hello is complete: keep the connection if it names a rank that should connect to us and
// carries our token; drop it otherwise (a stray or hostile client).
void check_hello(monitor &m, link &l) {
    uint32_t r;
    uint64_t t;
    std::memcpy(&r, l.hello + 4, 4);
    std::memcpy(&t, l.hello + 8, 8);
    if (std::memcmp(l.hello, magic, 4) != 0 || t != m.token || r <= static_cast<uint32_t>(m.rank) ||
        r >= static_cast<uint32_t>(m.size) || m.connected[r]) {
        refuse(m, l, "sent no valid hello");
        return;
    }
    l.rank = static_cast<int>(r);
    l.heard = clock_type::now();
    m.connected[r] = true;
}

// Heartbeats go out every timeout/4: a quarter of the silence that fails a peer.
std::chrono::milliseconds beat_every(const monitor &m) { return std::chrono::milliseconds(250 * m.timeout_s); }

// A failure whose process may still run (not responding, unreachable, never connected): the
// launcher is told too, so that it ends that process and its fences stop waiting for it.  It
// is told first, so that it knows the cause before this process can act on it and exit.
void declare(monitor &m, int rank, const std::string &why) {
    if (peer_failed(rank)) return;
    if (m.boot != nullptr) m.boot->report_failed(rank, why);
    peer_failure_record(rank, why);
}

bool unreachable_error(int e) {
    return e == ETIMEDOUT || e == EHOSTUNREACH || e == ENETUNREACH || e == EHOSTDOWN || e == ENETDOWN;
}

// The connection ended (err: 0 for a close, else the error): a peer that said goodbye left.
void lost(monitor &m, link &l, int err) {
    if (!l.said_goodbye && l.rank >= 0) {
        if (unreachable_error(err))
            declare(m, l.rank,
                    std::string("unreachable: its liveness connection failed (") + std::strerror(err) +
                        "): its node or the network is down");
        else
            peer_failure_record(l.rank,
                                std::string("its liveness connection ") + (err == 0 ? "closed" : std::strerror(err)) +
                                    ": the process ended without weft_finalize");
    }
    close_link(l);
}

// Nothing heard for timeout_s.  Whether the peer's kernel still acknowledges this side's
// heartbeats (it does every timeout/4 while up) tells a stopped or wedged process from a node
// or link that is down.
void silent(monitor &m, link &l) {
    tcp_info ti{};
    socklen_t len = sizeof ti;
    const bool acked = ::getsockopt(l.fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
        ti.tcpi_last_ack_recv < 500u * static_cast<unsigned>(m.timeout_s);
    const std::string t = std::to_string(m.timeout_s) + " s (WEFT_PEER_TIMEOUT)";
    declare(m, l.rank,
            acked ? "not responding: no liveness heartbeat for " + t +
                    " though its node still answers (the process is stopped or wedged)"
                  : "unreachable: nothing from it or its node for " + t + " (its node or the network is down)");
    close_link(l);
}

void on_readable(monitor &m, link &l) {
    if (l.rank < 0) {
        ssize_t n = ::recv(l.fd, l.hello + l.hello_got, hello_size - l.hello_got, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            g_stats.liveness_refused.fetch_add(1, std::memory_order_relaxed);  // left without a hello
            close_link(l);
            return;
        }
        if (n > 0) l.hello_got += static_cast<size_t>(n);
        if (l.hello_got == hello_size) check_hello(m, l);
        return;
    }
    char buf[64];
    ssize_t n = ::recv(l.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
        l.heard = clock_type::now();
        if (std::memchr(buf, goodbye, static_cast<size_t>(n)) != nullptr) l.said_goodbye = true;
        return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    lost(m, l, n == 0 ? 0 : errno);
}

// Takes every connection off the backlog: at most max_pending_hellos wait for their hello (the
// oldest is closed for a new one), and when descriptors run out the connection is refused with
// the spare descriptor's room.
void accept_pending(monitor &m) {
    for (;;) {
        sockaddr_in from{};
        socklen_t from_len = sizeof from;
        int fd = ::accept4(m.listen_fd, reinterpret_cast<sockaddr *>(&from), &from_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if ((errno == EMFILE || errno == ENFILE) && m.spare_fd >= 0) {
                if (!m.out_of_fds)
                    log(WEFT_LOG_ERROR,
                        "liveness: this process ran out of file descriptors (raise ulimit -n); refusing "
                        "connections to its liveness listener meanwhile");
                m.out_of_fds = true;
                ::close(m.spare_fd);
                int refused = ::accept4(m.listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
                if (refused >= 0) ::close(refused);
                g_stats.liveness_refused.fetch_add(1, std::memory_order_relaxed);
                m.spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (refused >= 0) continue;
            }
            return;
        }
        size_t pending = 0;
        link *oldest = nullptr;
        for (link &l : m.links)
            if (l.fd >= 0 && l.rank < 0) {
                ++pending;
                if (oldest == nullptr || l.hello_deadline < oldest->hello_deadline) oldest = &l;
            }
        if (pending >= max_pending_hellos && oldest != nullptr) {
            if (!m.pending_cap_logged)
                log(WEFT_LOG_WARN,
                    "liveness: more than %zu connections without a hello at once (a local flood?); closing the "
                    "oldest of them to make room",
                    max_pending_hellos);
            m.pending_cap_logged = true;
            g_stats.liveness_refused.fetch_add(1, std::memory_order_relaxed);
            close_link(*oldest);
        }
        tune(fd, m.timeout_s);
        link l;
        l.fd = fd;
        char ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &from.sin_addr, ip, sizeof ip);
        std::snprintf(l.peer, sizeof l.peer, "%s:%u", ip, static_cast<unsigned>(ntohs(from.sin_port)));
        l.hello_deadline = clock_type::now() + std::chrono::seconds(m.timeout_s > 0 ? m.timeout_s : 5);
        m.links.push_back(l);
    }
}

void run(monitor &m) {
    std::vector<pollfd> fds;
    for (;;) {
        auto now = clock_type::now();
        // Deadlines: hellos of accepted connections, and higher ranks that never connected.
        int timeout_ms = -1;
        auto consider = [&](clock_type::time_point d) {
            long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(d - now).count() + 1;
            if (ms < 0) ms = 0;
            if (timeout_ms < 0 || ms < timeout_ms) timeout_ms = static_cast<int>(ms);
        };
        for (link &l : m.links)
            if (l.fd >= 0 && l.rank < 0) {
                if (now >= l.hello_deadline)
                    refuse(m, l, "sent no hello in time");
                else
                    consider(l.hello_deadline);
            }
        bool waiting_for_connects = false;
        for (int r = m.rank + 1; r < m.size; ++r)
            if (!m.connected[static_cast<size_t>(r)] && !peer_failed(r)) waiting_for_connects = true;
        if (waiting_for_connects) {
            if (now >= m.connect_deadline) {
                for (int r = m.rank + 1; r < m.size; ++r) {
                    if (m.connected[static_cast<size_t>(r)]) continue;
                    if (m.out_of_fds) {
                        // Not its fault: this process could not accept it.
                        log(WEFT_LOG_ERROR,
                            "liveness: rank %d never connected, but this process ran out of file descriptors "
                            "(raise ulimit -n); its failures will not be detected",
                            r);
                        m.connected[static_cast<size_t>(r)] = true;
                        continue;
                    }
                    declare(m, r,
                            "it did not open its liveness connection within " + std::to_string(4 * m.timeout_s) +
                                " s of init (WEFT_PEER_TIMEOUT)");
                }
            } else {
                consider(m.connect_deadline);
            }
        }
        // A monitor that did not run for timeout/2 (its process stopped, the machine suspended
        // or starved) cannot blame its peers for the silence: they get a new period.
        if (now - m.last_wake > 2 * beat_every(m))
            for (link &l : m.links) l.heard = now;
        m.last_wake = now;
        if (now >= m.next_beat) {
            for (link &l : m.links)
                if (l.fd >= 0 && l.rank >= 0) (void)::send(l.fd, &heartbeat, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            m.next_beat = now + beat_every(m);
        }
        consider(m.next_beat);
        for (link &l : m.links)
            if (l.fd >= 0 && l.rank >= 0 && !l.said_goodbye) {
                const auto deadline = l.heard + std::chrono::seconds(m.timeout_s);
                if (now >= deadline)
                    silent(m, l);
                else
                    consider(deadline);
            }
        // Forget closed links.
        size_t kept = 0;
        for (link &l : m.links)
            if (l.fd >= 0) m.links[kept++] = l;
        m.links.resize(kept);

        fds.clear();
        fds.push_back({m.wake_fd, POLLIN, 0});
        fds.push_back({m.listen_fd, POLLIN, 0});
        for (link &l : m.links) fds.push_back({l.fd, POLLIN, 0});
        int n = ::poll(fds.data(), fds.size(), timeout_ms);
        if (n < 0 && errno != EINTR) {
            log(WEFT_LOG_ERROR, "liveness: poll: %s; peer failures are no longer detected", std::strerror(errno));
            return;
        }
        if (n <= 0) continue;
        if (fds[0].revents != 0) return;  // liveness_close
        for (size_t i = 2; i < fds.size(); ++i)
            if (fds[i].revents != 0) on_readable(m, m.links[i - 2]);
        if (fds[1].revents & POLLIN) accept_pending(m);
    }
}

}  // namespace

int liveness_open(bootstrap &boot, int rank, int size) {
    if (g_mon == nullptr) g_mon = new monitor;
    monitor &m = *g_mon;
    m = monitor{};
    m.rank = rank;
    m.size = size;
    if (int rc = read_timeout(m.timeout_s)) return rc;
    if (size <= 1 || m.timeout_s == 0) return WEFT_SUCCESS;
    std::string value;
    if (int rc = net_listen("liveness",
                            "set WEFT_PEER_ADDR to this node's address, or WEFT_PEER_TIMEOUT=0 to run without peer "
                            "failure detection",
                            m.listen_fd, m.token, value))
        return rc;
    // "IPv4:port" for weft_get_runtime_info.
    const size_t host_end = value.find(' '), port_end = value.rfind(' ');
    m.address = value.substr(0, host_end) + ":" + value.substr(host_end + 1, port_end - host_end - 1);
    return boot.put(key, value);
}

int liveness_start(bootstrap &boot) {
    if (g_mon == nullptr || g_mon->listen_fd < 0) return WEFT_SUCCESS;
    monitor &m = *g_mon;
    m.connected.assign(static_cast<size_t>(m.size), false);
    m.connect_deadline = clock_type::now() + std::chrono::seconds(4 * m.timeout_s);
    // Connect to every lower rank; their listeners exist (they published before the fence),
    // so the kernel completes each connection from the backlog without the peer's help.
    for (int r = 0; r < m.rank; ++r) {
        std::string value;
        if (int rc = boot.get(r, key, value)) return rc;
        char host[64] = {0};
        unsigned port = 0;
        unsigned long long token = 0;
        if (std::sscanf(value.c_str(), "%63s %u %llu", host, &port, &token) != 3 || port == 0 || port > 65535)
            return fail(WEFT_ERR_BOOTSTRAP, "liveness: rank %d published a malformed address '%s'", r, value.c_str());
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(static_cast<uint16_t>(port));
        if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
            return fail(WEFT_ERR_BOOTSTRAP, "liveness: rank %d published a malformed address '%s'", r, value.c_str());
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return fail(WEFT_ERR_BOOTSTRAP, "liveness: socket: %s", std::strerror(errno));
        tune(fd, m.timeout_s);
        char hello[hello_size];
        uint32_t me = static_cast<uint32_t>(m.rank);
        uint64_t t = token;
        std::memcpy(hello, magic, 4);
        std::memcpy(hello + 4, &me, 4);
        std::memcpy(hello + 8, &t, 8);
        if (::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0 ||
            ::send(fd, hello, sizeof hello, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof hello)) {
            // The peer may have died since the fence: that is what the monitor is for.
            peer_failure_record(r, std::string("connecting its liveness channel failed: ") + std::strerror(errno));
            ::close(fd);
            continue;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        link l;
        l.fd = fd;
        l.rank = r;
        l.heard = clock_type::now();
        m.connected[static_cast<size_t>(r)] = true;
        m.links.push_back(l);
    }
    m.spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    m.wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (m.wake_fd < 0) return fail(WEFT_ERR_BOOTSTRAP, "liveness: eventfd: %s", std::strerror(errno));
    m.boot = &boot;
    m.next_beat = m.last_wake = clock_type::now();
    m.thread = std::thread([] { run(*g_mon); });
    m.running = true;
    return WEFT_SUCCESS;
}

void liveness_close() {
    if (g_mon == nullptr) return;
    monitor &m = *g_mon;
    if (m.running) {
        uint64_t one = 1;
        (void)!::write(m.wake_fd, &one, sizeof one);
        m.thread.join();
        m.running = false;
    }
    m.boot = nullptr;
    for (link &l : m.links) {
        if (l.fd >= 0 && l.rank >= 0) (void)::send(l.fd, &goodbye, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        close_link(l);
    }
    m.links.clear();
    if (m.listen_fd >= 0) ::close(m.listen_fd);
    if (m.wake_fd >= 0) ::close(m.wake_fd);
    if (m.spare_fd >= 0) ::close(m.spare_fd);
    m.listen_fd = m.wake_fd = m.spare_fd = -1;
}

std::string liveness_address() { return g_mon != nullptr && g_mon->listen_fd >= 0 ? g_mon->address : std::string(); }

}  // namespace weft
