// Collectives through the communicator's shared-memory segment (coll_shm.hpp): each is one
// round of local steps (copies into and out of slots, reductions, flag stores and waits), so
// the schedule engine runs them like any other and a member's failure aborts them.
#include <cstring>

#include "base/error.hpp"
#include "coll/coll_algorithms.hpp"
#include "coll/coll_shm.hpp"

namespace weft {
namespace {

struct shm_call {
    coll_shm &m;
    uint64_t k;  // this collective's number
    int n, me;
};

// The entry point counts the collective (coll_shm::seq) once it runs.
shm_call next(coll_sched &s) {
    coll_shm &m = *s.c->coll_shm_state.seg;
    return {m, m.seq + 1, s.c->size, s.c->rank};
}

// Before writing slot k: everyone is done reading collective k - 2's slots.
void may_write(coll_sched &s, const shm_call &x) { s.wait_flags(x.m.flag(0), x.n, x.k - 1); }

// This process's slot holds bytes of collective k: the size, then the flag that publishes both.
void publish(coll_sched &s, const shm_call &x, size_t bytes) {
    s.set_flag(x.m.size(x.k, x.me), bytes);
    s.set_flag(x.m.flag(x.me), x.k);
}

// After the wait on their flags: the others wrote the bytes expected from them.
void check_sizes(coll_sched &s, const shm_call &x, size_t bytes) {
    for (int q = 0; q < x.n; ++q)
        if (q != x.me) s.check_size(x.m.size(x.k, q), q, bytes);
}

// out = x_0 op (x_1 op (... op x_{n-1})) from the slots: the same order, so the same bits, on
// every process, and rank order for an op that does not commute.
void reduce_slots(coll_sched &s, const shm_call &x, char *out, size_t count, size_t bytes) {
    check_sizes(s, x, bytes);
    s.copy(x.m.slot(x.k, x.n - 1), out, bytes);
    for (int q = x.n - 2; q >= 0; --q) s.reduce(x.m.slot(x.k, q), out, count);
}

// Everyone's src into its slot; at root (everywhere when root < 0) their reduction into out.
void reduce_through(coll_sched &s, const coll_args &a, const char *src, int root) {
    shm_call x = next(s);
    size_t bytes = a.count * a.elem;
    may_write(s, x);
    s.copy(src, x.m.slot(x.k, x.me), bytes);
    publish(s, x, bytes);
    if (root < 0 || x.me == root) {
        s.wait_flags(x.m.flag(0), x.n, x.k);
        reduce_slots(s, x, a.out, a.count, bytes);
    }
    s.end_round();
}

}  // namespace

int coll_barrier_shm(coll_sched &s, const coll_args &) {
    shm_call x = next(s);
    s.set_flag(x.m.flag(x.me), x.k);
    s.wait_flags(x.m.flag(0), x.n, x.k);
    s.end_round();
    return WEFT_SUCCESS;
}

int coll_bcast_shm(coll_sched &s, const coll_args &a) {
    shm_call x = next(s);
    if (x.me == a.root) {
        may_write(s, x);
        s.copy(a.out, x.m.slot(x.k, x.me), a.bytes);
        publish(s, x, a.bytes);
    } else {
        s.wait_flags(x.m.flag(a.root), 1, x.k);
        s.check_size(x.m.size(x.k, a.root), a.root, a.bytes);
        s.copy(x.m.slot(x.k, a.root), a.out, a.bytes);
        s.set_flag(x.m.flag(x.me), x.k);
    }
    s.end_round();
    return WEFT_SUCCESS;
}

int coll_reduce_shm(coll_sched &s, const coll_args &a) {
    reduce_through(s, a, a.in, a.root);
    return WEFT_SUCCESS;
}

int coll_allreduce_shm(coll_sched &s, const coll_args &a) {
    reduce_through(s, a, a.out, -1);  // the call copied the input into out
    return WEFT_SUCCESS;
}

int coll_allgather_shm(coll_sched &s, const coll_args &a) {
    shm_call x = next(s);
    size_t b = a.bytes;
    may_write(s, x);
    s.copy(a.out + static_cast<size_t>(x.me) * b, x.m.slot(x.k, x.me), b);
    publish(s, x, b);
    s.wait_flags(x.m.flag(0), x.n, x.k);
    check_sizes(s, x, b);
    for (int q = 0; q < x.n; ++q)
        if (q != x.me) s.copy(x.m.slot(x.k, q), a.out + static_cast<size_t>(q) * b, b);
    s.end_round();
    return WEFT_SUCCESS;
}

// Rank r's slot holds its block for q at q * block.
int coll_alltoall_shm(coll_sched &s, const coll_args &a) {
    size_t block = a.blocks[s.c->rank];
    for (int q = 0; q < s.c->size; ++q)
        if (a.send_blocks[q] != block)
            return fail(WEFT_ERR_COUNT, "alltoall: this process sends %zu bytes to rank %d but receives %zu from each",
                        a.send_blocks[q], q, block);
    shm_call x = next(s);
    may_write(s, x);
    for (int q = 0; q < x.n; ++q)
        if (q != x.me) s.copy(a.in + a.send_offsets[q], x.m.slot(x.k, x.me) + static_cast<size_t>(q) * block, block);
    publish(s, x, block);
    s.copy(a.in + a.send_offsets[x.me], a.out + a.offsets[x.me], block);
    s.wait_flags(x.m.flag(0), x.n, x.k);
    check_sizes(s, x, block);
    for (int q = 0; q < x.n; ++q)
        if (q != x.me) s.copy(x.m.slot(x.k, q) + static_cast<size_t>(x.me) * block, a.out + a.offsets[q], block);
    s.end_round();
    return WEFT_SUCCESS;
}

}  // namespace weft
