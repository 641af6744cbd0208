// Requests: the state of one send or receive between posting and wait/test.
// The fabric's completion callback only records the result; everything else (unpacking,
// status, freeing staging buffers) happens in request_finish on the thread that waits.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "base/datatype.hpp"
#include "base/handle.hpp"
#include "weft/plugin.h"
#include "weft/weft.h"

namespace weft {

struct vci;
struct peer_group;
struct coll_sched;
class request_pool;
struct persistent_op;

// The fabric's context space (weft_fabric_ep_attr_t::context_space): bytes right before every
// request that the fabric may use while it holds the operation, so that a receive allocates
// nothing in the fabric either (the UCX plugin keeps UCX's request and its own state there).
// The fabric says how much it wants (weft_fabric_caps_t::context_space, asked at init); the
// core gives that much rounded up to request_line_offset past a multiple of 64, so that the
// fabric's context (the space's start) is 64-byte aligned while the request itself starts 16
// bytes into a cache line, whose remaining 48 bytes hold its hot fields: the request of a
// fabric that asks for 336 bytes (UCX 1.13: its 272-byte ucp_request_t and the plugin's
// 64-byte state) shares one line with the end of that space, as when the core hard-wired 336.
constexpr size_t request_line_offset = 16;
// The most the core gives: WEFT_FABRIC_CONTEXT_SPACE_MAX, rounded as above.
constexpr size_t request_space_max =
    (WEFT_FABRIC_CONTEXT_SPACE_MAX + 63 - request_line_offset) / 64 * 64 + request_line_offset;
// The space given for `wanted` (capped at WEFT_FABRIC_CONTEXT_SPACE_MAX).
constexpr size_t request_space_for(size_t wanted) {
    size_t w = wanted < WEFT_FABRIC_CONTEXT_SPACE_MAX ? wanted : WEFT_FABRIC_CONTEXT_SPACE_MAX;
    return (w + 63 - request_line_offset) / 64 * 64 + request_line_offset;
}
static_assert(request_space_for(336) == 336 && request_space_for(0) == request_line_offset);
static_assert(request_space_for(~size_t{0}) == request_space_max && request_space_max % 64 == request_line_offset);

// The space every request of this process has before it: request_space_for(what the fabric
// asked), set at init (request_space_set) before any endpoint opens; request_line_offset until
// then.  One fabric per process, so one layout.  Hidden: read on every post and completion,
// with one instruction (a default-visibility global costs a GOT load more).
extern size_t g_request_space __attribute__((visibility("hidden")));
void request_space_set(size_t wanted);

// The fields are ordered by use, so that a receive touches two cache lines of its own past the
// fabric's space: the rest of the space's last line holds what every operation reads and
// writes, the next line what receives and the pool add.  A window of 64 receives cycles
// through 64 requests, more memory than L1 holds with UCX's data, so each line more per
// request is a miss more per message (perf showed the first touches of a request as the hot
// spots).
// A request never stands alone: the fabric's space must come before it.  Pools lay out their
// requests with g_request_space before each (request_pool); a request anywhere else (on the
// stack, in a collective's schedule, in a PGAS slot) is a local_request, which has room for
// the largest space.  The context given to the fabric is request_context(r), never &r.
struct alignas(request_line_offset) request {
    enum class kind : uint8_t { send, recv, done, coll };  // done: completed at post (PROC_NULL)
    std::atomic<bool> complete{false};
    kind op = kind::send;
    bool in_use = false;
    // The endpoint's shared request for sends the fabric finished at once (request_pool::
    // done_send_handle): complete from the start, read by any thread, never released.
    bool lightweight = false;
    // staging or type_hold is set, or the request is persistent: request_finish has work to do.
    bool extras = false;
    // Receives: cancelled because their peer failed (peer_failure.cpp), so that their CANCELED
    // completion means PEER_FAILED.
    bool failing = false;
    // Made by a *_init call: its handle lives until weft_request_free (transport/persistent.hpp).
    bool persistent = false;
    int fabric_status = WEFT_PLUGIN_OK;
    // Pool requests: their handle (endpoint, slot and generation); release advances the
    // generation, so that a copy of a retired handle is refused even after the slot is reused.
    weft_request handle = WEFT_REQUEST_NULL;
    // Receives: the source rank in group (or WEFT_ANY_SOURCE).
    int peer = 0;
    uint64_t msg_tag = 0;
    size_t msg_bytes = 0;
    vci *endpoint = nullptr;  // pool requests: also the owner of their pool

    request *next_free = nullptr;  // the pool's free list
    // The counter of the communicator (per local index) the request was posted on, decremented
    // when wait/test retires it (weft_comm_free checks it; weft_stream_free relies on it).
    int *comm_pending = nullptr;
    void *user_buf = nullptr;
    size_t user_count = 0;
    // Receives: the element type (size and layout), or nullptr when user_count is in bytes.
    // Not owning: built-ins are static, derived types are held by type_hold.
    const datatype *type = nullptr;
    // Receives: the communicator of peer, so that a peer's failure can find the receives
    // waiting for it (peer_failure.cpp).
    const peer_group *group = nullptr;
    // Receives into a non-contiguous datatype go through a staging buffer and are unpacked at
    // finish; sends from one are packed before posting (set extras with it).  Or it holds the
    // iovec the fabric gathers from or scatters to (p2p_iov.cpp; receives: type is nullptr).
    void *staging = nullptr;
    coll_sched *sched = nullptr;  // kind::coll: the nonblocking collective, owned

