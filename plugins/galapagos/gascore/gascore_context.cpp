/* The hardware kernel API.  A send builds the packet am_tx would put on the network (reading
 * memory-sourced payloads from this kernel's memory) and hands it to the node's transmit path
 * on the kernel's own thread. */
#include "gascore_context.hpp"

#include <cstring>

#include "gal_wire.hpp"
#include "gascore_node.hpp"

namespace gascore {

kernel_context::kernel_context(node &n, hosted_kernel &k) : node_(n), k_(k) {}

int kernel_context::id() const { return k_.id; }
uint8_t *kernel_context::memory() const { return k_.memory; }
size_t kernel_context::memory_size() const { return k_.memory_size; }

bool kernel_context::refuse(const char *call, const char *why) const {
    log_always("kernel %d: %s refused: %s", k_.id, call, why);
    return false;
}

bool kernel_context::check_common(const char *call, uint16_t dst, uint8_t handler, unsigned nargs) const {
    (void)dst; /* any 16-bit id; unroutable ones are dropped and counted by the node */
    if (handler > 15) return refuse(call, "handler above 15");
    if (nargs > max_args) return refuse(call, "more than 15 arguments");
    return true;
}

void kernel_context::put_args(am_builder &b, const uint64_t *args, unsigned nargs) {
    for (unsigned i = 0; i < nargs; ++i) b.word(args[i]);
}

void kernel_context::send(am_builder &b) {
    if (b.data().size() > gal::max_packet_bytes) {
        refuse("send", "message larger than one Galapagos packet");
        return;
    }
    node_.transmit(b.data(), true);
}

namespace {

uint64_t header_word(uint8_t type, int src, uint16_t dst, size_t size, uint8_t handler, unsigned nargs) {
    am_header h;
    h.type = type;
    h.src = uint16_t(src);
    h.dst = dst;
    h.size = uint16_t(size);
    h.handler = handler;
    h.nargs = uint8_t(nargs);
    return header_encode(h);
}

uint8_t with_async(uint8_t type, bool async) { return async ? uint8_t(type | AM_ASYNC) : type; }

/* Header, descriptors, arguments and payload within one packet. */
bool fits(size_t words, size_t payload) {
    return payload <= 0xffff && words + gal::flits_for(payload) <= gal::max_packet_flits;
}

}  // namespace

bool kernel_context::send_short(uint16_t dst, uint8_t handler, const uint64_t *args, unsigned nargs, bool async) {
    if (!check_common("send_short", dst, handler, nargs)) return false;
    am_builder b;
    b.word(header_word(with_async(AM_SHORT, async), k_.id, dst, 0, handler, nargs));
    b.word(uint64_t(next_token()) << 48);
    put_args(b, args, nargs);
    send(b);
    return true;
}

bool kernel_context::send_medium(uint16_t dst, uint8_t handler, const uint64_t *args, unsigned nargs,
                                 const void *payload, size_t len, bool async) {
    if (!check_common("send_medium", dst, handler, nargs)) return false;
    if (!fits(2 + nargs, len)) return refuse("send_medium", "payload larger than one packet");
    am_builder b;
    b.word(header_word(with_async(AM_MEDIUM | AM_FIFO, async), k_.id, dst, len, handler, nargs));
    b.word(uint64_t(next_token()) << 48);
    put_args(b, args, nargs);
    b.bytes(payload, len);
    send(b);
    return true;
}

bool kernel_context::send_medium_mem(uint16_t dst, uint8_t handler, const uint64_t *args, unsigned nargs,
                                     uint64_t src_addr, size_t len, bool async) {
    if (!check_common("send_medium_mem", dst, handler, nargs)) return false;
    if (!fits(2 + nargs, len)) return refuse("send_medium_mem", "payload larger than one packet");
    if (!range_ok(src_addr, len, k_.memory_size))
        return refuse("send_medium_mem", "source outside the kernel's memory");
    am_builder b;
    b.word(header_word(with_async(AM_MEDIUM, async), k_.id, dst, len, handler, nargs));
    b.word(uint64_t(next_token()) << 48);
    put_args(b, args, nargs);
    b.bytes(k_.memory + src_addr, len);
    send(b);
    return true;
}

bool kernel_context::send_long(uint16_t dst, uint8_t handler, const uint64_t *args, unsigned nargs, const void *payload,
                               size_t len, uint64_t dst_addr, bool async) {
    if (!check_common("send_long", dst, handler, nargs)) return false;
    if (!fits(3 + nargs, len)) return refuse("send_long", "payload larger than one packet");
    am_builder b;
    b.word(header_word(with_async(AM_LONG | AM_FIFO, async), k_.id, dst, len, handler, nargs));
    b.word(uint64_t(next_token()) << 48);
    b.word(dst_addr);
    put_args(b, args, nargs);
    b.bytes(payload, len);
    send(b);
    return true;
}

bool kernel_context::send_long_mem(uint16_t dst, uint8_t handler, const uint64_t *args, unsigned nargs,
                                   uint64_t src_addr, size_t len, uint64_t dst_addr, bool async) {
    if (!check_common("send_long_mem", dst, handler, nargs)) return false;
    if (!fits(3 + nargs, len)) return refuse("send_long_mem", "payload larger than one packet");
    if (!range_ok(src_addr, len, k_.memory_size)) return refuse("send_long_mem", "source outside the kernel's memory");
    am_builder b;
    b.word(header_word(with_async(AM_LONG, async), k_.id, dst, len, handler, nargs));
    b.word(uint64_t(next_token()) << 48);
    b.word(dst_addr);
    put_args(b, args, nargs);
    b.bytes(k_.memory + src_addr, len);
    send(b);
    return true;
}

bool kernel_context::send_strided_mem(uint16_t dst, uint8_t handler, const uint64_t *args, unsigned nargs,
                                      uint64_t src_addr, stride_desc src, uint64_t dst_addr, stride_desc dst_desc,
                                      bool async) {
    if (!check_common("send_strided_mem", dst, handler, nargs)) return false;
    const size_t len = size_t(src.block_size) * src.block_count;
    if (len != size_t(dst_desc.block_size) * dst_desc.block_count)
        return refuse("send_strided_mem", "source and destination sizes differ");
    if (!fits(3 + nargs, len)) return refuse("send_strided_mem", "payload larger than one packet");
    if (!range_ok(src_addr, stride_extent(src), k_.memory_size))
        return refuse("send_strided_mem", "source outside the kernel's memory");
    am_builder b;
    b.word(header_word(with_async(AM_STRIDED, async), k_.id, dst, len, handler, nargs));
    b.word(stride_encode(dst_desc, next_token()));
    b.word(dst_addr);
    put_args(b, args, nargs);
    uint8_t *to = b.grow(len);
    for (size_t blk = 0; blk < src.block_count && src.block_size; ++blk)
        std::memcpy(to + blk * src.block_size, k_.memory + src_addr + blk * src.stride, src.block_size);
    send(b);
    return true;
}

void kernel_context::wait_for(uint64_t hosted_kernel::*counter, uint64_t n) {
    std::unique_lock<std::mutex> lk(k_.lock);
    k_.changed.wait(lk, [&] { return k_.*counter >= n || node_.stopping(); });
    if (k_.*counter < n) throw kernel_stopped{};
    k_.*counter -= n;
}

void kernel_context::wait_mem(uint64_t n) { wait_for(&hosted_kernel::mem_ready, n); }
void kernel_context::wait_barrier(uint64_t n) { wait_for(&hosted_kernel::barrier, n); }
void kernel_context::wait_counter(uint64_t n) { wait_for(&hosted_kernel::counter, n); }

bool kernel_context::recv_medium(kernel_header &header, std::vector<uint8_t> &payload) {
    std::unique_lock<std::mutex> lk(k_.lock);
    k_.changed.wait(lk, [&] { return !k_.stream.empty() || node_.stopping(); });
    if (k_.stream.empty()) return false;
    medium_delivery d = std::move(k_.stream.front());
    k_.stream.pop_front();
    lk.unlock();
    header.raw = d.header;
    header.type = uint8_t(d.header);
    header.token = uint16_t(d.header >> 8);
    header.src = uint16_t(d.header >> 24);
    header.size = uint16_t(d.header >> 40);
    header.handler = uint8_t((d.header >> 56) & 0xf);
    header.nargs = uint8_t(d.header >> 60);
    payload = std::move(d.payload);
    return true;
}

void kernel_context::barrier(int nkernels) {
    if (nkernels <= 1) return;
    if (k_.id == 0) {
        wait_barrier(uint64_t(nkernels - 1));
        for (int k = 1; k < nkernels; ++k) send_short(uint16_t(k), H_INCR_BAR, nullptr, 0, false);
        wait_mem(uint64_t(nkernels - 1));
    } else {
        send_short(0, H_INCR_BAR, nullptr, 0, false);
        wait_barrier(1);
        wait_mem(1);
    }
}

std::string kernel_context::param(const std::string &key, const std::string &def) const {
    auto it = node_.params().find(key);
    return it == node_.params().end() ? def : it->second;
}

const std::map<std::string, std::string> &kernel_context::params() const { return node_.params(); }

}  // namespace gascore
