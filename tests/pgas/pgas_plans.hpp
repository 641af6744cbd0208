// Plans shared by the suites.
#pragma once
#include "pgas_harness.hpp"

namespace pgas_test {

// Handler index and argument count for message i: the record handler's indices in turn, and 0
// and 15 arguments alternately (`shift` swaps which messages get 15, so a sync and an async
// run of one plan together give every message both counts).
inline unsigned handler_for(size_t i) { return record_handlers()[i % record_handlers().size()]; }
inline unsigned nargs_for(size_t i, unsigned shift) { return ((i + shift) % 2) ? WEFT_AM_MAX_ARGS : 0; }

// The Long payload sizes: both sides of 8 bytes and of the 8192-byte rendezvous threshold,
// and large ones.
inline const std::vector<size_t> &long_sizes() {
    static const std::vector<size_t> s = {0, 1, 7, 8, 4096, 8192, 8193, 100000, MiB};
    return s;
}

// Every kernel sends to every kernel (itself and, on a multiplex communicator, the kernels of
// its own process included) one message of each kind, and gets from each.  Kernel s's puts
// land in slot s of the target's destination half; its gets land in its own slot, after the
// puts it sends to itself.
inline plan_fn all_to_all_plan(unsigned flags) {
    return [flags](int s, int n) {
        std::vector<message> v;
        const size_t slot = (dst_len / n) & ~size_t(7);
        for (int t = 0; t < n; ++t) {
            const size_t base = dst_lo + size_t(s) * slot;
            packer p(base + 1, base + 40000);
            const unsigned sh = unsigned(s + t);
            v.push_back(make_short(t, 5, 15, flags));
            v.push_back(make_medium(t, 16, sh % 2 ? 1 : 0, 100 + t, flags));
            v.push_back(make_long(t, 255, sh % 2 ? 0 : 15, 1000, p.take(1000), flags));
            // Above the rendezvous threshold.
            v.push_back(make_long_seg(t, 200, 15, 1000 + 7 * size_t(s) + 3 * size_t(t), 9000, p.take(9000), flags));
            v.push_back(make_strided(t, 15, 2, stride(300000 + 17 * size_t(t), 40, 33, 30),
                                     stride(p.take(30 * 33), 33, 33, 30), flags));
            size_t d = p.take(300);
            v.push_back(
                make_vectored(t, 5, 3, {{500000, 100}, {500200, 0}, {500300, 150}}, {{d + 200, 120}, {d, 130}}, flags));
            if (flags & WEFT_AM_ASYNC) v.back().note = "async";
        }
        // Gets (always with a reply): into this kernel's own slot, past its self-puts.
        for (int t = 0; t < n; ++t) {
            const size_t base = dst_lo + size_t(s) * slot + 40000 + size_t(t) * 8400;
            v.push_back(
                make_get_long(t, (s + t) % 2 ? 16 : WEFT_AM_H_EMPTY, 1, 600000 + 11 * size_t(s), 8193, base + 1));
        }
        return v;
    };
}

}  // namespace pgas_test
