// mix64: SplitMix64's finalizer, a bijective 64-bit hash.  The suites derive their deterministic
// test data (payload patterns, seeds, random plans) from it, so that every process can compute
// what every other one sends.
#pragma once
#include <cstdint>

namespace harness {

inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

}  // namespace harness