    std::shared_ptr<const datatype> type_hold;  // derived types only (set extras with it)
    // Persistent requests: what each start posts (transport/persistent.hpp), owned.  A
    // shared_ptr only so that this header needs no definition of it.
    std::shared_ptr<persistent_op> persist;

  protected:
    // Only as a local_request or in a pool: a request needs the space before it.
    request() = default;
    ~request() = default;
    request(const request &) = delete;
    request &operator=(const request &) = delete;
    friend class request_pool;
};
// The hot fields fill the rest of the line, the receive fields the next.
static_assert(offsetof(request, next_free) == 64 - request_line_offset);
static_assert(offsetof(request, type_hold) == 128 - request_line_offset);

// The fabric's context of r: the start of the space before it.
inline void *request_context(request &r) { return reinterpret_cast<char *>(&r) - g_request_space; }
// The request whose context the fabric gives back.
inline request *request_of_context(void *context) {
    return reinterpret_cast<request *>(static_cast<char *>(context) + g_request_space);
}

// Room for the largest space, then the request: a request outside the pools.  The space's
// struct is byte-aligned, so that the request follows it at request_space_max, 16 bytes into a
// line (aligned, it would round up to a whole line and misalign the context).
struct local_request_space {
    unsigned char bytes[request_space_max];
};
struct alignas(64) local_request : local_request_space, request {
    local_request() = default;
};
static_assert(sizeof(local_request) == (request_space_max + sizeof(request) + 63) / 64 * 64,
              "the request must follow the space at once");

// Called by fabrics (weft_fabric_ep_attr_t::complete).
void request_on_complete(void *context, const weft_fabric_completion_t *c);
// Called by request_on_complete for a completion whose match bits carry the sync bit (a
// synchronous message received, or an acknowledgement), before r is marked complete
// (comm/p2p_sync.cpp).  A receive whose sender waits for an acknowledgement gets fabric_status
// request_status_sync: request_finish reads it as WEFT_PLUGIN_OK, after progressing the endpoint
// once so that the acknowledgement goes out even when the receive had completed at its post.
void p2p_sync_completed(request &r);
constexpr int request_status_sync = 1;  // no fabric's code: theirs are 0 and negative

// Fills status (may be null) and returns the operation's error code; releases staging.
int request_finish(request &r, weft_status *status);
// request_finish of one send or receive; persistent requests call it once per run.
int request_finish_op(request &r, weft_status *status);
// The same for a nonblocking collective: its error, an empty status; frees the schedule.
int coll_request_finish(request &r, weft_status *status);

// True when request_finish(r, WEFT_STATUS_IGNORE) would only return WEFT_SUCCESS: a send or
// receive that completed without error, with no staging buffer and no held type.
inline bool request_finish_trivial(const request &r) {
    return r.fabric_status == WEFT_PLUGIN_OK && r.op != request::kind::coll && !r.extras;
}

// Pools by the top 12 bits of their handles (kind request, endpoint index), for lock-free handle
// lookups: one load finds the pool of a request handle, and every other kind's entries stay
// null.  Set by each pool's constructor (endpoints are created at init or under the runtime's
// pool mutex, before any of their handles exist) and cleared by its destructor.
constexpr uint32_t request_pool_max = 256;  // endpoint indexes: the handle's 8-bit middle field
extern std::atomic<request_pool *> g_request_pools[1u << 12];
constexpr uint32_t request_pool_key(uint32_t vci_index) {
    return (static_cast<uint32_t>(handle_kind::request) << 8) | vci_index;
}

// A request handle: [31:28] kind request, [27:20] endpoint index, [19:17] generation, [16:0]
// slot.  The generation tells a retired handle from the one that reuses its slot; with the LIFO
// free list the next request on an endpoint usually reuses the slot just freed, and 3 bits
// catch every reuse but each eighth of the same slot.
constexpr uint32_t request_slot_bits = 17;
constexpr uint32_t request_slot_mask = (1u << request_slot_bits) - 1;
constexpr uint32_t request_generation_mask = 0x7u << request_slot_bits;
constexpr weft_request request_next_generation(weft_request h) {
    uint32_t u = static_cast<uint32_t>(h);
    return static_cast<weft_request>((u & ~request_generation_mask) |
                                     ((u + (1u << request_slot_bits)) & request_generation_mask));
}

// Per-endpoint pool of requests addressed by handle; used under the endpoint's serialization.
// Free requests form an intrusive LIFO list; each request's handle is computed when released.
// A chunk's slots are stride_ bytes apart, each g_request_space bytes of the fabric's space
// then the request (64-byte aligned slots, so every context is), laid out when the chunk is
// made from the space set at init.
class request_pool {
  public:
    request_pool(uint32_t vci_index, vci *owner);
    ~request_pool();
    request_pool(const request_pool &) = delete;
    request_pool &operator=(const request_pool &) = delete;

