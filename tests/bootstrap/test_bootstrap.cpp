// Unit tests: weftrun's wire framing, its key-value server (token handshake, put/get/fence,
// errors instead of hangs), and the weftrun and singleton bootstrap clients.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "error_detail.hpp"
#include "kvs_wire.hpp"
#include "server_thread.hpp"
#include "weft/weft.h"

namespace kvs = weft::kvs;
using namespace std::string_literals;

namespace {

const std::string token = "00112233445566778899aabbccddeeff";

// Sets environment variables for one test and restores them afterwards.
class env_guard {
  public:
    ~env_guard() {
        for (auto &[k, v] : saved_) v ? ::setenv(k.c_str(), v->c_str(), 1) : ::unsetenv(k.c_str());
    }
    void set(const char *k, const char *v) {
        if (!saved_.count(k)) {
            const char *old = std::getenv(k);
            saved_[k] = old ? std::optional<std::string>(old) : std::nullopt;
        }
        v ? ::setenv(k, v, 1) : ::unsetenv(k);
    }
    // No launcher variables at all: a clean slate for bootstrap_open.
    void clear_launchers() {
        for (const char *k : {"WEFT_KVS", "WEFT_RANK", "WEFT_SIZE", "WEFT_JOB_TOKEN", "PMIX_RANK", "PMIX_NAMESPACE",
                              "PMI_FD", "PMI_RANK", "PMI_SIZE", "WEFT_BOOTSTRAP_TIMEOUT"})
            set(k, nullptr);
    }
    void weftrun(uint16_t port, int rank, int size, const std::string &tok = token) {
        clear_launchers();
        std::string addr = "127.0.0.1:" + std::to_string(port);
        set("WEFT_KVS", addr.c_str());
        set("WEFT_RANK", std::to_string(rank).c_str());
        set("WEFT_SIZE", std::to_string(size).c_str());
        set("WEFT_JOB_TOKEN", tok.c_str());
    }

  private:
    std::map<std::string, std::optional<std::string>> saved_;
};

// A raw protocol client, to send what the real client never would.
class raw_client {
  public:
    explicit raw_client(uint16_t port) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        connected_ = ::connect(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0;
    }
    ~raw_client() { ::close(fd_); }
    bool connected() const { return connected_; }
    void send(const std::string &frame) { ASSERT_EQ(kvs::send_all(fd_, frame, kvs::deadline_after(5)), 0); }
    // Reads one reply: op and first bytes field (if any).  0 or an errno.
    int recv(uint8_t &op, std::string &field, int timeout_s = 5) {
        std::string body;
        if (int e = kvs::recv_frame(fd_, body, kvs::deadline_after(timeout_s))) return e;
        kvs::reader r(body);
        std::string_view f;
        r.op(op);
        field = r.bytes(f) ? std::string(f) : "";
        return 0;
    }
    // True when the server closed the connection (EOF within a few seconds).
    bool closed_by_server() {
        char c;
        return kvs::recv_exact(fd_, &c, 1, kvs::deadline_after(5)) == ECONNRESET;
    }
    void hello(int rank, const std::string &tok = token) {
        send(kvs::writer(kvs::op_hello).u32(kvs::protocol_version).bytes(tok).u32(rank).finish());
    }
    void expect_ok(const char *what) {
        uint8_t op = 0;
        std::string f;
        ASSERT_EQ(recv(op, f), 0) << what;
        ASSERT_EQ(op, kvs::op_ok) << what << ": " << f;
    }
    int fd() const { return fd_; }

  private:
    int fd_ = -1;
    bool connected_ = false;
};

bool contains(const std::vector<std::string> &lines, const std::string &needle) {
    for (auto &l : lines)
        if (l.find(needle) != std::string::npos) return true;
    return false;
}

}  // namespace

// ---- Framing ----

TEST(KvsWire, FrameRoundTripIsBinarySafe) {
    std::string value("\0\xff= \n\r"s);
    value += std::string(100000, '\x01');
    std::string frame = kvs::writer(kvs::op_put).bytes("key with spaces").bytes(value).u32(0xdeadbeef).finish();
    std::string_view body;
    size_t used = 0;
    ASSERT_EQ(kvs::next_frame(frame, kvs::max_frame, body, used), 1);
    EXPECT_EQ(used, frame.size());
    kvs::reader r(body);
    uint8_t op;
    std::string_view k, v;
    uint32_t x;
    ASSERT_TRUE(r.op(op) && r.bytes(k) && r.bytes(v) && r.u32(x));
    EXPECT_TRUE(r.done());
    EXPECT_EQ(op, kvs::op_put);
    EXPECT_EQ(k, "key with spaces");
    EXPECT_EQ(v, value);
    EXPECT_EQ(x, 0xdeadbeefu);
}

