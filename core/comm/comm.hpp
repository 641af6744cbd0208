// Communicators.  Every communicator, conventional or stream, has the same shape: a list of
// local endpoints (one per attached local stream; the hashed implicit endpoint when none) and,
// per rank, a list of that rank's endpoints.  Multiplex point-to-point from local index i to
// rank r's index j goes from local[i] to remote[remote_offset[r] + j]; each rank's own count is
// used, so processes may attach different numbers of streams.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/handle.hpp"
#include "comm/errhandler.hpp"
#include "transport/vci.hpp"
#include "weft/weft.h"

namespace weft {

struct stream;
struct coll_sched;
struct coll_shm;

struct comm : peer_group {    // world_ranks: rank in comm -> world rank
    uint16_t context_id = 0;  // point-to-point context; +1 collectives, +2/+3 synchronous sends (base/match.hpp)
    int rank = 0;
    int size = 0;
    bool multiplex = false;
    // Made by weft_stream_comm_create(_multiplex), even where this process attached no stream:
    // its peers' endpoints are theirs, not the hashed implicit ones.
    bool stream_comm = false;
    std::vector<vci *> local;             // by local stream index (at least one unless count 0)
    std::vector<stream *> local_streams;  // parallel to local; nullptr for no stream
    std::vector<weft_stream> local_stream_handles;
    std::vector<uint32_t> remote_offset;  // size + 1 entries
    std::vector<remote_ep> remote;
    // peers[i][k]: connection from local[i] to remote[k], filled on first use.
    std::vector<std::vector<weft_fabric_peer_t *>> peers;
    // Requests not yet completed by wait/test, per local index (each counted under that
    // endpoint's serialization, so no atomics on the stream path).
    std::vector<int> pending;
    // Operations registered on a GPU queue (enqueue API) and not yet retired.  (A copy of a
    // communicator, the start of a dup, starts with none.)
    struct counter {
        std::atomic<int> n{0};
        counter() = default;
        counter(const counter &) {}
        counter &operator=(const counter &) { return *this; }
    } enqueued;
    // Collectives started on this communicator; each takes the next tag (same order everywhere).
    uint32_t coll_seq = 0;
    std::shared_ptr<coll_sched> blocking_sched;  // reused by blocking collectives
    // The shared-memory segment of blocking collectives (coll/coll_shm.hpp), once asked for;
    // not copied with a communicator: a dup has its own collectives, so its own segment.
    struct shm_segment {
        std::shared_ptr<coll_shm> seg;
        bool asked = false;
        shm_segment() = default;
        shm_segment(const shm_segment &) {}
        shm_segment &operator=(const shm_segment &) { return *this; }
    } coll_shm_state;
    // weft_comm_set_name's name (comm_group.cpp): not copied with the rest of a communicator
    // (a dup of a stream communicator starts as a copy), since MPI names do not propagate.
    struct object_name {
        std::string text;
        bool set = false;
        object_name() = default;
        object_name(const object_name &) {}
        object_name &operator=(const object_name &) { return *this; }
    } name;
    // Run when a call on the communicator fails (comm/errhandler.hpp); a communicator created
    // from another starts with its parent's: child->errhandler = parent.errhandler.
    errhandler_ref errhandler;
};

extern handle_table<comm> g_comm_table;
// nullptr for an invalid, freed or null handle.
inline comm *comm_get(weft_comm handle) { return g_comm_table.get(handle); }
// Creates WEFT_COMM_WORLD and WEFT_COMM_SELF (at init) and drops every communicator (finalize).
int comm_init_predefined();
void comm_finalize_all();
// The implicit endpoint a conventional communicator with this context id uses; both sides of
// a connection compute the same one.
uint32_t comm_implicit_vci(uint16_t context_id);

// The connection from local index li to rank r's endpoint index ri (validated by the caller).
inline int comm_peer(comm &c, size_t li, int r, int ri, weft_fabric_peer_t **peer) {
    size_t k = c.remote_offset[static_cast<size_t>(r)] + static_cast<size_t>(ri);
    weft_fabric_peer_t *p = c.peers[li][k];
    if (p != nullptr) {
        *peer = p;
        return WEFT_SUCCESS;
    }
    int rc = vci_peer(*c.local[li], c.remote[k], &p);
    if (rc == WEFT_SUCCESS) c.peers[li][k] = p;
    *peer = p;
    return rc;
}

}  // namespace weft
