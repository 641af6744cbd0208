// Communicator table, the predefined communicators, and the queries and free.
#include "comm/comm.hpp"

#include <memory>
#include <numeric>

#include "base/error.hpp"
#include "base/finalize_hooks.hpp"
#include "base/handle.hpp"
#include "base/match.hpp"
#include "transport/runtime.hpp"
#include "comm/errhandler.hpp"
#include "comm/stream.hpp"

namespace weft {

handle_table<comm> g_comm_table(handle_kind::comm, 16);

handle_table<comm> &comm_table() { return g_comm_table; }

uint32_t comm_implicit_vci(uint16_t context_id) { return (context_id / match_ctx_per_comm) % rt().num_implicit; }

// A conventional communicator over the given world ranks.
std::shared_ptr<comm> comm_make_conventional(uint16_t context_id, int rank, std::vector<int> world_ranks) {
    auto c = std::make_shared<comm>();
    c->context_id = context_id;
    c->rank = rank;
    c->size = static_cast<int>(world_ranks.size());
    uint32_t index = comm_implicit_vci(context_id);
    c->local = {rt().vcis[index].get()};
    c->local_streams = {nullptr};
    c->local_stream_handles = {WEFT_STREAM_NULL};
    c->remote_offset.resize(world_ranks.size() + 1);
    std::iota(c->remote_offset.begin(), c->remote_offset.end(), 0u);
    for (int w : world_ranks) c->remote.push_back(remote_ep{w, index, {}});
    c->world_ranks = std::move(world_ranks);
    c->peers.assign(1, std::vector<weft_fabric_peer_t *>(c->remote.size(), nullptr));
    c->pending.assign(1, 0);
    return c;
}

int comm_init_predefined() {
    finalize_hook_add(comm_finalize_all, finalize_prio_comms);
    finalize_hook_add(stream_finalize_all, finalize_prio_streams);
    runtime &r = rt();
    std::vector<int> all(static_cast<size_t>(r.world_size));
    std::iota(all.begin(), all.end(), 0);
    comm_table().put_predefined(handle_slot(WEFT_COMM_WORLD), comm_make_conventional(0, r.world_rank, all));
    comm_table().put_predefined(handle_slot(WEFT_COMM_SELF),
                                comm_make_conventional(match_ctx_per_comm, 0, {r.world_rank}));
    std::lock_guard lock(r.context_mutex);
    r.context_used.reset();
    r.context_used.set(0);
    r.context_used.set(1);
    return WEFT_SUCCESS;
}

void comm_finalize_all() { comm_table().clear(); }

}  // namespace weft

using namespace weft;

extern "C" int weft_comm_rank(weft_comm handle, int *rank) {
    if (int rc = runtime_check("weft_comm_rank")) return rc;
    comm *c = comm_get(handle);
    if (c == nullptr)
        return comm_error_raise(handle, fail(WEFT_ERR_COMM, "weft_comm_rank: invalid communicator handle 0x%x", handle),
                                "weft_comm_rank");
    if (rank == nullptr)
        return comm_error_raise(handle, fail(WEFT_ERR_ARG, "weft_comm_rank: rank must not be NULL"), "weft_comm_rank");
    *rank = c->rank;
    return WEFT_SUCCESS;
}

extern "C" int weft_comm_size(weft_comm handle, int *size) {
    if (int rc = runtime_check("weft_comm_size")) return rc;
    comm *c = comm_get(handle);
    if (c == nullptr)
        return comm_error_raise(handle, fail(WEFT_ERR_COMM, "weft_comm_size: invalid communicator handle 0x%x", handle),
                                "weft_comm_size");
    if (size == nullptr)
        return comm_error_raise(handle, fail(WEFT_ERR_ARG, "weft_comm_size: size must not be NULL"), "weft_comm_size");
    *size = c->size;
    return WEFT_SUCCESS;
}

extern "C" int weft_comm_get_stream(weft_comm handle, int idx, weft_stream *stream) {
    if (int rc = runtime_check("weft_comm_get_stream")) return rc;
    comm *c = comm_get(handle);
    if (c == nullptr)
        return comm_error_raise(handle,
                                fail(WEFT_ERR_COMM, "weft_comm_get_stream: invalid communicator handle 0x%x", handle),
                                "weft_comm_get_stream");
    if (stream == nullptr)
        return comm_error_raise(handle, fail(WEFT_ERR_ARG, "weft_comm_get_stream: stream must not be NULL"),
                                "weft_comm_get_stream");
    if (idx < 0 || static_cast<size_t>(idx) >= c->local_stream_handles.size())
        return comm_error_raise(handle,
                                fail(WEFT_ERR_ARG, "weft_comm_get_stream: index %d is outside 0..%zu", idx,
                                     c->local_stream_handles.size() ? c->local_stream_handles.size() - 1 : 0),
                                "weft_comm_get_stream");
    *stream = c->local_stream_handles[static_cast<size_t>(idx)];
    return WEFT_SUCCESS;
}

extern "C" int weft_comm_free(weft_comm *handle) {
    if (int rc = runtime_check("weft_comm_free")) return rc;
    if (handle == nullptr)
        return self_error_return(fail(WEFT_ERR_ARG, "weft_comm_free: comm must not be NULL"), "weft_comm_free");
    comm *c = comm_get(*handle);
    if (c == nullptr)
        return comm_error_raise(*handle,
                                fail(WEFT_ERR_COMM, "weft_comm_free: invalid communicator handle 0x%x", *handle),
                                "weft_comm_free");
    if (*handle == WEFT_COMM_WORLD || *handle == WEFT_COMM_SELF)
        return comm_error_raise(
            *handle, fail(WEFT_ERR_COMM, "weft_comm_free: WEFT_COMM_WORLD and WEFT_COMM_SELF cannot be freed"),
            "weft_comm_free");
    if (c->enqueued.n.load() != 0) g_stream_queue_hooks.retire();
    if (int n = c->enqueued.n.load())
        return comm_error_raise(
            *handle,
            fail(WEFT_ERR_BUSY,
                 "weft_comm_free: %d enqueued operation(s) on the communicator's GPU queue have not "
                 "finished; synchronize the queue (and complete isend/irecv_enqueue requests with weft_wait_enqueue)",
                 n),
            "weft_comm_free");
    int pending = std::accumulate(c->pending.begin(), c->pending.end(), 0);
    if (pending != 0)
        return comm_error_raise(
            *handle,
            fail(WEFT_ERR_BUSY,
                 "weft_comm_free: %d operation(s) on the communicator are still pending; complete them first", pending),
            "weft_comm_free");
    for (stream *s : c->local_streams)
        if (s != nullptr) s->comm_refs.fetch_sub(1);
    {
        runtime &r = rt();
        std::lock_guard lock(r.context_mutex);
        r.context_used.reset(c->context_id / match_ctx_per_comm);
    }
    comm_table().erase(*handle);
    *handle = WEFT_COMM_NULL;
    return WEFT_SUCCESS;
}
