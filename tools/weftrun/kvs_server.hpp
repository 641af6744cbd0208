// weftrun's key-value server: one TCP listener (127.0.0.1 unless --kvs-host), one connection per rank, driven
// by the launcher's poll loop (single-threaded, no spinning).  Protocol: wire/kvs_wire.hpp.
#pragma once
#include <poll.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace weftrun {

struct abort_request {
    int rank;
    int code;
    std::string message;
};

// A rank found another failed though its process may still run (not responding, unreachable).
struct failure_report {
    int rank;  // the failed one
    int by;    // the one that found it
    std::string why;
};

class kvs_server {
  public:
    using log_fn = std::function<void(const std::string &)>;

    kvs_server();
    ~kvs_server();
    kvs_server(const kvs_server &) = delete;
    kvs_server &operator=(const kvs_server &) = delete;

    // Listens on host (IPv4) with an ephemeral port for a job of nranks guarded by token.
    // False with a reason in `why` on failure.
    bool open(int nranks, std::string token, const std::string &host, std::string &why);
    uint16_t port() const { return port_; }
    // Where refusals and protocol errors are reported (default: stderr, "weftrun: ...").
    void set_log(log_fn fn) { log_ = std::move(fn); }
    // How long a new connection may take to prove the token (default 30 s).
    void set_hello_timeout(std::chrono::milliseconds t) { hello_timeout_ = t; }

    // Poll integration: add_pollfds appends this server's descriptors; after poll, pass the
    // same entries (from index `first`) to process().  timeout_ms: -1 or the next deadline.
    void add_pollfds(std::vector<pollfd> &fds);
    void process(const std::vector<pollfd> &fds, size_t first);
    int timeout_ms() const;

    // The launcher saw this rank's process end: fences it has not joined cannot complete,
    // unless survivors run on (set_keep_going), where they complete without it.
    void rank_exited(int rank);
    void set_keep_going(bool on) { keep_going_ = on; }
    // A pending weft_abort request, at most once.
    std::optional<abort_request> take_abort();
    // The next failure report, at most one per failed rank.  Fences stop waiting for that rank
    // when survivors run on.  Reports by a rank itself reported are ignored: cut off, it
    // finds everyone else unreachable.
    std::optional<failure_report> take_failure_report();

  private:
    struct conn;
    enum class rank_state : uint8_t { waiting, connected, finalized, gone };

    void accept_all();
    void read_conn(conn &c);
    void write_conn(conn &c);
    void handle_frame(conn &c, std::string_view body);
    void handle_hello(conn &c, std::string_view body);
    void reply_ok(conn &c, const std::string *value = nullptr);
    void reply_error(conn &c, const std::string &message);
    void drop(conn &c, const std::string &why);
    void evict_oldest_unauthenticated();
    void rank_left(int rank);
    void check_fence();
    std::string peer_name(const conn &c) const;

    int listen_fd_ = -1;
    uint16_t port_ = 0;
    int nranks_ = 0;
    std::string token_;
    log_fn log_;
    std::chrono::milliseconds hello_timeout_{30000};
    size_t evicted_ = 0;  // connections closed to make room
    std::vector<std::unique_ptr<conn>> conns_;
    std::vector<conn *> polled_;  // conns in the order add_pollfds listed them
    std::vector<rank_state> state_;
    bool keep_going_ = false;
    std::vector<conn *> by_rank_;
    std::vector<std::unordered_map<std::string, std::string>> kv_;
    std::vector<char> in_fence_;
    int fence_count_ = 0;
    std::optional<abort_request> abort_;
    std::vector<char> reported_;  // per rank: found failed by another
    std::vector<failure_report> reports_;
};

}  // namespace weftrun