TEST(KvsWire, PartialAndOversizedFrames) {
    std::string frame = kvs::writer(kvs::op_get).u32(3).bytes("k").finish();
    std::string_view body;
    size_t used = 0;
    for (size_t cut = 0; cut < frame.size(); ++cut)
        EXPECT_EQ(kvs::next_frame(std::string_view(frame).substr(0, cut), kvs::max_frame, body, used), 0) << cut;
    EXPECT_EQ(kvs::next_frame(frame, 4, body, used), -1);                                    // longer than the limit
    EXPECT_EQ(kvs::next_frame(std::string("\0\0\0\0", 4), kvs::max_frame, body, used), -1);  // empty body
}

TEST(KvsWire, ReaderRejectsTruncatedFields) {
    std::string frame = kvs::writer(kvs::op_put).bytes("abcdef").finish();
    std::string_view body(frame);
    body.remove_prefix(4);
    kvs::reader r(body.substr(0, body.size() - 1));  // drop the last byte of the string
    uint8_t op;
    std::string_view s;
    ASSERT_TRUE(r.op(op));
    EXPECT_FALSE(r.bytes(s));
}

TEST(KvsWire, TokenCompare) {
    EXPECT_TRUE(kvs::token_equal(token, token));
    EXPECT_FALSE(kvs::token_equal(token, token.substr(1)));
    std::string other = token;
    other.back() = '0';
    EXPECT_FALSE(kvs::token_equal(token, other));
}

// ---- Server ----

TEST(KvsServer, WrongTokenIsRefusedAndLogged) {
    server_thread srv(1, token);
    raw_client c(srv.port());
    ASSERT_TRUE(c.connected());
    c.hello(0, "ffffffffffffffffffffffffffffffff");
    uint8_t op = 0;
    std::string msg;
    ASSERT_EQ(c.recv(op, msg), 0);
    EXPECT_EQ(op, kvs::op_error);
    EXPECT_NE(msg.find("wrong job token"), std::string::npos) << msg;
    EXPECT_TRUE(c.closed_by_server());
    EXPECT_TRUE(contains(srv.log(), "wrong job token"));
    // The refused connection did not take rank 0: the right token still gets in.
    raw_client good(srv.port());
    good.hello(0);
    good.expect_ok("hello with the right token");
}

TEST(KvsServer, RequestsBeforeHelloAreRefused) {
    server_thread srv(1, token);
    raw_client c(srv.port());
    c.send(kvs::writer(kvs::op_get).u32(0).bytes("k").finish());
    uint8_t op = 0;
    std::string msg;
    ASSERT_EQ(c.recv(op, msg), 0);
    EXPECT_EQ(op, kvs::op_error);
    EXPECT_TRUE(c.closed_by_server());
}

TEST(KvsServer, OversizedHelloIsRefused) {
    server_thread srv(1, token);
    raw_client c(srv.port());
    c.send("\x40\x00\x00\x00"s);  // announces 1 GiB before proving the token
    uint8_t op = 0;
    std::string msg;
    ASSERT_EQ(c.recv(op, msg), 0);
    EXPECT_EQ(op, kvs::op_error);
    EXPECT_TRUE(c.closed_by_server());
}

TEST(KvsServer, SilentConnectionIsClosed) {
    server_thread srv(1, token, std::chrono::milliseconds(300));
    raw_client c(srv.port());
    ASSERT_TRUE(c.connected());
    EXPECT_TRUE(c.closed_by_server());
    EXPECT_TRUE(contains(srv.log(), "sent no job token in time"));
}

