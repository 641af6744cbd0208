#include "bootstrap/fence_tcp.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/error.hpp"
#include "base/net_address.hpp"
#include "kvs_wire.hpp"
#include "weft/plugin.h"
#include "weft/weft.h"

namespace weft {

namespace {

constexpr char magic[4] = {'W', 'F', 'N', 'C'};
constexpr size_t hello_size = 16;  // magic, the connecting rank (u32), rank 0's token (u64)
constexpr char up_byte = 'F', down_byte = 'G';
// A connection that has not said hello by then is dropped (it may be anyone's).
constexpr int hello_timeout_s = 5;

const char *why(int e) { return e == ECONNRESET ? "the connection closed (did the process exit?)" : std::strerror(e); }

}  // namespace

int fence_tcp::listen(int rank, int size, std::string &published) {
    rank_ = rank;
    size_ = size;
    if (rank != 0 || size <= 1) return WEFT_SUCCESS;
    return net_listen("bootstrap fence channel", "set WEFT_PEER_ADDR to this node's address", listen_fd_, token_,
                      published);
}

int fence_tcp::connect(const std::string &published, int timeout_s) {
    if (size_ <= 1) return WEFT_SUCCESS;
    auto deadline = kvs::deadline_after(timeout_s);
    if (rank_ != 0) {
        char host[64] = {0};
        unsigned port = 0;
        unsigned long long token = 0;
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        if (std::sscanf(published.c_str(), "%63s %u %llu", host, &port, &token) != 3 || port == 0 || port > 65535 ||
            inet_pton(AF_INET, host, &sa.sin_addr) != 1)
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap fence channel: rank 0 published a malformed address '%s'",
                        published.c_str());
        sa.sin_port = htons(static_cast<uint16_t>(port));
        up_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        char hello[hello_size];
        uint32_t me = static_cast<uint32_t>(rank_);
        uint64_t t = token;
        std::memcpy(hello, magic, 4);
        std::memcpy(hello + 4, &me, 4);
        std::memcpy(hello + 8, &t, 8);
        int e = 0;
        if (up_ < 0 || ::connect(up_, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0)
            e = errno;
        else
            e = kvs::send_all(up_, std::string_view(hello, sizeof hello), deadline);
        if (e != 0) {
            close();
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap fence channel: connecting to rank 0 at %s:%u failed: %s", host,
                        port, why(e));
        }
        int one = 1;
        setsockopt(up_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return WEFT_SUCCESS;
    }
    peers_.assign(static_cast<size_t>(size_ - 1), -1);
    // Hellos are read side by side, each within hello_timeout_s of its accept, and at most
    // max_pending wait at once (the oldest is dropped for a new one): connections that say
    // nothing, or a byte at a time, hold up no rank.
    struct pending {
        int fd;
        size_t got;
        char hello[hello_size];
        kvs::deadline_t deadline;
    };
    constexpr size_t max_pending = 64;
    std::vector<pending> waiting;
    std::vector<pollfd> pfds;
    int missing = size_ - 1, refused = 0;
    auto refuse = [&](size_t i) {
        ::close(waiting[i].fd);
        waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(i));
        ++refused;
    };
    while (missing > 0) {
        const auto now = std::chrono::steady_clock::now();
        auto wake = deadline;
        pfds.assign(1, pollfd{listen_fd_, POLLIN, 0});
        for (const pending &p : waiting) {
            pfds.push_back(pollfd{p.fd, POLLIN, 0});
            wake = std::min(wake, p.deadline);
        }
        if (now >= deadline) {
            for (const pending &p : waiting) ::close(p.fd);
            close();
            return fail(WEFT_ERR_BOOTSTRAP,
                        "bootstrap fence channel: %d of %d processes did not connect to rank 0 within %d s "
                        "(%d connection(s) refused; raise WEFT_BOOTSTRAP_TIMEOUT to wait longer)",
                        missing, size_ - 1, timeout_s, refused);
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count() + 1;
        if (::poll(pfds.data(), pfds.size(), static_cast<int>(left)) < 0 && errno != EINTR) continue;
        const auto after = std::chrono::steady_clock::now();
        // Hellos first (pfds[i + 1] is waiting[i]; erasing goes from the back).
        for (size_t i = waiting.size(); i-- > 0;) {
            pending &p = waiting[i];
            if (pfds[i + 1].revents) {
                ssize_t n = ::recv(p.fd, p.hello + p.got, hello_size - p.got, MSG_DONTWAIT);
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                    refuse(i);
                    continue;
                }
                if (n > 0) p.got += static_cast<size_t>(n);
            }
            if (p.got == hello_size) {
                uint32_t r = 0;
                uint64_t t = 0;
                std::memcpy(&r, p.hello + 4, 4);
                std::memcpy(&t, p.hello + 8, 8);
                if (std::memcmp(p.hello, magic, 4) != 0 || t != token_ || r < 1 || r >= static_cast<uint32_t>(size_) ||
                    peers_[r - 1] >= 0) {
                    refuse(i);
                    continue;
                }
                int one = 1;
                setsockopt(p.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                peers_[r - 1] = p.fd;
                --missing;
                waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(i));
            } else if (after >= p.deadline) {
                refuse(i);
            }
        }
        if (!(pfds[0].revents & POLLIN)) continue;
        for (;;) {
            int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0 && (errno == EMFILE || errno == ENFILE) && !waiting.empty()) {
                refuse(0);  // out of descriptors: the oldest waiting makes room
                continue;
            }
            if (fd < 0) break;  // drained (EAGAIN)
            if (waiting.size() >= max_pending) refuse(0);
            waiting.push_back(pending{fd, 0, {}, std::min(deadline, kvs::deadline_after(hello_timeout_s))});
        }
    }
    for (const pending &p : waiting) ::close(p.fd);
    if (refused > 0)
        log(WEFT_LOG_WARN, "bootstrap fence channel: refused %d connection(s) without the job's token", refused);
    ::close(listen_fd_);
    listen_fd_ = -1;
    return WEFT_SUCCESS;
}

