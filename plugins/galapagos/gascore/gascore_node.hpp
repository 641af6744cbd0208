/* The GAScore itself: the hosted kernels (memory, handler counters, input stream), the receive
 * path (am_rx, hold buffer, xpams_rx, handler) and the transmit path (am_tx, loopback,
 * routing to the network). */
#ifndef WEFT_GASCORE_NODE_HPP
#define WEFT_GASCORE_NODE_HPP

#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gal_cluster.hpp"
#include "gascore_am.hpp"
#include "gascore_net.hpp"
#include "gascore_stats.hpp"

namespace gascore {

struct kernel_function;

/* What a Medium delivers to a kernel's input stream: the kernel header word, then the
 * payload.  Header: [7:0] type, [23:8] token, [39:24] source kernel, [55:40] size in bytes,
 * [59:56] handler, [63:60] nargs. */
struct medium_delivery {
    uint64_t header = 0;
    std::vector<uint8_t> payload;
};

/* One hardware kernel behind the GAScore. */
struct hosted_kernel {
    int id = 0;
    const kernel_function *function = nullptr;
    /* calloc'd: zero pages cost nothing until touched; word-aligned, so kernels may view the
     * memory as doubles. */
    std::unique_ptr<void, void (*)(void *)> storage{nullptr, std::free};
    uint8_t *memory = nullptr;
    size_t memory_size = 0;

    std::mutex lock; /* counters and stream */
    std::condition_variable changed;
    uint64_t mem_ready = 0;
    uint64_t barrier = 0;
    uint64_t counter = 0;
    std::deque<medium_delivery> stream;

    std::thread thread;
};

/* Raised inside a kernel's blocking calls when the model stops; ends the kernel function. */
struct kernel_stopped {};

class node {
  public:
    static constexpr size_t max_kernels = 16;       /* a GAScore serves at most 16 */
    static constexpr size_t stream_capacity = 1024; /* Medium deliveries waiting per kernel */

    node(const gal::cluster &cluster, int index, size_t segment, std::map<std::string, std::string> params,
         stats &counters, network &net);
    ~node();

    /* Sets up the hosted kernels (functions resolved by name).  False: why says which. */
    bool configure(std::string &why);
    const std::vector<std::unique_ptr<hosted_kernel>> &kernels() const { return kernels_; }
    /* Starts each kernel function on its own thread. */
    void start_kernels();
    /* Wakes every blocked kernel call (kernel_stopped) and joins the kernel threads. */
    void stop_kernels();
    bool stopping() const { return stopping_; }

    /* am_rx: a raw packet from the network (gal_src/gal_dst from the Galapagos header). */
    void receive(int gal_src, int gal_dst, const uint8_t *data, size_t len);
    /* am_tx: a packet leaving a hosted kernel (its word 0 names source and destination).
     * patient: the caller is a kernel thread, which may wait for a route. */
    void transmit(std::vector<uint8_t> &packet, bool patient);

    hosted_kernel *kernel(int id);
    const std::map<std::string, std::string> &params() const { return params_; }
    stats &counters() { return stats_; }

  private:
    void drop(drop_reason r, const char *text, const am_header &h);
    void serve_get(const am_message &m, hosted_kernel &k);
    void write_payload(const am_message &m, hosted_kernel &k);
    bool run_handler(const am_message &m, hosted_kernel &k);

    const gal::cluster &cluster_;
    const int index_;
    const size_t segment_;
    const std::map<std::string, std::string> params_;
    stats &stats_;
    network &net_;
    std::vector<std::unique_ptr<hosted_kernel>> kernels_;
    hosted_kernel *by_id_[256] = {};
    std::atomic<bool> stopping_{false};
};

}  // namespace gascore

#endif
