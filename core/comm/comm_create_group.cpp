// Communicators from groups: weft_comm_create (collective over the parent) and
// weft_comm_create_group (collective over the group's members only).
#include <cstring>
#include <unordered_map>
#include <vector>

#include "base/error.hpp"
#include "base/group.hpp"
#include "comm/comm.hpp"
#include "comm/comm_context.hpp"
#include "comm/comm_derive.hpp"
#include "comm/p2p.hpp"
#include "transport/runtime.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

// Tags of the agreement among a group's members, on the parent's collective context: below the
// user collectives' (coll.cpp, top tag bit) and above the core's internal allgather's (1), with
// the caller's tag in the low 18 bits so that concurrent calls on overlapping groups stay apart.
constexpr uint32_t group_agreement_tag_bit = 0x40000;
int agreement_tag(int tag) {
    return static_cast<int>(group_agreement_tag_bit | (static_cast<uint32_t>(tag) & 0x3FFFF));
}

// The parent ranks of group's members, in group order; this process's index among them
// (-1 when not a member).  WEFT_ERR_GROUP when a member is not in parent.
int members_in_parent(const char *fn, const comm &parent, const group &g, std::vector<int> &members, int &me) {
    std::unordered_map<int, int> parent_rank;
    parent_rank.reserve(parent.world_ranks.size());
    for (size_t r = 0; r < parent.world_ranks.size(); ++r)
        parent_rank.emplace(parent.world_ranks[r], static_cast<int>(r));
    members.clear();
    me = -1;
    for (size_t i = 0; i < g.world_ranks.size(); ++i) {
        auto it = parent_rank.find(g.world_ranks[i]);
        if (it == parent_rank.end())
            return fail(WEFT_ERR_GROUP,
                        "%s: group member %zu (world rank %d) is not in the communicator: the group must be a subset "
                        "of the communicator's",
                        fn, i, g.world_ranks[i]);
        if (it->second == parent.rank) me = static_cast<int>(i);
        members.push_back(it->second);
    }
    return WEFT_SUCCESS;
}

// Ring allgather of `bytes` per member among members only (parent ranks, in group order), from
// parent's local endpoint 0 on its collective context.  Messages carry parent ranks, so they
// cannot be taken for those of another agreement or of comm_internal_allgather on the parent.
int group_allgather(comm &parent, const std::vector<int> &members, int me, int tag, const void *in, size_t bytes,
                    void *out) {
    auto *base = static_cast<char *>(out);
    std::memmove(base + static_cast<size_t>(me) * bytes, in, bytes);
    const int n = static_cast<int>(members.size());
    const int next = members[static_cast<size_t>((me + 1) % n)], prev = members[static_cast<size_t>((me + n - 1) % n)];
    const datatype *byte = datatype_get(WEFT_BYTE);
    const auto ctx = static_cast<uint16_t>(parent.context_id + 1);
    for (int step = 0; step < n - 1; ++step) {
        size_t send_block = static_cast<size_t>((me - step + n) % n);
        size_t recv_block = static_cast<size_t>((me - step - 1 + 2 * n) % n);
        local_request rr, sr;
        rr.endpoint = sr.endpoint = parent.local[0];
        p2p_buffer rb{base + recv_block * bytes, bytes, byte, bytes};
        p2p_buffer sb{base + send_block * bytes, bytes, byte, bytes};
        if (int rc = p2p_post_recv(parent, 0, prev, 0, ctx, tag, rb, rr)) return rc;
        if (int rc = p2p_post_send(parent, 0, next, 0, ctx, tag, sb, sr)) {
            p2p_wait_local(rr);  // cannot be cancelled portably; the peer's send completes it
            return rc;
        }
        p2p_wait_local(sr);
        p2p_wait_local(rr);
        int rc1 = request_finish(sr, WEFT_STATUS_IGNORE), rc2 = request_finish(rr, WEFT_STATUS_IGNORE);
        if (rc1 != WEFT_SUCCESS || rc2 != WEFT_SUCCESS) return rc1 ? rc1 : rc2;
    }
    return WEFT_SUCCESS;
}

