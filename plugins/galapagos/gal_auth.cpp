/* The Galapagos handshake's two sides (gal_auth.hpp) and a blocking driver for one socket. */
#include "gal_auth.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <poll.h>
#include <sodium.h>
#include <sys/socket.h>

#include "gal_wire.hpp"

namespace gal {
namespace {

/* Both labels are 16 bytes; the key label keeps job keys apart from any other use of the text. */
constexpr char key_label[] = "weft-galapagos-k";
constexpr char acceptor_label[] = "weft-galapagos-a";
constexpr char connector_label[] = "weft-galapagos-c";

key derive(const void *secret, size_t len) {
    if (sodium_init() < 0) { /* cannot happen on Linux; HMAC then still works unoptimised */
    }
    key k;
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, reinterpret_cast<const unsigned char *>(key_label), 16);
    crypto_auth_hmacsha256_update(&st, static_cast<const unsigned char *>(secret), len);
    crypto_auth_hmacsha256_final(&st, k.bytes);
    return k;
}

uint32_t get_u32(const uint8_t *p) { return uint32_t(get_u64(p)); }

}  // namespace

key key_from_text(const char *text) { return derive(text, strlen(text)); }

key key_from_secret(const uint8_t secret[node_secret_bytes]) { return derive(secret, node_secret_bytes); }

void random_bytes(void *out, size_t n) {
    if (sodium_init() < 0) {}
    randombytes_buf(out, n);
}

handshake_side::handshake_side(bool accepting, const key &k, uint64_t my_node, const uint8_t my_nonce[nonce_bytes])
    : key_(k), accepting_(accepting), my_node_(my_node) {
    memcpy(my_nonce_, my_nonce, nonce_bytes);
}

hs_status handshake_side::expect(size_t bytes) {
    need_ = bytes;
    have_ = sent_ = 0;
    return status_ = hs_status::need_input;
}

hs_status handshake_side::emit(size_t bytes) {
    need_ = bytes;
    have_ = sent_ = 0;
    return status_ = hs_status::have_output;
}

hs_status handshake_side::refuse(const char *why) {
    why_ = why;
    need_ = have_ = sent_ = 0;
    return status_ = hs_status::refused;
}

hs_status handshake_side::consumed(size_t n) {
    if (status_ != hs_status::need_input || n > need_ - have_) return refuse("handshake driven out of order");
    have_ += n;
    return have_ == need_ ? on_input() : status_;
}

hs_status handshake_side::sent(size_t n) {
    if (status_ != hs_status::have_output || n > need_ - sent_) return refuse("handshake driven out of order");
    sent_ += n;
    return sent_ == need_ ? on_output() : status_;
}

void handshake_side::prove(bool by_acceptor, uint8_t out[proof_bytes]) const {
    const bool i_accept = accepting_;
    const uint8_t *connector_nonce = i_accept ? peer_nonce_ : my_nonce_;
    const uint8_t *acceptor_nonce = i_accept ? my_nonce_ : peer_nonce_;
    uint8_t ids[16];
    put_u64(ids, i_accept ? peer_node_ : my_node_);
    put_u64(ids + 8, i_accept ? my_node_ : peer_node_);
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, key_.bytes, key_bytes);
    crypto_auth_hmacsha256_update(
        &st, reinterpret_cast<const unsigned char *>(by_acceptor ? acceptor_label : connector_label), 16);
    crypto_auth_hmacsha256_update(&st, connector_nonce, nonce_bytes);
    crypto_auth_hmacsha256_update(&st, acceptor_nonce, nonce_bytes);
    crypto_auth_hmacsha256_update(&st, ids, sizeof ids);
    crypto_auth_hmacsha256_final(&st, out);
}

bool handshake_side::check_proof(bool by_acceptor, const uint8_t proof[proof_bytes]) const {
    uint8_t want[proof_bytes];
    prove(by_acceptor, want);
    return crypto_verify_32(want, proof) == 0; /* constant time */
}

/* Acceptor stages: 0 hello head, 1 hello rest, 2 welcome out, 3 proof in, 4 done. */
acceptor::acceptor(const key &k, uint64_t my_node, const uint8_t my_nonce[nonce_bytes])
    : handshake_side(true, k, my_node, my_nonce) {
    expect(hello_head_bytes);
}

