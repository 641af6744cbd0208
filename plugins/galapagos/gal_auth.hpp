/* The Galapagos connection handshake (protocol version 2): both ends prove they hold the job's
 * key with HMAC-SHA-256 (libsodium) over fresh nonces from both sides, so neither a replayed
 * handshake nor a node without the key gets in, and the connecting side knows it reached a
 * node of its own job.  The fabric plugin, the GAScore model, the tests and the fuzz targets
 * share it; docs/galapagos-wire.md gives the same bytes in prose.
 *
 *     hello   (connector -> acceptor, 64 B): "WEFTGAL1", version 2 (u32), flags 0 (u32),
 *             connector's node id (u64), connector's nonce (32 B), zero (8 B)
 *     welcome (acceptor -> connector, 96 B): "WEFTGALA", version, flags 0, acceptor's node id,
 *             acceptor's nonce (32 B), acceptor's proof (32 B), zero (8 B)
 *     proof   (connector -> acceptor, 48 B): "WEFTGALP", zero (8 B), connector's proof (32 B)
 * A proof is HMAC-SHA-256(key, label || connector nonce || acceptor nonce || connector node id
 * || acceptor node id), with labels that differ by side (a proof cannot be reflected).
 *
 * The two sides are byte-driven state machines with no I/O of their own: the owner moves bytes
 * between them and a socket (the plugin's listener does many at once, without blocking). */
#ifndef WEFT_GAL_AUTH_HPP
#define WEFT_GAL_AUTH_HPP

#include <cstddef>
#include <cstdint>

namespace gal {

constexpr uint32_t handshake_version = 2;
constexpr size_t key_bytes = 32;
constexpr size_t nonce_bytes = 32;
constexpr size_t proof_bytes = 32;
constexpr size_t hello_bytes = 64;
constexpr size_t hello_head_bytes = 16; /* magic, version, flags: enough to refuse a stranger */
constexpr size_t welcome_bytes = 96;
constexpr size_t proof_msg_bytes = 48;
constexpr size_t node_secret_bytes = 16;    /* a node's own key material, when the job has no token */
constexpr int handshake_deadline_ms = 5000; /* for the whole handshake, not per read */

constexpr char hello_magic[8] = {'W', 'E', 'F', 'T', 'G', 'A', 'L', '1'};
constexpr char welcome_magic[8] = {'W', 'E', 'F', 'T', 'G', 'A', 'L', 'A'};
constexpr char proof_magic[8] = {'W', 'E', 'F', 'T', 'G', 'A', 'L', 'P'};

struct key {
    uint8_t bytes[key_bytes];
};

/* The job key from the text every node shares (WEFT_GALAPAGOS_TOKEN or the job token). */
key key_from_text(const char *text);
/* The key of a node with its own random secret (carried in its endpoint addresses). */
key key_from_secret(const uint8_t secret[node_secret_bytes]);
/* Fresh random bytes (nonces, node secrets, node ids) from the kernel's generator. */
void random_bytes(void *out, size_t n);

enum class hs_status { need_input, have_output, done, refused };

/* One side of a handshake.  Drive it as:
 *   need_input:  read at most input_missing() bytes into input_at(), then call consumed(n);
 *   have_output: send output_left() bytes from output_at(), then call sent(n);
 *   done:        the peer proved the key; peer_node() is its node id;
 *   refused:     why() says what the peer did wrong. */
class handshake_side {
  public:
    hs_status status() const { return status_; }
    uint8_t *input_at() { return buf_ + have_; }
    size_t input_missing() const { return need_ - have_; }
    hs_status consumed(size_t n);
    const uint8_t *output_at() const { return buf_ + sent_; }
    size_t output_left() const { return need_ - sent_; }
    hs_status sent(size_t n);
    uint64_t peer_node() const { return peer_node_; }
    const char *why() const { return why_; }

  protected:
    handshake_side(bool accepting, const key &k, uint64_t my_node, const uint8_t my_nonce[nonce_bytes]);
    hs_status expect(size_t bytes);
    hs_status emit(size_t bytes);
    hs_status refuse(const char *why);
    void prove(bool by_acceptor, uint8_t out[proof_bytes]) const;
    bool check_proof(bool by_acceptor, const uint8_t proof[proof_bytes]) const;
    virtual hs_status on_input() = 0;
    virtual hs_status on_output() = 0;
    virtual ~handshake_side() = default;

    key key_;
    bool accepting_;
    uint64_t my_node_, peer_node_ = 0;
    uint8_t my_nonce_[nonce_bytes], peer_nonce_[nonce_bytes] = {};
    uint8_t buf_[welcome_bytes] = {};
    size_t need_ = 0, have_ = 0, sent_ = 0;
    int stage_ = 0;
    hs_status status_ = hs_status::need_input;
    const char *why_ = "";
    char why_buf_[80] = {};
};

/* The accepting side: reads a hello, sends a welcome, checks the proof. */
class acceptor final : public handshake_side {
  public:
    acceptor(const key &k, uint64_t my_node, const uint8_t my_nonce[nonce_bytes]);

  private:
    hs_status on_input() override;
    hs_status on_output() override;
};

/* The connecting side: sends a hello, checks the welcome (expect_node 0: any node), sends the
 * proof.  Done once the proof is sent: the acceptor closes the connection if it was wrong. */
class connector final : public handshake_side {
  public:
    connector(const key &k, uint64_t my_node, const uint8_t my_nonce[nonce_bytes], uint64_t expect_node);

  private:
    hs_status on_input() override;
    hs_status on_output() override;
    uint64_t expect_node_;
};

/* Runs one side on a connected socket until done, refused, or the whole-handshake deadline
 * passes (for the connecting side and the GAScore model, which handshake one connection per
 * thread).  Returns true when done; why then names the failure otherwise. */
bool handshake_run(int fd, handshake_side &side, int deadline_ms, const char **why);

}  // namespace gal

#endif
