// Wire protocol between weftrun's key-value server and the "weftrun" bootstrap client, plus the
// socket helpers both sides (and the PMI-1 client) use.  Header-only so that tools/weftrun does
// not need libweft.
//
// Frame: u32 length (big-endian) of the rest, u8 op, then fields.  A field is either a u32
// (big-endian) or a byte string (u32 length + bytes), so keys and values are binary-safe.
//
//   client -> server                        server -> client
//   hello   u32 version, bytes token, u32 rank    ok | error
//   put     bytes key, bytes value                ok | error
//   fence                                         ok (all ranks fenced) | error
//   get     u32 rank, bytes key                   ok bytes value | error
//   abort   u32 code, bytes message               ok (then the launcher ends the job)
//   finalize                                      ok (then the server closes)
//   failed  u32 rank, bytes why                   (no reply)
//   error replies carry one field: bytes message.
// `failed` says that the sender found that rank failed though its process may still run (not
// responding, unreachable): the launcher ends it and fences stop waiting for it.  It has no
// reply so that another thread may send it while a request waits for its reply (version 2).
#pragma once
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace weft::kvs {

constexpr uint32_t protocol_version = 2;
// Largest frame either side accepts; bigger lengths mean garbage or a hostile peer.
constexpr uint32_t max_frame = 64u << 20;
// Largest frame accepted before the token is proven: a hello is tiny.
constexpr uint32_t max_hello_frame = 4096;
constexpr int default_timeout_s = 60;

// Environment set by weftrun for each rank.
constexpr const char *env_kvs = "WEFT_KVS";
constexpr const char *env_token = "WEFT_JOB_TOKEN";
constexpr const char *env_rank = "WEFT_RANK";
constexpr const char *env_size = "WEFT_SIZE";
constexpr const char *env_local_rank = "WEFT_LOCAL_RANK";
constexpr const char *env_local_size = "WEFT_LOCAL_SIZE";
constexpr const char *env_timeout = "WEFT_BOOTSTRAP_TIMEOUT";

enum op : uint8_t { op_hello = 1, op_put, op_fence, op_get, op_abort, op_finalize, op_failed, op_ok = 64, op_error };

inline const char *op_name(uint8_t o) {
    switch (o) {
        case op_hello: return "hello";
        case op_put: return "put";
        case op_fence: return "fence";
        case op_get: return "get";
        case op_abort: return "abort";
        case op_finalize: return "finalize";
        case op_failed: return "failed";
        case op_ok: return "ok";
        case op_error: return "error";
        default: return "unknown";
    }
}

// ---- Encoding ----

class writer {
  public:
    explicit writer(uint8_t o) {
        buf_.assign(4, '\0');
        buf_.push_back(static_cast<char>(o));
    }
    writer &u32(uint32_t v) {
        char b[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
        buf_.append(b, 4);
        return *this;
    }
    writer &bytes(std::string_view s) {
        u32(static_cast<uint32_t>(s.size()));
        buf_.append(s);
        return *this;
    }
    // The complete frame, with its length prefix filled in.
    std::string finish() {
        uint32_t n = static_cast<uint32_t>(buf_.size() - 4);
        buf_[0] = char(n >> 24), buf_[1] = char(n >> 16), buf_[2] = char(n >> 8), buf_[3] = char(n);
        return std::move(buf_);
    }

  private:
    std::string buf_;
};

inline uint32_t load_u32(const char *p) {
    auto b = reinterpret_cast<const unsigned char *>(p);
    return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | uint32_t(b[3]);
}

// Reads the fields of one frame body (without its length prefix); every read checks bounds.
class reader {
  public:
    explicit reader(std::string_view body) : rest_(body) {}
    bool op(uint8_t &o) {
        if (rest_.empty()) return false;
        o = static_cast<uint8_t>(rest_[0]);
        rest_.remove_prefix(1);
        return true;
    }
    bool u32(uint32_t &v) {
        if (rest_.size() < 4) return false;
        v = load_u32(rest_.data());
        rest_.remove_prefix(4);
        return true;
    }
    bool bytes(std::string_view &s) {
        uint32_t n;
        if (!u32(n) || rest_.size() < n) return false;
        s = rest_.substr(0, n);
        rest_.remove_prefix(n);
        return true;
    }
    bool done() const { return rest_.empty(); }

  private:
    std::string_view rest_;
};

// Splits complete frames off the front of an input buffer.  Returns 1 with the body in `body`
// (valid until buf changes; the caller erases `consumed` bytes), 0 when more bytes are needed,
// -1 when the announced length exceeds `limit`.
inline int next_frame(std::string_view buf, uint32_t limit, std::string_view &body, size_t &consumed) {
    if (buf.size() < 4) return 0;
    uint32_t n = load_u32(buf.data());
    if (n == 0 || n > limit) return -1;
    if (buf.size() < 4 + size_t{n}) return 0;
    body = buf.substr(4, n);
    consumed = 4 + size_t{n};
    return 1;
}

// Compares job tokens in time independent of where they differ.
inline bool token_equal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    unsigned char d = 0;
    for (size_t i = 0; i < a.size(); ++i) d |= static_cast<unsigned char>(a[i] ^ b[i]);
    return d == 0;
}

// ---- Blocking I/O with a deadline (the fd may be blocking or not: we poll before each call
// and use MSG_DONTWAIT, and MSG_NOSIGNAL so that a dead peer is an error, not SIGPIPE) ----

using deadline_t = std::chrono::steady_clock::time_point;

inline deadline_t deadline_after(int seconds) {
    return std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
}

// Waits until fd has `events`; returns 0, or ETIMEDOUT, or an errno.
inline int wait_fd(int fd, short events, deadline_t deadline) {
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return ETIMEDOUT;
        struct pollfd p = {fd, events, 0};
        int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count() + 1, 1 << 30)));
        if (n > 0) return 0;  // ready, or POLLHUP/POLLERR: the next call reports it
        if (n < 0 && errno != EINTR) return errno;
    }
}