// context_alloc's agreement, run among the members only.
int context_alloc_group(comm &parent, const std::vector<int> &members, int me, int tag, uint16_t &context_id) {
    const size_t n = members.size();
    std::vector<context_mask> masks(n);
    std::vector<uint8_t> claims(n);
    for (int attempt = 0; attempt < context_attempts; ++attempt) {
        context_mask mine;
        context_free_mask(mine);
        if (int rc = group_allgather(parent, members, me, tag, &mine, sizeof mine, masks.data())) return rc;
        size_t pick =
            context_pick(masks.data(), n, context_pick_start(parent.context_id, static_cast<uint32_t>(tag), attempt));
        if (pick == context_pairs)
            return fail(WEFT_ERR_NO_MEM, "out of communicator context ids (%zu in use); free communicators",
                        context_pairs);
        uint8_t claimed = context_claim(pick) ? 1 : 0;
        if (int rc = group_allgather(parent, members, me, tag, &claimed, 1, claims.data())) return rc;
        bool all = true;
        for (uint8_t c : claims) all = all && c != 0;
        if (all) {
            context_id = context_id_of(pick);
            return WEFT_SUCCESS;
        }
        if (claimed) context_unclaim(pick);
    }
    return fail(WEFT_ERR_INTERNAL, "could not agree on a communicator context id after %d attempts", context_attempts);
}

int check_args(const char *fn, weft_comm handle, weft_group group_handle, weft_comm *newcomm, comm *&parent,
               group *&g) {
    if (int rc = runtime_check(fn)) return rc;
    parent = comm_get(handle);
    if (parent == nullptr) return fail(WEFT_ERR_COMM, "%s: invalid communicator handle 0x%x", fn, handle);
    g = group_get(group_handle);
    if (g == nullptr) return fail(WEFT_ERR_GROUP, "%s: group 0x%x is not a valid group", fn, group_handle);
    if (newcomm == nullptr) return fail(WEFT_ERR_ARG, "%s: newcomm must not be NULL", fn);
    if (parent->local.empty())
        return fail(WEFT_ERR_STREAM, "%s: this process attached no stream to the multiplex communicator", fn);
    return WEFT_SUCCESS;
}

}  // namespace
}  // namespace weft

using namespace weft;

static int comm_create_impl(weft_comm handle, weft_group group_handle, weft_comm *newcomm) {
    static const char fn[] = "weft_comm_create";
    comm *parent;
    group *g;
    if (int rc = check_args(fn, handle, group_handle, newcomm, parent, g)) return rc;
    std::vector<int> members;
    int me;
    if (int rc = members_in_parent(fn, *parent, *g, members, me)) return rc;
    // One context id for every group: groups that are disjoint never exchange a message.
    uint16_t context_id = 0;
    if (int rc = context_alloc(*parent, context_id)) return rc;
    if (me < 0) {
        context_release(context_id);
        *newcomm = WEFT_COMM_NULL;
        return WEFT_SUCCESS;
    }
    return comm_publish(comm_derive(*parent, members, me, context_id), newcomm);
}

extern "C" int weft_comm_create(weft_comm handle, weft_group group_handle, weft_comm *newcomm) {
    return comm_entry(handle, "weft_comm_create", [&] { return comm_create_impl(handle, group_handle, newcomm); });
}

static int comm_create_group_impl(weft_comm handle, weft_group group_handle, int tag, weft_comm *newcomm) {
    static const char fn[] = "weft_comm_create_group";
    comm *parent;
    group *g;
    if (int rc = check_args(fn, handle, group_handle, newcomm, parent, g)) return rc;
    if (tag < 0 || tag > WEFT_TAG_UB)
        return fail(WEFT_ERR_TAG, "%s: tag %d is outside 0..WEFT_TAG_UB (%d)", fn, tag, WEFT_TAG_UB);
    std::vector<int> members;
    int me;
    if (int rc = members_in_parent(fn, *parent, *g, members, me)) return rc;
    if (me < 0) {  // as MPICH: a process outside the group gets no communicator, and sends nothing
        *newcomm = WEFT_COMM_NULL;
        return WEFT_SUCCESS;
    }
    for (int p : members)
        if (parent->remote_offset[static_cast<size_t>(p) + 1] == parent->remote_offset[static_cast<size_t>(p)])
            return fail(WEFT_ERR_STREAM, "%s: rank %d attached no stream to the multiplex communicator", fn, p);
    uint16_t context_id = 0;
    if (int rc = context_alloc_group(*parent, members, me, agreement_tag(tag), context_id)) return rc;
    return comm_publish(comm_derive(*parent, members, me, context_id), newcomm);
}

extern "C" int weft_comm_create_group(weft_comm handle, weft_group group_handle, int tag, weft_comm *newcomm) {
    return comm_entry(handle, "weft_comm_create_group",
                      [&] { return comm_create_group_impl(handle, group_handle, tag, newcomm); });
}
