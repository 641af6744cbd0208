// PMI-1 bootstrap: the text wire protocol on PMI_FD that MPICH's hydra (mpiexec.mpich) and
// Slurm's pmi2 plugin (in PMI-1 compatibility) serve.  Rank and size from PMI_RANK / PMI_SIZE.
//
// The PMI key space is one per job, so keys are prefixed with the rank.  Values are hex
// encoded (the protocol is text, space separated) and split into chunks that fit vallen_max
// and the 1024-byte line limit of MPICH's PMI: "<key>@<rank>" holds the chunk count, and
// "<key>@<rank>.<i>" chunk i.
//
// Beside an MPI library in the same process (MPICH's, sharing PMI_FD: docs/coexistence.md) the
// connection is shared: Weft reads on its own duplicate of PMI_FD and never past its replies,
// its fences after weft_init go over its own channel (fence_tcp) because hydra closes the
// connection once the library sends PMI finalize in MPI_Finalize, the keys Weft reads are read
// during weft_init and kept, and PMI finalize, which hydra takes once per process (a process
// that exits without it is killed with the job), is left to the library, or sent at exit when
// the library never initialised.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/fence_tcp.hpp"
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
constexpr const char *fence_key = "weft_fence";

// An MPI library other than Weft's own front end is linked into this process: it owns PMI_FD.
bool foreign_mpi_loaded() {
    return dlsym(RTLD_DEFAULT, "MPI_Initialized") != nullptr && dlsym(RTLD_DEFAULT, "weft_mpi_front_end") == nullptr;
}

// Whether that library has called MPI_Init (then its MPI_Finalize sends PMI finalize).
bool foreign_mpi_initialized() {
    auto initialized = reinterpret_cast<int (*)(int *)>(dlsym(RTLD_DEFAULT, "MPI_Initialized"));
    int flag = 0;
    return initialized != nullptr && initialized(&flag) == 0 && flag != 0;
}

// The shared connection after weft_finalize, for the exit handler.
int g_exit_fd = -1;

// At exit: PMI finalize on the shared connection, unless the MPI library initialised (its
// MPI_Finalize sent it, or will have to).
void finalize_at_exit() {
    int fd = std::exchange(g_exit_fd, -1);
    if (fd < 0) return;
    if (!foreign_mpi_initialized()) {
        auto deadline = kvs::deadline_after(abort_ack_timeout_s);
        if (kvs::send_all(fd, "cmd=finalize\n", deadline) == 0) {
            char c;
            while (kvs::recv_exact(fd, &c, 1, deadline) == 0 && c != '\n') {}
        }
    }
    ::close(fd);
}

class pmi1_bootstrap final : public bootstrap {
  public:
    pmi1_bootstrap(int fd, int rank, int size, int timeout_s, bool shared)
        : fd_(fd), rank_(rank), size_(size), timeout_s_(timeout_s), shared_(shared) {}
    ~pmi1_bootstrap() override {
        if (fd_ >= 0) ::close(fd_);  // our duplicate of PMI_FD only
    }
    const char *name() const override { return "pmi1"; }
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    bool launcher_shared() const override { return shared_; }

    // init, get_maxes, get_my_kvsname.
    int start() {
        std::string reply;
        int rc;
        // The MPI library in this process already opened the PMI session: Slurm's PMI server
        // (srun --mpi=pmi2) takes init as a connection's first command only, and hydra does
        // not need a second one.
        if (!(shared_ && foreign_mpi_initialized())) {
            rc = command("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", reply);
            if (rc != WEFT_SUCCESS) return rc;
            if (field(reply, "rc") != "0")
                return fail(WEFT_ERR_BOOTSTRAP, "PMI init on PMI_FD refused: '%s' (the launcher does not speak PMI-1)",
                            reply.c_str());
        }
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
        if (shared_) return open_fence_channel();
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
        dirty_ = true;
        for (size_t i = 0; i < n; ++i) {
            int rc = put_one(base + "." + std::to_string(i), hex.substr(i * chunk, chunk));
            if (rc != WEFT_SUCCESS) return rc;
        }
        return put_one(base, std::to_string(n));
    }

    int fence() override {
        std::lock_guard<std::mutex> g(mu_);
        // Shared: the launcher only for fences that publish puts (those of weft_init).
        if (shared_ && !dirty_) return channel_.fence(timeout_s_);
        std::string reply;
        dirty_ = false;
        return command("cmd=barrier_in\n", "barrier_out", reply);
    }

