// Deterministic randomness: every decision of the schedule is a pure function of (seed, thread,
// round, ...), drawn from an rng keyed by hkey(seed, domain, ...), so every rank knows what
// every other rank does.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "mix64.hpp"

namespace soak {

using harness::mix64;

template <typename... A>
uint64_t hkey(A... a) {
    uint64_t h = 0x243F6A8885A308D3ull;
    ((h = mix64(h ^ (uint64_t(a) + 0x9E3779B97F4A7C15ull))), ...);
    return h;
}
struct rng {
    uint64_t s;
    explicit rng(uint64_t seed) : s(seed) {}
    uint64_t next() { return mix64(s += 0x9E3779B97F4A7C15ull); }
    uint64_t below(uint64_t n) { return n ? next() % n : 0; }
    bool pct(unsigned p) { return below(100) < p; }
};

// Key domains (the first word of every key after the seed).
enum : uint64_t {
    D_KIND = 1,
    D_PAIR,
    D_PAYLOAD,
    D_CANARY,
    D_ORDER,
    D_COLL,
    D_CDATA,
    D_AMPLAN,
    D_AMPAY,
    D_AMARG,
    D_SRCAREA,
    D_P2P_SC,
    D_P2P_CC,
    D_P2P_MUX,
    D_P2P_INCOLL,
    D_COLL_SC,
    D_COLL_CC,
    D_COLL_MC
};

// Sizes 0..max, skewed toward small ones.
inline size_t pick_size(rng &g, size_t max) {
    unsigned b = unsigned(g.below(100));
    size_t cap = b < 40 ? 64 : b < 70 ? 4096 : b < 88 ? 65536 : max;
    return g.below(std::min(cap, max) + 1);
}

}  // namespace soak
