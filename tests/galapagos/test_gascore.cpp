/* The GAScore model (weft-gascore) against a raw TCP peer: each test writes a cluster file
 * (software node 0 with kernel 0, this test; hardware node 1 on 127.0.0.1 with kernel 1 "idle"
 * and kernel 2 "echo"), starts the model, and speaks gal_wire.hpp's bytes and Shoal active
 * messages to it.  The AM words are built here from the format's description, not with the
 * model's code, so an encoding mistake on either side shows. */
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gal_test_handshake.hpp"
#include "gal_wire.hpp"

extern char **environ;

namespace {

const char *const job_token = "gascore-test-token";
constexpr size_t segment = 65536;

/* ---- Shoal AM words, from the format's description. */
constexpr uint8_t SHORT = 1, MEDIUM = 2, LONG = 4, STRIDED = 5, VECTOR = 6;
constexpr uint8_t FIFO = 0x10, ASYNC = 0x20, REPLY = 0x40, EXT = 0x80;

uint64_t am_header(uint8_t type, uint16_t src, uint16_t dst, uint16_t size, uint8_t handler, uint8_t nargs) {
    return uint64_t(type) | uint64_t(src) << 8 | uint64_t(dst) << 24 | uint64_t(size) << 40 | uint64_t(handler) << 56 |
        uint64_t(nargs) << 60;
}
uint64_t token_word(uint16_t token) { return uint64_t(token) << 48; }
uint64_t stride_word(uint16_t stride, uint16_t block, uint16_t count, uint16_t token) {
    return uint64_t(stride) | uint64_t(block) << 16 | uint64_t(count) << 32 | uint64_t(token) << 48;
}
uint8_t type_of(uint64_t w) { return uint8_t(w); }
uint16_t src_of(uint64_t w) { return uint16_t(w >> 8); }
uint16_t dst_of(uint64_t w) { return uint16_t(w >> 24); }
uint16_t size_of(uint64_t w) { return uint16_t(w >> 40); }
uint8_t handler_of(uint64_t w) { return uint8_t((w >> 56) & 0xf); }
uint8_t nargs_of(uint64_t w) { return uint8_t(w >> 60); }
uint16_t token_of(uint64_t w) { return uint16_t(w >> 48); }

void append_bytes(std::vector<uint64_t> &words, const std::vector<uint8_t> &bytes) {
    for (size_t i = 0; i < bytes.size(); i += 8) {
        uint64_t w = 0;
        for (size_t b = 0; b < 8 && i + b < bytes.size(); ++b) w |= uint64_t(bytes[i + b]) << (8 * b);
        words.push_back(w);
    }
}

std::vector<uint8_t> bytes_from(const std::vector<uint64_t> &words, size_t first, size_t n) {
    std::vector<uint8_t> out;
    for (size_t i = 0; i < n; ++i) out.push_back(uint8_t(words.at(first + i / 8) >> (8 * (i % 8))));
    return out;
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = uint8_t(seed + i * 13);
    return v;
}

int free_port() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa);
    socklen_t len = sizeof sa;
    getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len);
    close(fd);
    return ntohs(sa.sin_port);
}

/* ---- A raw Galapagos peer (software node 0, kernel 0). */
class Peer {
  public:
    ~Peer() {
        if (fd_ >= 0) close(fd_);
    }

    bool connect_to(int port) {
        fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(uint16_t(port));
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(fd_, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0) return false;
        int one = 1;
        setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return true;
    }

    /* A hello, then a proof made without the job's key: what an intruder can send. */
    void intrude() {
        std::vector<uint8_t> h = gal_test::hello(0x1234);
        send_bytes(h.data(), h.size());
        uint8_t welcome[gal::welcome_bytes];
        if (!gal_test::welcomed(fd_, welcome)) return;
        uint8_t guess[gal::proof_bytes];
        gal::random_bytes(guess, sizeof guess);
        std::vector<uint8_t> p = gal_test::proof(guess);
        send_bytes(p.data(), p.size());
    }

    /* Connected, welcomed, kernel 0 announced. */
    bool join(int port) {
        if (!connect_to(port)) return false;
        if (!gal_test::join(fd_, gal::key_from_text(job_token), 0x1234)) return false;
        gal::packet_header h;
        h.flits = 1;
        h.kind = gal::KIND_ROUTE;
        send_packet(gal::header_encode(h), {0});
        return true;
    }

    void send_bytes(const void *p, size_t n) {
        ASSERT_EQ(send(fd_, p, n, MSG_NOSIGNAL), ssize_t(n)) << strerror(errno);
    }

    void send_packet(uint64_t gal_header, const std::vector<uint64_t> &words) {
        std::vector<uint8_t> raw(8 * (1 + words.size()));
        gal::put_u64(raw.data(), gal_header);
        for (size_t i = 0; i < words.size(); ++i) gal::put_u64(raw.data() + 8 * (i + 1), words[i]);
        send_bytes(raw.data(), raw.size());
    }

    /* An AM from kernel 0: the Galapagos header names the AM's kernels. */
    void send_am(const std::vector<uint64_t> &words) {
        gal::packet_header h;
        h.dest = uint8_t(dst_of(words.at(0)));
        h.src = uint8_t(src_of(words.at(0)));
        h.flits = uint16_t(words.size());
        h.kind = gal::KIND_RAW;
        send_packet(gal::header_encode(h), words);
    }