// 256 idle connections at start-up filled the server's unauthenticated slots and the rank's own
// connection was closed: the oldest idle one now makes room, and that is logged.
TEST(KvsServer, IdleFloodNeverKeepsARankOut) {
    server_thread srv(1, token);
    std::vector<std::unique_ptr<raw_client>> flood;
    for (int i = 0; i < 300; ++i) {
        flood.push_back(std::make_unique<raw_client>(srv.port()));
        ASSERT_TRUE(flood.back()->connected());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // all accepted
    raw_client rank0(srv.port());
    rank0.hello(0);
    rank0.expect_ok("hello after 300 idle connections");
    EXPECT_TRUE(contains(srv.log(), "that sent no job token, to make room")) << "the eviction is not logged";
    EXPECT_TRUE(flood.front()->closed_by_server()) << "the oldest idle connection is the one closed";
}

TEST(KvsServer, DuplicateAndOutOfRangeRanksAreRefused) {
    server_thread srv(2, token);
    raw_client a(srv.port()), b(srv.port()), c(srv.port());
    a.hello(1);
    a.expect_ok("first hello of rank 1");
    b.hello(1);
    uint8_t op = 0;
    std::string msg;
    ASSERT_EQ(b.recv(op, msg), 0);
    EXPECT_EQ(op, kvs::op_error);
    EXPECT_NE(msg.find("already connected"), std::string::npos) << msg;
    c.hello(2);
    ASSERT_EQ(c.recv(op, msg), 0);
    EXPECT_EQ(op, kvs::op_error);
    EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
}

TEST(KvsServer, PutGetAndMissingKeyIsAnError) {
    server_thread srv(1, token);
    raw_client c(srv.port());
    c.hello(0);
    c.expect_ok("hello");
    std::string value("\0binary\xff"s);
    c.send(kvs::writer(kvs::op_put).bytes("ep").bytes(value).finish());
    c.expect_ok("put");
    uint8_t op = 0;
    std::string got;
    c.send(kvs::writer(kvs::op_get).u32(0).bytes("ep").finish());
    ASSERT_EQ(c.recv(op, got), 0);
    EXPECT_EQ(op, kvs::op_ok);
    EXPECT_EQ(got, value);
    c.send(kvs::writer(kvs::op_get).u32(0).bytes("never-put").finish());
    ASSERT_EQ(c.recv(op, got, 2), 0) << "a missing key must be answered, not left waiting";
    EXPECT_EQ(op, kvs::op_error);
    EXPECT_NE(got.find("not found"), std::string::npos) << got;
}

TEST(KvsServer, FenceWaitsForEveryRank) {
    server_thread srv(2, token);
    raw_client a(srv.port()), b(srv.port());
    a.hello(0);
    a.expect_ok("hello 0");
    b.hello(1);
    b.expect_ok("hello 1");
    a.send(kvs::writer(kvs::op_fence).finish());
    uint8_t op = 0;
    std::string f;
    EXPECT_EQ(a.recv(op, f, 1), ETIMEDOUT) << "fence completed with one of two ranks";
    b.send(kvs::writer(kvs::op_fence).finish());
    // a's partial read above consumed nothing (timeout before any byte), so frames are intact.
    a.expect_ok("fence rank 0");
    b.expect_ok("fence rank 1");
}

TEST(KvsServer, FenceFailsWhenARankLeaves) {
    server_thread srv(2, token);
    raw_client a(srv.port());
    a.hello(0);
    a.expect_ok("hello 0");
    {
        raw_client b(srv.port());
        b.hello(1);
        b.expect_ok("hello 1");
        a.send(kvs::writer(kvs::op_fence).finish());
    }  // rank 1 disconnects without finalize
    uint8_t op = 0;
    std::string msg;
    ASSERT_EQ(a.recv(op, msg), 0);
    EXPECT_EQ(op, kvs::op_error);
    EXPECT_NE(msg.find("rank 1"), std::string::npos) << msg;
}

TEST(KvsServer, FenceFailsWhenARankExitsWithoutConnecting) {
    server_thread srv(2, token);
    raw_client a(srv.port());
    a.hello(0);
    a.expect_ok("hello 0");
    a.send(kvs::writer(kvs::op_fence).finish());
    srv.rank_exited(1);
    uint8_t op = 0;
    std::string msg;
    ASSERT_EQ(a.recv(op, msg), 0);
    EXPECT_EQ(op, kvs::op_error);
}

// A rank found another failed (not responding, unreachable): with survivors running on, fences
// stop waiting for it, at once; the report is handed out once; a report has no reply; reports
// by the reported rank itself, or about oneself, are ignored.
TEST(KvsServer, FailedReportReleasesFencesUnderKeepGoing) {
    server_thread srv(3, token, std::chrono::seconds(30), /*keep_going=*/true);
    raw_client a(srv.port()), b(srv.port()), c(srv.port());
    a.hello(0);
    a.expect_ok("hello 0");
    b.hello(1);
    b.expect_ok("hello 1");
    c.hello(2);
    c.expect_ok("hello 2");
    a.send(kvs::writer(kvs::op_fence).finish());
    c.send(kvs::writer(kvs::op_fence).finish());
    uint8_t op = 0;
    std::string f;
    EXPECT_EQ(a.recv(op, f, 1), ETIMEDOUT) << "fence completed without rank 1 before any report";
    c.send(kvs::writer(kvs::op_failed).u32(1).bytes("not responding: test").finish());
    c.send(kvs::writer(kvs::op_failed).u32(1).bytes("again").finish());
    c.send(kvs::writer(kvs::op_failed).u32(2).bytes("about itself").finish());
    a.expect_ok("fence rank 0");
    c.expect_ok("fence rank 2");  // the first reply on c: its reports got none
    c.send(kvs::writer(kvs::op_get).u32(0).bytes("nothing").finish());
    ASSERT_EQ(c.recv(op, f), 0);
    EXPECT_EQ(op, kvs::op_error) << "the get's own reply, not one for a report";
    // After rank 1 was reported (the fence completed): its own report, then a request to
    // know it was read.
    b.send(kvs::writer(kvs::op_failed).u32(0).bytes("from the reported rank").finish());
    b.send(kvs::writer(kvs::op_get).u32(0).bytes("nothing").finish());
    ASSERT_EQ(b.recv(op, f), 0);
    EXPECT_EQ(op, kvs::op_error);
    auto reports = srv.reports();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].rank, 1);
    EXPECT_EQ(reports[0].by, 2);
    EXPECT_EQ(reports[0].why, "not responding: test");
}

