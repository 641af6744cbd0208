#include "bootstrap/fence_tcp.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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
    int missing = size_ - 1, refused = 0;
    while (missing > 0) {
        if (int e = kvs::wait_fd(listen_fd_, POLLIN, deadline)) {
            close();
            return fail(WEFT_ERR_BOOTSTRAP,
                        "bootstrap fence channel: %d of %d processes did not connect to rank 0 within %d s "
                        "(%d connection(s) refused; raise WEFT_BOOTSTRAP_TIMEOUT to wait longer): %s",
                        missing, size_ - 1, timeout_s, refused, why(e));
        }
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        char hello[hello_size];
        auto hello_deadline = std::min(deadline, kvs::deadline_after(hello_timeout_s));
        uint32_t r = 0;
        uint64_t t = 0;
        bool good = kvs::recv_exact(fd, hello, sizeof hello, hello_deadline) == 0 && std::memcmp(hello, magic, 4) == 0;
        if (good) {
            std::memcpy(&r, hello + 4, 4);
            std::memcpy(&t, hello + 8, 8);
            good = t == token_ && r >= 1 && r < static_cast<uint32_t>(size_) && peers_[r - 1] < 0;
        }
        if (!good) {
            ++refused;
            ::close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        peers_[r - 1] = fd;
        --missing;
    }
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
