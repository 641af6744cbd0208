// Requests: the state of one send or receive between posting and wait/test.
// The fabric's completion callback only records the result; everything else (unpacking,
// status, freeing staging buffers) happens in request_finish on the thread that waits.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "datatype.hpp"
#include "weft/plugin.h"
#include "weft/weft.h"

namespace weft {

struct vci;
struct coll_sched;

struct request {
    enum class kind : uint8_t { send, recv, done, coll };  // done: completed at post (PROC_NULL)
    std::atomic<bool> complete{false};
    kind op = kind::send;
    bool in_use = false;
    int fabric_status = WEFT_PLUGIN_OK;
    uint64_t msg_tag = 0;
    size_t msg_bytes = 0;
    // Receives into a non-contiguous datatype go through a staging buffer and are unpacked at
    // finish; sends from one are packed before posting.
    void *staging = nullptr;
    void *user_buf = nullptr;
    size_t user_count = 0;
    std::shared_ptr<const datatype> type;  // held only for derived types
    vci *endpoint = nullptr;
    coll_sched *sched = nullptr;  // kind::coll: the nonblocking collective, owned
    uint32_t slot = 0;
    // Counters of the communicator (per local index) and stream the request was posted on,
    // decremented when wait/test retires it (weft_comm_free/weft_stream_free check them).
    int *comm_pending = nullptr;
    int *stream_pending = nullptr;
};

// Called by fabrics (weft_fabric_ep_attr_t::complete).
void request_on_complete(void *context, const weft_fabric_completion_t *c);

// Fills status (may be null) and returns the operation's error code; releases staging.
int request_finish(request &r, weft_status *status);
// The same for a nonblocking collective: its error, an empty status; frees the schedule.
int coll_request_finish(request &r, weft_status *status);

// Per-endpoint pool of requests addressed by handle; used under the endpoint's serialization.
class request_pool {
  public:
    explicit request_pool(uint32_t vci_index) : vci_index_(vci_index) {}
    ~request_pool();
    request *alloc(weft_request *handle);
    void release(request *r);
    // May run on any thread (wait/test validate handles before taking the endpoint): chunks
    // never move and size_ only grows.
    request *lookup(uint32_t slot) const {
        if (slot == 0 || slot >= size_.load(std::memory_order_acquire)) return nullptr;
        request *r = &chunks_[slot / chunk][slot % chunk];
        return r->in_use ? r : nullptr;
    }

  private:
    static constexpr uint32_t chunk = 256;
    static constexpr uint32_t max_slots = 1u << 20;  // the slot field of a handle
    uint32_t vci_index_;
    std::atomic<uint32_t> size_{1};  // slot 0 is never handed out: 0 is WEFT_REQUEST_NULL
    std::array<std::unique_ptr<request[]>, max_slots / chunk> chunks_;
    std::vector<uint32_t> free_;
};

// Returns r to its endpoint's pool and decrements its pending counters (caller holds the
// endpoint).
void request_release(request &r);

// Resolves a request handle to its request (nullptr when invalid or freed).
request *request_lookup(weft_request handle);

}  // namespace weft
