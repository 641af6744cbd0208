/* The GAScore's blocks as functions: receive() is am_rx + hold buffer + xpams_rx + handler,
 * transmit() is am_tx + xpams_tx's loopback + the network bridge. */
#include "gascore_node.hpp"

#include <cstring>

#include "gal_wire.hpp"
#include "gascore_context.hpp"
#include "gascore_kernels.hpp"

namespace gascore {

node::node(const gal::cluster &cluster, int index, size_t segment, std::map<std::string, std::string> params,
           stats &counters, network &net)
    : cluster_(cluster), index_(index), segment_(segment), params_(std::move(params)), stats_(counters), net_(net) {}

node::~node() { stop_kernels(); }

bool node::configure(std::string &why) {
    for (const gal::cluster_kernel &ck : cluster_.kernels) {
        if (ck.node != index_) continue;
        if (kernels_.size() == max_kernels) {
            why = "node " + std::to_string(index_) + " hosts more than " + std::to_string(max_kernels) +
                " kernels (a GAScore serves at most 16)";
            return false;
        }
        const std::string name = ck.function.empty() ? "idle" : ck.function;
        const kernel_function *f = find_kernel_function(name);
        if (!f) {
            why = "kernel " + std::to_string(ck.id) + ": unknown function \"" + name +
                "\" (known: " + kernel_function_names() + ")";
            return false;
        }
        auto k = std::make_unique<hosted_kernel>();
        k->id = ck.id;
        k->function = f;
        size_t bytes = (segment_ + 7) / 8 * 8;
        k->storage.reset(std::calloc(bytes ? bytes : 8, 1));
        if (!k->storage) {
            why = "cannot allocate " + std::to_string(segment_) + " bytes for kernel " + std::to_string(ck.id);
            return false;
        }
        k->memory = static_cast<uint8_t *>(k->storage.get());
        k->memory_size = segment_;
        if (f->check && !f->check(params_, ck.id, segment_, why)) {
            why = "kernel " + std::to_string(ck.id) + " (" + name + "): " + why;
            return false;
        }
        by_id_[ck.id] = k.get();
        kernels_.push_back(std::move(k));
    }
    return true;
}

hosted_kernel *node::kernel(int id) { return id >= 0 && id < 256 ? by_id_[id] : nullptr; }

void node::start_kernels() {
    for (auto &kp : kernels_) {
        hosted_kernel *k = kp.get();
        if (!k->function->run) continue;
        k->thread = std::thread([this, k] {
            kernel_context ctx(*this, *k);
            try {
                k->function->run(ctx);
                log_line("kernel %d (%s) finished", k->id, k->function->name);
            } catch (const kernel_stopped &) {
            } catch (const std::exception &e) {
                log_always("kernel %d (%s) failed: %s", k->id, k->function->name, e.what());
            }
        });
    }
}

void node::stop_kernels() {
    stopping_ = true;
    for (auto &k : kernels_) {
        {
            std::lock_guard<std::mutex> g(k->lock);
            k->changed.notify_all();
        }
        if (k->thread.joinable()) k->thread.join();
    }
}

void node::drop(drop_reason r, const char *text, const am_header &h) {
    stats_.drop(r);
    log_line("dropped a packet (%s: %s): type 0x%02x, kernel %u -> %u, size %u", drop_reason_name(r), text, h.type,
             h.src, h.dst, h.size);
}

void node::receive(int gal_src, int gal_dst, const uint8_t *data, size_t len) {
    am_message m;
    drop_reason why;
    const char *text = "";
    if (!am_parse(data, len, m, why, text)) {
        drop(why, text, header_decode(len >= 8 ? gal::get_u64(data) : 0));
        return;
    }
    if (m.h.dst != gal_dst || m.h.src != gal_src) {
        drop(drop_reason::mismatch, "Galapagos header names other kernels", m.h);
        return;
    }
    hosted_kernel *k = kernel(m.h.dst);
    if (!k) {
        drop(drop_reason::wrong_node, "destination kernel not hosted here", m.h);
        return;
    }
    if (m.kind() == AM_SHORT && (m.h.type & AM_REPLY)) {
        /* An automatic reply: mem_ready on the destination, whatever its handler says. */
        std::lock_guard<std::mutex> g(k->lock);
        k->mem_ready++;
        k->changed.notify_all();
        stats_.handled++;
        return;
    }
    if (!check_bounds(m, k->memory_size)) {
        drop(drop_reason::out_of_range, "address range outside the kernel's memory", m.h);
        return;
    }
    if (m.is_get) {
        serve_get(m, *k);
        stats_.handled++;
        return;
    }
    /* The hold buffer: data lands before the handler sees the header. */
    write_payload(m, *k);
    if (!run_handler(m, *k)) {
        drop(drop_reason::stream_full, "the kernel's input stream is full", m.h);
        return;
    }
    stats_.handled++;
    if (!(m.h.type & AM_ASYNC)) {
        am_header r;
        r.type = AM_SHORT | AM_REPLY;
        r.src = m.h.dst;
        r.dst = m.h.src;
        r.handler = H_INCR_MEM;
        am_builder b;
        b.word(header_encode(r));
        b.word(uint64_t(m.token) << 48);
        transmit(b.data(), false);
    }
}

void node::write_payload(const am_message &m, hosted_kernel &k) {
    switch (m.kind()) {
        case AM_LONG:
            if (m.h.size) std::memcpy(k.memory + m.dst_addr, m.payload, m.h.size);
            break;
        case AM_STRIDED: {
            const stride_desc &s = m.dst_stride;
            for (size_t b = 0; b < s.block_count && s.block_size; ++b)
                std::memcpy(k.memory + m.dst_addr + b * s.stride, m.payload + b * s.block_size, s.block_size);
            break;
        }
        case AM_VECTOR: {
            size_t from = 0;
            for (const am_piece &p : m.dst_pieces) {
                if (p.size) std::memcpy(k.memory + p.addr, m.payload + from, p.size);
                from += p.size;
            }
            break;
        }
        default: /* Short: nothing; Medium: to the stream */ break;
    }
}

bool node::run_handler(const am_message &m, hosted_kernel &k) {
    const bool to_stream = m.kind() == AM_MEDIUM && k.function->reads_stream;
    std::lock_guard<std::mutex> g(k.lock);
    if (to_stream && k.stream.size() >= stream_capacity) return false;
    /* One event per argument word, or one for the header alone. */
    const uint64_t events = m.h.nargs ? m.h.nargs : 1;
    switch (m.h.handler) {
        case H_INCR_MEM: k.mem_ready += events; break;
        case H_ADD:
            for (uint64_t a : m.args) k.counter += a & 0xffffffffu;
            break;
        case H_INCR_BAR: k.barrier += events; break;
        default: break;
    }
    if (to_stream) {
        medium_delivery d;
        d.header = uint64_t(m.h.type) | uint64_t(m.token) << 8 | uint64_t(m.h.src) << 24 | uint64_t(m.h.size) << 40 |
            uint64_t(m.h.handler) << 56 | uint64_t(m.h.nargs) << 60;
        d.payload.assign(m.payload, m.payload + m.h.size);
        k.stream.push_back(std::move(d));
    }
    k.changed.notify_all();
    return true;
}

void node::serve_get(const am_message &m, hosted_kernel &k) {
    /* xpams_rx's turnaround: an ASYNC message from this kernel back to the requester, which
     * am_tx completes with data read from this kernel's memory. */
    am_header a = m.h;
    a.type = uint8_t((m.h.type & ~AM_REPLY) | AM_ASYNC);
    a.src = m.h.dst;
    a.dst = m.h.src;
    am_builder b;
    b.word(header_encode(a));
    const uint8_t *from = k.memory + m.src_addr;
    switch (m.kind()) {
        case AM_MEDIUM:
            b.word(uint64_t(m.token) << 48);
            for (uint64_t arg : m.args) b.word(arg);
            b.bytes(from, m.h.size);
            break;
        case AM_LONG:
            b.word(uint64_t(m.token) << 48);
            b.word(m.dst_addr);
            for (uint64_t arg : m.args) b.word(arg);
            b.bytes(from, m.h.size);
            break;
        case AM_STRIDED: {
            b.word(m.dst_stride_word);
            b.word(m.dst_addr);
            for (uint64_t arg : m.args) b.word(arg);
            uint8_t *to = b.grow(m.h.size);
            const stride_desc &s = m.src_stride;
            for (size_t blk = 0; blk < s.block_count && s.block_size; ++blk)
                std::memcpy(to + blk * s.block_size, from + blk * s.stride, s.block_size);
            break;
        }
        default: /* am_parse admits no other get */ return;
    }
    transmit(b.data(), false);
}

void node::transmit(std::vector<uint8_t> &packet, bool patient) {
    am_header h = header_decode(gal::get_u64(packet.data()));
    /* am_tx clears FIFO, except on REPLY non-Short packets (gets), which pass verbatim. */
    if (!(h.type & AM_REPLY) || (h.type & AM_KIND_MASK) == AM_SHORT) {
        h.type &= uint8_t(~AM_FIFO);
        packet[0] = h.type;
    }
    if (kernel(h.dst)) {
        /* Loopback: the same as going out and coming back. */
        receive(h.src, h.dst, packet.data(), packet.size());
        return;
    }
    if (h.dst > 255 || !net_.send(uint8_t(h.dst), uint8_t(h.src), packet.data(), packet.size(), patient)) {
        if (!net_.stopping()) /* at shutdown, nothing is routable any more: not a fault */
            drop(drop_reason::unroutable, "no route to the destination kernel", h);
    }
}

}  // namespace gascore
