/* Shoal active messages as the GAScore sees them on the network: the header word, the packet
 * layouts of each kind, and the checks a received packet must pass before the model acts on
 * it.  Only the Shoal form: Weft's extension (type bit 0x80) is refused.
 *
 * Word 0: type [7:0], src [23:8], dst [39:24], payload size in bytes [55:40], handler [59:56],
 * nargs [63:60].  Word 1: token [63:48] (strided and vectored pack their descriptor in
 * [47:0]).  Payloads are padded to whole 8-byte words. */
#ifndef WEFT_GASCORE_AM_HPP
#define WEFT_GASCORE_AM_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gascore {

enum am_kind : uint8_t { AM_SHORT = 1, AM_MEDIUM = 2, AM_LONG = 4, AM_STRIDED = 5, AM_VECTOR = 6 };
constexpr uint8_t AM_KIND_MASK = 0x07;
constexpr uint8_t AM_RESERVED = 0x08;
constexpr uint8_t AM_FIFO = 0x10;
constexpr uint8_t AM_ASYNC = 0x20;
constexpr uint8_t AM_REPLY = 0x40;
constexpr uint8_t AM_EXT = 0x80; /* Weft's extension word: never parsed by a GAScore */
enum am_handler : uint8_t { H_EMPTY = 0, H_INCR_MEM = 1, H_ADD = 2, H_INCR_BAR = 3 };

constexpr unsigned max_args = 15;
constexpr unsigned max_vector_pieces = 15;   /* 4-bit count */
constexpr uint64_t max_vector_piece = 0xfff; /* 12-bit sizes */

struct am_header {
    uint8_t type = 0;
    uint16_t src = 0;
    uint16_t dst = 0;
    uint16_t size = 0; /* payload bytes */
    uint8_t handler = 0;
    uint8_t nargs = 0;
};

uint64_t header_encode(const am_header &h);
am_header header_decode(uint64_t word);

/* Shoal's strided descriptor word: stride [15:0], block size [31:16], block count [47:32],
 * token [63:48]; all in bytes. */
struct stride_desc {
    uint16_t stride = 0;
    uint16_t block_size = 0;
    uint16_t block_count = 0;
};
uint64_t stride_encode(const stride_desc &s, uint16_t token);
stride_desc stride_decode(uint64_t word);

/* One piece of a vectored destination. */
struct am_piece {
    uint64_t addr = 0;
    uint64_t size = 0;
};

/* Why a packet was dropped.  The order is the stats line's. */
enum class drop_reason {
    truncated,    /* shorter than its header, descriptors and arguments */
    bad_reserved, /* a reserved bit or field is set */
    bad_type,     /* no such kind, or a combination the GAScore does not serve */
    extension,    /* Weft's extension bit (0x80) */
    bad_size,     /* the size disagrees with the descriptors or the packet length */
    bad_reply,    /* a Short reply with arguments would desync the GAScore */
    out_of_range, /* an address range outside the kernel's memory */
    wrong_node,   /* the destination kernel is not hosted here */
    mismatch,     /* the Galapagos header's kernels disagree with the AM header's */
    unroutable,   /* no way to reach the destination kernel */
    stream_full,  /* a Medium for a kernel whose input stream is full */
    count_
};
constexpr size_t drop_reason_count = size_t(drop_reason::count_);
const char *drop_reason_name(drop_reason r);

/* A parsed, structurally valid packet.  For gets (a non-Short with REPLY) the src_* fields
 * are the region to read in this kernel's memory and the dst_* fields the requester's. */
struct am_message {
    am_header h;
    uint16_t token = 0;
    bool is_get = false;
    uint64_t dst_addr = 0;            /* Long, strided, vectored piece 0, gets */
    stride_desc dst_stride;           /* strided */
    std::vector<am_piece> dst_pieces; /* vectored (piece 0 included) */
    uint64_t src_addr = 0;            /* gets */
    stride_desc src_stride;           /* strided get */
    uint64_t dst_stride_word = 0;     /* strided get: forwarded verbatim in the answer */
    std::vector<uint64_t> args;
    const uint8_t *payload = nullptr; /* h.size bytes, inside the parsed buffer */

    am_kind kind() const { return am_kind(h.type & AM_KIND_MASK); }
};

/* Parses and checks the structure of a packet of len bytes (a multiple of 8).  Memory bounds
 * are checked separately (check_bounds), against the destination kernel.  Returns false and
 * sets why on a packet to drop; `why_text` gets a short detail for the log. */
bool am_parse(const uint8_t *data, size_t len, am_message &out, drop_reason &why, const char *&why_text);

/* True when every region the packet names in the receiving kernel's memory lies within
 * mem_size bytes (overflow-safe): the write regions of puts, the read region of gets. */
bool check_bounds(const am_message &m, size_t mem_size);

/* (offset, length) inside a memory of size bytes, without overflow. */
inline bool range_ok(uint64_t offset, uint64_t length, uint64_t size) {
    return offset <= size && length <= size - offset;
}

/* Extent of a strided region in bytes: (count - 1) * stride + block size, 0 when empty. */
uint64_t stride_extent(const stride_desc &s);

/* A packet being built: little-endian words, payload padded with zeros. */
class am_builder {
  public:
    void word(uint64_t w);
    void bytes(const void *p, size_t n); /* appends n bytes then pads to a word */
    uint8_t *grow(size_t n);             /* appends n bytes (padded), returns where they go */
    const std::vector<uint8_t> &data() const { return data_; }
    std::vector<uint8_t> &data() { return data_; }

  private:
    std::vector<uint8_t> data_;
};

}  // namespace gascore

#endif
