// PMI-1 bootstrap: the text wire protocol on PMI_FD that MPICH's hydra (mpiexec.mpich) and
// Slurm's pmi2 plugin (in PMI-1 compatibility) serve.  Rank and size from PMI_RANK / PMI_SIZE.
//
// The PMI key space is one per job, so keys are prefixed with the rank.  Values are hex
// encoded (the protocol is text, space separated) and split into chunks that fit vallen_max
// and the 1024-byte line limit of MPICH's PMI: "<key>@<rank>" holds the chunk count, and
// "<key>@<rank>.<i>" chunk i.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "base/error.hpp"
#include "base/hex.hpp"
#include "kvs_wire.hpp"
#include "weft/weft.h"

namespace weft {

namespace {

// MPICH's simple PMI (PMIU_MAXLINE) and hydra read commands in 1024-byte lines.
constexpr size_t pmi_max_line = 1024;
// A reply longer than this is not PMI.
constexpr size_t max_reply = 65536;
constexpr int abort_ack_timeout_s = 5;

class pmi1_bootstrap final : public bootstrap {
  public:
    pmi1_bootstrap(int fd, int rank, int size, int timeout_s)
        : fd_(fd), rank_(rank), size_(size), timeout_s_(timeout_s) {}
    const char *name() const override { return "pmi1"; }
    int rank() const override { return rank_; }
    int size() const override { return size_; }

    // init, get_maxes, get_my_kvsname.
    int start() {
        std::string reply;
        int rc = command("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", reply);
        if (rc != WEFT_SUCCESS) return rc;
        if (field(reply, "rc") != "0")
            return fail(WEFT_ERR_BOOTSTRAP, "PMI init on PMI_FD refused: '%s' (the launcher does not speak PMI-1)",
                        reply.c_str());
        if ((rc = command("cmd=get_maxes\n", "maxes", reply)) != WEFT_SUCCESS) return rc;
        long kvsname_max = std::atol(field(reply, "kvsname_max").c_str());
        keylen_max_ = static_cast<size_t>(std::atol(field(reply, "keylen_max").c_str()));
        vallen_max_ = static_cast<size_t>(std::atol(field(reply, "vallen_max").c_str()));
        if (kvsname_max <= 0 || keylen_max_ < 16 || vallen_max_ < 64)
            return fail(WEFT_ERR_BOOTSTRAP, "PMI get_maxes on PMI_FD gave unusable limits: '%s'", reply.c_str());
        if ((rc = command("cmd=get_my_kvsname\n", "my_kvsname", reply)) != WEFT_SUCCESS) return rc;
        kvsname_ = field(reply, "kvsname");
        if (kvsname_.empty())
            return fail(WEFT_ERR_BOOTSTRAP, "PMI get_my_kvsname on PMI_FD gave no name: '%s'", reply.c_str());
        return WEFT_SUCCESS;
    }

    int put(std::string_view key, std::string_view value) override {
        std::lock_guard<std::mutex> g(mu_);
        if (int rc = check_key(key, rank_); rc != WEFT_SUCCESS) return rc;
        std::string hex = hex_encode(value.data(), value.size());
        std::string base = key_name(key, rank_);
        // Room left for the value in a put line and in a get_result line.
        size_t put_fixed = std::strlen("cmd=put kvsname= key= value=\n") + kvsname_.size() + base.size() + 12;
        if (put_fixed >= pmi_max_line)  // no room for a value (chunk 0, or a line over the limit)
            return fail(WEFT_ERR_BOOTSTRAP,
                        "bootstrap put of PMI key '%s': with the PMI server's kvsname "
                        "(%zu bytes) a put line cannot fit PMI's %zu-byte line limit",
                        base.c_str(), kvsname_.size(), pmi_max_line);
        size_t get_fixed = std::strlen("cmd=get_result rc=0 msg=success value=\n");
        size_t chunk = std::min({vallen_max_ - 1, pmi_max_line - put_fixed, pmi_max_line - get_fixed});
        size_t n = (hex.size() + chunk - 1) / chunk;
        for (size_t i = 0; i < n; ++i) {
            int rc = put_one(base + "." + std::to_string(i), hex.substr(i * chunk, chunk));
            if (rc != WEFT_SUCCESS) return rc;
        }
        return put_one(base, std::to_string(n));
    }

    int fence() override {
        std::lock_guard<std::mutex> g(mu_);
        std::string reply;
        return command("cmd=barrier_in\n", "barrier_out", reply);
    }

