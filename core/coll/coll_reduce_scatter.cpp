// reduce_scatter with per-rank counts: argument checks and the three algorithms MPICH uses,
// recursive halving (commutative, short vectors), pairwise exchange (commutative, long ones)
// and, for a non-commutative op, a rank-ordered reduce to rank 0 followed by a scatterv.
#include <vector>

#include "base/error.hpp"
#include "coll/coll_algorithms.hpp"
#include "coll/coll_more.hpp"
#include "coll/coll_registry.hpp"

namespace weft {
namespace {

int no_mem(size_t bytes) { return fail(WEFT_ERR_NO_MEM, "collective: cannot allocate %zu bytes of scratch", bytes); }

int check_buf(const char *fn, const void *buf, size_t bytes, const char *what) {
    if (buf == nullptr && bytes != 0) return fail(WEFT_ERR_BUFFER, "%s: %s is NULL with a non-zero count", fn, what);
    return WEFT_SUCCESS;
}

}  // namespace

int coll_reduce_scatter_build(coll_sched &s, const char *fn, const void *sendbuf, void *recvbuf,
                              const size_t *recvcounts, weft_datatype type, weft_op op, size_t &bytes) {
    int n = s.c->size, me = s.c->rank;
    if (recvcounts == nullptr) return fail(WEFT_ERR_ARG, "%s: recvcounts must not be NULL", fn);
    const datatype *t = datatype_get(type);
    if (t == nullptr) return fail(WEFT_ERR_TYPE, "%s: invalid datatype handle 0x%x", fn, type);
    if (!t->committed)
        return fail(WEFT_ERR_TYPE, "%s: datatype 0x%x is not committed (call weft_type_commit)", fn, type);
    // Reductions take built-in and contiguous types only (op_bind refuses others), so the
    // buffers are used as they are, elements extent bytes apart.
    if (int rc = op_bind(fn, op, type, *t, s.op)) return rc;
    if (!t->builtin) s.held_types.push_back(datatype_get_shared(type));
    size_t elem = static_cast<size_t>(t->extent);
    std::vector<size_t> offsets(static_cast<size_t>(n));
    size_t total = 0;
    for (int r = 0; r < n; ++r) {
        offsets[static_cast<size_t>(r)] = total;
        if (__builtin_add_overflow(total, recvcounts[r], &total))
            return fail(WEFT_ERR_COUNT, "%s: recvcounts overflow (their sum exceeds SIZE_MAX at rank %d)", fn, r);
    }
    if (__builtin_mul_overflow(total, elem, &bytes))
        return fail(WEFT_ERR_COUNT, "%s: %zu elements in all (the sum of recvcounts) overflow", fn, total);
    if (recvbuf == WEFT_IN_PLACE) return fail(WEFT_ERR_BUFFER, "%s: recvbuf must not be WEFT_IN_PLACE", fn);
    const void *in = sendbuf;
    if (sendbuf == WEFT_IN_PLACE) {
        in = recvbuf;
        if (int rc = check_buf(fn, recvbuf, bytes, "recvbuf (WEFT_IN_PLACE: it holds the whole input)")) return rc;
    } else {
        if (int rc = check_buf(fn, sendbuf, bytes, "sendbuf")) return rc;
        if (int rc = check_buf(fn, recvbuf, recvcounts[me] * elem, "recvbuf")) return rc;
    }
    coll_shape shape;
    shape.bytes = bytes;
    shape.count = total;
    shape.procs = n;
    shape.commutative = s.op.commutative;
    int rc;
    const coll_algorithm *alg = coll_select(coll_kind::reduce_scatter, shape, fn, rc);
    if (alg == nullptr) return rc;
    return alg->build(s,
                      {.in = static_cast<const char *>(in),
                       .out = static_cast<char *>(recvbuf),
                       .count = total,
                       .elem = elem,
                       .blocks = recvcounts,
                       .offsets = offsets.data()});
}

// MPICH's recursive halving: a non-power-of-two group folds onto pof2 processes (in the first
// 2 * rem ranks the even ones hand their vector to the odd ones and wait for their block);
// then each step exchanges half of the remaining range with the partner mask away and reduces
// the half it keeps.  Folded block i is rank i + rem's, or ranks 2i and 2i + 1's for i < rem
// (adjacent in the vector).  Operands combine in no fixed order: commutative ops only.
int coll_reduce_scatter_recursive_halving(coll_sched &s, const coll_args &a) {
    int n = s.c->size, me = s.c->rank;
    size_t elem = a.elem, total = a.count, bytes = total * elem;
    const size_t *cnt = a.blocks, *off = a.offsets;
    char *acc = s.alloc(2 * bytes);
    if (acc == nullptr) return no_mem(2 * bytes);
    char *tmp = acc + bytes;
    s.copy(a.in, acc, bytes);  // in place: a.in is a.out, written only at the end
    s.end_round();
    int pof2 = 1;
    while (pof2 * 2 <= n) pof2 *= 2;
    int rem = n - pof2, newrank = me - rem;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            s.send(me + 1, acc, bytes);
            newrank = -1;
        } else {
            s.recv(me - 1, tmp, bytes);
            s.reduce(tmp, acc, total);
            newrank = me / 2;
        }
        s.end_round();
    }
    if (newrank >= 0) {
        auto real = [&](int i) { return i < rem ? 2 * i + 1 : i + rem; };
        // First element of folded block i (i == pof2: the end of the vector).
        auto start = [&](int i) { return i == pof2 ? total : off[i < rem ? 2 * i : i + rem]; };
        int send_idx = 0, recv_idx = 0, last_idx = pof2;  // the range kept so far: [send_idx, last_idx)
        for (int mask = pof2 / 2; mask > 0; mask >>= 1) {
            int partner = newrank ^ mask;
            int slo, shi, rlo, rhi;
            if (newrank < partner) {  // keep the lower half
                send_idx = recv_idx + mask;
                slo = send_idx, shi = last_idx, rlo = recv_idx, rhi = send_idx;
            } else {
                recv_idx = send_idx + mask;
                slo = send_idx, shi = recv_idx, rlo = recv_idx, rhi = last_idx;
            }
            size_t rfirst = start(rlo), rcount = start(rhi) - rfirst;
            s.send(real(partner), acc + start(slo) * elem, (start(shi) - start(slo)) * elem);
            s.recv(real(partner), tmp + rfirst * elem, rcount * elem);
            s.reduce(tmp + rfirst * elem, acc + rfirst * elem, rcount);
            s.end_round();
            send_idx = recv_idx;
            last_idx = recv_idx + mask;
        }
    }
    if (me < 2 * rem && me % 2 == 0) {
        s.recv(me + 1, a.out, cnt[me] * elem);
    } else {
        if (me < 2 * rem) s.send(me - 1, acc + off[me - 1] * elem, cnt[me - 1] * elem);
        s.copy(acc + off[me] * elem, a.out, cnt[me] * elem);
    }
    s.end_round();
    return WEFT_SUCCESS;
}

