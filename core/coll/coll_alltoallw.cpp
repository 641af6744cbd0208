// alltoallw: a datatype, count and byte displacement per peer on each side.  Blocks of
// built-in and contiguous types travel from and to the user's buffers as they are; blocks of
// other derived types are packed into scratch by a step of the schedule's first round and
// unpacked by its last, so the buffers are read and written only while the schedule runs.
#include <algorithm>
#include <vector>

#include "base/error.hpp"
#include "coll/coll_algorithms.hpp"
#include "coll/coll_more.hpp"
#include "coll/coll_registry.hpp"

namespace weft {
namespace {

// Peers in flight at once in the scattered algorithm (MPICH's MPIR_CVAR_ALLTOALL_THROTTLE).
constexpr int scattered_batch = 32;

bool direct(const datatype &t) { return t.builtin || t.contiguous; }

// One side's blocks: type (nullptr for an empty block) and bytes per peer.
struct side {
    std::vector<const datatype *> type;
    std::vector<size_t> bytes;
};

// The argument names of one side, for messages.
struct side_names {
    const char *buf, *counts, *displs, *types;
};
constexpr side_names send_names{"sendbuf", "sendcounts", "sdispls", "sendtypes"};
constexpr side_names recv_names{"recvbuf", "recvcounts", "rdispls", "recvtypes"};

// Where empty blocks point: the fabrics get a valid address for their zero-byte messages.
char g_empty_block;

// Checks one side's arrays and sizes its blocks; types of empty blocks are not looked at.
int check_side(coll_sched &s, const char *fn, const side_names &name, const void *buf, const size_t *counts,
               const ptrdiff_t *displs, const weft_datatype *types, side &out) {
    if (counts == nullptr) return fail(WEFT_ERR_ARG, "%s: %s must not be NULL", fn, name.counts);
    if (displs == nullptr) return fail(WEFT_ERR_ARG, "%s: %s must not be NULL", fn, name.displs);
    if (types == nullptr) return fail(WEFT_ERR_ARG, "%s: %s must not be NULL", fn, name.types);
    size_t n = static_cast<size_t>(s.c->size);
    out.type.assign(n, nullptr);
    out.bytes.assign(n, 0);
    for (size_t r = 0; r < n; ++r) {
        if (counts[r] == 0) continue;
        const datatype *t = datatype_get(types[r]);
        if (t == nullptr)
            return fail(WEFT_ERR_TYPE, "%s: %s[%zu] is not a valid datatype handle (0x%x)", fn, name.types, r,
                        types[r]);
        if (!t->committed)
            return fail(WEFT_ERR_TYPE, "%s: %s[%zu] (0x%x) is not committed (call weft_type_commit)", fn, name.types, r,
                        types[r]);
        if (__builtin_mul_overflow(counts[r], t->size, &out.bytes[r]))
            return fail(WEFT_ERR_COUNT, "%s: %s[%zu] = %zu overflows", fn, name.counts, r, counts[r]);
        if (buf == nullptr)
            return fail(WEFT_ERR_BUFFER, "%s: %s is NULL with %s[%zu] = %zu", fn, name.buf, name.counts, r, counts[r]);
        out.type[r] = t;
        if (!t->builtin) s.held_types.push_back(datatype_get_shared(types[r]));
    }
    return WEFT_SUCCESS;
}

int no_mem(const char *fn, size_t bytes) {
    return fail(WEFT_ERR_NO_MEM, "%s: cannot allocate %zu bytes of scratch", fn, bytes);
}

// Self first (a local copy), then the other peers' exchanges, `batch` peers per round, nearest
// first so that no rank is everyone's first target.
void exchange(coll_sched &s, const coll_args &a, int batch) {
    int n = s.c->size, me = s.c->rank;
    s.copy(a.send_at[me], a.recv_at[me], a.blocks[me]);
    s.end_round();
    for (int first = 1; first < n; first += batch) {
        int last = std::min(n, first + batch);
        for (int k = first; k < last; ++k) {
            int src = (me - k + n) % n;
            s.recv(src, a.recv_at[src], a.blocks[src]);
        }
        for (int k = first; k < last; ++k) {
            int dst = (me + k) % n;
            s.send(dst, a.send_at[dst], a.send_blocks[dst]);
        }
        s.end_round();
    }
}

}  // namespace

int coll_alltoallw_build(coll_sched &s, const char *fn, const void *sendbuf, const size_t *sendcounts,
                         const ptrdiff_t *sdispls, const weft_datatype *sendtypes, void *recvbuf,
                         const size_t *recvcounts, const ptrdiff_t *rdispls, const weft_datatype *recvtypes) {
    int n = s.c->size, me = s.c->rank;
    bool in_place = sendbuf == WEFT_IN_PLACE;
    if (recvbuf == WEFT_IN_PLACE) return fail(WEFT_ERR_BUFFER, "%s: recvbuf must not be WEFT_IN_PLACE", fn);
    side rcv, snd;
    if (int rc = check_side(s, fn, recv_names, recvbuf, recvcounts, rdispls, recvtypes, rcv)) return rc;
    if (in_place) {
        // MPI: the send arguments are ignored; each block goes out from where it comes in.
        sendbuf = recvbuf;
        sendcounts = recvcounts;
        sdispls = rdispls;
        sendtypes = recvtypes;
        snd = rcv;
    } else if (int rc = check_side(s, fn, send_names, sendbuf, sendcounts, sdispls, sendtypes, snd)) {
        return rc;
    }
    size_t self = static_cast<size_t>(me);
    if (snd.bytes[self] != rcv.bytes[self])
        return fail(WEFT_ERR_TRUNCATE,
                    "%s: this process sends itself %zu bytes (sendcounts[%d] of sendtypes[%d]) but its receive block "
                    "holds %zu (the type signatures must match)",
                    fn, snd.bytes[self], me, me, rcv.bytes[self]);

    // Scratch: packed images of the derived-type blocks, and in place a copy of every block.
    size_t scratch = 0;
    for (size_t r = 0; r < static_cast<size_t>(n); ++r) {
        bool overflow = false;
        if (rcv.type[r] != nullptr && !direct(*rcv.type[r]))
            overflow |= __builtin_add_overflow(scratch, rcv.bytes[r], &scratch);
        if (snd.type[r] != nullptr && (in_place || !direct(*snd.type[r])))
            overflow |= __builtin_add_overflow(scratch, snd.bytes[r], &scratch);
        if (overflow) return fail(WEFT_ERR_COUNT, "%s: the blocks to pack overflow SIZE_MAX bytes in all", fn);
    }
    char *next = nullptr;
    if (scratch != 0 && (next = s.alloc(scratch)) == nullptr) return no_mem(fn, scratch);
    std::vector<const char *> send_at(static_cast<size_t>(n), &g_empty_block);
    std::vector<char *> recv_at(static_cast<size_t>(n), &g_empty_block);
    auto *rbase = static_cast<char *>(recvbuf);
    const auto *sbase = static_cast<const char *>(sendbuf);
    for (size_t r = 0; r < static_cast<size_t>(n); ++r) {
        if (const datatype *t = rcv.type[r]) {
            recv_at[r] = rbase + rdispls[r];
            if (!direct(*t)) {
                recv_at[r] = next;
                next += rcv.bytes[r];
            }
        }
        if (const datatype *t = snd.type[r]) {
            send_at[r] = sbase + sdispls[r];
            if (in_place || !direct(*t)) {
                if (direct(*t))
                    s.copy(send_at[r], next, snd.bytes[r]);
                else
                    s.pack(send_at[r], next, sendcounts[r], t);
                send_at[r] = next;
                next += snd.bytes[r];
            }
        }
    }
    s.end_round();

    coll_shape shape;
    for (size_t b : rcv.bytes) shape.bytes += b;
    shape.procs = n;
    int rc;
    const coll_algorithm *alg = coll_select(coll_kind::alltoallw, shape, fn, rc);
    if (alg == nullptr) return rc;
    if (int e = alg->build(s,
                           {.blocks = rcv.bytes.data(),
                            .send_blocks = snd.bytes.data(),
                            .send_at = send_at.data(),
                            .recv_at = recv_at.data()}))
        return e;
    s.end_round();
    for (size_t r = 0; r < static_cast<size_t>(n); ++r)
        if (rcv.type[r] != nullptr && !direct(*rcv.type[r]))
            s.unpack(recv_at[r], rbase + rdispls[r], recvcounts[r], rcv.type[r]);
    return WEFT_SUCCESS;
}

int coll_alltoallw_scattered(coll_sched &s, const coll_args &a) {
    exchange(s, a, scattered_batch);
    return WEFT_SUCCESS;
}

int coll_alltoallw_pairwise(coll_sched &s, const coll_args &a) {
    exchange(s, a, 1);
    return WEFT_SUCCESS;
}

}  // namespace weft