    int get(int rank, std::string_view key, std::string &value) override {
        if (rank < 0 || rank >= size_)
            return fail(WEFT_ERR_RANK, "bootstrap get: rank %d out of range for a job of size %d", rank, size_);
        std::lock_guard<std::mutex> g(mu_);
        if (int rc = check_key(key, rank); rc != WEFT_SUCCESS) return rc;
        std::string base = key_name(key, rank), count, hex, part;
        if (int rc = get_one(base, count); rc != WEFT_SUCCESS) return rc;
        char *end = nullptr;
        long n = std::strtol(count.c_str(), &end, 10);
        if (count.empty() || *end != '\0' || n < 0 || n > 1 << 20)
            return fail(WEFT_ERR_BOOTSTRAP,
                        "bootstrap get: PMI key '%s' holds '%s', not a chunk count "
                        "(another program's key?)",
                        base.c_str(), count.c_str());
        for (long i = 0; i < n; ++i) {
            if (int rc = get_one(base + "." + std::to_string(i), part); rc != WEFT_SUCCESS) return rc;
            hex += part;
        }
        std::vector<uint8_t> bytes;
        std::string why;
        // put writes plain hex: no more bytes than hex.size() / 2 (a "[N]" run from the server
        // must not make us allocate up to hex_decode's 1 GiB).
        if (!hex_decode_max(hex, bytes, &why, hex.size() / 2, nullptr))
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap get: PMI value of '%s' is not hex: %s", base.c_str(),
                        why.c_str());
        value.assign(bytes.begin(), bytes.end());
        return WEFT_SUCCESS;
    }

    void abort(int code, std::string_view message) override {
        if (!message.empty())
            std::fprintf(stderr, "weft[%d]: abort with code %d: %.*s\n", rank_, code, static_cast<int>(message.size()),
                         message.data());
        // Hydra ends the job on receipt and sends nothing back.  When another thread is in the
        // middle of a command, a second line would interleave with it: just exit then, and
        // the launcher reports our exit status.
        std::unique_lock<std::mutex> g(mu_, std::try_to_lock);
        if (g.owns_lock() && fd_ >= 0)
            kvs::send_all(fd_, "cmd=abort exitcode=" + std::to_string(code) + "\n",
                          kvs::deadline_after(abort_ack_timeout_s));
        ::_exit(code);
    }

    int finalize() override {
        std::lock_guard<std::mutex> g(mu_);
        std::string reply;
        int rc = command("cmd=finalize\n", "finalize_ack", reply);
        ::close(fd_);
        fd_ = -1;
        return rc;
    }

  private:
    static std::string key_name(std::string_view key, int rank) {
        return std::string(key) + "@" + std::to_string(rank);
    }

