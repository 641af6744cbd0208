// Communicators over a subset of a parent's processes.
#include "comm/comm_derive.hpp"

#include "base/error.hpp"
#include "comm/comm_context.hpp"
#include "comm/stream.hpp"
#include "transport/runtime.hpp"

namespace weft {

handle_table<comm> &comm_table();
std::shared_ptr<comm> comm_make_conventional(uint16_t context_id, int rank, std::vector<int> world_ranks);

std::shared_ptr<comm> comm_derive(const comm &parent, const std::vector<int> &members, int rank, uint16_t context_id) {
    std::vector<int> world_ranks;
    world_ranks.reserve(members.size());
    for (int p : members) world_ranks.push_back(parent.world_ranks[static_cast<size_t>(p)]);
    if (!parent.stream_comm) {
        std::shared_ptr<comm> c = comm_make_conventional(context_id, rank, std::move(world_ranks));
        if (c) c->errhandler = parent.errhandler;  // MPI: a new communicator inherits the parent's
        return c;
    }
    auto c = std::make_shared<comm>();
    c->errhandler = parent.errhandler;
    c->context_id = context_id;
    c->rank = rank;
    c->size = static_cast<int>(members.size());
    c->multiplex = parent.multiplex;
    c->stream_comm = true;
    c->world_ranks = std::move(world_ranks);
    // Endpoints stay where they were: both ends of every connection know them already, where
    // moving a stream-less member to the new context's implicit endpoint would need its peers
    // to tell a shared-endpoint stream (address empty too) from no stream.
    c->local = parent.local;
    c->local_streams = parent.local_streams;
    c->local_stream_handles = parent.local_stream_handles;
    c->remote_offset.assign(1, 0);
    for (int p : members) {
        auto first = parent.remote.begin() + parent.remote_offset[static_cast<size_t>(p)];
        auto last = parent.remote.begin() + parent.remote_offset[static_cast<size_t>(p) + 1];
        c->remote.insert(c->remote.end(), first, last);
        c->remote_offset.push_back(static_cast<uint32_t>(c->remote.size()));
    }
    c->peers.assign(c->local.size(), std::vector<weft_fabric_peer_t *>(c->remote.size(), nullptr));
    c->pending.assign(c->local.size(), 0);
    return c;
}

void comm_hold_streams(const comm &c) {
    for (stream *s : c.local_streams)
        if (s != nullptr) s->comm_refs.fetch_add(1);
}

int comm_publish(std::shared_ptr<comm> c, weft_comm *newcomm) {
    uint16_t context_id = c->context_id;
    std::vector<stream *> streams = c->local_streams;
    comm_hold_streams(*c);  // before the handle exists: another thread may free it at once
    int h = comm_table().insert(std::move(c));
    if (h == 0) {
        for (stream *s : streams)
            if (s != nullptr) s->comm_refs.fetch_sub(1);
        context_release(context_id);
        return fail(WEFT_ERR_NO_MEM, "too many communicators");
    }
    *newcomm = h;
    return WEFT_SUCCESS;
}

}  // namespace weft