hs_status acceptor::on_input() {
    switch (stage_) {
        case 0: {
            if (memcmp(buf_, hello_magic, 8) != 0) return refuse("not a Weft Galapagos node (bad magic)");
            uint32_t version = get_u32(buf_ + 8);
            if (version != handshake_version) {
                snprintf(why_buf_, sizeof why_buf_, "protocol version %u, this node speaks %u", version,
                         handshake_version);
                return refuse(why_buf_);
            }
            if (get_u64(buf_ + 8) >> 32) return refuse("nonzero hello flags");
            stage_ = 1;
            need_ = hello_bytes; /* the rest of the hello, after the head already read */
            return status_;
        }
        case 1: {
            peer_node_ = get_u64(buf_ + 16);
            memcpy(peer_nonce_, buf_ + 24, nonce_bytes);
            if (peer_node_ == 0 || get_u64(buf_ + 56) != 0) return refuse("malformed hello");
            memset(buf_, 0, welcome_bytes);
            memcpy(buf_, welcome_magic, 8);
            put_u64(buf_ + 8, handshake_version);
            put_u64(buf_ + 16, my_node_);
            memcpy(buf_ + 24, my_nonce_, nonce_bytes);
            prove(true, buf_ + 56);
            stage_ = 2;
            return emit(welcome_bytes);
        }
        case 3:
            if (memcmp(buf_, proof_magic, 8) != 0 || get_u64(buf_ + 8) != 0) return refuse("malformed proof");
            if (!check_proof(false, buf_ + 16))
                return refuse("wrong job key (set the same WEFT_GALAPAGOS_TOKEN or WEFT_JOB_TOKEN on every node)");
            stage_ = 4;
            return status_ = hs_status::done;
    }
    return refuse("handshake driven out of order");
}

hs_status acceptor::on_output() {
    stage_ = 3;
    return expect(proof_msg_bytes);
}

/* Connector stages: 0 hello out, 1 welcome in, 2 proof out, 3 done. */
connector::connector(const key &k, uint64_t my_node, const uint8_t my_nonce[nonce_bytes], uint64_t expect_node)
    : handshake_side(false, k, my_node, my_nonce), expect_node_(expect_node) {
    memcpy(buf_, hello_magic, 8);
    put_u64(buf_ + 8, handshake_version);
    put_u64(buf_ + 16, my_node_);
    memcpy(buf_ + 24, my_nonce_, nonce_bytes);
    put_u64(buf_ + 56, 0);
    emit(hello_bytes);
}

hs_status connector::on_output() {
    if (stage_ == 0) {
        stage_ = 1;
        return expect(welcome_bytes);
    }
    stage_ = 3;
    return status_ = hs_status::done;
}

hs_status connector::on_input() {
    if (memcmp(buf_, welcome_magic, 8) != 0) return refuse("no welcome (not a Weft Galapagos node, or it refused us)");
    if (get_u64(buf_ + 8) != handshake_version) return refuse("welcome of another protocol version");
    peer_node_ = get_u64(buf_ + 16);
    memcpy(peer_nonce_, buf_ + 24, nonce_bytes);
    if (peer_node_ == 0 || get_u64(buf_ + 88) != 0) return refuse("malformed welcome");
    if (expect_node_ && peer_node_ != expect_node_) return refuse("another node answers at that address");
    if (!check_proof(true, buf_ + 56))
        return refuse("the node could not prove the job key (is WEFT_GALAPAGOS_TOKEN the same on every node?)");
    memset(buf_, 0, proof_msg_bytes);
    memcpy(buf_, proof_magic, 8);
    prove(false, buf_ + 16);
    stage_ = 2;
    return emit(proof_msg_bytes);
}

bool handshake_run(int fd, handshake_side &side, int deadline_ms, const char **why) {
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::milliseconds(deadline_ms);
    for (;;) {
        hs_status s = side.status();
        if (s == hs_status::done) return true;
        if (s == hs_status::refused) {
            *why = side.why();
            return false;
        }
        const bool reading = s == hs_status::need_input;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
        pollfd p{fd, short(reading ? POLLIN : POLLOUT), 0};
        int r = left > 0 ? poll(&p, 1, int(left)) : 0;
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            *why = "no complete handshake in time";
            return false;
        }
        ssize_t k = reading ? recv(fd, side.input_at(), side.input_missing(), MSG_DONTWAIT)
                            : send(fd, side.output_at(), side.output_left(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (k <= 0) {
            *why = k == 0 ? "the connection closed during the handshake" : "the connection failed during the handshake";
            return false;
        }
        if (reading)
            side.consumed(size_t(k));
        else
            side.sent(size_t(k));
    }
}

}  // namespace gal
