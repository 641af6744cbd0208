// Fuzz target: the Galapagos handshake (plugins/galapagos/gal_auth.cpp), each side facing a
// peer that sends anything, as a node's listener and its connecting side do.
//
// Input: [mode] [chunk sizes: 4 bytes] [peer bytes...]
//   mode % 3 == 0: the acceptor reads the peer's bytes as hello and proof, in chunks;
//   mode % 3 == 1: the connector reads them as the welcome;
//   mode % 3 == 2: a genuine connector and acceptor talk, with keys from the input's two halves.
// Invariants:
//  - a side reports done only when the peer's proof is the one the key gives: recomputed here by
//    running the other side, with the same key and the nonces and node ids the peer sent;
//  - it never asks for more bytes than it has room for, and once refused it stays refused and
//    says why;
//  - two genuine sides finish exactly when their keys are equal.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.hpp"
#include "gal_auth.hpp"
#include "gal_wire.hpp"

namespace {

const gal::key job_key = gal::key_from_text("fuzz-job-token");
const uint8_t fixed_nonce[gal::nonce_bytes] = {1, 2, 3, 4, 5, 6, 7, 8};

// Feeds peer bytes to side in chunks; whatever it sends is taken as sent.  Returns the bytes it
// sent, in order.
std::vector<uint8_t> drive(gal::handshake_side &side, fuzz::input &in, const uint8_t chunks[4]) {
    std::vector<uint8_t> out;
    for (int turn = 0; turn < 1000; ++turn) {
        gal::hs_status s = side.status();
        if (s == gal::hs_status::done) break;
        if (s == gal::hs_status::refused) {
            FUZZ_CHECK(side.why() && *side.why());
            FUZZ_CHECK(side.consumed(0) == gal::hs_status::refused);
            break;
        }
        if (s == gal::hs_status::have_output) {
            FUZZ_CHECK(side.output_left() > 0 && side.output_left() <= gal::welcome_bytes);
            out.insert(out.end(), side.output_at(), side.output_at() + side.output_left());
            side.sent(side.output_left());
            continue;
        }
        size_t missing = side.input_missing();
        FUZZ_CHECK(missing > 0 && missing <= gal::welcome_bytes);
        if (in.empty()) break;
        size_t n = chunks[turn % 4] % missing + 1;
        std::string_view bytes = in.bytes(n);
        if (bytes.empty()) break;
        std::memcpy(side.input_at(), bytes.data(), bytes.size());
        side.consumed(bytes.size());
    }
    return out;
}

// peer: every byte the peer will send (the side reads them in order, so the first are its hello
// or welcome).
void acceptor_under_attack(fuzz::input &in, const uint8_t chunks[4], std::string_view peer) {
    std::string_view hello = peer.substr(0, gal::hello_bytes);
    gal::acceptor side(job_key, 0xacce, fixed_nonce);
    std::vector<uint8_t> sent = drive(side, in, chunks);
    if (side.status() != gal::hs_status::done) return;
    // The proof it took must be the one a connector with the key, the hello's nonce and node id
    // makes from the welcome the acceptor sent.
    FUZZ_CHECK(hello.size() == gal::hello_bytes && sent.size() == gal::welcome_bytes);
    const auto *h = reinterpret_cast<const uint8_t *>(hello.data());
    gal::connector genuine(job_key, gal::get_u64(h + 16), h + 24, 0);
    genuine.sent(genuine.output_left());
    std::memcpy(genuine.input_at(), sent.data(), gal::welcome_bytes);
    FUZZ_CHECK(genuine.consumed(gal::welcome_bytes) == gal::hs_status::have_output);
    FUZZ_CHECK(side.peer_node() == gal::get_u64(h + 16));
}

void connector_under_attack(fuzz::input &in, const uint8_t chunks[4], std::string_view peer) {
    std::string_view welcome = peer.substr(0, gal::welcome_bytes);
    gal::connector side(job_key, 0xc044, fixed_nonce, 0);
    std::vector<uint8_t> sent = drive(side, in, chunks);
    if (side.status() != gal::hs_status::done) return;
    // The welcome it believed must be what an acceptor with the key and the welcome's nonce and
    // node id answers to our hello.
    FUZZ_CHECK(welcome.size() == gal::welcome_bytes && sent.size() == gal::hello_bytes + gal::proof_msg_bytes);
    const auto *w = reinterpret_cast<const uint8_t *>(welcome.data());
    gal::acceptor genuine(job_key, gal::get_u64(w + 16), w + 24);
    std::memcpy(genuine.input_at(), sent.data(), gal::hello_head_bytes);
    genuine.consumed(gal::hello_head_bytes);
    std::memcpy(genuine.input_at(), sent.data() + gal::hello_head_bytes, gal::hello_bytes - gal::hello_head_bytes);
    FUZZ_CHECK(genuine.consumed(gal::hello_bytes - gal::hello_head_bytes) == gal::hs_status::have_output);
    FUZZ_CHECK(std::memcmp(genuine.output_at() + 56, w + 56, gal::proof_bytes) == 0);
}

void genuine_pair(fuzz::input &in) {
    std::string_view ra = in.str(64), rb = in.str(64);
    // Keys come from C strings: the text up to the first NUL.
    std::string a(ra.substr(0, ra.find('\0'))), b(rb.substr(0, rb.find('\0')));
    gal::key ka = gal::key_from_text(a.c_str()), kb = gal::key_from_text(b.c_str());
    uint8_t na[gal::nonce_bytes] = {9}, nb[gal::nonce_bytes] = {7};
    gal::connector c(ka, 1, na, 0);
    gal::acceptor s(kb, 2, nb);
    for (int turn = 0; turn < 16; ++turn) {
        gal::handshake_side *from = c.status() == gal::hs_status::have_output ? static_cast<gal::handshake_side *>(&c)
            : s.status() == gal::hs_status::have_output                       ? static_cast<gal::handshake_side *>(&s)
                                                                              : nullptr;
        if (!from) break;
        gal::handshake_side *to = from == &c ? static_cast<gal::handshake_side *>(&s) : &c;
        size_t n = from->output_left();
        while (n && to->status() == gal::hs_status::need_input) {
            size_t k = std::min(n, to->input_missing());
            std::memcpy(to->input_at(), from->output_at(), k);
            from->sent(k);
            to->consumed(k);
            n -= k;
        }
        if (n) from->sent(n);
    }
    const bool same = a == b;
    FUZZ_CHECK((c.status() == gal::hs_status::done) == same);
    FUZZ_CHECK((s.status() == gal::hs_status::done) == same);
    if (same) FUZZ_CHECK(c.peer_node() == 2 && s.peer_node() == 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz::input in(data, size);
    uint8_t mode = in.u8();
    uint8_t chunks[4] = {in.u8(), in.u8(), in.u8(), in.u8()};
    std::string_view peer(reinterpret_cast<const char *>(data) + (size - in.left()), in.left());
    switch (mode % 3) {
        case 0: acceptor_under_attack(in, chunks, peer); break;
        case 1: connector_under_attack(in, chunks, peer); break;
        default: genuine_pair(in); break;
    }
    return 0;
}