    /* The next packet, or false after timeout_ms. */
    bool recv_packet(gal::packet_header &h, std::vector<uint64_t> &words, int timeout_ms = 5000) {
        uint8_t head[8];
        if (!read_exact(head, 8, timeout_ms)) return false;
        if (gal::header_decode(gal::get_u64(head), h) != gal::header_error::none) return false;
        std::vector<uint8_t> raw(8 * size_t(h.flits));
        if (!raw.empty() && !read_exact(raw.data(), raw.size(), 5000)) return false;
        words.clear();
        for (size_t i = 0; i < h.flits; ++i) words.push_back(gal::get_u64(raw.data() + 8 * i));
        return true;
    }

    /* The next AM (asserting it is a raw packet to kernel 0 whose header agrees). */
    std::vector<uint64_t> recv_am(int timeout_ms = 5000) {
        gal::packet_header h;
        std::vector<uint64_t> words;
        EXPECT_TRUE(recv_packet(h, words, timeout_ms)) << "no packet from the model";
        if (words.empty()) return {0, 0};
        EXPECT_EQ(h.kind, gal::KIND_RAW);
        EXPECT_EQ(h.dest, 0);
        EXPECT_EQ(h.dest, dst_of(words[0]));
        EXPECT_EQ(h.src, src_of(words[0]));
        return words;
    }

    int fd() const { return fd_; }

    bool quiet_for(int ms) {
        pollfd p{fd_, POLLIN, 0};
        return poll(&p, 1, ms) == 0;
    }

    /* True when the model closed the connection (EOF) within timeout_ms. */
    bool closed_by_peer(int timeout_ms) {
        uint8_t b;
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, timeout_ms) != 1) return false;
        return recv(fd_, &b, 1, 0) <= 0;
    }

  private:
    bool read_exact(uint8_t *p, size_t n, int timeout_ms) {
        size_t got = 0;
        while (got < n) {
            pollfd pf{fd_, POLLIN, 0};
            if (poll(&pf, 1, timeout_ms) != 1) return false;
            ssize_t k = recv(fd_, p + got, n - got, 0);
            if (k <= 0) return false;
            got += size_t(k);
        }
        return true;
    }

    int fd_ = -1;
};

/* ---- The model as a child process. */
class Model {
  public:
    ~Model() { stop(); }

    /* Starts weft-gascore with args; empty token: none in its environment. */
    void start(const std::vector<std::string> &args, const std::string &token = job_token) {
        int out[2], err[2];
        ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
        ASSERT_EQ(pipe2(err, O_CLOEXEC), 0);
        std::vector<std::string> env_strings;
        for (char **e = environ; *e; ++e)
            if (strncmp(*e, "WEFT_GALAPAGOS_TOKEN=", 21) != 0 && strncmp(*e, "WEFT_JOB_TOKEN=", 15) != 0)
                env_strings.emplace_back(*e);
        if (!token.empty()) env_strings.push_back("WEFT_GALAPAGOS_TOKEN=" + token);
        std::vector<char *> envp, argv;
        for (auto &s : env_strings) envp.push_back(s.data());
        envp.push_back(nullptr);
        std::vector<std::string> all = {WEFT_GASCORE_PROGRAM};
        all.insert(all.end(), args.begin(), args.end());
        for (auto &s : all) argv.push_back(s.data());
        argv.push_back(nullptr);
        pid_ = fork();
        ASSERT_GE(pid_, 0);
        if (pid_ == 0) {
            dup2(out[1], 1);
            dup2(err[1], 2);
            execve(argv[0], argv.data(), envp.data());
            _exit(127);
        }
        close(out[1]);
        close(err[1]);
        out_fd_ = out[0];
        err_fd_ = err[0];
        err_reader_ = std::thread([this] {
            char buf[4096];
            ssize_t k;
            while ((k = read(err_fd_, buf, sizeof buf)) > 0) {
                std::lock_guard<std::mutex> g(lock_);
                err_.append(buf, size_t(k));
            }
        });
    }

    /* The first stdout line (the listening line), or "" after 10 s. */
    std::string first_line() {
        std::string line;
        char c;
        while (true) {
            pollfd p{out_fd_, POLLIN, 0};
            if (poll(&p, 1, 10000) != 1 || read(out_fd_, &c, 1) != 1) return line;
            if (c == '\n') return line;
            line += c;
        }
    }

    /* SIGTERM, then the exit status (-1: did not exit within 10 s). */
    int stop() {
        if (pid_ <= 0) return status_;
        kill(pid_, SIGTERM);
        status_ = wait_exit();
        return status_;
    }

