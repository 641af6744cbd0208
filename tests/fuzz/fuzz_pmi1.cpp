// Fuzz target: the PMI-1 bootstrap client (core/bootstrap/bootstrap_pmi1.cpp: bootstrap_pmi1_open,
// start, put with its hex encoding and chunking, fence, get with its chunk reassembly and hex
// decoding, finalize, the reply-line reader and field parser), against a fake PMI server on a
// socketpair (PMI_FD), run inside the client's waits (see poll below).
//
// The server answers honestly (stores puts, answers gets, barriers) except where the input says
// otherwise: the limits it announces (kvsname_max, keylen_max, vallen_max, as numbers or raw
// text), the kvsname (any length), and, one input byte per command, a corruption of that reply
// (rc != 0, a wrong cmd, a raw line from the input, a line split in two writes, the connection
// closed).  The client runs open, put, fence, get of its own key, get of another rank's key,
// get of a missing key, finalize.
//
// Invariants:
//  - every put line the client sends fits MPICH's 1024-byte PMI line (bootstrap_pmi1.cpp's
//    stated contract), and, when the get_maxes reply was honest, its value field fits vallen_max;
//  - with honest replies and usable limits, open succeeds; a put that succeeded, a fence, and a
//    get of the same key return exactly the bytes put (hex, chunking and reassembly);
//  - a get of a key nobody put fails; calls after a failure or finalize do not crash;
//  - PMI_FD itself stays open (the client works on its own duplicate);
//  - no crash, no leak (LSan), no descriptor left open.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>
#include <map>
#include <memory>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "fuzz_common.hpp"
#include "weft/weft.h"

namespace weft {
int bootstrap_pmi1_open(std::unique_ptr<bootstrap> &out);
}

namespace {

constexpr size_t pmi_max_line = 1024;

// What the fake server does for one input.
struct script {
    std::string maxes_line;  // the get_maxes reply
    std::string kvsname;
    long vallen_max = 0, keylen_max = 0;
    std::string corruptions;  // one byte per command received
    std::string garbage;      // raw lines for corruption 3
};

// The fake server runs inside the client's waits: this file overrides poll() (the client
// waits with poll before every read; ASan's poll interceptor is weak), answers what the client
// sent so far, then polls for real.  One thread, no scheduling delays.
struct fake_server {
    int fd = -1;
    script s;
    std::map<std::string, std::string> kv;
    std::string in, tail;  // requests not yet answered; the second half of a split reply
    size_t ncmd = 0, garbage_pos = 0;
    bool closed = false, maxes_corrupted = false;
    int corrupted = 0, bad_put_line = 0;

    void reset(int server_fd, script sc) {
        fd = server_fd;
        s = std::move(sc);
        kv.clear();
        in.clear();
        tail.clear();
        ncmd = garbage_pos = 0;
        closed = maxes_corrupted = false;
        corrupted = bad_put_line = 0;
    }

    static std::string field(const std::string &line, const std::string &name) {
        size_t pos = 0;
        while (pos < line.size()) {
            size_t end = line.find(' ', pos);
            if (end == std::string::npos) end = line.size();
            if (line.compare(pos, name.size() + 1, name + "=") == 0)
                return line.substr(pos + name.size() + 1, end - pos - name.size() - 1);
            pos = end + 1;
        }
        return "";
    }

    void send_line(const std::string &l) {
        size_t off = 0;
        while (off < l.size()) {
            ssize_t n = ::send(fd, l.data() + off, l.size() - off, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return;
            off += static_cast<size_t>(n);
        }
    }

    // Answers every complete request line the client has sent.
    // Frees what the last input left, so that each input frees what it allocated (libFuzzer's
    // leak check reruns inputs whose mallocs and frees do not match).
    void release() {
        fd = -1;
        s = script{};
        kv = {};
        in = std::string();
        tail = std::string();
    }

    void step() {
        if (fd < 0) return;
        if (!tail.empty()) {
            send_line(tail);
            tail.clear();
        }
        char buf[4096];
        for (;;) {
            ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n <= 0) break;
            in.append(buf, static_cast<size_t>(n));
        }
        for (size_t nl; (nl = in.find('\n')) != std::string::npos;) {
            std::string line = in.substr(0, nl);
            in.erase(0, nl + 1);
            if (!closed) answer(line);
        }
    }

