// Collective communicator creation: dup, split, stream and multiplex communicators, and the
// context-id agreement they share.
#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>

#include "comm/comm_allgather.hpp"
#include "comm/comm.hpp"
#include "comm/comm_context.hpp"
#include "comm/comm_derive.hpp"
#include "base/error.hpp"
#include "base/handle.hpp"
#include "base/match.hpp"
#include "transport/runtime.hpp"
#include "comm/errhandler.hpp"
#include "comm/stream.hpp"

namespace weft {

handle_table<comm> &comm_table();
std::shared_ptr<comm> comm_make_conventional(uint16_t context_id, int rank, std::vector<int> world_ranks);

constexpr size_t mask_words = context_pairs / 64;
static_assert(context_pairs * match_ctx_per_comm <= 0x10000, "every block's ids fit the 16-bit context field");

// Agrees with every process of parent on a context id free everywhere (a block of
// match_ctx_per_comm ids: base/match.hpp).  Threads may create
// communicators on different parents at once, so no lock is held while communicating: a
// process proposes from a snapshot, claims the winner locally, and all retry if any claim
// failed (another thread took it meanwhile).
int context_alloc(comm &parent, uint16_t &context_id) {
    runtime &r = rt();
    for (int attempt = 0; attempt < 64; ++attempt) {
        uint64_t mine[mask_words] = {};
        {
            std::lock_guard lock(r.context_mutex);
            for (size_t i = 0; i < context_pairs; ++i)
                if (!r.context_used.test(i)) mine[i / 64] |= uint64_t{1} << (i % 64);
        }
        std::vector<uint64_t> all(mask_words * static_cast<size_t>(parent.size));
        if (int rc = comm_internal_allgather(parent, mine, sizeof mine, all.data())) return rc;
        size_t pick = context_pairs;
        for (size_t w = 0; w < mask_words && pick == context_pairs; ++w) {
            uint64_t bits = ~uint64_t{0};
            for (int p = 0; p < parent.size; ++p) bits &= all[static_cast<size_t>(p) * mask_words + w];
            if (bits != 0) pick = w * 64 + static_cast<size_t>(__builtin_ctzll(bits));
        }
        if (pick == context_pairs)
            return fail(WEFT_ERR_NO_MEM, "out of communicator context ids (%zu in use); free communicators",
                        context_pairs);
        uint8_t claimed;
        {
            std::lock_guard lock(r.context_mutex);
            claimed = !r.context_used.test(pick);
            if (claimed) r.context_used.set(pick);
        }
        std::vector<uint8_t> claims(static_cast<size_t>(parent.size));
        if (int rc = comm_internal_allgather(parent, &claimed, 1, claims.data())) return rc;
        if (std::all_of(claims.begin(), claims.end(), [](uint8_t c) { return c != 0; })) {
            context_id = static_cast<uint16_t>(pick * match_ctx_per_comm);
            return WEFT_SUCCESS;
        }
        if (claimed) {
            std::lock_guard lock(r.context_mutex);
            r.context_used.reset(pick);
        }
    }
    return fail(WEFT_ERR_INTERNAL, "could not agree on a communicator context id after 64 attempts");
}

void context_release(uint16_t context_id) {
    runtime &r = rt();
    std::lock_guard lock(r.context_mutex);
    r.context_used.reset(context_id / match_ctx_per_comm);
}

namespace {

// One endpoint as exchanged when a stream communicator is created.
struct endpoint_record {
    uint32_t vci_index;
    uint32_t address_len;  // 0: implicit endpoint, address from the bootstrap
};

// The local endpoint record of a stream (or of the implicit endpoint when s is null), and its
// address (empty for implicit endpoints, which peers read from the bootstrap).
int describe(stream *s, uint16_t context_id, endpoint_record &rec, std::string &address) {
    rec = endpoint_record{comm_implicit_vci(context_id), 0};
    address.clear();
    if (s == nullptr) return WEFT_SUCCESS;
    rec.vci_index = s->endpoint->index;
    if (s->exclusive) {
        if (int rc = vci_address(*s->endpoint, address)) return rc;
        rec.address_len = static_cast<uint32_t>(address.size());
    }
    return WEFT_SUCCESS;
}

// Builds a stream communicator over parent's processes from each process's list of streams.
int create_stream_comm(comm &parent, const std::vector<stream *> &streams, const std::vector<weft_stream> &handles,
                       bool multiplex, weft_comm *newcomm) {
    runtime &r = rt();
    uint16_t context_id = 0;
    if (int rc = context_alloc(parent, context_id)) return rc;
    auto fail_release = [&](int rc) {
        context_release(context_id);
        return rc;
    };
    size_t n = static_cast<size_t>(parent.size);
    std::vector<endpoint_record> recs(streams.size());
    std::vector<std::string> addresses(streams.size());
    // Everyone learns everyone's stream count and longest address (address sizes differ
    // between processes), then everyone's endpoint records in blocks of the agreed size.
    struct shape {
        uint32_t count, max_address;
    } mine_shape{static_cast<uint32_t>(streams.size()), 0};
    for (size_t i = 0; i < streams.size(); ++i) {
        if (int rc = describe(streams[i], context_id, recs[i], addresses[i])) return fail_release(rc);
        mine_shape.max_address = std::max(mine_shape.max_address, recs[i].address_len);
    }
    std::vector<shape> shapes(n);
    if (int rc = comm_internal_allgather(parent, &mine_shape, sizeof mine_shape, shapes.data()))
        return fail_release(rc);
    size_t max_count = 0, max_address = 0;
    for (const auto &sh : shapes) {
        max_count = std::max<size_t>(max_count, sh.count);
        max_address = std::max<size_t>(max_address, sh.max_address);
    }
    size_t record = sizeof(endpoint_record) + max_address, block = record * max_count;
    std::vector<char> mine(block), all(block * n);
    for (size_t i = 0; i < streams.size(); ++i) {
        std::memcpy(mine.data() + i * record, &recs[i], sizeof recs[i]);
        std::memcpy(mine.data() + i * record + sizeof recs[i], addresses[i].data(), addresses[i].size());
    }
    if (block != 0)
        if (int rc = comm_internal_allgather(parent, mine.data(), block, all.data())) return fail_release(rc);

    auto c = std::make_shared<comm>();
    c->context_id = context_id;
    c->rank = parent.rank;
    c->size = parent.size;
    c->multiplex = multiplex;
    c->stream_comm = true;
    c->world_ranks = parent.world_ranks;
    c->remote_offset.assign(n + 1, 0);
    for (size_t p = 0; p < n; ++p) {
        c->remote_offset[p + 1] = c->remote_offset[p] + shapes[p].count;
        for (uint32_t i = 0; i < shapes[p].count; ++i) {
            const char *rec_bytes = all.data() + p * block + i * record;
            endpoint_record rec;
            std::memcpy(&rec, rec_bytes, sizeof rec);
            c->remote.push_back(
                remote_ep{parent.world_ranks[p], rec.vci_index, std::string(rec_bytes + sizeof rec, rec.address_len)});
        }
    }
    for (size_t i = 0; i < streams.size(); ++i) {
        c->local.push_back(streams[i] ? streams[i]->endpoint : r.vcis[comm_implicit_vci(context_id)].get());
        c->local_streams.push_back(streams[i]);
        c->local_stream_handles.push_back(handles[i]);
    }
    c->peers.assign(c->local.size(), std::vector<weft_fabric_peer_t *>(c->remote.size(), nullptr));
    c->pending.assign(c->local.size(), 0);
    c->errhandler = parent.errhandler;
    return comm_publish(std::move(c), newcomm);
}

int check_parent(const char *fn, weft_comm handle, weft_comm *newcomm, comm *&parent) {
    if (int rc = runtime_check(fn)) return rc;
    parent = comm_get(handle);
    if (parent == nullptr) return fail(WEFT_ERR_COMM, "%s: invalid communicator handle 0x%x", fn, handle);
    if (newcomm == nullptr) return fail(WEFT_ERR_ARG, "%s: newcomm must not be NULL", fn);
    return WEFT_SUCCESS;
}

}  // namespace
}  // namespace weft