    /* Waits for the child to exit by itself. */
    int wait_exit() {
        if (pid_ <= 0) return status_;
        int st = 0;
        for (int i = 0; i < 1000; ++i) {
            pid_t r = waitpid(pid_, &st, WNOHANG);
            if (r == pid_) {
                pid_ = -1;
                finish();
                status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                return status_;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        kill(pid_, SIGKILL);
        waitpid(pid_, &st, 0);
        pid_ = -1;
        finish();
        status_ = -1;
        return status_;
    }

    std::string err() {
        std::lock_guard<std::mutex> g(lock_);
        return err_;
    }

  private:
    void finish() {
        if (err_reader_.joinable()) err_reader_.join();
        close(out_fd_);
        close(err_fd_);
    }

    pid_t pid_ = -1;
    int status_ = -1;
    int out_fd_ = -1, err_fd_ = -1;
    std::thread err_reader_;
    std::mutex lock_;
    std::string err_;
};

std::string make_dir() {
    char tmpl[] = "/tmp/weft-gascore-test-XXXXXX";
    const char *d = mkdtemp(tmpl);
    return d ? d : "/tmp";
}

/* ---- The fixture: a model hosting kernels 1 (idle) and 2 (echo), and a joined peer. */
class Gascore : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = make_dir();
        port_ = free_port();
        cluster_ = dir_ + "/cluster.json";
        write_cluster(R"("function": "idle")", R"("function": "echo")");
        model_.start({"--cluster", cluster_, "--node", "1", "--segment", std::to_string(segment)});
        std::string line = model_.first_line();
        ASSERT_NE(line.find("listening on 127.0.0.1:" + std::to_string(port_)), std::string::npos)
            << "stdout: " << line << "\nstderr: " << model_.err();
        ASSERT_NE(line.find("kernels 1,2"), std::string::npos) << line;
        ASSERT_TRUE(peer_.join(port_));
    }

    void TearDown() override {
        model_.stop();
        std::remove(cluster_.c_str());
        rmdir(dir_.c_str());
    }

    void write_cluster(const std::string &k1, const std::string &k2) {
        std::ofstream f(cluster_);
        f << R"({"nodes": [{"node": 0, "type": "sw", "address": "127.0.0.1"},)"
          << R"( {"node": 1, "type": "hw", "address": "127.0.0.1:)" << port_ << R"("}],)"
          << R"( "kernels": [{"id": 0, "node": 0}, {"id": 1, "node": 1, )" << k1 << "},"
          << R"( {"id": 2, "node": 1, )" << k2 << "}]}";
    }

    /* Expects the automatic reply to a request with token from kernel `from`. */
    void expect_reply(uint16_t from, uint16_t token) {
        std::vector<uint64_t> r = peer_.recv_am();
        ASSERT_EQ(r.size(), 2u);
        EXPECT_EQ(type_of(r[0]), SHORT | REPLY);
        EXPECT_EQ(src_of(r[0]), from);
        EXPECT_EQ(dst_of(r[0]), 0);
        EXPECT_EQ(size_of(r[0]), 0);
        EXPECT_EQ(handler_of(r[0]), 1); /* H_INCR_MEM, as the GAScore sends it */
        EXPECT_EQ(nargs_of(r[0]), 0);
        EXPECT_EQ(r[1], token_word(token));
    }

    /* Long FIFO write of bytes at addr of kernel 1, and its reply. */
    void long_write(uint64_t addr, const std::vector<uint8_t> &bytes, uint16_t token) {
        std::vector<uint64_t> w = {am_header(LONG | FIFO, 0, 1, uint16_t(bytes.size()), 0, 0), token_word(token), addr};
        append_bytes(w, bytes);
        peer_.send_am(w);
        expect_reply(1, token);
    }

    /* Long get of n bytes at addr of kernel 1: the ASYNC Long answer's bytes. */
    std::vector<uint8_t> long_get(uint64_t addr, uint16_t n, uint16_t token) {
        peer_.send_am({am_header(LONG | REPLY, 0, 1, n, 0, 0), token_word(token), addr, 0x8000});
        std::vector<uint64_t> a = peer_.recv_am();
        EXPECT_EQ(type_of(a[0]), LONG | ASYNC);
        EXPECT_EQ(size_of(a[0]), n);
        EXPECT_EQ(a.size(), 3 + (n + 7) / 8u);
        if (a.size() != 3 + (n + 7) / 8u) return {};
        EXPECT_EQ(a[1], token_word(token));
        EXPECT_EQ(a[2], 0x8000u);
        return bytes_from(a, 3, n);
    }

    /* A good Short now gets its reply first: nothing else was queued before it. */
    void expect_still_serving(uint16_t token) {
        peer_.send_am({am_header(SHORT, 0, 1, 0, 0, 0), token_word(token)});
        expect_reply(1, token);
    }

    std::string dir_, cluster_;
    int port_ = 0;
    Model model_;
    Peer peer_;
};

TEST_F(Gascore, ShortWithHandlerAddIsAnswered) {
    peer_.send_am({am_header(SHORT, 0, 1, 0, 2, 2), token_word(0x1234), 40, 0x100000002});
    expect_reply(1, 0x1234);
    /* No argument: one event. */
    peer_.send_am({am_header(SHORT, 0, 1, 0, 3, 0), token_word(7)});
    expect_reply(1, 7);
    peer_.send_am({am_header(SHORT, 0, 1, 0, 1, 3), token_word(8), 1, 2, 3});
    expect_reply(1, 8);
    EXPECT_EQ(model_.stop(), 0);
    /* H_ADD adds arg[31:0] per argument; H_INCR_BAR and H_INCR_MEM count events. */
    EXPECT_NE(model_.err().find("kernel 1: mem_ready 3, barrier 1, counter 42"), std::string::npos) << model_.err();
    EXPECT_NE(model_.err().find("handled 3 packets; dropped 0"), std::string::npos) << model_.err();
}

