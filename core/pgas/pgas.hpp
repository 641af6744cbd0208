// PGAS contexts and their kernels (the Shoal semantics over any fabric).
//
// A kernel is one local endpoint of the context's communicator (a dup of the user's, so AM
// traffic has a context id of its own).  It keeps receives for packets posted on its endpoint
// (tag: its local index << 12) and answers them whenever the endpoint progresses
// (vci::progress_held -> am_progress_hook): packets are matched in the order they were posted, so
// the kernel completes them in ring order and never scans.  Payloads above am_max_inline go
// as a second message (tag low bits: a sequence) received straight into the segment.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "pgas/am_wire.hpp"
#include "comm/comm.hpp"
#include "transport/request.hpp"
#include "comm/stream.hpp"
#include "weft/weft.h"

namespace weft {

struct pgas_ctx;

constexpr unsigned am_rx_slots = 32;
constexpr unsigned am_tx_slots = 64;
constexpr uint32_t am_tag_shift = 12;    // tag = destination local index << 12 | sequence
constexpr uint32_t am_seq_mask = 0xFFF;  // rendezvous sequences 1..4095 (0: packets)
// Packets from hardware kernels arrive with this source rank and their kernel id as the
// source index (kernel_bind's tag).
constexpr uint32_t am_hw_rank = 0xFFFFF;

struct am_rx {
    local_request r;
    uint64_t *buf = nullptr;  // am_max_packet bytes
};

struct am_tx {
    local_request r;
    uint64_t *buf = nullptr;  // am_max_packet bytes
    bool busy = false;        // posted, completion not yet seen
    bool held = false;        // a caller waits for it: not reusable even once complete
    void *heap = nullptr;     // packed payload freed when the slot is reused
};

// A payload arriving as its own message after its header.
struct am_rndv {
    local_request r;
    uint64_t header[am_max_header_words];  // the packet's header words (the rx slot is reused)
    size_t header_len = 0;
    void *staging = nullptr;  // strided/vectored: packed bytes to scatter
    bool active = false;
};

struct am_handler_entry {
    weft_am_handler fn = nullptr;
    void *user_data = nullptr;
};

struct am_kernel {
    pgas_ctx *ctx = nullptr;
    size_t li = 0;  // local index in the communicator
    vci *v = nullptr;
    stream *s = nullptr;  // nullptr: conventional communicator
    uint32_t id = 0;      // kernel id (rank-major)
    char *segment = nullptr;
    weft_pgas handle = WEFT_PGAS_NULL;
    am_handler_entry handlers[WEFT_AM_MAX_HANDLERS];

    std::unique_ptr<am_rx[]> rx;
    std::unique_ptr<am_tx[]> tx;
    char *packet_memory = nullptr;  // rx and tx buffers, one allocation
    uint32_t rx_head = 0;
    uint32_t tx_next = 0;
    std::vector<std::unique_ptr<am_rndv>> rndv;
    uint16_t token = 0;
    uint16_t rndv_seq = 0;
    // Gets sent to hardware kernels in Shoal's form, answered by an ASYNC Long that nothing
    // marks as an answer: (target kernel, token) of each one outstanding.
    std::vector<std::pair<uint32_t, uint16_t>> shoal_gets;
    bool in_progress = false;  // am_progress_hook is running for this kernel (no re-entry)

    // Written under the endpoint by progress, read by waiters: atomics without
    // read-modify-write (store(load() + 1)) keep the stream path free of locked instructions.
    std::atomic<uint64_t> replies{0};
    std::atomic<uint64_t> counter{0};
    std::atomic<uint64_t> barrier_arrivals{0};  // H_INCR_BAR: arrivals at the root, releases elsewhere
    std::atomic<uint64_t> bad_packets{0};

    am_kernel *next_on_vci = nullptr;
};

struct pgas_ctx {
    weft_comm dup = WEFT_COMM_NULL;
    comm *c = nullptr;
    uint16_t context = 0;
    size_t segment_size = 0;
    bool shoal_compat = false;
    size_t max_long = 0;
    uint32_t nkernels = 0;
    uint32_t root_kernel = 0;           // the barrier's root: kernel 0
    std::vector<int> kernel_rank;       // kernel id -> rank in c; -1: a hardware kernel
    std::vector<uint8_t> kernel_index;  // kernel id -> stream index at that rank
    // (rank, index) -> kernel id, at remote_offset[rank] + index: the identity, unless the
    // fabric's cluster description numbers the kernels (Galapagos).
    std::vector<uint32_t> id_of;
    bool has_hardware = false;  // some kernels are hardware: Shoal's format to them
    bool is_hardware(uint32_t id) const { return id < kernel_rank.size() && kernel_rank[id] < 0; }
    std::vector<std::shared_ptr<am_kernel>> kernels;  // local ones, by local index
};

// Handler built-ins (Shoal's numbers): H_INCR_BAR counts barrier signals; 4 (Shoal's H_WAIT)
// is reserved and does nothing.
enum : unsigned { am_h_barrier = 3, am_h_reserved = 4 };

// Sends p (header fields set by the caller) from kernel k; payload from `contig` or gathered
// from k's segment.  Caller holds k.v.  waiter: set when the caller must wait for a
// rendezvous payload to leave `contig` (a caller's buffer) before returning.
struct am_source {
    const void *contig = nullptr;            // contiguous payload
    const am_stride_desc *stride = nullptr;  // or strided in k's segment
    const weft_am_piece *pieces = nullptr;   // or vectored in k's segment
    size_t npieces = 0;
    bool caller_buffer = false;
};
int am_send(am_kernel &k, am_packet &p, const am_source &src, am_tx **waiter);
// Packing between a segment and contiguous bytes.
void am_gather_stride(const char *segment, const am_stride_desc &s, char *out);
void am_scatter_stride(char *segment, const am_stride_desc &s, const char *in);
// pieces: n (offset, length) pairs.
void am_gather_pieces(const char *segment, const weft_am_piece *pieces, size_t n, char *out);
void am_scatter_pieces(char *segment, const uint64_t *pieces, size_t n, const char *in);
// The connection and match bits to send to kernel `dst` with tag low bits `seq`.
int am_post_send(am_kernel &k, uint32_t dst, const void *buf, size_t len, uint32_t seq, request &r);
// A free transmit slot (progresses the endpoint while all are in flight).
am_tx &am_tx_acquire(am_kernel &k);
// Posts (or reposts) a packet receive.
int am_post_rx(am_kernel &k, am_rx &rx);
// Whether the calling thread is inside a handler (only replies may be sent from there).
bool am_in_handler();
int am_reply_short(const weft_am_info *info, unsigned handler, const uint64_t *args, unsigned nargs);
// Frees every context (weft_finalize).
// The endpoint hook (vci_hook) that answers the PGAS kernels on an endpoint; its state is the
// list of those kernels (am_kernel::next_on_vci).
int am_progress_hook(vci &v, vci_hook &self);
void pgas_finalize_all();

}  // namespace weft
