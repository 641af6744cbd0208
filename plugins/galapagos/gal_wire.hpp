/* The Galapagos packet protocol as Weft's galapagos fabric puts it on a TCP connection, and the
 * endpoint addresses (the handshake is in gal_auth.hpp).  Header-only: the fabric plugin, the GAScore model and the tests share
 * it.  docs/galapagos-wire.md describes the same bytes in prose.
 *
 * A packet is a header flit followed by `size` payload flits (a flit is 64 bits, little-endian
 * on the wire).  Header flit:
 *     [15:0]  size: payload flits that follow (at most max_packet_flits)
 *     [23:16] source: the sending kernel (or, for Weft messages, the sending endpoint slot)
 *     [31:24] destination: the receiving kernel (or endpoint slot)
 *     [39:32] kind: raw (0, a plain Galapagos packet: a Shoal active message between global
 *             kernel ids), a Weft message fragment (1, 2: below) or a route announcement (3)
 *     [63:40] reserved, zero
 * A raw packet is exactly what libGalapagos sends; kinds 1 and 2 carry Weft's tagged messages
 * between software endpoints, which need match bits and may exceed one packet:
 *     first fragment:  flit 0 match bits, flit 1 message length in bytes, then data
 *     next fragments:  data only, until the message length is reached
 * Fragments of one message follow each other on a connection with nothing in between.
 * A route announcement (kind 3, destination and source 0) lists, one per payload flit (low 8
 * bits), global kernels the sending node hosts: packets for them go back on this connection.
 * Software nodes send it to hardware nodes, which cannot learn their addresses otherwise. */
#ifndef WEFT_GAL_WIRE_HPP
#define WEFT_GAL_WIRE_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gal {

constexpr size_t flit_bytes = 8;
constexpr uint32_t max_packet_flits = 1124; /* libGalapagos's largest packet */
constexpr size_t max_packet_bytes = max_packet_flits * flit_bytes;
constexpr size_t first_fragment_overhead = 2 * flit_bytes; /* match bits + length */
constexpr size_t first_fragment_data = max_packet_bytes - first_fragment_overhead;

enum packet_kind : uint8_t { KIND_RAW = 0, KIND_MSG_FIRST = 1, KIND_MSG_NEXT = 2, KIND_ROUTE = 3 };
constexpr uint8_t kind_count = 4;

struct packet_header {
    uint8_t dest = 0;
    uint8_t src = 0;
    uint16_t flits = 0;
    uint8_t kind = KIND_RAW;
};

inline uint64_t header_encode(const packet_header &h) {
    return uint64_t(h.flits) | uint64_t(h.src) << 16 | uint64_t(h.dest) << 24 | uint64_t(h.kind) << 32;
}

enum class header_error { none, reserved_bits, unknown_kind, too_long };

/* Decodes a header flit; anything but header_error::none means the stream can no longer be
 * trusted (the size of what follows is unknown), so the connection is dropped. */
inline header_error header_decode(uint64_t word, packet_header &h) {
    h.flits = uint16_t(word & 0xffff);
    h.src = uint8_t(word >> 16);
    h.dest = uint8_t(word >> 24);
    h.kind = uint8_t(word >> 32);
    if (word >> 40) return header_error::reserved_bits;
    if (h.kind >= kind_count) return header_error::unknown_kind;
    if (h.flits > max_packet_flits) return header_error::too_long;
    return header_error::none;
}

inline const char *header_error_text(header_error e) {
    switch (e) {
        case header_error::none: return "none";
        case header_error::reserved_bits: return "reserved header bits set";
        case header_error::unknown_kind: return "unknown packet kind";
        case header_error::too_long: return "size field above 1124 flits";
    }
    return "?";
}

/* Flits needed for n bytes. */
constexpr size_t flits_for(size_t bytes) { return (bytes + flit_bytes - 1) / flit_bytes; }

inline void put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
inline uint64_t get_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
    return v;
}

/* An endpoint's address, as the bootstrap distributes it: 40 bytes, little-endian words.
 *     word 0: magic "WGAL" [31:0], address version [47:32], endpoint slot [55:48]
 *     word 1: TCP port [15:0], IPv4 address in network byte order [47:16]
 *     word 2: node id;  words 3-4: the node's own secret (the handshake key comes from it), or
 *     zero when the node uses the job's shared token (its text never leaves the process) */
constexpr uint32_t address_magic = 0x4c414757u; /* "WGAL" */
constexpr uint16_t address_version = 2;
constexpr size_t address_bytes = 40;
constexpr size_t address_secret_bytes = 16;

struct address {
    uint8_t slot = 0;
    uint16_t port = 0;
    uint32_t ipv4 = 0; /* network byte order */
    uint64_t node_id = 0;
    uint8_t secret[address_secret_bytes] = {};
};

inline bool address_has_secret(const address &a) {
    uint8_t any = 0;
    for (uint8_t b : a.secret) any |= b;
    return any != 0;
}

inline void address_encode(const address &a, uint8_t out[address_bytes]) {
    put_u64(out, uint64_t(address_magic) | uint64_t(address_version) << 32 | uint64_t(a.slot) << 48);
    put_u64(out + 8, uint64_t(a.port) | uint64_t(a.ipv4) << 16);
    put_u64(out + 16, a.node_id);
    std::memcpy(out + 24, a.secret, address_secret_bytes);
}

inline bool address_decode(const uint8_t *in, size_t len, address &a) {
    if (len != address_bytes) return false;
    uint64_t w0 = get_u64(in), w1 = get_u64(in + 8);
    if (uint32_t(w0) != address_magic || uint16_t(w0 >> 32) != address_version || (w0 >> 56) != 0 || (w1 >> 48) != 0)
        return false;
    a.slot = uint8_t(w0 >> 48);
    a.port = uint16_t(w1);
    a.ipv4 = uint32_t(w1 >> 16);
    a.node_id = get_u64(in + 16);
    std::memcpy(a.secret, in + 24, address_secret_bytes);
    return a.port != 0 && a.node_id != 0;
}

}  // namespace gal

#endif
