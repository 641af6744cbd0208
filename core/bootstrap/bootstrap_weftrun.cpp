// weftrun bootstrap: one TCP connection to weftrun's key-value server (WEFT_KVS), proven with
// the job token (WEFT_JOB_TOKEN); rank and size from WEFT_RANK / WEFT_SIZE.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "base/error.hpp"
#include "kvs_wire.hpp"
#include "weft/weft.h"

namespace weft {

namespace {

// How long abort waits for weftrun to acknowledge before exiting anyway.
constexpr int abort_ack_timeout_s = 5;
// How long report_failed may wait for room in the connection's send buffer.
constexpr int report_timeout_s = 1;

class weftrun_bootstrap final : public bootstrap {
  public:
    weftrun_bootstrap(int fd, int rank, int size, int timeout_s, std::string addr)
        : fd_(fd), rank_(rank), size_(size), timeout_s_(timeout_s), addr_(std::move(addr)) {}
    ~weftrun_bootstrap() override {
        if (fd_ >= 0) ::close(fd_);
    }
    const char *name() const override { return "weftrun"; }
    int rank() const override { return rank_; }
    int size() const override { return size_; }

    int put(std::string_view key, std::string_view value) override {
        return call(kvs::writer(kvs::op_put).bytes(key).bytes(value).finish(), "put", nullptr, timeout_s_);
    }
    int fence() override { return call(kvs::writer(kvs::op_fence).finish(), "fence", nullptr, timeout_s_); }
    int get(int rank, std::string_view key, std::string &value) override {
        if (rank < 0 || rank >= size_)
            return fail(WEFT_ERR_RANK, "bootstrap get: rank %d out of range for a job of size %d", rank, size_);
        return call(kvs::writer(kvs::op_get).u32(static_cast<uint32_t>(rank)).bytes(key).finish(), "get", &value,
                    timeout_s_);
    }
    void abort(int code, std::string_view message) override {
        // weftrun prints the message and ends the other ranks; wait briefly for its ack so that
        // it reports the abort rather than our exit status.
        // Another thread blocked in a request holds the connection: exit without telling
        // weftrun, which then reports our exit status instead.
        std::unique_lock<std::mutex> g(mu_, std::try_to_lock);
        if (g.owns_lock())
            call_locked(kvs::writer(kvs::op_abort).u32(static_cast<uint32_t>(code)).bytes(message).finish(), "abort",
                        nullptr, abort_ack_timeout_s);
        ::_exit(code);
    }
    int finalize() override {
        int rc = call(kvs::writer(kvs::op_finalize).finish(), "finalize", nullptr, timeout_s_);
        std::lock_guard<std::mutex> g(mu_);
        close_locked();
        return rc;
    }
    void report_failed(int rank, std::string_view why) override {
        // Only the sending side is locked: the request of another thread may be waiting for
        // its reply, and this frame has none, so replies still come in request order.
        std::string frame = kvs::writer(kvs::op_failed).u32(static_cast<uint32_t>(rank)).bytes(why).finish();
        std::lock_guard<std::mutex> s(send_mu_);
        // A frame cut short would garble the stream: end it (a waiting request then fails).
        if (fd_ >= 0 && kvs::send_all(fd_, frame, kvs::deadline_after(report_timeout_s)) != 0)
            ::shutdown(fd_, SHUT_RDWR);
    }

    // One request, one reply.  Fails naming the operation, the server and the variable to change.
    int call(const std::string &frame, const char *what, std::string *value, int timeout_s) {
        std::lock_guard<std::mutex> g(mu_);
        return call_locked(frame, what, value, timeout_s);
    }

  private:
    int call_locked(const std::string &frame, const char *what, std::string *value, int timeout_s) {
        if (fd_ < 0)
            return fail(WEFT_ERR_BOOTSTRAP,
                        "bootstrap %s: the connection to weftrun is closed (after "
                        "finalize or an earlier error)",
                        what);
        auto deadline = kvs::deadline_after(timeout_s);
        std::string body;
        int e;
        {
            std::lock_guard<std::mutex> s(send_mu_);
            e = kvs::send_all(fd_, frame, deadline);
        }
        if (e == 0) e = kvs::recv_frame(fd_, body, deadline);
        if (e != 0) {
            close_locked();
            if (e == ETIMEDOUT)
                return fail(WEFT_ERR_BOOTSTRAP,
                            "bootstrap %s: no reply from weftrun (WEFT_KVS=%s) within %d s; "
                            "other ranks may be slow or stuck (raise WEFT_BOOTSTRAP_TIMEOUT to wait longer)",
                            what, addr_.c_str(), timeout_s);
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap %s: connection to weftrun (WEFT_KVS=%s) failed: %s", what,
                        addr_.c_str(), e == ECONNRESET ? "weftrun closed it" : std::strerror(e));
        }
        kvs::reader r(body);
        uint8_t op = 0;
        std::string_view field;
        r.op(op);
        if (op == kvs::op_error) {
            std::string msg = r.bytes(field) ? std::string(field) : std::string("(no message)");
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap %s: %s", what, msg.c_str());
        }
        bool ok = op == kvs::op_ok && (value == nullptr ? r.done() : (r.bytes(field) && r.done()));
        if (!ok) {
            close_locked();
            return fail(WEFT_ERR_BOOTSTRAP,
                        "bootstrap %s: malformed reply from weftrun (WEFT_KVS=%s); is it "
                        "the weftrun of this Weft build?",
                        what, addr_.c_str());
        }
        if (value) value->assign(field);
        return WEFT_SUCCESS;
    }

