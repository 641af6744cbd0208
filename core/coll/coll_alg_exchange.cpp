// Exchange algorithms: allreduce, allgather, alltoall, reduce_scatter_block, scan.
#include <algorithm>
#include <vector>

#include "coll/coll_algorithms.hpp"
#include "base/error.hpp"

namespace weft {
namespace {

int no_mem(size_t bytes) { return fail(WEFT_ERR_NO_MEM, "collective: cannot allocate %zu bytes of scratch", bytes); }

// acc = a op b where `lower` says whether the incoming tmp holds lower ranks than acc.
void combine(coll_sched &s, char *tmp, char *acc, size_t count, size_t elem, bool tmp_is_lower) {
    if (tmp_is_lower || s.op.commutative) {
        s.reduce(tmp, acc, count);
    } else {
        s.reduce(acc, tmp, count);
        s.copy(tmp, acc, count * elem);
    }
}

// Folding a non-power-of-two group onto pof2 ranks (the first 2*rem ranks pair up, odd ones
// carry on): rank -> its rank among the survivors, or -1.
struct fold {
    int pof2, rem, newrank;
    fold(int n, int me) {
        pof2 = 1;
        while (pof2 * 2 <= n) pof2 *= 2;
        rem = n - pof2;
        newrank = me < 2 * rem ? (me % 2 ? me / 2 : -1) : me - rem;
    }
    int real(int nr) const { return nr < rem ? nr * 2 + 1 : nr + rem; }
};

void fold_in(coll_sched &s, const fold &f, char *acc, char *tmp, size_t count, size_t elem) {
    int me = s.c->rank;
    if (me >= 2 * f.rem) return;
    if (me % 2 == 0) {
        s.send(me + 1, acc, count * elem);
    } else {
        s.recv(me - 1, tmp, count * elem);
        s.reduce(tmp, acc, count);  // tmp holds the lower rank
    }
    s.end_round();
}

void fold_out(coll_sched &s, const fold &f, char *acc, size_t bytes) {
    int me = s.c->rank;
    if (me >= 2 * f.rem) return;
    if (me % 2)
        s.send(me - 1, acc, bytes);
    else
        s.recv(me + 1, acc, bytes);
    s.end_round();
}

// n nearly equal chunks of count elements: chunk i starts at element first[i].
std::vector<size_t> chunks(size_t count, int n) {
    std::vector<size_t> first(static_cast<size_t>(n) + 1);
    size_t base = count / static_cast<size_t>(n), extra = count % static_cast<size_t>(n);
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) first[i + 1] = first[i] + base + (i < extra ? 1 : 0);
    return first;
}

}  // namespace

int coll_allreduce_recursive_doubling(coll_sched &s, const coll_args &a) {
    char *out = a.out;
    size_t count = a.count, elem = a.elem;
    size_t bytes = count * elem;
    char *tmp = s.alloc(bytes);
    if (tmp == nullptr) return no_mem(bytes);
    fold f(s.c->size, s.c->rank);
    fold_in(s, f, out, tmp, count, elem);
    if (f.newrank >= 0) {
        for (int m = 1; m < f.pof2; m <<= 1) {
            int dst = f.real(f.newrank ^ m);
            s.send(dst, out, bytes);
            s.recv(dst, tmp, bytes);
            combine(s, tmp, out, count, elem, dst < s.c->rank);
            s.end_round();
        }
    }
    fold_out(s, f, out, bytes);
    return WEFT_SUCCESS;
}

// Rabenseifner: recursive-halving reduce-scatter, then recursive-doubling allgather, on the
// folded power-of-two group.  Commutative ops only (the caller checks).
int coll_allreduce_reduce_scatter_allgather(coll_sched &s, const coll_args &a) {
    char *out = a.out;
    size_t count = a.count, elem = a.elem;
    size_t bytes = count * elem;
    char *tmp = s.alloc(bytes);
    if (tmp == nullptr) return no_mem(bytes);
    fold f(s.c->size, s.c->rank);
    fold_in(s, f, out, tmp, count, elem);
    if (f.newrank >= 0) {
        std::vector<size_t> first = chunks(count, f.pof2);
        auto at = [&](char *b, int chunk) { return b + first[static_cast<size_t>(chunk)] * elem; };
        auto span = [&](int a, int b) { return first[static_cast<size_t>(b)] - first[static_cast<size_t>(a)]; };
        // Reduce-scatter: this rank's share [lo, hi) halves every step.
        int lo = 0, hi = f.pof2;
        for (int m = f.pof2 / 2; m >= 1; m >>= 1) {
            int partner = f.newrank ^ m, dst = f.real(partner);
            int mid = lo + (hi - lo) / 2;
            bool keep_low = f.newrank < partner;
            int klo = keep_low ? lo : mid, khi = keep_low ? mid : hi;  // kept half
            int slo = keep_low ? mid : lo, shi = keep_low ? hi : mid;  // sent half
            s.send(dst, at(out, slo), span(slo, shi) * elem);
            s.recv(dst, at(tmp, klo), span(klo, khi) * elem);
            s.reduce(at(tmp, klo), at(out, klo), span(klo, khi));
            s.end_round();
            lo = klo;
            hi = khi;
        }
        // Allgather: the share doubles back.
        for (int m = 1; m < f.pof2; m <<= 1) {
            int partner = f.newrank ^ m, dst = f.real(partner);
            int width = hi - lo;
            int plo = f.newrank < partner ? lo + width : lo - width;
            s.send(dst, at(out, lo), span(lo, hi) * elem);
            s.recv(dst, at(out, plo), span(plo, plo + width) * elem);
            s.end_round();
            lo = std::min(lo, plo);
            hi = lo + 2 * width;
        }
    }
    fold_out(s, f, out, bytes);
    return WEFT_SUCCESS;
}