TEST_F(Gascore, AsyncRequestsGetNoReply) {
    peer_.send_am({am_header(SHORT | ASYNC, 0, 1, 0, 0, 0), token_word(1)});
    peer_.send_am({am_header(LONG | ASYNC, 0, 1, 8, 0, 0), token_word(2), 0, 0x55});
    /* The first reply to arrive is the non-ASYNC request's. */
    expect_still_serving(3);
    EXPECT_TRUE(peer_.quiet_for(200));
}

TEST_F(Gascore, MediumIsEchoedAndWaitsForItsReply) {
    std::vector<uint8_t> data = pattern(13, 5); /* not a whole word: padded on the wire */
    std::vector<uint64_t> m = {am_header(MEDIUM | FIFO, 0, 2, 13, 0, 1), token_word(21), 99};
    append_bytes(m, data);
    peer_.send_am(m);

    /* Our Medium's reply and the echo, in either order. */
    std::vector<uint64_t> echo;
    bool replied = false;
    for (int i = 0; i < 2; ++i) {
        std::vector<uint64_t> p = peer_.recv_am();
        if (type_of(p[0]) == (SHORT | REPLY)) {
            EXPECT_EQ(p[1], token_word(21));
            EXPECT_EQ(src_of(p[0]), 2);
            replied = true;
        } else {
            echo = p;
        }
    }
    EXPECT_TRUE(replied);
    ASSERT_EQ(echo.size(), 2u + 2u);
    EXPECT_EQ(type_of(echo[0]), MEDIUM); /* FIFO cleared on egress, not async */
    EXPECT_EQ(src_of(echo[0]), 2);
    EXPECT_EQ(size_of(echo[0]), 13);
    EXPECT_EQ(nargs_of(echo[0]), 0);
    EXPECT_EQ(bytes_from(echo, 2, 13), data);
    EXPECT_EQ(echo[3] >> 40, 0u) << "padding must be zero";
    const uint16_t echo_token = token_of(echo[1]);

    /* The echo kernel now waits for its reply: a second Medium is not echoed yet. */
    std::vector<uint64_t> m2 = {am_header(MEDIUM | FIFO, 0, 2, 8, 4, 0), token_word(22), 0x0102030405060708};
    peer_.send_am(m2);
    expect_reply(2, 22);
    EXPECT_TRUE(peer_.quiet_for(300)) << "echoed before its reply came";
    peer_.send_am({am_header(SHORT | REPLY, 0, 2, 0, 1, 0), token_word(echo_token)});
    std::vector<uint64_t> e2 = peer_.recv_am();
    ASSERT_EQ(e2.size(), 3u);
    EXPECT_EQ(type_of(e2[0]), MEDIUM);
    EXPECT_EQ(handler_of(e2[0]), 4); /* the request's handler */
    EXPECT_EQ(e2[2], 0x0102030405060708u);
    EXPECT_NE(token_of(e2[1]), echo_token) << "a new request, a new token";
}

TEST_F(Gascore, IncrMemHandlerFeedsTheKernelsWaits) {
    /* H_INCR_MEM on the echo kernel: its next wait_mem(1) needs no reply from us. */
    peer_.send_am({am_header(SHORT, 0, 2, 0, 1, 0), token_word(1)});
    expect_reply(2, 1);
    for (uint16_t t = 2; t <= 3; ++t) peer_.send_am({am_header(MEDIUM, 0, 2, 8, 0, 0), token_word(t), t});
    int echoes = 0, replies = 0;
    for (int i = 0; i < 4; ++i) {
        std::vector<uint64_t> p = peer_.recv_am();
        (type_of(p[0]) == MEDIUM ? echoes : replies)++;
    }
    EXPECT_EQ(echoes, 2);
    EXPECT_EQ(replies, 2);
    EXPECT_TRUE(peer_.quiet_for(200));
}

TEST_F(Gascore, LongWriteThenLongGet) {
    std::vector<uint8_t> data = pattern(24, 1);
    long_write(0x100, data, 5);
    EXPECT_EQ(long_get(0x100, 24, 6), data);
    /* A get's answer is ASYNC: no automatic reply follows it, and none for the get. */
    EXPECT_TRUE(peer_.quiet_for(200));
    /* Byte-sized Long, and a get with arguments and a handler. */
    long_write(0x205, pattern(3, 9), 7);
    peer_.send_am({am_header(LONG | REPLY, 0, 1, 11, 2, 2), token_word(8), 0x200, 0x40, 17, 18});
    std::vector<uint64_t> a = peer_.recv_am();
    ASSERT_EQ(a.size(), 7u);
    EXPECT_EQ(a[0], am_header(LONG | ASYNC, 1, 0, 11, 2, 2));
    EXPECT_EQ(a[1], token_word(8));
    EXPECT_EQ(a[2], 0x40u);
    EXPECT_EQ(a[3], 17u);
    EXPECT_EQ(a[4], 18u);
    std::vector<uint8_t> want(11, 0);
    std::vector<uint8_t> p = pattern(3, 9);
    std::copy(p.begin(), p.end(), want.begin() + 5);
    EXPECT_EQ(bytes_from(a, 5, 11), want);
}