    request *alloc(weft_request *handle) {
        request *r = free_;
        if (__builtin_expect(r == nullptr, 0)) {
            r = grow();
            if (r == nullptr) return nullptr;
        }
        free_ = r->next_free;
        r->complete.store(false, std::memory_order_relaxed);
        r->in_use = true;
        r->fabric_status = WEFT_PLUGIN_OK;
        r->failing = false;
        r->extras = false;
        *handle = r->handle;
        return r;
    }
    void release(request *r) {
        r->in_use = false;
        r->handle = request_next_generation(r->handle);
        r->next_free = free_;
        free_ = r;
    }
    // The handle of the endpoint's lightweight request, for a send the fabric finished before
    // returning (tag_send_now): it is born complete and shared by all such sends, so they
    // allocate, complete and release nothing (MPICH's lightweight requests do the same).  It
    // is slot 0 of the first chunk, which no other request uses; WEFT_REQUEST_NULL until that
    // chunk exists (then the caller takes the ordinary path, which makes it).
    // Any thread: the handle is fixed, only the chunk's existence is read.
    weft_request done_send_handle() const {
        return chunks_[0].load(std::memory_order_acquire) != nullptr ? done_handle_ : WEFT_REQUEST_NULL;
    }

    // May run on any thread (wait/test validate handles before taking the endpoint): chunks
    // are published once (release) and never move.  Slot 0 is the lightweight request.
    request *lookup(weft_request handle) const {
        uint32_t slot = static_cast<uint32_t>(handle) & request_slot_mask;
        request *c = chunks_[slot / chunk].load(std::memory_order_acquire);
        if (c == nullptr) return nullptr;
        request *r = at(c, slot % chunk);
        return r->in_use && r->handle == handle ? r : nullptr;
    }

    // Whether handle names a slot this pool made (in use or retired since).
    bool made(weft_request handle) const {
        uint32_t slot = static_cast<uint32_t>(handle) & request_slot_mask;
        return slot != 0 && chunks_[slot / chunk].load(std::memory_order_acquire) != nullptr;
    }

    // Calls f(request &) for every request in use (caller holds the endpoint).
    template <class F>
    void for_each_in_use(F &&f) {
        for (uint32_t slot = 1; slot < size_; ++slot) {
            request *c = chunks_[slot / chunk].load(std::memory_order_relaxed);
            if (c != nullptr && at(c, slot % chunk)->in_use) f(*at(c, slot % chunk));
        }
    }

  private:
    static constexpr uint32_t chunk = 256;

  public:
    static constexpr uint32_t max_slots = 1u << request_slot_bits;  // the slot field of a handle

  private:
    // Adds a chunk of requests to the free list; nullptr when all slots are used.
    request *grow();
    // The i-th request of the chunk whose first request is c.
    request *at(request *c, uint32_t i) const {
        return reinterpret_cast<request *>(reinterpret_cast<char *>(c) + size_t{i} * stride_);
    }
    size_t space_;   // g_request_space when the pool was made
    size_t stride_;  // bytes from one slot to the next: the space and a request, in whole lines
    uint32_t vci_index_;
    weft_request done_handle_;  // the lightweight request's (slot 0)
    vci *owner_;
    uint32_t size_ = 1;  // slots made; slot 0 is never allocated (the lightweight request)
    request *free_ = nullptr;
    // Each chunk's first request (its memory starts space_ bytes before; owned).
    std::array<std::atomic<request *>, max_slots / chunk> chunks_{};
};

// Resolves a request handle to its request (nullptr when invalid or freed).
inline request *request_lookup(weft_request handle) {
    request_pool *p = g_request_pools[static_cast<uint32_t>(handle) >> 20].load(std::memory_order_acquire);
    return p != nullptr ? p->lookup(handle) : nullptr;
}

// Whether handle is an endpoint's lightweight request (request_pool::done_send_handle): a send
// that completed when it was posted, with nothing to finish or release.  Its slot and
// generation bits are 0; the pool check refuses a forged one.
inline bool request_is_done_send(weft_request handle) {
    if ((static_cast<uint32_t>(handle) & (request_slot_mask | request_generation_mask)) != 0) return false;
    request_pool *p = g_request_pools[static_cast<uint32_t>(handle) >> 20].load(std::memory_order_acquire);
    return p != nullptr && p->done_send_handle() == handle;
}

// Whether handle looks like a request this process made and has since retired.
inline bool request_retired(weft_request handle) {
    if (handle_kind_bits(handle) != static_cast<uint32_t>(handle_kind::request)) return false;
    request_pool *p = g_request_pools[static_cast<uint32_t>(handle) >> 20].load(std::memory_order_acquire);
    return p != nullptr && p->made(handle) && p->lookup(handle) == nullptr;
}

}  // namespace weft
