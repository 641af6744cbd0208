// Context ids: the agreement every communicator creation runs.  context_alloc agrees with all
// of a parent's processes (comm_create.cpp); the pieces below let other agreements (among a
// group's members only, or nonblocking ones) claim context blocks by the same rules: each
// process proposes the blocks free in its snapshot, the lowest free everywhere wins, each
// claims it locally, and all retry when any claim failed (another thread took it meanwhile).
#pragma once
#include <cstddef>
#include <cstdint>

#include "comm/comm.hpp"
#include "transport/runtime.hpp"

namespace weft {

// Agrees with every process of parent on a free context block (blocking, collective).
int context_alloc(comm &parent, uint16_t &context_id);
// Frees the block of a communicator's first context id.
void context_release(uint16_t context_id);

// A snapshot of this process's free blocks, one bit each.
constexpr size_t context_mask_words = context_pairs / 64;
struct context_mask {
    uint64_t bits[context_mask_words];
};
void context_free_mask(context_mask &mask);
// The first block free in all n masks at or after `start` (wrapping around), or context_pairs
// when none is.  Agreements that may run at once on a process (idups in flight, a blocking
// dup among them) start at different places, so that they seldom want the same block: two
// that both take the lowest free one collide at every attempt when their claims interleave.
size_t context_pick(const context_mask *masks, size_t n, size_t start = 0);
// A start for an agreement known by its parent's context id and its tag, different at each
// attempt.  Both count: idups on two parents dup'ed alike carry the same tags (each parent's
// collective sequence), and with the same start their claims collided at every attempt.
size_t context_pick_start(uint16_t parent_context, uint32_t tag, int attempt);
// Claims block `pick` for this process: false when it is taken.
bool context_claim(size_t pick);
void context_unclaim(size_t pick);
// The first context id of block `pick` (what context_alloc returns for it).
uint16_t context_id_of(size_t pick);
// Attempts before an agreement gives up, as context_alloc.
constexpr int context_attempts = 64;

}  // namespace weft