// Pairwise exchange: in step k each rank sends rank me + k its block and reduces the block
// rank me - k sends it.  One block of scratch (two in place); commutative ops only.
int coll_reduce_scatter_pairwise(coll_sched &s, const coll_args &a) {
    int n = s.c->size, me = s.c->rank;
    size_t elem = a.elem, mine = a.blocks[me], mine_bytes = mine * elem;
    const size_t *cnt = a.blocks, *off = a.offsets;
    bool in_place = a.in == a.out;  // the input blocks stay readable until the last step
    char *tmp = s.alloc(in_place ? 2 * mine_bytes : mine_bytes);
    if (tmp == nullptr) return no_mem(2 * mine_bytes);
    char *acc = in_place ? tmp + mine_bytes : a.out;
    s.copy(a.in + off[me] * elem, acc, mine_bytes);
    s.end_round();
    for (int k = 1; k < n; ++k) {
        int dst = (me + k) % n, src = (me - k + n) % n;
        s.send(dst, a.in + off[dst] * elem, cnt[dst] * elem);
        s.recv(src, tmp, mine_bytes);
        s.reduce(tmp, acc, mine);
        s.end_round();
    }
    s.copy(acc, a.out, mine_bytes);
    s.end_round();
    return WEFT_SUCCESS;
}

// Any op: the binomial reduce rooted at 0 keeps rank order (coll_reduce_binomial), then rank 0
// sends each rank its block.
int coll_reduce_scatter_reduce_scatterv(coll_sched &s, const coll_args &a) {
    int n = s.c->size, me = s.c->rank;
    size_t elem = a.elem, bytes = a.count * elem;
    char *whole = nullptr;
    if (me == 0) {
        whole = s.alloc(bytes);
        if (whole == nullptr) return no_mem(bytes);
    }
    if (int rc = coll_reduce_binomial(s, {.in = a.in, .out = whole, .count = a.count, .elem = elem, .root = 0}))
        return rc;
    s.end_round();
    std::vector<size_t> block_bytes(static_cast<size_t>(n)), block_offsets(static_cast<size_t>(n));
    for (size_t r = 0; r < static_cast<size_t>(n); ++r) {
        block_bytes[r] = a.blocks[r] * elem;
        block_offsets[r] = a.offsets[r] * elem;
    }
    return coll_scatter_linear(s,
                               {.in = whole,
                                .out = a.out,
                                .bytes = block_bytes[static_cast<size_t>(me)],
                                .root = 0,
                                .blocks = block_bytes.data(),
                                .offsets = block_offsets.data()});
}

}  // namespace weft
