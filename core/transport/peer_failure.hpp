// Peer failure: which processes of the job have died, and how each endpoint reacts.
//
// The liveness monitor (liveness.cpp) records a failure from its own thread.  Everything that
// belongs to an endpoint (pending receives, collectives, the fabric's connections) is failed
// by the thread that holds the endpoint, the next time it progresses it: the monitor only
// bumps g_failure_epoch, and vci::progress_held compares it with the epoch the endpoint last
// saw.  So the stream path keeps its rule (no lock, no atomic read-modify-write): a relaxed
// load and a compare per progress call, and per posted operation only when a failure exists.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace weft {

struct vci;

// Processes by world rank: a communicator's members (struct comm derives from it), as far as
// the transport needs to know them.
struct peer_group {
    std::vector<int> world_ranks;  // rank in the group -> world rank
};

// 0 until the first failure; then the number of processes known failed.
extern std::atomic<uint32_t> g_failure_epoch;

// Sized for the job at init (before the monitor starts); cleared at finalize.
void peer_failure_init(int world_size);
void peer_failure_clear();
// Records that world rank r died (first reason wins); callable from any thread.
void peer_failure_record(int world_rank, const std::string &why);
bool peer_failed_slow(int world_rank);
inline bool peer_failed(int world_rank) {
    return __builtin_expect(g_failure_epoch.load(std::memory_order_relaxed) != 0, 0) && peer_failed_slow(world_rank);
}
// True when some member of g has failed.
bool group_has_failed(const peer_group &g);
// Records WEFT_ERR_PROC_FAILED with a detail naming the rank and why it is known dead.
int fail_proc(const char *what, int comm_rank, int world_rank);
// The first failed member of g (its rank in g), or -1.
int group_first_failed(const peer_group &g);

// Applies the failures recorded since v last looked (caller holds v): the fabric completes
// its sends to the dead (ep_peer_failed), receives posted for them (or for ANY_SOURCE on a
// communicator that contains them) are cancelled and complete with WEFT_ERR_PROC_FAILED,
// and the endpoint's hooks learn of it (vci_hook::peer_failed: collectives on communicators
// that contain them end with WEFT_ERR_PROC_FAILED).
void vci_apply_failures(vci &v);
// Progresses v's fabric until it has nothing more to deliver (bounded; caller holds v).
void vci_drain(vci &v);

}  // namespace weft
