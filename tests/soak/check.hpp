// Byte patterns and their checks: every payload, receive buffer slack and segment area is filled
// with the pattern of a key, and checked byte for byte (a mismatch fails with the first bad byte).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "random.hpp"

namespace soak {

inline uint64_t word_at(uint64_t key, uint64_t w) { return mix64(key ^ mix64(w + 0x632BE59BD9B4E019ull)); }
inline uint8_t byte_at(uint64_t key, uint64_t pos) { return uint8_t(word_at(key, pos >> 3) >> ((pos & 7) * 8)); }

// out[i] = byte_at(key, from + i)
void fill(uint64_t key, void *out_, size_t n, uint64_t from = 0);
// Index of the first byte that differs from the pattern, or SIZE_MAX; *nbad counts all.
size_t mismatch(uint64_t key, const void *p_, size_t n, uint64_t from = 0, size_t *nbad = nullptr);
// Fails with a precise message when p[0, n) is not the pattern.  `what` names the data.
void check_bytes(const std::string &what, uint64_t key, const void *p, size_t n, uint64_t from = 0);

constexpr size_t GUARD = 16;  // canary bytes after every receive buffer

}  // namespace soak