    void answer(const std::string &line) {
        std::string cmd = field(line, "cmd");
        if (cmd == "put") {
            // The client's contract: a put fits the PMI line and vallen_max.
            if (line.size() + 1 > pmi_max_line) {
                std::fprintf(stderr, "put line of %zu bytes (kvsname %zu bytes)\n", line.size() + 1, s.kvsname.size());
                ++bad_put_line;
            }
            // Only against limits the client was told honestly: a corrupted get_maxes reply (a
            // raw line from the input, say "cmd=maxes ... vallen_max=100") announces other
            // limits, which the client then rightly follows (found by this target).
            if (!maxes_corrupted && s.vallen_max >= 64 &&
                field(line, "value").size() >= static_cast<size_t>(s.vallen_max)) {
                std::fprintf(stderr, "put value of %zu bytes, vallen_max %ld\n", field(line, "value").size(),
                             s.vallen_max);
                ++bad_put_line;
            }
        }
        uint8_t c = ncmd < s.corruptions.size() ? static_cast<uint8_t>(s.corruptions[ncmd]) : 0;
        ++ncmd;
        const int corrupted_before = corrupted;
        std::string reply;
        if (cmd == "init") {
            reply = "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n";
        } else if (cmd == "get_maxes") {
            reply = s.maxes_line;
        } else if (cmd == "get_my_kvsname") {
            reply = "cmd=my_kvsname kvsname=" + s.kvsname + "\n";
        } else if (cmd == "put") {
            kv[field(line, "key")] = field(line, "value");
            reply = "cmd=put_result rc=0 msg=success\n";
        } else if (cmd == "barrier_in") {
            reply = "cmd=barrier_out\n";
        } else if (cmd == "get") {
            auto it = kv.find(field(line, "key"));
            reply = it == kv.end() ? "cmd=get_result rc=-1 msg=key_not_found\n"
                                   : "cmd=get_result rc=0 msg=success value=" + it->second + "\n";
        } else if (cmd == "finalize") {
            reply = "cmd=finalize_ack\n";
        } else {
            reply = "cmd=unknown rc=-1\n";
        }
        // Corruption byte: below 200 honest; 200 rc=1, 201 another command's reply, 202 a raw
        // line from the input, 203 honest in two writes (the second at the client's next wait),
        // 204 the server goes away.
        switch (c < 200 ? 0 : 1 + (c - 200) % 5) {
            case 0: send_line(reply); break;
            case 1: {
                size_t rc = reply.find("rc=0");
                if (rc != std::string::npos)
                    reply.replace(rc, 4, "rc=1");
                else
                    reply.insert(reply.size() - 1, " rc=1");
                ++corrupted;
                send_line(reply);
                break;
            }
            case 2:
                ++corrupted;
                send_line("cmd=barrier_out rc=0\n");
                break;
            case 3: {
                size_t end = s.garbage.find('\n', garbage_pos);
                if (end == std::string::npos) end = s.garbage.size();
                ++corrupted;
                send_line(s.garbage.substr(garbage_pos, end - garbage_pos) + "\n");
                garbage_pos = end < s.garbage.size() ? end + 1 : end;
                break;
            }
            case 4: {  // the first part must not be empty: the client waits until it comes
                size_t half = reply.size() > 1 ? reply.size() / 2 : reply.size();
                send_line(reply.substr(0, half));
                tail = reply.substr(half);
                break;
            }
            case 5:
                ++corrupted;
                ::shutdown(fd, SHUT_WR);
                closed = true;
                break;
        }
        if (cmd == "get_maxes" && corrupted != corrupted_before) maxes_corrupted = true;
    }
};

fake_server g_server;
fuzz::env_var g_fd("PMI_FD"), g_rank("PMI_RANK"), g_size("PMI_SIZE");

}  // namespace

