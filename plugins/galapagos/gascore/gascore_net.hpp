/* The model's TCP side, as Weft's galapagos fabric speaks it (gal_wire.hpp): a listener, the
 * handshake, one blocking reader thread per connection, the routes software nodes announce, and
 * connections to other hardware nodes opened on demand. */
#ifndef WEFT_GASCORE_NET_HPP
#define WEFT_GASCORE_NET_HPP

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "gal_auth.hpp"
#include "gal_cluster.hpp"
#include "gal_wire.hpp"
#include "gascore_stats.hpp"

namespace gascore {

/* One TCP connection after its handshake.  Writers serialize on write_lock; the fd closes when
 * the last holder lets go, so no thread ever writes to a reused descriptor. */
struct connection {
    int fd = -1;
    std::string peer; /* "IP:PORT" */
    int hw_node = -1; /* the hardware node it leads to, when this side opened it */
    std::mutex write_lock;

    ~connection();
    /* Header flit then payload; false when the connection failed. */
    bool write_packet(uint64_t header, const uint8_t *payload, size_t len);
};

class network {
  public:
    /* Called on the reader thread for each raw packet (the bytes after the header flit). */
    using deliver_fn = std::function<void(const gal::packet_header &, const uint8_t *, size_t)>;

    network(const gal::cluster &cluster, int my_node, const gal::key &key, stats &counters);
    ~network();

    void set_deliver(deliver_fn deliver) { deliver_ = std::move(deliver); }
    /* Kernels hosted here: never routed elsewhere, announced to hardware peers. */
    void set_local_kernels(const std::vector<int> &ids) { local_kernels_ = ids; }

    /* Binds and listens on the node's address from the cluster file. */
    bool listen(std::string &why);
    /* Accepts connections until signal_fd becomes readable. */
    void accept_until(int signal_fd);

    /* Sends a raw packet to kernel dst from hosted kernel src.  patient: the caller is a
     * kernel thread and may block until a route exists (a software node not yet connected,
     * another hardware node not yet listening), or the model stops.  False: unroutable. */
    bool send(uint8_t dst, uint8_t src, const uint8_t *data, size_t len, bool patient);

    bool stopping() const { return stopping_; }

    /* Shuts every connection down (wakes readers and blocked writers) and refuses new work. */
    void shut_down();
    /* Joins the reader threads; after shut_down. */
    void join();

  private:
    void spawn_reader(std::shared_ptr<connection> c, bool accepted);
    void serve(std::shared_ptr<connection> c, bool accepted);
    bool accept_handshake(connection &c);
    std::shared_ptr<connection> connect_to(int node_index);
    std::shared_ptr<connection> route_for(uint8_t dst, bool patient);
    void forget(const std::shared_ptr<connection> &c);
    void reap_readers();

    const gal::cluster &cluster_;
    const int my_node_;
    const gal::key key_; /* the job's, from its token: what handshakes prove */
    stats &stats_;
    deliver_fn deliver_;
    std::vector<int> local_kernels_;
    int listen_fd_ = -1;
    std::atomic<bool> stopping_{false};

    std::mutex routes_lock_;
    std::condition_variable routes_changed_;
    std::array<std::weak_ptr<connection>, 256> routes_;   /* announced by peers */
    std::map<int, std::shared_ptr<connection>> outbound_; /* by hardware node index */
    std::map<connection *, std::weak_ptr<connection>> live_;
    std::mutex connect_lock_; /* one outbound connect at a time */

    struct reader {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> done;
    };
    std::mutex readers_lock_;
    std::list<reader> readers_;
};

}  // namespace gascore

#endif
