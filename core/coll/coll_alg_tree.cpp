// Tree and dissemination algorithms: barrier, bcast, reduce, gather, scatter.
#include <algorithm>

#include "coll/coll_algorithms.hpp"
#include "base/error.hpp"

namespace weft {
namespace {

int to_rel(int r, int root, int n) { return (r - root + n) % n; }
int to_abs(int vr, int root, int n) { return (vr + root) % n; }
int lowbit(int v) { return v & -v; }
// Blocks in the binomial subtree rooted at relative rank vr.
int subtree(int vr, int n) { return vr == 0 ? n : std::min(lowbit(vr), n - vr); }

int no_mem(size_t bytes) { return fail(WEFT_ERR_NO_MEM, "collective: cannot allocate %zu bytes of scratch", bytes); }

char g_zero_byte;

}  // namespace

int coll_barrier_dissemination(coll_sched &s, const coll_args &) {
    int n = s.c->size, me = s.c->rank;
    for (int k = 1; k < n; k <<= 1) {
        s.send((me + k) % n, &g_zero_byte, 0);
        s.recv((me - k + n) % n, &g_zero_byte, 0);
        s.end_round();
    }
    return WEFT_SUCCESS;
}

int coll_bcast_binomial(coll_sched &s, const coll_args &a) {
    char *buf = a.out;
    size_t bytes = a.bytes;
    int root = a.root;
    int n = s.c->size, vr = to_rel(s.c->rank, root, n);
    int top = 1;
    while (top < n) top <<= 1;
    if (vr != 0) {
        s.recv(to_abs(vr - lowbit(vr), root, n), buf, bytes);
        s.end_round();
    }
    for (int m = (vr == 0 ? top : lowbit(vr)) >> 1; m > 0; m >>= 1)
        if (vr + m < n) s.send(to_abs(vr + m, root, n), buf, bytes);
    s.end_round();
    return WEFT_SUCCESS;
}

// van de Geijn: a binomial scatter of n chunks, then a ring allgather of the chunks.
int coll_bcast_scatter_allgather(coll_sched &s, const coll_args &a) {
    char *buf = a.out;
    size_t bytes = a.bytes;
    int root = a.root;
    int n = s.c->size, vr = to_rel(s.c->rank, root, n);
    size_t chunk = (bytes + static_cast<size_t>(n) - 1) / static_cast<size_t>(n);
    auto off = [&](int i) { return std::min(static_cast<size_t>(i) * chunk, bytes); };  // i in relative ranks
    int top = 1;
    while (top < n) top <<= 1;
    if (vr != 0) {
        int sub = subtree(vr, n);
        s.recv(to_abs(vr - lowbit(vr), root, n), buf + off(vr), off(vr + sub) - off(vr));
        s.end_round();
    }
    for (int m = (vr == 0 ? top : lowbit(vr)) >> 1; m > 0; m >>= 1) {
        int child = vr + m;
        if (child < n) s.send(to_abs(child, root, n), buf + off(child), off(child + subtree(child, n)) - off(child));
    }
    s.end_round();
    int right = (s.c->rank + 1) % n, left = (s.c->rank - 1 + n) % n;
    for (int k = 0; k < n - 1; ++k) {
        int sc = (vr - k + n) % n, rc = (vr - k - 1 + n) % n;
        s.send(right, buf + off(sc), off(sc + 1) - off(sc));
        s.recv(left, buf + off(rc), off(rc + 1) - off(rc));
        s.end_round();
    }
    return WEFT_SUCCESS;
}

int coll_reduce_binomial(coll_sched &s, const coll_args &a) {
    const char *in = a.in;
    char *out = a.out;
    size_t count = a.count, elem = a.elem;
    int root = a.root;
    int n = s.c->size, me = s.c->rank;
    size_t bytes = count * elem;
    bool commute = s.op.commutative;
    // A non-commutative op keeps rank order only on the tree rooted at 0; rank 0 forwards.
    int tree_root = commute ? root : 0;
    int vr = to_rel(me, tree_root, n);
    bool into_out = me == tree_root && me == root;
    char *acc = into_out ? out : s.alloc(bytes);
    char *tmp = s.alloc(bytes);
    if ((!into_out && acc == nullptr) || tmp == nullptr) return no_mem(bytes);
    s.copy(in, acc, bytes);
    s.end_round();
    for (int m = 1; m < n; m <<= 1) {
        if (vr & m) {
            s.send(to_abs(vr & ~m, tree_root, n), acc, bytes);
            s.end_round();
            break;
        }
        int child = vr | m;
        if (child >= n) continue;
        s.recv(to_abs(child, tree_root, n), tmp, bytes);
        // The child holds higher ranks (in tree order): acc = acc op tmp.
        if (commute) {
            s.reduce(tmp, acc, count);
        } else {
            s.reduce(acc, tmp, count);
            s.copy(tmp, acc, bytes);
        }
        s.end_round();
    }
    if (tree_root != root) {
        if (me == tree_root) s.send(root, acc, bytes);
        if (me == root) s.recv(tree_root, out, bytes);
        s.end_round();
    }
    return WEFT_SUCCESS;
}

int coll_reduce_linear(coll_sched &s, const coll_args &a) {
    const char *in = a.in;
    char *out = a.out;
    size_t count = a.count, elem = a.elem;
    int root = a.root;
    int n = s.c->size, me = s.c->rank;
    size_t bytes = count * elem;
    if (me != root) {
        s.send(root, in, bytes);
        s.end_round();
        return WEFT_SUCCESS;
    }
    char *all = s.alloc(bytes * static_cast<size_t>(n));
    if (all == nullptr) return no_mem(bytes * static_cast<size_t>(n));
    for (int r = 0; r < n; ++r)
        if (r != me) s.recv(r, all + static_cast<size_t>(r) * bytes, bytes);
    s.copy(in, all + static_cast<size_t>(me) * bytes, bytes);
    // x0 op (x1 op (... op x(n-1))): rank order for any op.
    s.copy(all + static_cast<size_t>(n - 1) * bytes, out, bytes);
    for (int r = n - 2; r >= 0; --r) s.reduce(all + static_cast<size_t>(r) * bytes, out, count);
    s.end_round();
    return WEFT_SUCCESS;
}

// Each interior node collects its subtree's blocks (relative order) and sends them up.
int coll_gather_binomial(coll_sched &s, const coll_args &a) {
    const char *own = a.in;
    char *out = a.out;
    size_t block = a.bytes;
    int root = a.root;
    int n = s.c->size, me = s.c->rank, vr = to_rel(me, root, n);
    int sub = subtree(vr, n);
    bool direct = vr == 0 && root == 0;  // relative order is absolute order
    char *tmp = direct ? out : s.alloc(block * static_cast<size_t>(sub));
    if (!direct && tmp == nullptr) return no_mem(block * static_cast<size_t>(sub));
    s.copy(own, tmp, block);
    s.end_round();
    for (int m = 1; m < n && !(vr & m); m <<= 1) {
        int child = vr | m;
        if (child < n) s.recv(to_abs(child, root, n), tmp + static_cast<size_t>(m) * block, block * static_cast<size_t>(subtree(child, n)));
    }
    s.end_round();
    if (vr != 0) {
        s.send(to_abs(vr - lowbit(vr), root, n), tmp, block * static_cast<size_t>(sub));
        s.end_round();
    } else if (!direct) {
        // Relative block j is rank (j + root) % n.
        size_t head = static_cast<size_t>(n - root) * block;
        s.copy(tmp, out + static_cast<size_t>(root) * block, head);
        s.copy(tmp + head, out, static_cast<size_t>(root) * block);
        s.end_round();
    }
    return WEFT_SUCCESS;
}

int coll_gather_linear(coll_sched &s, const coll_args &a) {
    const char *own = a.in;
    char *out = a.out;
    size_t own_bytes = a.bytes;
    const size_t *bytes = a.blocks, *offsets = a.offsets;
    int root = a.root;
    int n = s.c->size, me = s.c->rank;
    if (me != root) {
        s.send(root, own, own_bytes);
        s.end_round();
        return WEFT_SUCCESS;
    }
    for (int r = 0; r < n; ++r)
        if (r != me) s.recv(r, out + offsets[r], bytes[r]);
    s.copy(own, out + offsets[me], own_bytes);
    s.end_round();
    return WEFT_SUCCESS;
}

int coll_scatter_binomial(coll_sched &s, const coll_args &a) {
    const char *in = a.in;
    char *own = a.out;
    size_t block = a.bytes;
    int root = a.root;
    int n = s.c->size, me = s.c->rank, vr = to_rel(me, root, n);
    int sub = subtree(vr, n);
    int top = 1;
    while (top < n) top <<= 1;
    const char *src;
    if (vr == 0) {
        char *tmp = nullptr;
        if (root == 0) {
            src = in;
        } else {
            tmp = s.alloc(block * static_cast<size_t>(n));
            if (tmp == nullptr) return no_mem(block * static_cast<size_t>(n));
            size_t head = static_cast<size_t>(n - root) * block;
            s.copy(in + static_cast<size_t>(root) * block, tmp, head);
            s.copy(in, tmp + head, static_cast<size_t>(root) * block);
            s.end_round();
            src = tmp;
        }
    } else {
        char *tmp = s.alloc(block * static_cast<size_t>(sub));
        if (tmp == nullptr) return no_mem(block * static_cast<size_t>(sub));
        s.recv(to_abs(vr - lowbit(vr), root, n), tmp, block * static_cast<size_t>(sub));
        s.end_round();
        src = tmp;
    }
    for (int m = (vr == 0 ? top : lowbit(vr)) >> 1; m > 0; m >>= 1) {
        int child = vr + m;
        if (child < n) s.send(to_abs(child, root, n), src + static_cast<size_t>(m) * block, block * static_cast<size_t>(subtree(child, n)));
    }
    if (own != nullptr) s.copy(src, own, block);
    s.end_round();
    return WEFT_SUCCESS;
}

int coll_scatter_linear(coll_sched &s, const coll_args &a) {
    const char *in = a.in;
    char *own = a.out;
    size_t own_bytes = a.bytes;
    const size_t *bytes = a.blocks, *offsets = a.offsets;
    int root = a.root;
    int n = s.c->size, me = s.c->rank;
    if (me != root) {
        s.recv(root, own, own_bytes);
        s.end_round();
        return WEFT_SUCCESS;
    }
    for (int r = 0; r < n; ++r)
        if (r != me) s.send(r, in + offsets[r], bytes[r]);
    if (own != nullptr) s.copy(in + offsets[me], own, own_bytes);
    s.end_round();
    return WEFT_SUCCESS;
}

}  // namespace weft