// ---- Clients ----

TEST(WeftrunBootstrap, PutFenceGetThroughTheServer) {
    server_thread srv(1, token);
    env_guard env;
    env.weftrun(srv.port(), 0, 1);
    std::unique_ptr<weft::bootstrap> b;
    ASSERT_EQ(weft::bootstrap_open(b), WEFT_SUCCESS) << harness::detail();
    EXPECT_STREQ(b->name(), "weftrun");
    EXPECT_EQ(b->rank(), 0);
    EXPECT_EQ(b->size(), 1);
    std::string value(5000, '\0');
    for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>(i * 31);
    ASSERT_EQ(b->put("weft.ep.0", value), WEFT_SUCCESS) << harness::detail();
    ASSERT_EQ(b->fence(), WEFT_SUCCESS) << harness::detail();
    std::string got;
    ASSERT_EQ(b->get(0, "weft.ep.0", got), WEFT_SUCCESS) << harness::detail();
    EXPECT_EQ(got, value);
    EXPECT_EQ(b->get(0, "missing", got), WEFT_ERR_BOOTSTRAP);
    EXPECT_NE(harness::detail().find("not found"), std::string::npos) << harness::detail();
    EXPECT_EQ(b->get(1, "weft.ep.0", got), WEFT_ERR_RANK);
    EXPECT_EQ(b->finalize(), WEFT_SUCCESS) << harness::detail();
    EXPECT_NE(b->put("late", "x"), WEFT_SUCCESS);
}

TEST(WeftrunBootstrap, WrongTokenFailsWithAMessage) {
    server_thread srv(1, token);
    env_guard env;
    env.weftrun(srv.port(), 0, 1, "0123456789abcdef0123456789abcdef");
    std::unique_ptr<weft::bootstrap> b;
    EXPECT_EQ(weft::bootstrap_open(b), WEFT_ERR_BOOTSTRAP);
    EXPECT_FALSE(b);
    EXPECT_NE(harness::detail().find("wrong job token"), std::string::npos) << harness::detail();
}

TEST(WeftrunBootstrap, BadEnvironmentNamesTheVariable) {
    server_thread srv(2, token);
    env_guard env;
    std::unique_ptr<weft::bootstrap> b;
    struct {
        const char *var, *value;
    } cases[] = {{"WEFT_RANK", "abc"},
                 {"WEFT_RANK", "2"},
                 {"WEFT_RANK", "-1"},
                 {"WEFT_SIZE", "0"},
                 {"WEFT_SIZE", "x"},
                 {"WEFT_JOB_TOKEN", nullptr},
                 {"WEFT_BOOTSTRAP_TIMEOUT", "soon"},
                 {"WEFT_KVS", "no-port-here"}};
    for (auto &c : cases) {
        env.weftrun(srv.port(), 0, 2);
        env.set(c.var, c.value);
        EXPECT_EQ(weft::bootstrap_open(b), WEFT_ERR_BOOTSTRAP) << c.var;
        EXPECT_NE(harness::detail().find(c.var), std::string::npos) << c.var << ": " << harness::detail();
    }
}