    int get(int rank, std::string_view key, std::string &value) override {
        if (rank < 0 || rank >= size_)
            return fail(WEFT_ERR_RANK, "bootstrap get: rank %d out of range for a job of size %d", rank, size_);
        std::lock_guard<std::mutex> g(mu_);
        if (int rc = check_key(key, rank); rc != WEFT_SUCCESS) return rc;
        std::string base = key_name(key, rank), count, hex, part;
        if (auto it = kept_.find(base); it != kept_.end()) {
            value = it->second;
            return WEFT_SUCCESS;
        }
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
        if (shared_) kept_[base] = value;
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
        if (shared_) {
            channel_.close();
            // PMI finalize ends this process's connection for the MPI library too: leave it to
            // the library, or to exit when the library never initialised.
            static std::once_flag registered;
            std::call_once(registered, [] { std::atexit(finalize_at_exit); });
            if (g_exit_fd >= 0) ::close(g_exit_fd);
            g_exit_fd = std::exchange(fd_, -1);
            return WEFT_SUCCESS;
        }
        std::string reply;
        int rc = command("cmd=finalize\n", "finalize_ack", reply);
        ::close(fd_);
        fd_ = -1;
        return rc;
    }

  private:
    // Rank 0 publishes its fence channel, everyone passes a launcher barrier, the others connect.
    int open_fence_channel() {
        std::string published, reply;
        if (int rc = channel_.listen(rank_, size_, published)) return rc;
        if (rank_ == 0 && size_ > 1)
            if (int rc = put(fence_key, published)) return rc;
        if (int rc = command("cmd=barrier_in\n", "barrier_out", reply)) return rc;
        dirty_ = false;
        if (rank_ != 0 && size_ > 1)
            if (int rc = get(0, fence_key, published)) return rc;
        return channel_.connect(published, timeout_s_);
    }

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
            // Never past this reply's newline: what follows on the connection may be another
            // PMI client's (an MPI library in the same process shares it).
            char buf[4096];
            ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT | MSG_PEEK);
            if (n > 0) {
                const void *nl_at = std::memchr(buf, '\n', static_cast<size_t>(n));
                size_t take =
                    nl_at ? static_cast<size_t>(static_cast<const char *>(nl_at) - buf) + 1 : static_cast<size_t>(n);
                n = ::recv(fd_, buf, take, MSG_DONTWAIT);
            }
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
    bool shared_;
    bool dirty_ = false;                       // puts since the last fence
    std::map<std::string, std::string> kept_;  // shared: every value read, by PMI key
    fence_tcp channel_;
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
    // Our own descriptor of the launcher's connection: an MPI library in the same process owns
    // PMI_FD and closes it in its finalize, and ours must survive that (and closing ours must
    // not close theirs).  Close-on-exec, so that a child never inherits it.
    int own = ::fcntl(static_cast<int>(fd), F_DUPFD_CLOEXEC, 0);
    if (own < 0)
        return fail(WEFT_ERR_BOOTSTRAP, "PMI_FD=%ld: cannot use the launcher's PMI connection: %s", fd,
                    std::strerror(errno));
    const bool shared = foreign_mpi_loaded();
    // Slurm's PMI server (srun --mpi=pmi2) takes init only as a connection's first command, and
    // refuses the library's own init after ours: the library must open the session.
    const char *slurm_mpi = std::getenv("SLURM_MPI_TYPE");
    if (shared && slurm_mpi != nullptr && std::strcmp(slurm_mpi, "pmi2") == 0 && std::getenv("PMI_JOBID") != nullptr &&
        !foreign_mpi_initialized()) {
        ::close(own);
        return fail(WEFT_ERR_BOOTSTRAP,
                    "weft_init before MPI_Init under srun --mpi=pmi2: Slurm's PMI server takes one PMI init per "
                    "process, and the MPI library in this process would be refused its own; call MPI_Init first, "
                    "or run with srun --mpi=pmix");
    }
    auto b = std::make_unique<pmi1_bootstrap>(own, static_cast<int>(rank), static_cast<int>(size), timeout_s, shared);
    if (int rc = b->start(); rc != WEFT_SUCCESS) return rc;
    out = std::move(b);
    return WEFT_SUCCESS;
}

}  // namespace weft