// Ring reduce-scatter then ring allgather (commutative ops only; the caller checks).
int coll_allreduce_ring(coll_sched &s, const coll_args &a) {
    char *out = a.out;
    size_t count = a.count, elem = a.elem;
    int n = s.c->size, me = s.c->rank;
    std::vector<size_t> first = chunks(count, n);
    size_t biggest = first[1] - first[0];
    char *tmp = s.alloc(biggest * elem);
    if (tmp == nullptr) return no_mem(biggest * elem);
    auto at = [&](int chunk) { return out + first[static_cast<size_t>(chunk)] * elem; };
    auto len = [&](int chunk) { return first[static_cast<size_t>(chunk) + 1] - first[static_cast<size_t>(chunk)]; };
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int k = 0; k < n - 1; ++k) {
        int sc = (me - k + n) % n, rc = (me - k - 1 + n) % n;
        s.send(right, at(sc), len(sc) * elem);
        s.recv(left, tmp, len(rc) * elem);
        s.reduce(tmp, at(rc), len(rc));
        s.end_round();
    }
    // Rank me now holds chunk (me + 1) % n reduced.
    for (int k = 0; k < n - 1; ++k) {
        int sc = (me + 1 - k + n) % n, rc = (me - k + n) % n;
        s.send(right, at(sc), len(sc) * elem);
        s.recv(left, at(rc), len(rc) * elem);
        s.end_round();
    }
    return WEFT_SUCCESS;
}

int coll_allgather_ring(coll_sched &s, const coll_args &a) {
    char *out = a.out;
    const size_t *bytes = a.blocks, *offsets = a.offsets;
    int n = s.c->size, me = s.c->rank;
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int k = 0; k < n - 1; ++k) {
        int sb = (me - k + n) % n, rb = (me - k - 1 + n) % n;
        s.send(right, out + offsets[sb], bytes[sb]);
        s.recv(left, out + offsets[rb], bytes[rb]);
        s.end_round();
    }
    return WEFT_SUCCESS;
}

// Bruck: log2(n) rounds on a buffer in this rank's relative order, rotated into place at the end.
int coll_allgather_bruck(coll_sched &s, const coll_args &a) {
    char *out = a.out;
    size_t block = a.bytes;
    int n = s.c->size, me = s.c->rank;
    size_t total = block * static_cast<size_t>(n);
    char *tmp = s.alloc(total);
    if (tmp == nullptr) return no_mem(total);
    s.copy(out + static_cast<size_t>(me) * block, tmp, block);
    s.end_round();
    for (int k = 1; k < n; k <<= 1) {
        size_t blocks = static_cast<size_t>(std::min(k, n - k));
        s.send((me - k + n) % n, tmp, blocks * block);
        s.recv((me + k) % n, tmp + static_cast<size_t>(k) * block, blocks * block);
        s.end_round();
    }
    // Relative block j is rank (me + j) % n.
    size_t head = static_cast<size_t>(n - me) * block;
    s.copy(tmp, out + static_cast<size_t>(me) * block, head);
    s.copy(tmp + head, out, static_cast<size_t>(me) * block);
    s.end_round();
    return WEFT_SUCCESS;
}

int coll_alltoall_pairwise(coll_sched &s, const coll_args &a) {
    const char *in = a.in;
    char *out = a.out;
    const size_t *sbytes = a.send_blocks, *soff = a.send_offsets, *rbytes = a.blocks, *roff = a.offsets;
    int n = s.c->size, me = s.c->rank;
    s.copy(in + soff[me], out + roff[me], rbytes[me]);
    s.end_round();
    for (int k = 1; k < n; ++k) {
        int dst = (me + k) % n, src = (me - k + n) % n;
        s.send(dst, in + soff[dst], sbytes[dst]);
        s.recv(src, out + roff[src], rbytes[src]);
        s.end_round();
    }
    return WEFT_SUCCESS;
}

