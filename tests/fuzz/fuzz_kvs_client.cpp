// Fuzz target: the weftrun bootstrap client (core/bootstrap/bootstrap_weftrun.cpp: weftrun_bootstrap's
// call_locked reply parsing behind put, fence, get and finalize, and bootstrap_weftrun_open with
// its handshake; wire/kvs_wire.hpp: recv_frame, reader, writer), talking to a fake key-value
// server whose replies are the fuzz input.
//
// Two ways in, chosen by the input's first byte:
//  - most inputs: a weftrun_bootstrap (the file's own class: this file includes
//    bootstrap_weftrun.cpp to reach it) on one end of a socketpair, the replies written into
//    the other end beforehand, then hello, put, fence, get, get, finalize;
//  - one in four: bootstrap_weftrun_open itself (WEFT_KVS, WEFT_RANK, WEFT_SIZE, the TCP connect
//    and the hello) against a thread of the harness listening on 127.0.0.1, which accepts,
//    writes the replies, shuts its side down and reads until the client closes.
//
// Invariants, against an independent reading of the reply stream (kvs_wire.hpp's framing): each
// call succeeds exactly when its reply is a well-formed ok (with exactly one value for get) and
// a get returns that value; an error reply fails the call and keeps the connection; a malformed
// reply, a bad length or the end of the stream fails it and closes the connection, after which
// every call fails without reading; a get of a rank outside the job fails without a request;
// nothing leaks (memory: LSan; descriptors: checked).
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "fuzz_common.hpp"
// The code under test, with its file-local client class.
#include "bootstrap/bootstrap_weftrun.cpp"

namespace kvs = weft::kvs;

namespace {

// The fake server: one connection per input.
struct fake_server {
    int listen_fd = -1;
    uint16_t port = 0;
    std::mutex mu;
    std::condition_variable cv;
    std::string script;
    bool go = false, done = false;
    std::thread thread;

    void start() {
        listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        FUZZ_CHECK(listen_fd >= 0);
        int one = 1;
        ::setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        FUZZ_CHECK(::bind(listen_fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
        FUZZ_CHECK(::listen(listen_fd, 16) == 0);
        FUZZ_CHECK(::getsockname(listen_fd, reinterpret_cast<sockaddr *>(&a), &len) == 0);
        port = ntohs(a.sin_port);
        thread = std::thread([this] { loop(); });
        thread.detach();  // lives as long as the process
    }

    void loop() {
        for (;;) {
            std::string s;
            {
                std::unique_lock<std::mutex> g(mu);
                cv.wait(g, [&] { return go; });
                go = false;
                s = script;
            }
            // Every call retries on EINTR: libFuzzer's timer (SIGALRM) may land on this thread.
            pollfd p = {listen_fd, POLLIN, 0};
            int r;
            while ((r = ::poll(&p, 1, 10000)) < 0 && errno == EINTR) {}
            if (r != 1) {
                std::fprintf(stderr, "fuzz_kvs_client: the client never connected\n");
                std::abort();
            }
            int fd;
            while ((fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC)) < 0 && errno == EINTR) {}
            FUZZ_CHECK(fd >= 0);
            size_t off = 0;
            while (off < s.size()) {
                ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) break;  // the client closed early
                off += static_cast<size_t>(n);
            }
            ::shutdown(fd, SHUT_WR);
            char buf[4096];
            for (;;) {
                ssize_t n = ::recv(fd, buf, sizeof buf, 0);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) break;
            }
            // A reset, not a FIN: no TIME_WAIT left behind by millions of connections.
            struct linger lg = {1, 0};
            ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
            ::close(fd);
            {
                std::lock_guard<std::mutex> g(mu);
                done = true;
            }
            cv.notify_all();
        }
    }

    void serve(std::string s) {
        std::lock_guard<std::mutex> g(mu);
        script = std::move(s);
        go = true;
        done = false;
        cv.notify_all();
    }
    void wait_done() {
        std::unique_lock<std::mutex> g(mu);
        cv.wait(g, [&] { return done; });
    }
};

// Never destroyed: its thread waits on it until the process exits.
fake_server &g_server = *new fake_server;
fuzz::env_var g_rank("WEFT_RANK"), g_size("WEFT_SIZE");

// The reply stream as the protocol defines it, one reply at a time.
struct replies {
    std::string_view rest;
    bool closed = false;  // the client dropped the connection