TEST_F(Gascore, MediumGetAnswersWithAMedium) {
    std::vector<uint8_t> data = pattern(16, 40);
    long_write(0x300, data, 1);
    peer_.send_am({am_header(MEDIUM | REPLY, 0, 1, 16, 0, 1), token_word(2), 0x300, 77});
    std::vector<uint64_t> a = peer_.recv_am();
    ASSERT_EQ(a.size(), 5u);
    EXPECT_EQ(a[0], am_header(MEDIUM | ASYNC, 1, 0, 16, 0, 1));
    EXPECT_EQ(a[1], token_word(2));
    EXPECT_EQ(a[2], 77u);
    EXPECT_EQ(bytes_from(a, 3, 16), data);
    EXPECT_TRUE(peer_.quiet_for(200));
}

TEST_F(Gascore, StridedWriteThenStridedGet) {
    /* 3 blocks of 8 bytes, 32 bytes apart, at 0x400. */
    std::vector<uint8_t> data = pattern(24, 3);
    std::vector<uint64_t> w = {am_header(STRIDED, 0, 1, 24, 0, 0), stride_word(32, 8, 3, 11), 0x400};
    append_bytes(w, data);
    peer_.send_am(w);
    expect_reply(1, 11);

    std::vector<uint8_t> region = long_get(0x400, 72, 12);
    ASSERT_EQ(region.size(), 72u);
    for (size_t b = 0; b < 3; ++b)
        for (size_t i = 0; i < 32 && b * 32 + i < 72; ++i)
            EXPECT_EQ(region[b * 32 + i], i < 8 ? data[b * 8 + i] : 0) << b << " " << i;

    /* The strided get: source shape 3 x 8 every 32, requester's shape 2 x 12 every 16. */
    peer_.send_am({am_header(STRIDED | REPLY, 0, 1, 24, 0, 0), stride_word(32, 8, 3, 0), 0x400,
                   stride_word(16, 12, 2, 13), 0x900});
    std::vector<uint64_t> a = peer_.recv_am();
    ASSERT_EQ(a.size(), 6u);
    EXPECT_EQ(a[0], am_header(STRIDED | ASYNC, 1, 0, 24, 0, 0));
    EXPECT_EQ(a[1], stride_word(16, 12, 2, 13));
    EXPECT_EQ(a[2], 0x900u);
    EXPECT_EQ(bytes_from(a, 3, 24), data);
    EXPECT_TRUE(peer_.quiet_for(200));
}

TEST_F(Gascore, VectoredWrite) {
    /* Pieces: 8 bytes at 0x600, 16 at 0x700, 5 at 0x800. */
    std::vector<uint8_t> data = pattern(29, 7);
    uint64_t vector_word = uint64_t(3) << 4 | uint64_t(8) << 20 | token_word(31);
    std::vector<uint64_t> w = {am_header(VECTOR, 0, 1, 29, 0, 0), vector_word, 0x600, 16, 0x700, 5, 0x800};
    append_bytes(w, data);
    peer_.send_am(w);
    expect_reply(1, 31);
    EXPECT_EQ(long_get(0x600, 8, 32), std::vector<uint8_t>(data.begin(), data.begin() + 8));
    EXPECT_EQ(long_get(0x700, 16, 33), std::vector<uint8_t>(data.begin() + 8, data.begin() + 24));
    EXPECT_EQ(long_get(0x800, 5, 34), std::vector<uint8_t>(data.begin() + 24, data.end()));
}

