// The active-message wire format (docs/pgas-wire.md), shared by every fabric and the GAScore
// model.  A packet is a sequence of little-endian 64-bit words:
//
//   word 0  Shoal's header: type [7:0], src kernel [23:8], dst kernel [39:24],
//           payload size in bytes [55:40], handler [59:56], nargs [63:60]
//   word 1  token [63:48]; bits [47:0] zero
//   word 2  only when type has am_ext (a Weft extension, never sent to a Shoal-limited peer):
//           handler [7:0] (all 8 bits), ext flags [15:8], rendezvous sequence [31:16],
//           payload size in bytes [63:32]
//   then the kind's descriptor words:
//           Short, Medium: none
//           Long: destination offset
//           Long strided: destination offset, stride, block size, block count
//           Long vectored: destination piece count n, then n (offset, length) pairs
//           get (am_ext_get): Long: source offset, length, requester's destination offset;
//                             strided: source stride (4 words), requester's stride (4 words)
//   then nargs argument words, then the payload padded to a whole word (Medium, Long; absent
//   when am_ext_rndv: the payload follows as its own message).
//
// Type byte: kind [2:0] (1 Short, 2 Medium, 4 Long, 5 strided, 6 vectored), 0x10 FIFO (payload
// from the kernel, not memory), 0x20 ASYNC (no reply), 0x40 REPLY, 0x80 EXT (word 2 present).
// An automatic reply is Short|REPLY (0x41) with the request's token and handler 0; a handler's
// own reply is Short|REPLY|ASYNC with the extension word (0xE1): it acknowledges nothing.
#pragma once
#include <cstddef>
#include <cstdint>

namespace weft {

enum : uint8_t {
    am_kind_short = 1,
    am_kind_medium = 2,
    am_kind_long = 4,
    am_kind_strided = 5,
    am_kind_vectored = 6,
    am_kind_mask = 0x7,
    am_fifo = 0x10,
    am_async = 0x20,
    am_reply = 0x40,
    am_ext = 0x80,
};

// Flags of the extension word.
enum : uint8_t {
    am_ext_get = 0x1,   // a get request: the target answers with the data as a REPLY Long
    am_ext_rndv = 0x2,  // the payload follows as a separate message (tag: the sequence)
};

constexpr unsigned am_max_args = 15;
constexpr unsigned am_max_vector = 16;
constexpr size_t am_max_inline = 8192;  // payload bytes carried in the packet (max Medium)
// Header, extension, the largest descriptor (vectored: 1 + 2*16) and the arguments.
constexpr size_t am_max_header_words = 3 + 1 + 2 * am_max_vector + am_max_args;
constexpr size_t am_max_packet = am_max_header_words * 8 + am_max_inline;
constexpr uint32_t am_max_kernels = 0xFFFF;

struct am_stride_desc {
    uint64_t offset = 0, stride = 0, block_size = 0, block_count = 0;
};

// A packet's fields, decoded (or to encode).  Pointers point into the packet.
struct am_packet {
    uint8_t type = 0;
    uint32_t src = 0, dst = 0;
    uint16_t token = 0;
    unsigned handler = 0, nargs = 0;
    uint8_t ext_flags = 0;
    uint16_t rndv_seq = 0;
    uint64_t payload_bytes = 0;
    // Descriptors.
    uint64_t dst_offset = 0;           // Long; get: requester's destination offset
    uint64_t src_offset = 0;           // get (Long): the target's source offset
    am_stride_desc dst_stride;         // strided; strided get: the requester's side
    am_stride_desc src_stride;         // strided get: the target's side
    unsigned npieces = 0;              // vectored destination pieces
    const uint64_t *pieces = nullptr;  // 2 * npieces words: offset, length
    const uint64_t *args = nullptr;
    const void *payload = nullptr;  // inline payload (nullptr when rendezvous or none)
    // Shoal's vectored form lists its pieces as (size, address) in its own layout: decoded
    // into here, and `pieces` points here (so do not copy a decoded packet and keep `pieces`).
    uint64_t shoal_pieces[2 * 16] = {};

    uint8_t kind() const { return type & am_kind_mask; }
    bool is_get() const { return (ext_flags & am_ext_get) != 0; }
};

// Why a packet was refused (0: valid).  Structural checks only; bounds against a segment are
// am_check_bounds.
enum class am_wire_error : uint8_t {
    ok = 0,
    truncated,  // shorter than its header says
    bad_type,   // unknown kind or flag combination
    too_many_args,
    too_many_pieces,
    bad_size,      // payload size disagrees with the packet length or the descriptors
    bad_reserved,  // reserved bits set
};
const char *am_wire_error_name(am_wire_error e);

// Decodes len bytes at buf (8-byte aligned).
am_wire_error am_decode(const void *buf, size_t len, am_packet &p);
// Checks every region the packet names against a segment of seg_size bytes: the destination
// regions (requests) or, for a get request, the source.  False when any lies outside.
bool am_check_bounds(const am_packet &p, uint64_t seg_size);

// Encodes p (its pointers: args, pieces and payload of payload_bytes unless rendezvous) into
// out, which holds am_max_packet bytes; with a null payload the payload's place is left for
// the caller to fill (the last payload_bytes rounded up to 8 of the packet).  Sets am_ext in p.type when a field does not fit
// Shoal's header or the message is a Weft extension.  Returns the packet length.
size_t am_encode(am_packet &p, void *out);
// Shoal's own get request, which a GAScore answers by turning it around into an ASYNC message
// from its memory.  Long get: Long + REPLY, header size = the bytes wanted, token, the target's
// source offset, the requester's destination offset, arguments.  Strided get: strided + REPLY,
// the source stride word (no token), source offset, the destination stride word (token),
// destination offset, arguments.  Returns the packet length; am_shoal_fits says whether p can.
size_t am_encode_shoal_get(const am_packet &p, void *out);
// Shoal's own strided and vectored Longs (a GAScore parses no other): their descriptors packed
// into word 1 beside the token (strided: stride [15:0], block size [31:16], block count
// [47:32]; vectored: destination piece count [7:4] and first size [31:20], then size and
// address words).  Payload handling as am_encode's.  Returns the packet length.
size_t am_encode_shoal(const am_packet &p, void *out);
// Whether Shoal's fields can carry p (16-bit strides, sizes and counts, 12-bit piece sizes,
// at most 15 pieces, handlers below 16, no rendezvous).
bool am_shoal_fits(const am_packet &p);
// Whether p must carry the extension word (a Shoal-limited peer cannot parse it).
bool am_needs_ext(const am_packet &p);

// Bytes a strided region spans (offset of its end relative to offset), false on overflow.
bool am_stride_extent(const am_stride_desc &s, uint64_t &extent);

}  // namespace weft
