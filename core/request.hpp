// Requests: the state of one send or receive between posting and wait/test.
// The fabric's completion callback only records the result; everything else (unpacking,
// status, freeing staging buffers) happens in request_finish on the thread that waits.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "datatype.hpp"
#include "weft/plugin.h"
#include "weft/weft.h"

namespace weft {

struct vci;

struct request {
    enum class kind : uint8_t { send, recv, done };  // done: completed at post (PROC_NULL)
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
    uint32_t slot = 0;
};

// Called by fabrics (weft_fabric_ep_attr_t::complete).
void request_on_complete(void *context, const weft_fabric_completion_t *c);

// Fills status (may be null) and returns the operation's error code; releases staging.
int request_finish(request &r, weft_status *status);

// Per-endpoint pool of requests addressed by handle; used under the endpoint's serialization.
class request_pool {
  public:
    explicit request_pool(uint32_t vci_index) : vci_index_(vci_index) {}
    ~request_pool();
    request *alloc(weft_request *handle);
    void release(request *r);
    request *lookup(uint32_t slot) const {
        if (slot == 0 || slot >= size_) return nullptr;
        request *r = &chunks_[slot / chunk][slot % chunk];
        return r->in_use ? r : nullptr;
    }

  private:
    static constexpr uint32_t chunk = 256;
    uint32_t vci_index_;
    uint32_t size_ = 1;  // slot 0 is never handed out: handle value 0 is WEFT_REQUEST_NULL
    std::vector<std::unique_ptr<request[]>> chunks_;
    std::vector<uint32_t> free_;
};

// Resolves a request handle to its request (nullptr when invalid or freed).
request *request_lookup(weft_request handle);

}  // namespace weft