TEST_F(Gascore, MalformedMessagesAreDroppedWithoutReply) {
    const std::vector<uint64_t> bad[] = {
        /* size says 100 bytes, 16 follow */
        {am_header(LONG, 0, 1, 100, 0, 0), token_word(1), 0x10, 1, 2},
        /* ends beyond the memory */
        {am_header(LONG, 0, 1, 16, 0, 0), token_word(2), segment - 8, 1, 2},
        /* address overflow */
        {am_header(LONG, 0, 1, 8, 0, 0), token_word(3), ~uint64_t(0) - 3, 1},
        /* Weft's extension bit */
        {am_header(LONG | EXT, 0, 1, 0, 0, 0), token_word(4), 0x10, 0},
        /* reserved type bit, unknown kind */
        {am_header(SHORT | 0x08, 0, 1, 0, 0, 0), token_word(5)},
        {am_header(3, 0, 1, 0, 0, 0), token_word(6)},
        /* a Short with a payload size, a Short reply with arguments */
        {am_header(SHORT, 0, 1, 8, 0, 0), token_word(7), 0},
        {am_header(SHORT | REPLY, 0, 1, 0, 0, 1), token_word(8), 0},
        /* token word low bits set */
        {am_header(SHORT, 0, 1, 0, 0, 0), token_word(9) | 1},
        /* arguments missing */
        {am_header(SHORT, 0, 1, 0, 2, 3), token_word(10), 1},
        /* strided size disagreeing with its blocks; strided region past the end */
        {am_header(STRIDED, 0, 1, 16, 0, 0), stride_word(8, 8, 3, 11), 0, 1, 2},
        {am_header(STRIDED, 0, 1, 16, 0, 0), stride_word(0xffff, 8, 2, 12), 0, 1, 2},
        /* vectored sizes not summing to the size */
        {am_header(VECTOR, 0, 1, 16, 0, 0), uint64_t(2) << 4 | uint64_t(8) << 20 | token_word(13), 0, 4, 0x40, 1, 2},
        /* a get reading past the end */
        {am_header(LONG | REPLY, 0, 1, 16, 0, 0), token_word(14), segment - 8, 0},
        /* a kernel not hosted here (kernel 9) */
        {am_header(SHORT, 0, 9, 0, 0, 0), token_word(15)},
    };
    for (const auto &w : bad) peer_.send_am(w);
    expect_still_serving(100);
    /* Nothing was written by the refused Longs. */
    EXPECT_EQ(long_get(0x10, 8, 101), std::vector<uint8_t>(8, 0));
    EXPECT_EQ(long_get(segment - 8, 8, 102), std::vector<uint8_t>(8, 0));
    EXPECT_EQ(long_get(0, 8, 103), std::vector<uint8_t>(8, 0));
    EXPECT_EQ(model_.stop(), 0);
    const std::string err = model_.err();
    EXPECT_NE(err.find("dropped 15 (truncated=1 reserved=2 type=1 extension=1 size=4 reply=1 "
                       "range=4 not-hosted=1"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("dropped a packet (extension"), std::string::npos) << err;
}

TEST_F(Gascore, GalapagosHeaderMustNameTheAmKernels) {
    /* The Galapagos header says kernel 5 sent it; the AM says kernel 0. */
    gal::packet_header h;
    h.dest = 1;
    h.src = 5;
    h.flits = 2;
    peer_.send_packet(gal::header_encode(h), {am_header(SHORT, 0, 1, 0, 0, 0), token_word(1)});
    /* Weft tagged-message packets are skipped whole. */
    h.kind = gal::KIND_MSG_FIRST;
    h.src = 0;
    h.flits = 3;
    peer_.send_packet(gal::header_encode(h), {1, 8, am_header(SHORT, 0, 1, 0, 0, 0)});
    expect_still_serving(2);
    EXPECT_EQ(model_.stop(), 0);
    EXPECT_NE(model_.err().find("mismatch=1"), std::string::npos) << model_.err();
    EXPECT_NE(model_.err().find("skipped Weft message packets 1"), std::string::npos) << model_.err();
}

TEST_F(Gascore, BadPacketHeaderClosesOnlyThatConnection) {
    peer_.send_packet(uint64_t(1) << 50, {}); /* reserved header bits */
    EXPECT_TRUE(peer_.closed_by_peer(5000));
    Peer again;
    ASSERT_TRUE(again.join(port_));
    again.send_am({am_header(SHORT, 0, 1, 0, 0, 0), token_word(3)});
    std::vector<uint64_t> r = again.recv_am();
    EXPECT_EQ(r[1], token_word(3));
}

TEST_F(Gascore, WrongKeyIsRefused) {
    Peer intruder;
    ASSERT_TRUE(intruder.connect_to(port_));
    intruder.intrude();
    EXPECT_TRUE(intruder.closed_by_peer(5000)) << "a proof without the key was accepted";
    expect_still_serving(1);
    EXPECT_EQ(model_.stop(), 0);
    EXPECT_NE(model_.err().find("refused a connection from 127.0.0.1:"), std::string::npos) << model_.err();
    EXPECT_NE(model_.err().find("wrong job key"), std::string::npos) << model_.err();
    EXPECT_NE(model_.err().find("refused connections 1"), std::string::npos) << model_.err();
}

/* ---- Command lines and cluster files the model refuses (exit 2). */
class GascoreCli : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = make_dir();
        cluster_ = dir_ + "/cluster.json";
        std::ofstream f(cluster_);
        f << R"({"nodes": [{"node": 0, "type": "sw", "address": "127.0.0.1"},)"
          << R"( {"node": 1, "type": "hw", "address": "127.0.0.1:)" << free_port() << R"("}],)"
          << R"( "kernels": [{"id": 0, "node": 0}, {"id": 1, "node": 1, "function": "nope"},)"
          << R"( {"id": 2, "node": 1, "function": "jacobi"}]})";
    }
    void TearDown() override {
        std::remove(cluster_.c_str());
        rmdir(dir_.c_str());
    }
    /* Exit status and stderr. */
    std::pair<int, std::string> run(const std::vector<std::string> &args, const std::string &token = job_token) {
        Model m;
        m.start(args, token);
        int rc = m.wait_exit();
        return {rc, m.err()};
    }
    std::string dir_, cluster_;
};

