/* The client side of the Galapagos handshake for tests that stand in for a node: the whole
 * handshake with a key (gal_auth.hpp), or its messages by hand, to send what a node must refuse. */
#ifndef WEFT_GAL_TEST_HANDSHAKE_HPP
#define WEFT_GAL_TEST_HANDSHAKE_HPP

#include <poll.h>
#include <sys/socket.h>

#include <cstring>
#include <vector>

#include "gal_auth.hpp"
#include "gal_wire.hpp"

namespace gal_test {

/* Runs the connecting side with key on fd; true when the node proved the key and our proof is
 * sent. */
inline bool join(int fd, const gal::key &key, uint64_t node_id, const char **why = nullptr) {
    uint8_t nonce[gal::nonce_bytes];
    gal::random_bytes(nonce, sizeof nonce);
    gal::connector side(key, node_id, nonce, 0);
    const char *ignored = nullptr;
    return gal::handshake_run(fd, side, gal::handshake_deadline_ms, why ? why : &ignored);
}

/* A hello as a connecting node sends it, with a fresh nonce (or magic/version to refuse). */
inline std::vector<uint8_t> hello(uint64_t node_id, const char *magic = gal::hello_magic,
                                  uint32_t version = gal::handshake_version) {
    std::vector<uint8_t> h(gal::hello_bytes, 0);
    memcpy(h.data(), magic, 8);
    gal::put_u64(h.data() + 8, version);
    gal::put_u64(h.data() + 16, node_id);
    gal::random_bytes(h.data() + 24, gal::nonce_bytes);
    return h;
}

/* A proof message carrying mac (a node without the key can only guess it). */
inline std::vector<uint8_t> proof(const uint8_t mac[gal::proof_bytes]) {
    std::vector<uint8_t> p(gal::proof_msg_bytes, 0);
    memcpy(p.data(), gal::proof_magic, 8);
    memcpy(p.data() + 16, mac, gal::proof_bytes);
    return p;
}

/* Reads n bytes within timeout_ms; false when the peer closed or said nothing. */
inline bool read_exactly(int fd, uint8_t *out, size_t n, int timeout_ms = 10000) {
    size_t got = 0;
    while (got < n) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, timeout_ms) != 1) return false;
        ssize_t k = recv(fd, out + got, n - got, 0);
        if (k <= 0) return false;
        got += size_t(k);
    }
    return true;
}

/* True when the node answered a hello with a welcome (which it gives to any well-formed hello:
 * the proof that follows decides). */
inline bool welcomed(int fd, uint8_t welcome[gal::welcome_bytes] = nullptr) {
    uint8_t raw[gal::welcome_bytes];
    if (!read_exactly(fd, raw, sizeof raw)) return false;
    if (welcome) memcpy(welcome, raw, sizeof raw);
    return memcmp(raw, gal::welcome_magic, 8) == 0;
}

/* True when the peer closes the connection within timeout_ms. */
inline bool closed_by_peer(int fd, int timeout_ms = 10000) {
    uint8_t b;
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, timeout_ms) == 1 && recv(fd, &b, 1, MSG_DONTWAIT) <= 0;
}

}  // namespace gal_test

#endif