inline int send_all(int fd, std::string_view data, deadline_t deadline) {
    while (!data.empty()) {
        ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            data.remove_prefix(static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (int e = wait_fd(fd, POLLOUT, deadline)) return e;
            continue;
        }
        return n < 0 ? errno : EPIPE;
    }
    return 0;
}

// Reads exactly size bytes; ECONNRESET when the peer closed first.
inline int recv_exact(int fd, char *out, size_t size, deadline_t deadline) {
    while (size > 0) {
        ssize_t n = ::recv(fd, out, size, MSG_DONTWAIT);
        if (n > 0) {
            out += n, size -= static_cast<size_t>(n);
            continue;
        }
        if (n == 0) return ECONNRESET;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (int e = wait_fd(fd, POLLIN, deadline)) return e;
            continue;
        }
        return errno;
    }
    return 0;
}

// Reads one frame body.  Returns 0, an errno, or EPROTO for an oversized length.
inline int recv_frame(int fd, std::string &body, deadline_t deadline) {
    char len[4];
    if (int e = recv_exact(fd, len, 4, deadline)) return e;
    uint32_t n = load_u32(len);
    if (n == 0 || n > max_frame) return EPROTO;
    body.resize(n);
    return recv_exact(fd, body.data(), n, deadline);
}

// WEFT_BOOTSTRAP_TIMEOUT: whole seconds >= 1, default 60.  False (with `why`) on a bad value.
inline bool timeout_from_env(int &seconds, std::string &why) {
    seconds = default_timeout_s;
    const char *v = std::getenv(env_timeout);
    if (v == nullptr || *v == '\0') return true;
    char *end = nullptr;
    errno = 0;
    long s = std::strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || s < 1 || s > 86400 * 365) {
        why = std::string(env_timeout) + "='" + v + "' is not a whole number of seconds >= 1";
        return false;
    }
    seconds = static_cast<int>(s);
    return true;
}

// Integer environment variable in [lo, hi].  0 when valid, 1 when unset or empty, -1 when
// set to something else.
inline int env_int(const char *name, long lo, long hi, long &out) {
    const char *v = std::getenv(name);
    if (v == nullptr || *v == '\0') return 1;
    char *end = nullptr;
    errno = 0;
    long x = std::strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || x < lo || x > hi) return -1;
    out = x;
    return 0;
}

}  // namespace weft::kvs