TEST_F(GascoreCli, RefusesBadInvocations) {
    auto [rc, err] = run({"--node", "1"});
    EXPECT_EQ(rc, 2);
    EXPECT_NE(err.find("--cluster FILE is required"), std::string::npos) << err;

    std::tie(rc, err) = run({"--cluster", cluster_, "--node", "0"});
    EXPECT_EQ(rc, 2);
    EXPECT_NE(err.find("software node"), std::string::npos) << err;

    std::tie(rc, err) = run({"--cluster", cluster_, "--node", "1"}, "");
    EXPECT_EQ(rc, 2);
    EXPECT_NE(err.find("no job token"), std::string::npos) << err;

    std::tie(rc, err) = run({"--cluster", cluster_, "--node", "1"});
    EXPECT_EQ(rc, 2);
    EXPECT_NE(err.find("unknown function \"nope\""), std::string::npos) << err;

    std::tie(rc, err) = run({"--cluster", dir_ + "/missing.json", "--node", "1"});
    EXPECT_EQ(rc, 2);
    EXPECT_NE(err.find("missing.json"), std::string::npos) << err;

    std::tie(rc, err) = run({"--cluster", cluster_, "--node", "1", "--segment", "12Q"});
    EXPECT_EQ(rc, 2);
    EXPECT_NE(err.find("--segment 12Q"), std::string::npos) << err;
}

/* ---- jacobi: the test plays software kernel 0 of examples/jacobi.c (same protocol: Long
 * halo exchange, Shoal barrier rooted at kernel 0, Long gets at the end) against the model's
 * hardware twins, kernels 1 and 2: on one hardware node (their shared halo goes through the
 * GAScore loopback) or on two (the models connect to each other).  The gathered grid must equal
 * a serial run bit for bit. */
class GascoreJacobi : public ::testing::TestWithParam<bool> {
  protected:
    static constexpr size_t n = 21;
    static constexpr long iters = 12;
    static constexpr int nkernels = 3;
    static constexpr size_t max_rows = (n + nkernels - 1) / nkernels;
    static constexpr size_t row_bytes = n * sizeof(double);

    static size_t block_rows(int k) { return n / nkernels + (size_t(k) < n % nkernels ? 1 : 0); }
    static size_t first_row(int k) {
        size_t base = n / nkernels, extra = n % nkernels, uk = size_t(k);
        return uk * base + (uk < extra ? uk : extra);
    }
    static size_t row_offset(int b, size_t i) { return (size_t(b) * (max_rows + 2) + i) * row_bytes; }
    static double initial_value(size_t row, size_t col) {
        if (row == 0) return 1.0;
        if (row == n - 1 || col == 0 || col == n - 1) return 0.0;
        return double((row * 131 + col * 71) % 97) / 97.0;
    }
    static void relax_rows(const double *in, double *out, size_t row_lo, size_t row_hi) {
        for (size_t i = row_lo; i <= row_hi; i++)
            for (size_t j = 1; j + 1 < n; j++)
                out[i * n + j] =
                    0.25 * (in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1] + in[i * n + j + 1]);
    }

    /* Kernel 0's segment and counters, fed by pump(). */
    std::vector<uint8_t> seg = std::vector<uint8_t>(2 * (max_rows + 2) * row_bytes);
    uint64_t mem_ready = 0, barrier_count = 0;
    uint16_t token = 0;
    /* One connection per model; peer_of[k]: the one leading to kernel k. */
    Peer peers[2];
    Peer *peer_of[nkernels] = {};

    double *rows_at(size_t offset) { return reinterpret_cast<double *>(seg.data() + offset); }

    void send_to(uint16_t k, const std::vector<uint64_t> &words) { peer_of[k]->send_am(words); }

    /* Takes one packet from whichever model sends, and acts as kernel 0's GAScore would. */
    void pump() {
        pollfd p[2] = {{peers[0].fd(), POLLIN, 0}, {peers[1].fd(), POLLIN, 0}};
        ASSERT_GT(poll(p, peers[1].fd() >= 0 ? 2 : 1, 20000), 0) << "kernel 0 waits forever";
        Peer &from = (p[0].revents & POLLIN) ? peers[0] : peers[1];
        std::vector<uint64_t> w = from.recv_am();
        ASSERT_GE(w.size(), 2u);
        const uint8_t type = type_of(w[0]);
        if (type == (SHORT | REPLY)) {
            mem_ready++;
            return;
        }
        if ((type & 7) == SHORT) {
            ASSERT_EQ(handler_of(w[0]), 3) << "only barrier Shorts expected";
            barrier_count++;
        } else {
            ASSERT_EQ(type & 7, LONG);
            ASSERT_LE(w[2] + size_of(w[0]), seg.size());
            std::vector<uint8_t> data = bytes_from(w, 3 + nargs_of(w[0]), size_of(w[0]));
            std::copy(data.begin(), data.end(), seg.begin() + long(w[2]));
            if (type & ASYNC) { /* a get's answer: its arrival is the get's reply */
                mem_ready++;
                return;
            }
        }
        send_to(src_of(w[0]), {am_header(SHORT | REPLY, 0, src_of(w[0]), 0, 1, 0), token_word(token_of(w[1]))});
    }
    void wait_mem(uint64_t k) {
        while (mem_ready < k && !HasFatalFailure()) pump();
        mem_ready -= k;
    }
    void wait_barrier(uint64_t k) {
        while (barrier_count < k && !HasFatalFailure()) pump();
        barrier_count -= k;
    }
    void barrier() {
        wait_barrier(nkernels - 1);
        for (uint16_t k = 1; k < nkernels; ++k) send_to(k, {am_header(SHORT, 0, k, 0, 3, 0), token_word(++token)});
        wait_mem(nkernels - 1);
    }
    void exchange_halos(int b) {
        std::vector<uint64_t> w = {am_header(LONG, 0, 1, uint16_t(row_bytes), 0, 0), token_word(++token),
                                   row_offset(b, 0)};
        std::vector<uint8_t> row(seg.begin() + long(row_offset(b, block_rows(0))),
                                 seg.begin() + long(row_offset(b, block_rows(0)) + row_bytes));
        append_bytes(w, row);
        send_to(1, w);
        wait_mem(1);
        barrier();
    }
};

