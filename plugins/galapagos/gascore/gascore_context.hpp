/* What a hardware kernel sees of its GAScore: the calls an HLS kernel makes through Shoal's
 * kernel API (send commands to am_tx, handler counters, the input stream, its memory).
 *
 * Sends return false (and log why) when the command is malformed: a handler or argument count
 * beyond Shoal's fields, a region outside this kernel's memory, a message larger than one
 * Galapagos packet.  Blocking calls throw kernel_stopped when the model stops (recv_medium
 * returns false instead). */
#ifndef WEFT_GASCORE_CONTEXT_HPP
#define WEFT_GASCORE_CONTEXT_HPP

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gascore_am.hpp"

namespace gascore {

class node;
struct hosted_kernel;

/* A Medium as the kernel's input stream gives it (the kernel header word decoded). */
struct kernel_header {
    uint64_t raw = 0;
    uint8_t type = 0;
    uint16_t token = 0;
    uint16_t src = 0;  /* source kernel */
    uint16_t size = 0; /* payload bytes */
    uint8_t handler = 0;
    uint8_t nargs = 0;
};

class kernel_context {
  public:
    kernel_context(node &n, hosted_kernel &k);

    int id() const;
    uint8_t *memory() const;
    size_t memory_size() const;

    bool send_short(uint16_t dst, uint8_t handler, const uint64_t *args, unsigned nargs, bool async);
    /* FIFO: the payload comes from the kernel. */
    bool send_medium(uint16_t dst, uint8_t handler, const uint64_t *args, unsigned nargs, const void *payload,
                     size_t len, bool async);
    bool send_medium_mem(uint16_t dst, uint8_t handler, const uint64_t *args, unsigned nargs, uint64_t src_addr,
                         size_t len, bool async);
    bool send_long(uint16_t dst, uint8_t handler, const uint64_t *args, unsigned nargs, const void *payload, size_t len,
                   uint64_t dst_addr, bool async);
    bool send_long_mem(uint16_t dst, uint8_t handler, const uint64_t *args, unsigned nargs, uint64_t src_addr,
                       size_t len, uint64_t dst_addr, bool async);
    /* Both regions move the same number of bytes (block size x block count). */
    bool send_strided_mem(uint16_t dst, uint8_t handler, const uint64_t *args, unsigned nargs, uint64_t src_addr,
                          stride_desc src, uint64_t dst_addr, stride_desc dst_desc, bool async);

    /* Block until the counter reaches n, then subtract n. */
    void wait_mem(uint64_t n);
    void wait_barrier(uint64_t n);
    void wait_counter(uint64_t n);

    /* Blocking read of the next Medium from the input stream; false at shutdown. */
    bool recv_medium(kernel_header &header, std::vector<uint8_t> &payload);

    /* Shoal's barrier over kernels 0..nkernels-1, rooted at kernel 0. */
    void barrier(int nkernels);

    /* --param KEY=VALUE, or def when not given. */
    std::string param(const std::string &key, const std::string &def) const;
    const std::map<std::string, std::string> &params() const;

    /* The 16-bit request counter: the next request's token. */
    uint16_t next_token() { return ++token_; }

  private:
    bool refuse(const char *call, const char *why) const;
    bool check_common(const char *call, uint16_t dst, uint8_t handler, unsigned nargs) const;
    void send(am_builder &b);
    void wait_for(uint64_t hosted_kernel::*counter, uint64_t n);
    void put_args(am_builder &b, const uint64_t *args, unsigned nargs);

    node &node_;
    hosted_kernel &k_;
    uint16_t token_ = 0;
};

}  // namespace gascore

#endif