// The client waits for each reply in poll (kvs::wait_fd), on its own duplicate of PMI_FD: let
// the server answer first.
extern "C" int poll(struct pollfd *fds, nfds_t n, int timeout_ms) {
    for (nfds_t i = 0; i < n; ++i)
        if (g_server.fd >= 0 && fds[i].fd != g_server.fd) g_server.step();
    struct timespec ts = {timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
    return ::ppoll(fds, n, timeout_ms < 0 ? nullptr : &ts, nullptr);
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    ::putenv(const_cast<char *>("WEFT_BOOTSTRAP_TIMEOUT=10"));
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const int fd_before = fuzz::lowest_free_fd();
    fuzz::input in(data, size);
    uint8_t cfg = in.u8();
    int nranks = 1 + cfg % 4, rank = (cfg >> 2) % nranks;

    script sc;
    // Limits: usually usable numbers, sometimes raw text.
    long kvsname_max = 256;
    if (cfg & 0x40) {
        sc.maxes_line = std::string(in.str()) + "\n";
    } else {
        kvsname_max = static_cast<long>(in.u16()) - 8;
        sc.keylen_max = static_cast<long>(in.u16() % 2048);
        sc.vallen_max = static_cast<long>(in.u16() % 4096);
        sc.maxes_line = "cmd=maxes kvsname_max=" + std::to_string(kvsname_max) +
            " keylen_max=" + std::to_string(sc.keylen_max) + " vallen_max=" + std::to_string(sc.vallen_max) + "\n";
    }
    // kvsname: a run of one letter of any length (hostile servers included), or text.
    uint16_t name_len = in.u16();
    if (name_len & 0x8000)
        sc.kvsname = std::string(in.str());
    else
        sc.kvsname = std::string(name_len % 2048, static_cast<char>('a' + name_len % 26));
    if (sc.kvsname.find_first_of(" \n") != std::string::npos) sc.kvsname.clear();
    std::string key = in.u8() < 200 ? "weft_addr" : std::string(in.str());
    // The key the client puts must not be the one it reads as never put (found by this target).
    if (key.find('\n') != std::string::npos || key == "never_put") key = "k";
    size_t vlen = in.u16() % 1024;  // up to ~33 chunks with vallen_max 64
    std::string value;
    for (size_t i = 0; i < vlen; ++i) value += static_cast<char>(i * 131 + vlen);
    sc.corruptions = std::string(in.str(31));
    sc.garbage = std::string(in.rest());

    int sv[2];
    FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    g_fd.set(std::to_string(sv[0]));
    g_rank.set(std::to_string(rank));
    g_size.set(std::to_string(nranks));
    bool usable = kvsname_max > 0 && sc.keylen_max >= 16 && sc.vallen_max >= 64 && !sc.kvsname.empty() && !(cfg & 0x40);
    g_server.reset(sv[1], sc);
    {
        std::unique_ptr<weft::bootstrap> b;
        int rc = weft::bootstrap_pmi1_open(b);
        bool honest = g_server.corrupted == 0;
        if (honest && usable) FUZZ_CHECK(rc == WEFT_SUCCESS);
        if (!usable && honest && !(cfg & 0x40)) FUZZ_CHECK(rc != WEFT_SUCCESS);
        if (b) {
            FUZZ_CHECK(b->rank() == rank && b->size() == nranks && std::string(b->name()) == "pmi1");
            bool put_ok = b->put(key, value) == WEFT_SUCCESS;
            bool fence_ok = b->fence() == WEFT_SUCCESS;
            std::string got = "unchanged";
            bool get_ok = b->get(rank, key, got) == WEFT_SUCCESS;
            if (g_server.corrupted == 0 && put_ok && fence_ok) {
                FUZZ_CHECK(get_ok);
                FUZZ_CHECK(got == value);
            }
            static const bool verbose = std::getenv("WEFT_FUZZ_VERBOSE") != nullptr;
            if (verbose)
                std::fprintf(stderr, "pmi1: put %d fence %d get %d (%zu bytes, %s), %d replies corrupted\n", put_ok,
                             fence_ok, get_ok, got.size(), got == value ? "as put" : "not as put", g_server.corrupted);
            std::string other;
            if (nranks > 1)
                FUZZ_CHECK(b->get((rank + 1) % nranks, key, other) != WEFT_SUCCESS || g_server.corrupted != 0);
            FUZZ_CHECK(b->get(nranks, key, other) == WEFT_ERR_RANK);
            bool never = b->get(rank, "never_put", other) == WEFT_SUCCESS;
            FUZZ_CHECK(!never || g_server.corrupted != 0);  // only a corrupted reply finds it
            b->finalize();
            FUZZ_CHECK(b->fence() != WEFT_SUCCESS);  // the connection is closed after finalize
        }
    }
    // The client reads and writes its own duplicate of PMI_FD and never closes PMI_FD itself
    // (an MPI library in the same process owns it: docs/coexistence.md).
    int bad_put_lines = g_server.bad_put_line;
    g_server.release();
    FUZZ_CHECK(fcntl(sv[0], F_GETFD) != -1);
    ::close(sv[0]);
    ::close(sv[1]);
    FUZZ_CHECK(bad_put_lines == 0);
    FUZZ_CHECK(fuzz::lowest_free_fd() == fd_before);
    return 0;
}