    // Predicts one call: true when it succeeds (value: get's result when want_value).
    bool next(bool want_value, std::string &value) {
        if (closed) return false;
        if (rest.size() < 4) return close();
        uint32_t n = kvs::load_u32(rest.data());
        if (n == 0 || n > kvs::max_frame || rest.size() - 4 < n) return close();
        std::string_view body = rest.substr(4, n);
        rest.remove_prefix(4 + size_t{n});
        uint8_t op = static_cast<uint8_t>(body[0]);
        body.remove_prefix(1);
        if (op == kvs::op_error) return false;  // the connection stays
        if (op != kvs::op_ok) return close();
        if (!want_value) return body.empty() ? true : close();
        if (body.size() < 4) return close();
        uint32_t len = kvs::load_u32(body.data());
        if (body.size() - 4 != len) return close();
        value.assign(body.substr(4));
        return true;
    }
    bool close() {
        closed = true;
        return false;
    }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    g_server.start();
    static std::string kvs_addr = "WEFT_KVS=127.0.0.1:" + std::to_string(g_server.port);
    ::putenv(kvs_addr.data());
    ::putenv(const_cast<char *>("WEFT_JOB_TOKEN=fuzz-token"));
    ::putenv(const_cast<char *>("WEFT_BOOTSTRAP_TIMEOUT=10"));
    return 0;
}

namespace {

// The client's calls after the handshake, each checked against the prediction.
void run_calls(weft::bootstrap &b, replies &expect, int nranks) {
    std::string want;
    FUZZ_CHECK((b.put("key", std::string_view("v\0v", 3)) == WEFT_SUCCESS) == expect.next(false, want));
    FUZZ_CHECK((b.fence() == WEFT_SUCCESS) == expect.next(false, want));
    std::string value = "unchanged";
    FUZZ_CHECK(b.get(nranks, "key", value) == WEFT_ERR_RANK && value == "unchanged");
    FUZZ_CHECK(b.get(-1, "key", value) == WEFT_ERR_RANK && value == "unchanged");
    for (int r : {0, nranks - 1}) {
        value = "unchanged";
        bool got = b.get(r, "key", value) == WEFT_SUCCESS;
        FUZZ_CHECK(got == expect.next(true, want));
        FUZZ_CHECK(got ? value == want : value == "unchanged");
    }
    FUZZ_CHECK((b.finalize() == WEFT_SUCCESS) == expect.next(false, want));
    // After finalize the connection is closed: every call fails.
    FUZZ_CHECK(b.fence() == WEFT_ERR_BOOTSTRAP);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    const int fd_before = fuzz::lowest_free_fd();
    int nranks = 1 + data[0] % 4, rank = (data[0] >> 2) % nranks;
    bool via_open = (data[0] >> 6) == 3;
    std::string_view stream(reinterpret_cast<const char *>(data) + 1, size - 1);
    replies expect{stream};
    std::string want;
    {
        // recv_frame sizes its buffer to the announced length before the bytes arrive (up to
        // kvs::max_frame, 64 MiB): each such input costs ~0.1 s under ASan.  Inputs announcing
        // more than 1 MiB in a reply the client reads are left out (the same code runs for the
        // smaller lengths).
        replies scan{stream};
        for (bool v : {false, false, false, true, true, false}) {
            if (scan.closed || scan.rest.size() < 4) break;
            if (kvs::load_u32(scan.rest.data()) > (1u << 20)) return -1;
            scan.next(v, want);
        }
    }

    if (via_open) {
        g_size.set(std::to_string(nranks));
        g_rank.set(std::to_string(rank));
        g_server.serve(std::string(stream));
        {
            std::unique_ptr<weft::bootstrap> b;
            int rc = weft::bootstrap_weftrun_open(b);
            bool ok = expect.next(false, want);
            FUZZ_CHECK((rc == WEFT_SUCCESS) == ok);
            FUZZ_CHECK(ok == (b != nullptr));
            if (b) {
                FUZZ_CHECK(b->rank() == rank && b->size() == nranks && std::string(b->name()) == "weftrun");
                run_calls(*b, expect, nranks);
            }
        }
        g_server.wait_done();
    } else {
        int sv[2];
        FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
        // The replies wait in the socket; the client's requests pile up unread (small).
        size_t off = 0;
        while (off < stream.size()) {
            ssize_t n = ::send(sv[1], stream.data() + off, stream.size() - off, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            FUZZ_CHECK(n > 0);
            off += static_cast<size_t>(n);
        }
        ::shutdown(sv[1], SHUT_WR);
        {
            weft::weftrun_bootstrap b(sv[0], rank, nranks, 10, "fuzz");
            int rc = b.call(kvs::writer(kvs::op_hello).u32(kvs::protocol_version).bytes("t").u32(0).finish(),
                            "handshake", nullptr, 10);
            FUZZ_CHECK((rc == WEFT_SUCCESS) == expect.next(false, want));
            run_calls(b, expect, nranks);
        }
        ::close(sv[1]);
    }
    FUZZ_CHECK(fuzz::lowest_free_fd() == fd_before);
    return 0;
}