    // Keys travel unencoded, so they must not contain the protocol's separators.
    int check_key(std::string_view key, int rank) const {
        for (char c : key)
            if (c == ' ' || c == '=' || static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
                return fail(WEFT_ERR_ARG,
                            "bootstrap key '%.*s': PMI-1 keys must be printable ASCII without "
                            "spaces or '='",
                            static_cast<int>(key.size()), key.data());
        // +8 for the chunk suffix ".<i>".
        if (key_name(key, rank).size() + 8 >= keylen_max_)
            return fail(WEFT_ERR_ARG, "bootstrap key '%.*s' is too long for this PMI server (keylen_max=%zu)",
                        static_cast<int>(key.size()), key.data(), keylen_max_);
        return WEFT_SUCCESS;
    }

    int put_one(const std::string &key, const std::string &value) {
        std::string reply;
        int rc = command("cmd=put kvsname=" + kvsname_ + " key=" + key + " value=" + value + "\n", "put_result", reply);
        if (rc == WEFT_SUCCESS && field(reply, "rc") != "0")
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap put of PMI key '%s' failed: '%s'", key.c_str(), reply.c_str());
        return rc;
    }

    int get_one(const std::string &key, std::string &value) {
        std::string reply;
        int rc = command("cmd=get kvsname=" + kvsname_ + " key=" + key + "\n", "get_result", reply);
        if (rc != WEFT_SUCCESS) return rc;
        if (field(reply, "rc") != "0")
            return fail(WEFT_ERR_BOOTSTRAP,
                        "bootstrap get: PMI key '%s' not found (not put, or read before a "
                        "fence): '%s'",
                        key.c_str(), reply.c_str());
        value = field(reply, "value");
        return WEFT_SUCCESS;
    }

    // Value of "name=..." in a reply line ("" when absent).
    static std::string field(const std::string &line, const char *name) {
        std::string pat = std::string(name) + "=";
        size_t pos = 0;
        while (pos < line.size()) {
            size_t end = line.find(' ', pos);
            if (end == std::string::npos) end = line.size();
            if (line.compare(pos, pat.size(), pat) == 0) return line.substr(pos + pat.size(), end - pos - pat.size());
            pos = end + 1;
        }
        return "";
    }

    // Sends one command line and reads one reply line, which must be "cmd=<expect> ...".
    int command(const std::string &line, const char *expect, std::string &reply) {
        const char *what = expect;
        if (fd_ < 0)
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap: the PMI connection is closed (after finalize or an error)");
        auto deadline = kvs::deadline_after(timeout_s_);
        int e = kvs::send_all(fd_, line, deadline);
        if (e == 0) e = read_line(reply, deadline);
        if (e != 0) {
            ::close(fd_);
            fd_ = -1;
            if (e == ETIMEDOUT)
                return fail(WEFT_ERR_BOOTSTRAP,
                            "bootstrap: no '%s' reply from the PMI server on PMI_FD within %d s "
                            "(raise WEFT_BOOTSTRAP_TIMEOUT to wait longer)",
                            what, timeout_s_);
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap: PMI connection on PMI_FD failed waiting for '%s': %s", what,
                        e == ECONNRESET ? "the launcher closed it" : std::strerror(e));
        }
        if (field(reply, "cmd") != expect) {
            return fail(WEFT_ERR_BOOTSTRAP, "bootstrap: expected 'cmd=%s' from the PMI server on PMI_FD, got '%s'",
                        expect, reply.c_str());
        }
        return WEFT_SUCCESS;
    }

    int read_line(std::string &line, kvs::deadline_t deadline) {
        for (;;) {
            size_t nl = in_.find('\n');
            if (nl != std::string::npos) {
                line = in_.substr(0, nl);
                in_.erase(0, nl + 1);
                return 0;
            }
            if (in_.size() > max_reply) return EPROTO;
            char buf[4096];
            ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
            if (n > 0) {
                in_.append(buf, static_cast<size_t>(n));
                continue;
            }
            if (n == 0) return ECONNRESET;
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) return errno;
            if (int e = kvs::wait_fd(fd_, POLLIN, deadline)) return e;
        }
    }

    std::mutex mu_;
    int fd_;
    int rank_, size_, timeout_s_;
    size_t keylen_max_ = 0, vallen_max_ = 0;
    std::string kvsname_, in_;
};

}  // namespace

int bootstrap_pmi1_open(std::unique_ptr<bootstrap> &out) {
    long fd = -1, size = 0, rank = 0;
    if (kvs::env_int("PMI_FD", 0, INT_MAX, fd) != 0)
        return fail(WEFT_ERR_BOOTSTRAP, "PMI_FD='%s' is not a file descriptor number", std::getenv("PMI_FD"));
    int rs = kvs::env_int("PMI_SIZE", 1, INT_MAX, size);
    if (rs != 0)
        return fail(WEFT_ERR_BOOTSTRAP, "PMI_SIZE='%s' is %s (PMI_FD is set, so a PMI launcher should set it)",
                    std::getenv("PMI_SIZE") ? std::getenv("PMI_SIZE") : "", rs > 0 ? "not set" : "not a size >= 1");
    int rr = kvs::env_int("PMI_RANK", 0, size - 1, rank);
    if (rr != 0)
        return fail(WEFT_ERR_BOOTSTRAP, "PMI_RANK='%s' is %s (PMI_SIZE=%ld)",
                    std::getenv("PMI_RANK") ? std::getenv("PMI_RANK") : "",
                    rr > 0 ? "not set" : "not a rank between 0 and PMI_SIZE-1", size);
    int timeout_s;
    std::string why;
    if (!kvs::timeout_from_env(timeout_s, why)) return fail(WEFT_ERR_BOOTSTRAP, "%s", why.c_str());
    auto b = std::make_unique<pmi1_bootstrap>(static_cast<int>(fd), static_cast<int>(rank), static_cast<int>(size),
                                              timeout_s);
    if (int rc = b->start(); rc != WEFT_SUCCESS) return rc;
    out = std::move(b);
    return WEFT_SUCCESS;
}

}  // namespace weft