TEST(WeftrunBootstrap, SilentServerTimesOut) {
    // A listener that never accepts: connect succeeds (backlog), the hello is never answered.
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(fd, 4), 0);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len), 0);
    env_guard env;
    env.weftrun(ntohs(a.sin_port), 0, 1);
    env.set("WEFT_BOOTSTRAP_TIMEOUT", "1");
    std::unique_ptr<weft::bootstrap> b;
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(weft::bootstrap_open(b), WEFT_ERR_BOOTSTRAP);
    auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_LT(took, std::chrono::seconds(5));
    EXPECT_NE(harness::detail().find("WEFT_BOOTSTRAP_TIMEOUT"), std::string::npos) << harness::detail();
    ::close(fd);
}

TEST(WeftrunBootstrap, NoServerFailsNamingWeftKvs) {
    // Bind then close to get a port with (almost certainly) no listener.
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len), 0);
    ::close(fd);
    env_guard env;
    env.weftrun(ntohs(a.sin_port), 0, 1);
    std::unique_ptr<weft::bootstrap> b;
    EXPECT_EQ(weft::bootstrap_open(b), WEFT_ERR_BOOTSTRAP);
    EXPECT_NE(harness::detail().find("WEFT_KVS"), std::string::npos) << harness::detail();
}

TEST(SingletonBootstrap, LocalKeyValueStore) {
    env_guard env;
    env.clear_launchers();
    std::unique_ptr<weft::bootstrap> b;
    ASSERT_EQ(weft::bootstrap_open(b), WEFT_SUCCESS) << harness::detail();
    EXPECT_STREQ(b->name(), "singleton");
    EXPECT_EQ(b->rank(), 0);
    EXPECT_EQ(b->size(), 1);
    std::string value("\0\x01\x02"s), got;
    ASSERT_EQ(b->put("weft.ep.0", value), WEFT_SUCCESS);
    ASSERT_EQ(b->fence(), WEFT_SUCCESS);
    ASSERT_EQ(b->get(0, "weft.ep.0", got), WEFT_SUCCESS);
    EXPECT_EQ(got, value);
    EXPECT_EQ(b->get(0, "missing", got), WEFT_ERR_BOOTSTRAP);
    EXPECT_EQ(b->get(1, "weft.ep.0", got), WEFT_ERR_RANK);
    EXPECT_EQ(b->finalize(), WEFT_SUCCESS);
}

TEST(Pmi1Bootstrap, BadPmiEnvironmentNamesTheVariable) {
    env_guard env;
    env.clear_launchers();
    std::unique_ptr<weft::bootstrap> b;
    env.set("PMI_FD", "not-a-number");
    EXPECT_EQ(weft::bootstrap_open(b), WEFT_ERR_BOOTSTRAP);
    EXPECT_NE(harness::detail().find("PMI_FD"), std::string::npos) << harness::detail();
    env.set("PMI_FD", "1000");
    env.set("PMI_SIZE", "2");
    env.set("PMI_RANK", "7");
    EXPECT_EQ(weft::bootstrap_open(b), WEFT_ERR_BOOTSTRAP);
    EXPECT_NE(harness::detail().find("PMI_RANK"), std::string::npos) << harness::detail();
}

TEST(PmixBootstrap, WithoutPmixTheMessageSaysHowToGetIt) {
#ifdef WEFT_HAVE_PMIX
    GTEST_SKIP() << "this build has PMIx; the message for builds without it cannot be produced here";
#else
    env_guard env;
    env.clear_launchers();
    env.set("PMIX_RANK", "0");
    env.set("PMIX_NAMESPACE", "test");
    std::unique_ptr<weft::bootstrap> b;
    EXPECT_EQ(weft::bootstrap_open(b), WEFT_ERR_BOOTSTRAP);
    EXPECT_NE(harness::detail().find("libpmix-dev"), std::string::npos) << harness::detail();
#endif
}