using namespace weft;

extern "C" int weft_comm_dup(weft_comm handle, weft_comm *newcomm) {
    comm *parent;
    if (int rc = check_parent("weft_comm_dup", handle, newcomm, parent))
        return comm_error_raise(handle, rc, "weft_comm_dup");
    uint16_t context_id = 0;
    if (int rc = context_alloc(*parent, context_id)) return comm_error_raise(handle, rc, "weft_comm_dup");
    std::shared_ptr<comm> c;
    if (!parent->stream_comm) {
        c = comm_make_conventional(context_id, parent->rank, parent->world_ranks);
        c->errhandler = parent->errhandler;
    } else {
        // A dup keeps the parent's streams, endpoints and error handler; only the context
        // differs.
        c = std::make_shared<comm>(*parent);
        c->context_id = context_id;
        uint32_t implicit = comm_implicit_vci(context_id);
        for (size_t i = 0; i < c->local.size(); ++i)
            if (c->local_streams[i] == nullptr) c->local[i] = rt().vcis[implicit].get();
        for (auto &ep : c->remote)
            if (ep.address.empty()) ep.vci_index = implicit;  // peers without a stream: their implicit one
        for (auto &row : c->peers) std::fill(row.begin(), row.end(), nullptr);
        std::fill(c->pending.begin(), c->pending.end(), 0);
    }
    return comm_error_return(handle, comm_publish(std::move(c), newcomm), "weft_comm_dup");
}

