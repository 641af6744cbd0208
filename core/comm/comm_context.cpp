// The pieces of the context-id agreement shared by communicator creations other than
// context_alloc's own (comm_create_group, comm_idup).
#include "comm/comm_context.hpp"

#include <mutex>

namespace weft {

void context_free_mask(context_mask &mask) {
    runtime &r = rt();
    mask = context_mask{};
    std::lock_guard lock(r.context_mutex);
    for (size_t i = 0; i < context_pairs; ++i)
        if (!r.context_used.test(i)) mask.bits[i / 64] |= uint64_t{1} << (i % 64);
}

size_t context_pick(const context_mask *masks, size_t n, size_t start) {
    start %= context_pairs;
    // Words from start's on, the first of them without the bits below start, then the rest.
    for (size_t k = 0; k <= context_mask_words; ++k) {
        size_t w = (start / 64 + k) % context_mask_words;
        uint64_t bits = ~uint64_t{0};
        for (size_t p = 0; p < n; ++p) bits &= masks[p].bits[w];
        if (k == 0) bits &= ~uint64_t{0} << (start % 64);
        if (k == context_mask_words) bits &= ~(~uint64_t{0} << (start % 64));  // start's word again, below start
        if (bits != 0) return w * 64 + static_cast<size_t>(__builtin_ctzll(bits));
    }
    return context_pairs;
}

size_t context_pick_start(uint16_t parent_context, uint32_t tag, int attempt) {
    uint64_t key = uint64_t{parent_context} << 32 | tag;
    uint64_t x = (key << 8 | static_cast<uint8_t>(attempt)) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(x >> 40) % context_pairs;
}

bool context_claim(size_t pick) {
    runtime &r = rt();
    std::lock_guard lock(r.context_mutex);
    if (r.context_used.test(pick)) return false;
    r.context_used.set(pick);
    return true;
}

void context_unclaim(size_t pick) {
    runtime &r = rt();
    std::lock_guard lock(r.context_mutex);
    r.context_used.reset(pick);
}

// WEFT_COMM_SELF owns block 1 (comm_init_predefined), so its context id is the distance
// between blocks: derived rather than restated, it follows context_alloc's spacing.
uint16_t context_id_of(size_t pick) { return static_cast<uint16_t>(pick * comm_get(WEFT_COMM_SELF)->context_id); }

}  // namespace weft