TEST_P(GascoreJacobi, HardwareBlocksMatchTheSerialRun) {
    const bool split = GetParam(); /* kernel 2 on a second hardware node */
    std::string dir = make_dir(), cluster = dir + "/cluster.json";
    int ports[2] = {free_port(), free_port()};
    while (ports[1] == ports[0]) ports[1] = free_port();
    {
        std::ofstream f(cluster);
        f << R"({"nodes": [{"node": 0, "type": "sw", "address": "127.0.0.1"},)"
          << R"( {"node": 3, "type": "hw", "address": "127.0.0.1:)" << ports[0] << R"("},)"
          << R"( {"node": 4, "type": "hw", "address": "127.0.0.1:)" << ports[1] << R"("}],)"
          << R"( "kernels": [{"id": 0, "node": 0}, {"id": 1, "node": 3, "function": "jacobi"},)"
          << R"( {"id": 2, "node": )" << (split ? 4 : 3) << R"(, "function": "jacobi"}]})";
    }
    /* max_long 64: every 168-byte row goes in three Longs. */
    const std::vector<std::string> params = {"--segment", "8K",      "--param",   "n=21",    "--param",
                                             "iters=12",  "--param", "kernels=3", "--param", "max_long=64"};
    Model models[2];
    for (int m = 0; m < (split ? 2 : 1); ++m) {
        std::vector<std::string> args = {"--cluster", cluster, "--node", m ? "4" : "3"};
        args.insert(args.end(), params.begin(), params.end());
        models[m].start(args);
        std::string line = models[m].first_line();
        ASSERT_NE(line.find(split ? (m ? "kernels 2" : "kernels 1") : "kernels 1,2"), std::string::npos)
            << line << models[m].err();
        ASSERT_TRUE(peers[m].join(ports[m]));
    }
    peer_of[1] = &peers[0];
    peer_of[2] = split ? &peers[1] : &peers[0];

    const size_t rows = block_rows(0);
    for (int b = 0; b < 2; b++)
        for (size_t i = 1; i <= rows; i++)
            for (size_t j = 0; j < n; j++) rows_at(row_offset(b, 0))[i * n + j] = initial_value(i - 1, j);
    int cur = 0;
    exchange_halos(cur);
    for (long t = 0; t < iters; t++) {
        relax_rows(rows_at(row_offset(cur, 0)), rows_at(row_offset(1 - cur, 0)), 2, rows);
        exchange_halos(1 - cur);
        cur = 1 - cur;
        ASSERT_FALSE(HasFatalFailure());
    }

    std::vector<double> grid(n * n), reference(n * n), other(n * n);
    std::copy(rows_at(row_offset(cur, 1)), rows_at(row_offset(cur, 1)) + rows * n, grid.begin());
    for (uint16_t k = 1; k < nkernels; ++k) {
        size_t bytes = block_rows(k) * row_bytes;
        send_to(k,
                {am_header(LONG | REPLY, 0, k, uint16_t(bytes), 0, 0), token_word(++token), row_offset(cur, 1),
                 row_offset(1 - cur, 1)});
        wait_mem(1);
        std::copy(rows_at(row_offset(1 - cur, 1)), rows_at(row_offset(1 - cur, 1)) + block_rows(k) * n,
                  grid.begin() + long(first_row(k) * n));
    }
    barrier();
    ASSERT_FALSE(HasFatalFailure());

    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) reference[i * n + j] = other[i * n + j] = initial_value(i, j);
    for (long t = 0; t < iters; t++) {
        relax_rows(reference.data(), other.data(), 1, n - 2);
        reference.swap(other);
    }
    for (size_t c = 0; c < n * n; c++) ASSERT_EQ(grid[c], reference[c]) << "cell " << c / n << ", " << c % n;

    for (int m = 0; m < (split ? 2 : 1); ++m) {
        EXPECT_EQ(models[m].stop(), 0);
        const std::string err = models[m].err();
        EXPECT_NE(err.find("(jacobi) finished"), std::string::npos) << err;
        EXPECT_NE(err.find("dropped 0 "), std::string::npos) << err;
    }
    std::remove(cluster.c_str());
    rmdir(dir.c_str());
}

INSTANTIATE_TEST_SUITE_P(, GascoreJacobi, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &info) {
                             return info.param ? "TwoHardwareNodes" : "OneHardwareNode";
                         });

}  // namespace