    // Caller holds mu_; fd_ changes under both locks, so either one makes reading it safe.
    void close_locked() {
        std::lock_guard<std::mutex> s(send_mu_);
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

    std::mutex mu_;       // one request/reply at a time on the connection
    std::mutex send_mu_;  // one frame at a time into it (taken after mu_, or alone)
    int fd_;
    int rank_, size_, timeout_s_;
    std::string addr_;
};

// Connects to "host:port" within the deadline; returns the fd or -1 with a message in `why`.
int connect_kvs(const std::string &addr, kvs::deadline_t deadline, std::string &why) {
    auto colon = addr.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == addr.size()) {
        why = "is not host:port";
        return -1;
    }
    std::string host = addr.substr(0, colon), port = addr.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int g = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
    if (g != 0) {
        why = std::string("cannot resolve: ") + gai_strerror(g);
        return -1;
    }
    int fd = -1;
    why = "no address";
    for (addrinfo *ai = res; ai != nullptr; ai = ai->ai_next) {
        fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            why = std::strerror(errno);
            continue;
        }
        int e = 0;
        if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            e = errno;
            if (e == EINPROGRESS && (e = kvs::wait_fd(fd, POLLOUT, deadline)) == 0) {
                socklen_t len = sizeof e;
                if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0) e = errno;
            }
        }
        if (e == 0) break;
        why = std::strerror(e);
        ::close(fd);
        fd = -1;
    }
    ::freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

}  // namespace

int bootstrap_weftrun_open(std::unique_ptr<bootstrap> &out) {
    long size = 0, rank = 0;
    int rs = kvs::env_int(kvs::env_size, 1, INT_MAX, size);
    if (rs != 0)
        return fail(WEFT_ERR_BOOTSTRAP,
                    "WEFT_SIZE='%s' is %s; weftrun sets it (start the program with "
                    "weftrun -n N, or unset WEFT_KVS to run without weftrun)",
                    std::getenv(kvs::env_size) ? std::getenv(kvs::env_size) : "",
                    rs > 0 ? "not set" : "not a number of processes >= 1");
    int rr = kvs::env_int(kvs::env_rank, 0, size - 1, rank);
    if (rr != 0)
        return fail(WEFT_ERR_BOOTSTRAP, "WEFT_RANK='%s' is %s (WEFT_SIZE=%ld); weftrun sets it",
                    std::getenv(kvs::env_rank) ? std::getenv(kvs::env_rank) : "",
                    rr > 0 ? "not set" : "not a rank between 0 and WEFT_SIZE-1", size);
    const char *token = std::getenv(kvs::env_token);
    if (token == nullptr || *token == '\0')
        return fail(WEFT_ERR_BOOTSTRAP, "WEFT_JOB_TOKEN is not set; weftrun sets it together with WEFT_KVS");
    int timeout_s;
    std::string why;
    if (!kvs::timeout_from_env(timeout_s, why)) return fail(WEFT_ERR_BOOTSTRAP, "%s", why.c_str());

    std::string addr = std::getenv(kvs::env_kvs);
    auto deadline = kvs::deadline_after(timeout_s);
    int fd = connect_kvs(addr, deadline, why);
    if (fd < 0)
        return fail(WEFT_ERR_BOOTSTRAP, "cannot connect to weftrun's key-value server WEFT_KVS=%s: %s", addr.c_str(),
                    why.c_str());
    auto b = std::make_unique<weftrun_bootstrap>(fd, static_cast<int>(rank), static_cast<int>(size), timeout_s, addr);
    int rc = b->call(
        kvs::writer(kvs::op_hello).u32(kvs::protocol_version).bytes(token).u32(static_cast<uint32_t>(rank)).finish(),
        "handshake", nullptr, timeout_s);
    if (rc != WEFT_SUCCESS) return rc;
    out = std::move(b);
    return WEFT_SUCCESS;
}

}  // namespace weft
