#include "check.hpp"

#include <algorithm>
#include <cstring>

#include "report.hpp"

namespace soak {

// out[i] = byte_at(key, from + i)
void fill(uint64_t key, void *out_, size_t n, uint64_t from) {
    auto *out = static_cast<uint8_t *>(out_);
    size_t i = 0;
    for (; i < n && ((from + i) & 7); ++i) out[i] = byte_at(key, from + i);
    for (; i + 8 <= n; i += 8) {
        uint64_t w = word_at(key, (from + i) >> 3);
        std::memcpy(out + i, &w, 8);
    }
    for (; i < n; ++i) out[i] = byte_at(key, from + i);
}
// Index of the first byte that differs from the pattern, or SIZE_MAX; *nbad counts all.
size_t mismatch(uint64_t key, const void *p_, size_t n, uint64_t from, size_t *nbad) {
    auto *p = static_cast<const uint8_t *>(p_);
    size_t first = SIZE_MAX, bad = 0;
    size_t i = 0;
    for (; i < n && ((from + i) & 7); ++i)
        if (p[i] != byte_at(key, from + i)) first = std::min(first, i), ++bad;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = word_at(key, (from + i) >> 3);
        if (std::memcmp(p + i, &w, 8) != 0)
            for (size_t j = 0; j < 8; ++j)
                if (p[i + j] != uint8_t(w >> (8 * j))) first = std::min(first, i + j), ++bad;
        if (first != SIZE_MAX && !nbad) return first;
    }
    for (; i < n; ++i)
        if (p[i] != byte_at(key, from + i)) first = std::min(first, i), ++bad;
    if (nbad) *nbad = bad;
    return first;
}
// Fails with a precise message when p[0, n) is not the pattern.  `what` names the data.
void check_bytes(const std::string &what, uint64_t key, const void *p, size_t n, uint64_t from) {
    size_t bad = 0;
    size_t i = mismatch(key, p, n, from, &bad);
    if (i == SIZE_MAX) return;
    fail("%s: first bad byte at offset %zu of %zu: got 0x%02x, expected 0x%02x (%zu bad bytes in all)", what.c_str(), i,
         n, static_cast<const uint8_t *>(p)[i], byte_at(key, from + i), bad);
}

}  // namespace soak