int fence_tcp::fence(int timeout_s) {
    if (size_ <= 1) return WEFT_SUCCESS;
    auto deadline = kvs::deadline_after(timeout_s);
    char b = 0;
    if (rank_ != 0) {
        if (up_ < 0) return fail(WEFT_ERR_BOOTSTRAP, "bootstrap fence channel: not connected to rank 0");
        int e = kvs::send_all(up_, std::string_view(&up_byte, 1), deadline);
        if (e == 0) e = kvs::recv_exact(up_, &b, 1, deadline);
        if (e == 0 && b != down_byte) e = EPROTO;
        if (e != 0)
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap fence with rank 0 failed%s: %s",
                        e == ETIMEDOUT ? " (raise WEFT_BOOTSTRAP_TIMEOUT to wait longer)" : "", why(e));
        return WEFT_SUCCESS;
    }
    for (size_t i = 0; i < peers_.size(); ++i) {
        int e = peers_[i] < 0 ? ENOTCONN : kvs::recv_exact(peers_[i], &b, 1, deadline);
        if (e == 0 && b != up_byte) e = EPROTO;
        if (e != 0)
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap fence: rank %zu did not arrive%s: %s", i + 1,
                        e == ETIMEDOUT ? " (raise WEFT_BOOTSTRAP_TIMEOUT to wait longer)" : "", why(e));
    }
    for (size_t i = 0; i < peers_.size(); ++i)
        if (int e = kvs::send_all(peers_[i], std::string_view(&down_byte, 1), deadline))
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap fence: releasing rank %zu failed: %s", i + 1, why(e));
    return WEFT_SUCCESS;
}

void fence_tcp::close() {
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (up_ >= 0) ::close(up_);
    for (int fd : peers_)
        if (fd >= 0) ::close(fd);
    listen_fd_ = up_ = -1;
    peers_.clear();
}

}  // namespace weft
