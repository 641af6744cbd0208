// Layout of the 64-bit match bits that every fabric matches on:
//   [63:48] context id (16)  [47:40] source stream index (8)  [39:20] source rank (20)  [19:0] tag (20)
// Each communicator owns four context ids from ctx = 4k: ctx+0 point-to-point, ctx+1 collectives,
// ctx+2 synchronous sends, ctx+3 their acknowledgements (comm/p2p_sync.cpp).  User receives and
// probes ignore the sync bit (match_sync_bit), so they match ctx+0 and ctx+2 alike but never
// ctx+1 or ctx+3: internal traffic never matches a user's WEFT_ANY_TAG receive.
#pragma once
#include <cstdint>

#include "weft/weft.h"

namespace weft {

constexpr int match_ctx_shift = 48, match_index_shift = 40, match_rank_shift = 20;
constexpr uint64_t match_tag_mask = 0xFFFFFull;
constexpr uint64_t match_rank_mask = 0xFFFFFull << match_rank_shift;
constexpr uint64_t match_index_mask = 0xFFull << match_index_shift;
constexpr int match_max_rank = 0xFFFFF;
static_assert(WEFT_TAG_UB == match_tag_mask, "weft.h's WEFT_TAG_UB must match the tag field");

// Offsets from a communicator's context id, and the context bits that tell them apart.
constexpr uint16_t match_ctx_coll = 1, match_ctx_sync = 2, match_ctx_ack = 3, match_ctx_per_comm = 4;
constexpr uint64_t match_sync_bit = uint64_t{match_ctx_sync} << match_ctx_shift;  // ctx+2 and ctx+3
constexpr uint64_t match_ack_bit = uint64_t{match_ctx_coll} << match_ctx_shift;   // ctx+1 and ctx+3
static_assert((match_ctx_sync | match_ctx_coll) == match_ctx_ack && match_ctx_ack < match_ctx_per_comm,
              "sync and ack are the two low context bits");

constexpr uint64_t match_bits(uint16_t context, uint32_t src_index, uint32_t src_rank, uint32_t tag) {
    return (uint64_t{context} << match_ctx_shift) | (uint64_t{src_index & 0xFF} << match_index_shift) |
        (uint64_t{src_rank} << match_rank_shift) | tag;
}
// Bits a receive ignores for its wildcards.
constexpr uint64_t match_ignore(bool any_source, bool any_tag, bool any_index) {
    return (any_source ? match_rank_mask : 0) | (any_tag ? match_tag_mask : 0) | (any_index ? match_index_mask : 0);
}
constexpr int match_source(uint64_t bits) { return static_cast<int>((bits & match_rank_mask) >> match_rank_shift); }
constexpr int match_tag(uint64_t bits) { return static_cast<int>(bits & match_tag_mask); }
constexpr int match_index(uint64_t bits) { return static_cast<int>((bits & match_index_mask) >> match_index_shift); }

// A user receive (context ctx+0, ignoring the sync bit) matches ctx+0 and ctx+2, not ctx+1 or ctx+3.
static_assert((match_bits(8, 0, 0, 0) & ~match_sync_bit) ==
              (match_bits(8 + match_ctx_sync, 0, 0, 0) & ~match_sync_bit));
static_assert((match_bits(8, 0, 0, 0) & ~match_sync_bit) !=
              (match_bits(8 + match_ctx_coll, 0, 0, 0) & ~match_sync_bit));
static_assert((match_bits(8, 0, 0, 0) & ~match_sync_bit) != (match_bits(8 + match_ctx_ack, 0, 0, 0) & ~match_sync_bit));

}  // namespace weft
