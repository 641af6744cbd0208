// Fuzz target: weftrun's key-value server (tools/weftrun/kvs_server.cpp: read_conn,
// handle_frame, handle_hello, check_fence, drop, rank_exited, take_abort) and the frame splitter
// it uses (wire/kvs_wire.hpp: next_frame, reader), driven as weftrun drives it: through its
// listening socket and poll loop, by client sockets on 127.0.0.1.
//
// Each input creates a server for 1-4 ranks and plays a script: connect clients, send them
// well-formed requests (hello with the right or a wrong token/version/rank, put, get, fence,
// abort, finalize; built with kvs::writer) or raw bytes (partial and malformed frames,
// oversized lengths), close or half-close clients, report exited ranks, take the abort.
//
// Invariants: every byte the server sends is a sequence of well-formed replies (ok, ok + one
// value, or error + one message, nothing after); a connection gets at most one reply per request
// frame it sent (plus one for a refused frame length); a value returned by get is one some client
// put; an abort request, when taken, names a rank of the job and a message a client sent; the
// server never crashes, leaks memory (LSan) or file descriptors.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <cerrno>

#include <set>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "kvs_server.hpp"
#include "kvs_wire.hpp"

namespace kvs = weft::kvs;

namespace {

const std::string token = "fuzz-token";

struct client {
    int fd = -1;
    std::string sent, received;
    size_t replies = 0;
    bool eof = false;
};

// Frames of a byte stream as the protocol defines them (an independent reading, not
// next_frame): calls f(op, body) for each complete frame whose length is acceptable.
template <class F>
size_t frames_of(const std::string &s, F f) {
    size_t pos = 0, count = 0;
    while (s.size() - pos >= 4) {
        uint32_t n = kvs::load_u32(s.data() + pos);
        if (n == 0 || n > kvs::max_frame || s.size() - pos - 4 < n) break;
        f(std::string_view(s).substr(pos + 4, n));
        pos += 4 + size_t{n};
        ++count;
    }
    return count;
}

// A byte string field at the front of body (u32 length + bytes); false when malformed.
bool take_bytes(std::string_view &body, std::string_view &out) {
    if (body.size() < 4) return false;
    uint32_t n = kvs::load_u32(body.data());
    if (body.size() - 4 < n) return false;
    out = body.substr(4, n);
    body.remove_prefix(4 + size_t{n});
    return true;
}

struct harness {
    weftrun::kvs_server server;
    int nranks = 1;
    std::vector<client> clients;
    std::set<std::string> put_values, abort_messages, failed_whys;
    std::set<int> reported;  // ranks the server reported failed

    void pump() {
        for (int round = 0; round < 64; ++round) {
            std::vector<pollfd> fds;
            server.add_pollfds(fds);
            int n = ::poll(fds.data(), fds.size(), 0);
            if (n < 0 && errno == EINTR) continue;  // libFuzzer's timer (SIGALRM)
            FUZZ_CHECK(n >= 0);
            if (n == 0) break;
            server.process(fds, 0);
        }
        for (client &c : clients) read_replies(c);
    }