extern "C" int weft_comm_split(weft_comm handle, int color, int key, weft_comm *newcomm) {
    comm *parent;
    if (int rc = check_parent("weft_comm_split", handle, newcomm, parent))
        return comm_error_raise(handle, rc, "weft_comm_split");
    struct entry {
        int color, key, rank;
    };
    entry mine{color < 0 ? -1 : color, key, parent->rank};
    std::vector<entry> all(static_cast<size_t>(parent->size));
    if (int rc = comm_internal_allgather(*parent, &mine, sizeof mine, all.data()))
        return comm_error_raise(handle, rc, "weft_comm_split");
    // One context id for all colors: the groups are disjoint, so their traffic never meets.
    uint16_t context_id = 0;
    if (int rc = context_alloc(*parent, context_id)) return comm_error_raise(handle, rc, "weft_comm_split");
    if (mine.color < 0) {
        context_release(context_id);
        *newcomm = WEFT_COMM_NULL;
        return WEFT_SUCCESS;
    }
    std::vector<entry> group;
    for (const auto &e : all)
        if (e.color == mine.color) group.push_back(e);
    std::stable_sort(group.begin(), group.end(),
                     [](const entry &a, const entry &b) { return a.key != b.key ? a.key < b.key : a.rank < b.rank; });
    std::vector<int> world_ranks;
    int new_rank = 0;
    for (size_t i = 0; i < group.size(); ++i) {
        if (group[i].rank == parent->rank) new_rank = static_cast<int>(i);
        world_ranks.push_back(parent->world_ranks[static_cast<size_t>(group[i].rank)]);
    }
    auto c = comm_make_conventional(context_id, new_rank, std::move(world_ranks));
    c->errhandler = parent->errhandler;
    return comm_error_return(handle, comm_publish(std::move(c), newcomm), "weft_comm_split");
}

extern "C" int weft_stream_comm_create(weft_comm handle, weft_stream stream_handle, weft_comm *newcomm) {
    comm *parent;
    if (int rc = check_parent("weft_stream_comm_create", handle, newcomm, parent))
        return comm_error_raise(handle, rc, "weft_stream_comm_create");
    stream *s = nullptr;
    if (stream_handle != WEFT_STREAM_NULL && (s = stream_get(stream_handle)) == nullptr)
        return comm_error_raise(
            handle, fail(WEFT_ERR_STREAM, "weft_stream_comm_create: invalid stream handle 0x%x", stream_handle),
            "weft_stream_comm_create");
    return comm_error_return(handle, create_stream_comm(*parent, {s}, {stream_handle}, false, newcomm),
                             "weft_stream_comm_create");
}

extern "C" int weft_stream_comm_create_multiplex(weft_comm handle, size_t count, const weft_stream streams[],
                                                 weft_comm *newcomm) {
    comm *parent;
    if (int rc = check_parent("weft_stream_comm_create_multiplex", handle, newcomm, parent))
        return comm_error_raise(handle, rc, "weft_stream_comm_create_multiplex");
    if (count > 256)
        return comm_error_raise(
            handle,
            fail(WEFT_ERR_ARG, "weft_stream_comm_create_multiplex: %zu streams; at most 256 per process", count),
            "weft_stream_comm_create_multiplex");
    if (count != 0 && streams == nullptr)
        return comm_error_raise(
            handle, fail(WEFT_ERR_ARG, "weft_stream_comm_create_multiplex: streams is NULL but count is %zu", count),
            "weft_stream_comm_create_multiplex");
    std::vector<stream *> objs(count);
    std::vector<weft_stream> handles(streams, streams + count);
    for (size_t i = 0; i < count; ++i) {
        if (streams[i] != WEFT_STREAM_NULL && (objs[i] = stream_get(streams[i])) == nullptr)
            return comm_error_raise(
                handle,
                fail(WEFT_ERR_STREAM, "weft_stream_comm_create_multiplex: streams[%zu] = 0x%x is not a valid stream", i,
                     streams[i]),
                "weft_stream_comm_create_multiplex");
    }
    return comm_error_return(handle, create_stream_comm(*parent, objs, handles, true, newcomm),
                             "weft_stream_comm_create_multiplex");
}