int coll_alltoall_linear(coll_sched &s, const coll_args &a) {
    const char *in = a.in;
    char *out = a.out;
    const size_t *sbytes = a.send_blocks, *soff = a.send_offsets, *rbytes = a.blocks, *roff = a.offsets;
    int n = s.c->size, me = s.c->rank;
    // Start with the nearest peers so that no rank is everyone's first target.
    for (int k = 1; k < n; ++k) {
        int dst = (me + k) % n, src = (me - k + n) % n;
        s.recv(src, out + roff[src], rbytes[src]);
        s.send(dst, in + soff[dst], sbytes[dst]);
    }
    s.copy(in + soff[me], out + roff[me], rbytes[me]);
    s.end_round();
    return WEFT_SUCCESS;
}

int coll_reduce_scatter_block_pairwise(coll_sched &s, const coll_args &a) {
    const char *in = a.in;
    char *out = a.out;
    size_t count = a.count, elem = a.elem;
    int n = s.c->size, me = s.c->rank;
    size_t block = count * elem;
    char *all = s.alloc(block * static_cast<size_t>(n));
    if (all == nullptr) return no_mem(block * static_cast<size_t>(n));
    auto from = [&](int r) -> const char * {
        return r == me ? in + static_cast<size_t>(me) * block : all + static_cast<size_t>(r) * block;
    };
    for (int k = 1; k < n; ++k) {
        int dst = (me + k) % n, src = (me - k + n) % n;
        s.recv(src, all + static_cast<size_t>(src) * block, block);
        s.send(dst, in + static_cast<size_t>(dst) * block, block);
    }
    // x0 op (x1 op (... op x(n-1))): rank order for any op.
    s.copy(from(n - 1), out, block);
    for (int r = n - 2; r >= 0; --r) s.reduce(from(r), out, count);
    s.end_round();
    return WEFT_SUCCESS;
}

int coll_reduce_scatter_block_ring(coll_sched &s, const coll_args &a) {
    const char *in = a.in;
    char *out = a.out;
    size_t count = a.count, elem = a.elem;
    int n = s.c->size, me = s.c->rank;
    size_t block = count * elem;
    char *acc = s.alloc(block * static_cast<size_t>(n) + block);
    if (acc == nullptr) return no_mem(block * static_cast<size_t>(n + 1));
    char *tmp = acc + block * static_cast<size_t>(n);
    auto at = [&](int b) { return acc + static_cast<size_t>(b) * block; };
    s.copy(in, acc, block * static_cast<size_t>(n));
    s.end_round();
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int k = 0; k < n - 1; ++k) {
        int sb = (me - k - 1 + n) % n, rb = (me - k - 2 + 2 * n) % n;
        s.send(right, at(sb), block);
        s.recv(left, tmp, block);
        s.reduce(tmp, at(rb), count);
        s.end_round();
    }
    s.copy(at(me), out, block);
    s.end_round();
    return WEFT_SUCCESS;
}

int coll_scan_recursive_doubling(coll_sched &s, const coll_args &a) {
    const char *in = a.in;
    char *out = a.out;
    size_t count = a.count, elem = a.elem;
    bool exclusive = a.exclusive;
    int n = s.c->size, me = s.c->rank;
    size_t bytes = count * elem;
    char *partial = s.alloc(2 * bytes);
    if (partial == nullptr) return no_mem(2 * bytes);
    char *tmp = partial + bytes;
    s.copy(in, partial, bytes);
    s.end_round();
    bool have_lower = false;  // exscan: out holds something yet
    for (int m = 1; m < n; m <<= 1) {
        int dst = me ^ m;
        if (dst >= n) continue;
        s.send(dst, partial, bytes);
        s.recv(dst, tmp, bytes);
        if (dst < me) {
            // tmp covers ranks below everything partial and out hold.
            if (exclusive && !have_lower)
                s.copy(tmp, out, bytes);
            else
                s.reduce(tmp, out, count);
            have_lower = true;
            s.reduce(tmp, partial, count);
        } else {
            combine(s, tmp, partial, count, elem, false);
        }
        s.end_round();
    }
    return WEFT_SUCCESS;
}

int coll_scan_linear(coll_sched &s, const coll_args &a) {
    const char *in = a.in;
    char *out = a.out;
    size_t count = a.count, elem = a.elem;
    bool exclusive = a.exclusive;
    int n = s.c->size, me = s.c->rank;
    size_t bytes = count * elem;
    const char *forward = exclusive ? in : out;  // the inclusive prefix to pass on
    if (me > 0) {
        char *tmp = s.alloc(exclusive ? 2 * bytes : bytes);
        if (tmp == nullptr) return no_mem(2 * bytes);
        s.recv(me - 1, tmp, bytes);
        if (exclusive) {
            char *incl = tmp + bytes;
            s.copy(in, incl, bytes);  // before out is written: in may be out (in place)
            s.reduce(tmp, incl, count);
            s.copy(tmp, out, bytes);
            forward = incl;
        } else {
            s.reduce(tmp, out, count);
        }
        s.end_round();
    }
    if (me + 1 < n) {
        s.send(me + 1, forward, bytes);
        s.end_round();
    }
    return WEFT_SUCCESS;
}

}  // namespace weft