    void read_replies(client &c) {
        if (c.fd < 0 || c.eof) return;
        char buf[65536];
        for (;;) {
            ssize_t n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n > 0) {
                c.received.append(buf, static_cast<size_t>(n));
                continue;
            }
            if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) c.eof = true;
            break;
        }
        check_replies(c);
    }

    // Replies are well formed; a get's value is one that was put.
    void check_replies(client &c) {
        size_t pos = 0;
        size_t replies = 0;
        while (c.received.size() - pos >= 4) {
            uint32_t n = kvs::load_u32(c.received.data() + pos);
            FUZZ_CHECK(n >= 1 && n <= kvs::max_frame);
            if (c.received.size() - pos - 4 < n) break;
            std::string_view body = std::string_view(c.received).substr(pos + 4, n);
            uint8_t op = static_cast<uint8_t>(body[0]);
            body.remove_prefix(1);
            std::string_view field;
            if (op == kvs::op_ok) {
                if (!body.empty()) {
                    FUZZ_CHECK(take_bytes(body, field) && body.empty());
                    FUZZ_CHECK(put_values.count(std::string(field)) == 1);
                }
            } else {
                FUZZ_CHECK(op == kvs::op_error);
                FUZZ_CHECK(take_bytes(body, field) && body.empty() && !field.empty());
            }
            pos += 4 + size_t{n};
            ++replies;
        }
        // At most one reply per request frame, plus one refusing a frame length.
        size_t requests = frames_of(c.sent, [](std::string_view) {});
        FUZZ_CHECK(replies <= requests + 1);
        c.replies = replies;
    }

    void send_to(client &c, const std::string &bytes) {
        if (c.fd < 0 || bytes.empty()) return;
        ssize_t n = ::send(c.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            c.sent.append(bytes, 0, static_cast<size_t>(n));
            // What reached the server: values it may hand out, abort messages it may report.
            frames_of(c.sent, [&](std::string_view body) {
                uint8_t op = static_cast<uint8_t>(body[0]);
                body.remove_prefix(1);
                std::string_view a, b;
                if (op == kvs::op_put && take_bytes(body, a) && take_bytes(body, b)) put_values.emplace(b);
                if (op == kvs::op_abort && body.size() >= 4) {
                    body.remove_prefix(4);
                    if (take_bytes(body, a)) abort_messages.emplace(a);
                }
                if (op == kvs::op_failed && body.size() >= 4) {
                    body.remove_prefix(4);
                    if (take_bytes(body, a)) failed_whys.emplace(a);
                }
            });
        }
    }

    void connect_client() {
        if (clients.size() >= 6) return;
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        FUZZ_CHECK(fd >= 0);
        // Closed with a reset: no TIME_WAIT left behind by millions of connections.
        struct linger lg = {1, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(server.port());
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int rc;
        while ((rc = ::connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a)) != 0 && errno == EINTR) {}
        FUZZ_CHECK(rc == 0);
        client c;
        c.fd = fd;
        clients.push_back(std::move(c));
    }

    std::string request(fuzz::input &in) {
        uint8_t sel = in.u8();
        auto key = [&]() -> std::string {
            uint8_t k = in.u8();
            return k < 200 ? std::string(1, static_cast<char>('a' + k % 3)) : std::string(in.str());
        };
        switch (sel % 10) {
            case 0: {  // hello
                uint8_t v = in.u8();
                uint32_t version = v < 230 ? kvs::protocol_version : v;
                std::string tok = in.u8() < 230 ? token : std::string(in.str());
                uint32_t rank = in.u8() % (nranks + 1);
                if (in.u8() == 255) rank = in.u32();
                return kvs::writer(kvs::op_hello).u32(version).bytes(tok).u32(rank).finish();
            }
            case 1: {
                std::string k = key();
                return kvs::writer(kvs::op_put).bytes(k).bytes(in.str()).finish();
            }
            case 2: return kvs::writer(kvs::op_fence).finish();
            case 3: {
                uint32_t rank = in.u8() % (nranks + 1);
                if (in.u8() == 255) rank = in.u32();
                return kvs::writer(kvs::op_get).u32(rank).bytes(key()).finish();
            }
            case 4: return kvs::writer(kvs::op_abort).u32(in.u32()).bytes(in.str()).finish();
            case 5: return kvs::writer(kvs::op_finalize).finish();
            case 6: {  // a frame with extra bytes after its fields, or an unknown op
                kvs::writer w(in.u8());
                std::string_view extra = in.str(15);
                std::string f = w.bytes(extra).finish();
                return f;
            }
            case 7: {  // a length prefix by itself (oversized, zero, or announcing more than follows)
                static const uint32_t lengths[] = {
                    0,          1, kvs::max_hello_frame, kvs::max_hello_frame + 1, kvs::max_frame, kvs::max_frame + 1,
                    0xffffffffu};
                uint32_t n = lengths[in.u8() % 7];
                return std::string{char(n >> 24), char(n >> 16), char(n >> 8), char(n)};
            }
            case 8: {  // a rank reports another (or itself, or one out of range) failed
                uint32_t rank = in.u8() % (nranks + 1);
                if (in.u8() == 255) rank = in.u32();
                return kvs::writer(kvs::op_failed).u32(rank).bytes(in.str()).finish();
            }
            default: return std::string(in.str());  // raw bytes
        }
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const int fd_before = fuzz::lowest_free_fd();
    fuzz::input in(data, size);
    {
        harness h;
        uint8_t cfg = in.u8();
        h.nranks = 1 + cfg % 4;
        h.server.set_log([](const std::string &) {});
        if (cfg & 0x10) h.server.set_hello_timeout(std::chrono::milliseconds(0));
        std::string why;
        if (!h.server.open(h.nranks, token, "127.0.0.1", why)) {
            static bool warned = false;
            if (!warned) std::fprintf(stderr, "fuzz_kvs_server: cannot open the server: %s\n", why.c_str());
            warned = true;
            return 0;
        }
        h.connect_client();
        for (int step = 0; step < 64 && !in.empty(); ++step) {
            uint8_t a = in.u8();
            client *c = h.clients.empty() ? nullptr : &h.clients[(a >> 4) % h.clients.size()];
            switch (a % 8) {
                case 0: h.connect_client(); break;
                case 1:
                case 2:
                case 3:
                    if (c) h.send_to(*c, h.request(in));
                    break;
                case 4:  // several requests in one send
                    if (c) {
                        std::string batch;
                        for (int i = in.u8() % 4; i >= 0; --i) batch += h.request(in);
                        h.send_to(*c, batch);
                    }
                    break;
                case 5:
                    if (c && c->fd >= 0) {
                        if (in.flag()) {
                            ::shutdown(c->fd, SHUT_WR);
                        } else {
                            h.read_replies(*c);
                            ::close(c->fd);
                            c->fd = -1;
                        }
                    }
                    break;
                case 6: h.server.rank_exited(static_cast<int8_t>(in.u8())); break;
                case 7:
                    if (auto ab = h.server.take_abort()) {
                        FUZZ_CHECK(ab->rank >= 0 && ab->rank < h.nranks);
                        FUZZ_CHECK(h.abort_messages.count(ab->message) == 1);
                        FUZZ_CHECK(!h.server.take_abort());  // at most once
                    }
                    // A failure report names a rank of the job found by another, with a reason
                    // some rank sent, and comes at most once per rank.
                    while (auto fr = h.server.take_failure_report()) {
                        FUZZ_CHECK(fr->rank >= 0 && fr->rank < h.nranks && fr->by >= 0 && fr->by < h.nranks);
                        FUZZ_CHECK(fr->rank != fr->by);
                        FUZZ_CHECK(h.failed_whys.count(fr->why) == 1);
                        FUZZ_CHECK(h.reported.insert(fr->rank).second);
                    }
                    break;
            }
            h.pump();
        }
        h.pump();
        for (client &c : h.clients)
            if (c.fd >= 0) ::close(c.fd);
        h.pump();
    }
    FUZZ_CHECK(fuzz::lowest_free_fd() == fd_before);
    return 0;
}
