// Collective entry points: argument checks, buffer images (derived datatypes packed in and
// unpacked out), algorithm choice, and launch as a blocking run or a nonblocking request.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <new>
#include <vector>

#include "coll/coll_algorithms.hpp"
#include "coll/coll_call.hpp"
#include "coll/coll_check.hpp"
#include "coll/coll_more.hpp"
#include "coll/coll_registry.hpp"
#include "coll/coll_shm.hpp"
#include "base/error.hpp"
#include "base/stats.hpp"
#include "transport/runtime.hpp"
#include "comm/errhandler.hpp"
#include "comm/stream.hpp"

namespace weft {
namespace coll_impl {

// Records what this process passed, for WEFT_COLL_CHECK.
void expect(call &x, coll_kind k, int root, coll_check_rule rule, uint64_t a = 0, uint64_t b = 0) {
    x.check.kind = static_cast<uint32_t>(k);
    x.check.root = root;
    x.check.rule = static_cast<uint32_t>(rule);
    x.check.a = a;
    x.check.b = b;
}

int begin(call &x, weft_comm handle) {
    if (int rc = runtime_check(x.fn)) return rc;
    if (x.nonblocking && x.req == nullptr) return fail(WEFT_ERR_ARG, "%s: request must not be NULL", x.fn);
    comm *c = x.c = comm_get(handle);
    if (c == nullptr) return fail(WEFT_ERR_COMM, "%s: invalid communicator handle 0x%x", x.fn, handle);
    if (c->local.empty())
        return fail(WEFT_ERR_STREAM, "%s: this process attached no stream to the multiplex communicator", x.fn);
    for (int r = 0; r < c->size; ++r)
        if (c->remote_offset[static_cast<size_t>(r) + 1] == c->remote_offset[static_cast<size_t>(r)])
            return fail(WEFT_ERR_STREAM, "%s: rank %d attached no stream to the multiplex communicator", x.fn, r);
    // Blocking collectives on one communicator never overlap: they reuse one schedule and its
    // scratch, so a small one allocates nothing after the first call.
    if (!x.nonblocking && c->blocking_sched) {
        x.s = c->blocking_sched.get();
        x.s->reset();
    } else {
        x.owned.reset(new (std::nothrow) coll_sched);
        if (!x.owned) return fail(WEFT_ERR_NO_MEM, "%s: out of memory", x.fn);
        x.s = x.owned.get();
        if (!x.nonblocking) c->blocking_sched.reset(x.owned.release());
    }
    x.s->c = c;
    x.s->endpoint = c->local[0];
    x.s->ctx = static_cast<uint16_t>(c->context_id + 1);
    return WEFT_SUCCESS;
}

int check_root(const call &x, int root) {
    if (root < 0 || root >= x.c->size)
        return fail(WEFT_ERR_RANK, "%s: root %d is out of range for a communicator of size %d", x.fn, root, x.c->size);
    return WEFT_SUCCESS;
}

int check_type(const call &x, weft_datatype h, const datatype *&t) {
    t = datatype_get(h);
    if (t == nullptr) return fail(WEFT_ERR_TYPE, "%s: invalid datatype handle 0x%x", x.fn, h);
    if (!t->committed)
        return fail(WEFT_ERR_TYPE, "%s: datatype 0x%x is not committed (call weft_type_commit)", x.fn, h);
    return WEFT_SUCCESS;
}

// Built-in and contiguous types are used in place, elements extent bytes apart; other derived
// types travel packed, size bytes each.
bool direct(const datatype &t) { return t.builtin || t.contiguous; }
size_t elem_bytes(const datatype &t) { return direct(t) ? static_cast<size_t>(t.extent) : t.size; }

int check_bytes(const call &x, size_t count, const datatype &t, size_t &bytes) {
    if (__builtin_mul_overflow(count, elem_bytes(t), &bytes))
        return fail(WEFT_ERR_COUNT, "%s: count %zu overflows", x.fn, count);
    return WEFT_SUCCESS;
}

int check_buf(const call &x, const void *buf, size_t bytes, const char *what) {
    if (buf == nullptr && bytes != 0) return fail(WEFT_ERR_BUFFER, "%s: %s is NULL with a non-zero count", x.fn, what);
    return WEFT_SUCCESS;
}

void hold(call &x, weft_datatype h, const datatype &t) {
    if (!t.builtin) x.s->held_types.push_back(datatype_get_shared(h));
}

// The byte image of elements [displ, displ + count) of buf, for reading.
int image_in(call &x, const void *buf, size_t displ, size_t count, const datatype &t, const char *&img) {
    if (direct(t)) {
        img = static_cast<const char *>(buf) + displ * static_cast<size_t>(t.extent);
        return WEFT_SUCCESS;
    }
    char *p = x.s->alloc(count * t.size);
    if (p == nullptr) return fail(WEFT_ERR_NO_MEM, "%s: cannot pack %zu bytes", x.fn, count * t.size);
    const char *src = static_cast<const char *>(buf) + static_cast<ptrdiff_t>(displ) * t.extent;
    if (x.persistent)
        x.inputs.push_back({src, p, count, &t});  // packed at each start
    else
        datatype_pack(t, src, count, p);
    img = p;
    return WEFT_SUCCESS;
}

// Copies bytes of the caller's input now, or for a persistent call at each start.
void copy_input(call &x, const void *src, void *dst, size_t bytes) {
    if (x.persistent)
        x.inputs.push_back({src, dst, bytes, nullptr});
    else
        std::memcpy(dst, src, bytes);
}

// A persistent call packs its send type at each start: hold it as long as the schedule.
void hold_input(call &x, weft_datatype h, const datatype &t) {
    if (x.persistent) hold(x, h, t);
}

// The byte image of an output buffer described by per-rank (count, displ) blocks; derived
// types get a packed image (element e of the buffer at e * size) unpacked at the end.
int image_out(call &x, void *buf, const size_t *counts, const size_t *displs, int blocks, const datatype &t,
              char *&img) {
    if (direct(t)) {
        img = static_cast<char *>(buf);
        return WEFT_SUCCESS;
    }
    size_t extent_elems = 0;
    for (int i = 0; i < blocks; ++i) extent_elems = std::max(extent_elems, displs[i] + counts[i]);
    img = x.s->alloc(extent_elems * t.size);
    if (img == nullptr) return fail(WEFT_ERR_NO_MEM, "%s: out of memory", x.fn);
    for (int i = 0; i < blocks; ++i)
        x.unpacks.push_back({coll_step::kind::unpack, 0, img + displs[i] * t.size,
                             static_cast<char *>(buf) + static_cast<ptrdiff_t>(displs[i]) * t.extent, counts[i], &t});
    return WEFT_SUCCESS;
}

int conflict(const call &x) {
    return fail(WEFT_ERR_STREAM, "%s: another thread is using the same stream; a stream is a serial context", x.fn);
}

int launch(call &x) {
    coll_sched &s = *x.s;
    for (const coll_step &u : x.unpacks) s.unpack(u.src, u.dst, u.n, u.type);
    s.end_round();
    comm &c = *x.c;
    // Blocking collectives only: a check inside a nonblocking call would block it.
    if (__builtin_expect(g_coll_check, 0) && !x.nonblocking)
        if (int rc = coll_check(c, x.fn, x.check)) return rc;
    stream_use use(c.local_streams[0]);
    if (use.conflict()) return conflict(x);
    if (x.persistent) return coll_persistent_launch(x);  // tags are taken at each start
    s.tag = coll_next_tag(c);
    if (!x.nonblocking) {
        if (x.through_shm) {
            ++c.coll_shm_state.seg->seq;
            g_stats.shm_collectives.fetch_add(1,
                                              std::memory_order_relaxed);  // threads may run collectives on other comms
        }
        return coll_sched_run(s);
    }
    vci &v = *s.endpoint;
    v.enter();
    request *r = v.requests.alloc(x.req);
    if (r != nullptr) {
        r->op = request::kind::coll;
        r->endpoint = &v;
        r->sched = x.owned.release();
        r->sched->user_request = r;
        r->comm_pending = &c.pending[0];
        ++*r->comm_pending;
        coll_sched_start(*r->sched);
    }
    v.leave();
    if (r == nullptr)
        return fail(WEFT_ERR_NO_MEM,
                    "%s: more than %u requests pending on one endpoint (spread them over more: WEFT_NUM_VCIS, streams)",
                    x.fn, request_pool::max_slots - 1);
    return WEFT_SUCCESS;
}

// The collectives that may run through the communicator's shared-memory segment.
bool shm_kind(coll_kind k) {
    switch (k) {
        case coll_kind::barrier:
        case coll_kind::bcast:
        case coll_kind::reduce:
        case coll_kind::allreduce:
        case coll_kind::allgather:
        case coll_kind::alltoall: return true;
        default: return false;
    }
}

// Builds the algorithm the registry picks (forced by WEFT_COLL_<NAME>, else by shape); fails on
// an unknown name in the variable.  The first blocking call of a shm_kind on a communicator
// sets up its segment (every member makes that call, so they decide alike).
int build(call &x, coll_kind k, coll_shape shape, const coll_args &a) {
    int rc;
    if (!x.nonblocking && shm_kind(k)) {
        coll_shm *seg;
        if ((rc = coll_shm_get(*x.c, x.fn, seg))) return rc;
        shape.shm = seg != nullptr;
    }
    const coll_algorithm *alg = coll_select(k, shape, x.fn, rc);
    if (alg == nullptr) return rc;
    x.through_shm = alg->through_shm;
    return alg->build(*x.s, a);
}

coll_shape shape_of(const call &x, size_t bytes, size_t count = 0, bool dense = true) {
    coll_shape s;
    s.bytes = bytes;
    s.count = count;
    s.procs = x.c->size;
    s.commutative = x.s->op.commutative;
    s.dense = dense;
    return s;
}

int bind(call &x, weft_op op, weft_datatype h, const datatype &t) { return op_bind(x.fn, op, h, t, x.s->op); }

// ---- builders shared by the blocking and nonblocking entry points ----

int do_barrier(call &x, weft_comm comm) {
    if (int rc = begin(x, comm)) return rc;
    if (int rc = build(x, coll_kind::barrier, shape_of(x, 0), {})) return rc;
    expect(x, coll_kind::barrier, -1, coll_check_rule::none);
    return launch(x);
}

int do_bcast(call &x, void *buf, size_t count, weft_datatype type, int root, weft_comm comm) {
    if (int rc = begin(x, comm)) return rc;
    const datatype *t;
    size_t bytes;
    if (int rc = check_root(x, root)) return rc;
    if (int rc = check_type(x, type, t)) return rc;
    if (int rc = check_bytes(x, count, *t, bytes)) return rc;
    if (int rc = check_buf(x, buf, bytes, "buffer")) return rc;
    hold(x, type, *t);
    char *img;
    size_t zero = 0;
    if (x.c->rank == root) {
        const char *in;
        if (int rc = image_in(x, buf, 0, count, *t, in)) return rc;
        img = const_cast<char *>(in);
    } else if (int rc = image_out(x, buf, &count, &zero, 1, *t, img)) {
        return rc;
    }
    if (int rc = build(x, coll_kind::bcast, shape_of(x, bytes), {.out = img, .bytes = bytes, .root = root})) return rc;
    expect(x, coll_kind::bcast, root, coll_check_rule::equal, bytes);
    return launch(x);
}

// Reductions take direct types only (op_bind refuses others), so buffers are used as they are;
// with basic_ok (reduce, allreduce, scan, exscan), also a derived type of one basic type under a predefined
// op (see basic_images).
int basic_images(call &x, weft_datatype type, const datatype &t, const void *&in, void *&out, size_t &count,
                 bool out_here, size_t &bytes, size_t &elem);

int reduce_args(call &x, const void *&in, void *&out, size_t &count, weft_datatype type, weft_op op, bool out_here,
                size_t &bytes, size_t &elem, bool basic_ok = false) {
    const datatype *t;
    if (int rc = check_type(x, type, t)) return rc;
    if (basic_ok && !t->builtin && op >= WEFT_MAX && op <= WEFT_MAXLOC) {
        if (int rc = op_bind_basic(x.fn, op, type, *t, x.s->op)) return rc;
        return basic_images(x, type, *t, in, out, count, out_here, bytes, elem);
    }
    if (int rc = bind(x, op, type, *t)) return rc;
    elem = static_cast<size_t>(t->extent);
    if (int rc = check_bytes(x, count, *t, bytes)) return rc;
    if (in == WEFT_IN_PLACE) {
        if (!out_here) return fail(WEFT_ERR_BUFFER, "%s: WEFT_IN_PLACE is only valid where the result is kept", x.fn);
        in = out;
    }
    if (int rc = check_buf(x, in, bytes, "sendbuf")) return rc;
    if (out_here)
        if (int rc = check_buf(x, out, bytes, "recvbuf")) return rc;
    return WEFT_SUCCESS;
}

// A predefined op on a derived type of one basic type (op_bind_basic bound its kernel): the
// algorithm runs on the basic elements, count * (size / basic size) of them, packed from in
// (in place for a contiguous type) into out's image, which is unpacked into out at the end,
// so out's holes keep what they held.
int basic_images(call &x, weft_datatype type, const datatype &t, const void *&in, void *&out, size_t &count,
                 bool out_here, size_t &bytes, size_t &elem) {
    if (__builtin_mul_overflow(count, t.size, &bytes))
        return fail(WEFT_ERR_COUNT, "%s: count %zu overflows", x.fn, count);
    if (in == WEFT_IN_PLACE) {
        if (!out_here) return fail(WEFT_ERR_BUFFER, "%s: WEFT_IN_PLACE is only valid where the result is kept", x.fn);
        in = out;
    }
    if (int rc = check_buf(x, in, bytes, "sendbuf")) return rc;
    if (out_here)
        if (int rc = check_buf(x, out, bytes, "recvbuf")) return rc;
    hold(x, type, t);
    const char *img_in;
    if (int rc = image_in(x, in, 0, count, t, img_in)) return rc;
    if (out_here) {
        char *img_out;
        size_t zero = 0;
        if (int rc = image_out(x, out, &count, &zero, 1, t, img_out)) return rc;
        out = img_out;
    }
    in = img_in;
    elem = x.s->op.elem_size;
    count = elem ? bytes / elem : 0;
    bytes = count * elem;
    return WEFT_SUCCESS;
}

int do_reduce(call &x, const void *in, void *out, size_t count, weft_datatype type, weft_op op, int root,
              weft_comm comm) {
    if (int rc = begin(x, comm)) return rc;
    if (int rc = check_root(x, root)) return rc;
    size_t bytes, elem;
    bool at_root = x.c->rank == root;
    if (!at_root && in == WEFT_IN_PLACE)
        return fail(WEFT_ERR_BUFFER, "%s: WEFT_IN_PLACE is only valid at the root", x.fn);
    if (int rc = reduce_args(x, in, out, count, type, op, at_root, bytes, elem, true)) return rc;
    if (int rc = build(x, coll_kind::reduce, shape_of(x, bytes, count),
                       {.in = static_cast<const char *>(in),
                        .out = static_cast<char *>(out),
                        .count = count,
                        .elem = elem,
                        .root = root}))
        return rc;
    expect(x, coll_kind::reduce, root, coll_check_rule::equal, bytes);
    return launch(x);
}

int do_allreduce(call &x, const void *in, void *out, size_t count, weft_datatype type, weft_op op, weft_comm comm) {
    if (int rc = begin(x, comm)) return rc;
    size_t bytes, elem;
    if (int rc = reduce_args(x, in, out, count, type, op, true, bytes, elem, true)) return rc;
    auto *o = static_cast<char *>(out);
    x.s->copy(in, o, bytes);
    x.s->end_round();
    if (int rc = build(x, coll_kind::allreduce, shape_of(x, bytes, count), {.out = o, .count = count, .elem = elem}))
        return rc;
    expect(x, coll_kind::allreduce, -1, coll_check_rule::equal, bytes);
    return launch(x);
}

// The per-rank arrays a gather, scatter, allgather or alltoall builds from its arguments live
// for the call only: on the stack up to 2 KiB (ten arrays of 25 ranks), from the heap beyond.
// Always from the heap, they were ten allocations per alltoall: 3,486 instructions a call
// against 2,235 now (1 process, 8 bytes).
using rank_sizes = std::pmr::vector<size_t>;
struct call_scratch {
    alignas(std::max_align_t) std::byte stack[2048];
    std::pmr::monotonic_buffer_resource arena{stack, sizeof stack};
    rank_sizes sizes(size_t n = 0) { return rank_sizes(n, &arena); }
};

// Per-rank byte sizes and offsets of a (counts, displs) layout; uniform when counts is null.
void layout(int n, size_t count, const size_t *counts, const size_t *displs, size_t elem, rank_sizes &bytes,
            rank_sizes &offs) {
    bytes.resize(static_cast<size_t>(n));
    offs.resize(static_cast<size_t>(n));
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
        bytes[i] = (counts ? counts[i] : count) * elem;
        offs[i] = (counts ? displs[i] : i * count) * elem;
    }
}

int check_v(const call &x, const size_t *counts, const size_t *displs, const char *what) {
    if (counts == nullptr || displs == nullptr)
        return fail(WEFT_ERR_ARG, "%s: %s counts and displacements must not be NULL", x.fn, what);
    return WEFT_SUCCESS;
}

// One side's per-rank (counts, displs): the caller's for a v-collective (checked), else
// `count` elements per rank packed in rank order, kept in store.
int block_layout(const call &x, bool v, size_t count, const size_t *&counts, const size_t *&displs, rank_sizes &store,
                 const char *what) {
    if (v) return check_v(x, counts, displs, what);
    size_t n = static_cast<size_t>(x.c->size);
    store.resize(2 * n);
    for (size_t i = 0; i < n; ++i) {
        store[i] = count;
        store[n + i] = i * count;
    }
    counts = store.data();
    displs = store.data() + n;
    return WEFT_SUCCESS;
}

// Gather and gatherv (counts null: uniform recvcount).
int do_gather(call &x, bool v, const void *sbuf, size_t scount, weft_datatype stype, void *rbuf, size_t rcount,
              const size_t *rcounts, const size_t *displs, weft_datatype rtype, int root, weft_comm comm) {
    if (int rc = begin(x, comm)) return rc;
    if (int rc = check_root(x, root)) return rc;
    int n = x.c->size, me = x.c->rank;
    bool at_root = me == root;
    bool in_place = sbuf == WEFT_IN_PLACE;
    if (in_place && !at_root) return fail(WEFT_ERR_BUFFER, "%s: WEFT_IN_PLACE is only valid at the root", x.fn);
    const datatype *st = nullptr, *rt = nullptr;
    size_t sbytes = 0;
    call_scratch scratch;
    rank_sizes uniform = scratch.sizes();
    if (at_root) {
        if (int rc = check_type(x, rtype, rt)) return rc;
        if (int rc = block_layout(x, v, rcount, rcounts, displs, uniform, "receive")) return rc;
        size_t total = 0, rb;
        for (int i = 0; i < n; ++i) {
            if (int rc = check_bytes(x, rcounts[i], *rt, rb)) return rc;
            total |= rb;
        }
        if (int rc = check_buf(x, rbuf, total, "recvbuf")) return rc;
        hold(x, rtype, *rt);
    }
    if (!in_place) {
        if (int rc = check_type(x, stype, st)) return rc;
        if (int rc = check_bytes(x, scount, *st, sbytes)) return rc;
        if (int rc = check_buf(x, sbuf, sbytes, "sendbuf")) return rc;
        hold(x, stype, *st);
    }
    const char *own = nullptr;
    char *out = nullptr;
    rank_sizes bytes = scratch.sizes(), offs = scratch.sizes();
    if (at_root) {
        if (int rc = image_out(x, rbuf, rcounts, displs, n, *rt, out)) return rc;
        layout(n, 0, rcounts, displs, elem_bytes(*rt), bytes, offs);
        if (in_place) {
            if (!direct(*rt)) {  // own block: pack it into the image
                const char *p;
                if (int rc = image_in(x, rbuf, displs[me], rcounts[me], *rt, p)) return rc;
                x.s->copy(p, out + offs[static_cast<size_t>(me)], bytes[static_cast<size_t>(me)]);
                x.s->end_round();
            }
            own = out + offs[static_cast<size_t>(me)];
            sbytes = bytes[static_cast<size_t>(me)];
        }
    }
    if (!in_place)
        if (int rc = image_in(x, sbuf, 0, scount, *st, own)) return rc;
    // The binomial tree forwards whole subtrees: uniform, densely packed blocks only.
    bool dense = !at_root || (offs.size() == static_cast<size_t>(n) && [&] {
        for (int i = 0; i < n; ++i)
            if (offs[static_cast<size_t>(i)] != static_cast<size_t>(i) * sbytes ||
                bytes[static_cast<size_t>(i)] != sbytes)
                return false;
        return true;
    }());
    if (int rc = build(
            x, v ? coll_kind::gatherv : coll_kind::gather, shape_of(x, sbytes, 0, dense),
            {.in = own, .out = out, .bytes = sbytes, .root = root, .blocks = bytes.data(), .offsets = offs.data()}))
        return rc;
    if (v)
        expect(x, coll_kind::gatherv, root, coll_check_rule::none);
    else
        expect(x, coll_kind::gather, root, coll_check_rule::rooted_block, sbytes,
               at_root ? bytes[static_cast<size_t>(me)] : 0);
    return launch(x);
}

int do_scatter(call &x, bool v, const void *sbuf, size_t scount, const size_t *scounts, const size_t *displs,
               weft_datatype stype, void *rbuf, size_t rcount, weft_datatype rtype, int root, weft_comm comm) {
    if (int rc = begin(x, comm)) return rc;
    if (int rc = check_root(x, root)) return rc;
    int n = x.c->size, me = x.c->rank;
    bool at_root = me == root;
    bool in_place = rbuf == WEFT_IN_PLACE;
    if (in_place && !at_root) return fail(WEFT_ERR_BUFFER, "%s: WEFT_IN_PLACE is only valid at the root", x.fn);
    const datatype *st = nullptr, *rt = nullptr;
    size_t rbytes = 0;
    call_scratch scratch;
    rank_sizes uniform = scratch.sizes(), bytes = scratch.sizes(), offs = scratch.sizes();
    const char *in = nullptr;
    if (at_root) {
        if (int rc = check_type(x, stype, st)) return rc;
        if (int rc = block_layout(x, v, scount, scounts, displs, uniform, "send")) return rc;
        size_t total = 0, sb, extent_elems = 0;
        for (int i = 0; i < n; ++i) {
            if (int rc = check_bytes(x, scounts[i], *st, sb)) return rc;
            total |= sb;
            extent_elems = std::max(extent_elems, displs[i] + scounts[i]);
        }
        if (int rc = check_buf(x, sbuf, total, "sendbuf")) return rc;
        hold_input(x, stype, *st);
        // Packed image: element e of sendbuf at e * size.
        if (int rc = image_in(x, sbuf, 0, extent_elems, *st, in)) return rc;
        layout(n, 0, scounts, displs, elem_bytes(*st), bytes, offs);
    }
    char *own = nullptr;
    if (!in_place) {
        if (int rc = check_type(x, rtype, rt)) return rc;
        if (int rc = check_bytes(x, rcount, *rt, rbytes)) return rc;
        if (int rc = check_buf(x, rbuf, rbytes, "recvbuf")) return rc;
        hold(x, rtype, *rt);
        size_t zero = 0;
        if (int rc = image_out(x, rbuf, &rcount, &zero, 1, *rt, own)) return rc;
    } else {
        rbytes = bytes[static_cast<size_t>(me)];
    }
    bool dense = !at_root || [&] {
        for (int i = 0; i < n; ++i)
            if (offs[static_cast<size_t>(i)] != static_cast<size_t>(i) * rbytes ||
                bytes[static_cast<size_t>(i)] != rbytes)
                return false;
        return true;
    }();
    if (int rc = build(
            x, v ? coll_kind::scatterv : coll_kind::scatter, shape_of(x, rbytes, 0, dense),
            {.in = in, .out = own, .bytes = rbytes, .root = root, .blocks = bytes.data(), .offsets = offs.data()}))
        return rc;
    if (v)
        expect(x, coll_kind::scatterv, root, coll_check_rule::none);
    else
        expect(x, coll_kind::scatter, root, coll_check_rule::rooted_block, rbytes,
               at_root ? bytes[static_cast<size_t>(me)] : 0);
    return launch(x);
}

int do_allgather(call &x, bool v, const void *sbuf, size_t scount, weft_datatype stype, void *rbuf, size_t rcount,
                 const size_t *rcounts, const size_t *displs, weft_datatype rtype, weft_comm comm) {
    if (int rc = begin(x, comm)) return rc;
    int n = x.c->size, me = x.c->rank;
    bool in_place = sbuf == WEFT_IN_PLACE;
    const datatype *rt;
    if (int rc = check_type(x, rtype, rt)) return rc;
    call_scratch scratch;
    rank_sizes uniform = scratch.sizes(), bytes = scratch.sizes(), offs = scratch.sizes();
    if (int rc = block_layout(x, v, rcount, rcounts, displs, uniform, "receive")) return rc;
    size_t total = 0, rb;
    for (int i = 0; i < n; ++i) {
        if (int rc = check_bytes(x, rcounts[i], *rt, rb)) return rc;
        total |= rb;
    }
    if (int rc = check_buf(x, rbuf, total, "recvbuf")) return rc;
    hold(x, rtype, *rt);
    char *out;
    if (int rc = image_out(x, rbuf, rcounts, displs, n, *rt, out)) return rc;
    layout(n, 0, rcounts, displs, elem_bytes(*rt), bytes, offs);
    size_t mine = bytes[static_cast<size_t>(me)];
    const char *own;
    if (in_place) {
        if (int rc = image_in(x, rbuf, displs[me], rcounts[me], *rt, own)) return rc;
    } else {
        const datatype *st;
        size_t sbytes;
        if (int rc = check_type(x, stype, st)) return rc;
        if (int rc = check_bytes(x, scount, *st, sbytes)) return rc;
        if (int rc = check_buf(x, sbuf, sbytes, "sendbuf")) return rc;
        if (sbytes != mine)
            return fail(WEFT_ERR_COUNT, "%s: this process sends %zu bytes but its block of recvbuf holds %zu", x.fn,
                        sbytes, mine);
        hold_input(x, stype, *st);
        if (int rc = image_in(x, sbuf, 0, scount, *st, own)) return rc;
    }
    x.s->copy(own, out + offs[static_cast<size_t>(me)], mine);
    x.s->end_round();
    bool dense = true;
    for (int i = 0; i < n; ++i)
        if (offs[static_cast<size_t>(i)] != static_cast<size_t>(i) * mine || bytes[static_cast<size_t>(i)] != mine)
            dense = false;
    if (int rc = build(x, v ? coll_kind::allgatherv : coll_kind::allgather, shape_of(x, mine, 0, dense),
                       {.out = out, .bytes = mine, .blocks = bytes.data(), .offsets = offs.data()}))
        return rc;
    if (v)
        expect(x, coll_kind::allgatherv, -1, coll_check_rule::none);
    else
        expect(x, coll_kind::allgather, -1, coll_check_rule::equal, mine);
    return launch(x);
}

int do_alltoall(call &x, bool v, const void *sbuf, size_t scount, const size_t *scounts, const size_t *sdispls,
                weft_datatype stype, void *rbuf, size_t rcount, const size_t *rcounts, const size_t *rdispls,
                weft_datatype rtype, weft_comm comm) {
    if (int rc = begin(x, comm)) return rc;
    int n = x.c->size;
    bool in_place = sbuf == WEFT_IN_PLACE;
    const datatype *rt, *st = nullptr;
    if (int rc = check_type(x, rtype, rt)) return rc;
    call_scratch scratch;
    rank_sizes ucounts = scratch.sizes(static_cast<size_t>(n)), udispls = scratch.sizes(static_cast<size_t>(n));
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
        ucounts[i] = rcount;
        udispls[i] = i * rcount;
    }
    if (v) {
        if (int rc = check_v(x, rcounts, rdispls, "receive")) return rc;
        if (!in_place)
            if (int rc = check_v(x, scounts, sdispls, "send")) return rc;
    } else {
        rcounts = ucounts.data();
        rdispls = udispls.data();
        if (!in_place) {
            for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
                ucounts[i] = scount;
                udispls[i] = i * scount;
            }
        }
    }
    rank_sizes rcv_counts(rcounts, rcounts + n, &scratch.arena), rcv_displs(rdispls, rdispls + n, &scratch.arena);
    if (!v) {
        for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
            rcv_counts[i] = rcount;
            rcv_displs[i] = i * rcount;
        }
    }
    size_t total = 0, b;
    for (int i = 0; i < n; ++i) {
        if (int rc = check_bytes(x, rcv_counts[static_cast<size_t>(i)], *rt, b)) return rc;
        total |= b;
    }
    if (int rc = check_buf(x, rbuf, total, "recvbuf")) return rc;
    hold(x, rtype, *rt);
    rank_sizes rbytes = scratch.sizes(), roffs = scratch.sizes(), sbytes = scratch.sizes(), soffs = scratch.sizes();
    layout(n, 0, rcv_counts.data(), rcv_displs.data(), elem_bytes(*rt), rbytes, roffs);
    const char *in;
    if (in_place) {
        // The input is the receive buffer itself: take a copy to send from.
        size_t extent_elems = 0;
        for (int i = 0; i < n; ++i)
            extent_elems =
                std::max(extent_elems, rcv_displs[static_cast<size_t>(i)] + rcv_counts[static_cast<size_t>(i)]);
        size_t image = extent_elems * elem_bytes(*rt);
        char *copy = x.s->alloc(image);
        if (copy == nullptr) return fail(WEFT_ERR_NO_MEM, "%s: out of memory", x.fn);
        const char *src;
        if (int rc = image_in(x, rbuf, 0, extent_elems, *rt, src)) return rc;
        copy_input(x, src, copy, image);
        in = copy;
        sbytes = rbytes;
        soffs = roffs;
    } else {
        rank_sizes snd_counts = scratch.sizes(static_cast<size_t>(n)),
                   snd_displs = scratch.sizes(static_cast<size_t>(n));
        for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
            snd_counts[i] = v ? scounts[i] : scount;
            snd_displs[i] = v ? sdispls[i] : i * scount;
        }
        if (int rc = check_type(x, stype, st)) return rc;
        size_t stotal = 0, extent_elems = 0;
        for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
            if (int rc = check_bytes(x, snd_counts[i], *st, b)) return rc;
            stotal |= b;
            extent_elems = std::max(extent_elems, snd_displs[i] + snd_counts[i]);
        }
        if (int rc = check_buf(x, sbuf, stotal, "sendbuf")) return rc;
        hold_input(x, stype, *st);
        if (int rc = image_in(x, sbuf, 0, extent_elems, *st, in)) return rc;
        layout(n, 0, snd_counts.data(), snd_displs.data(), elem_bytes(*st), sbytes, soffs);
    }
    char *out;
    if (int rc = image_out(x, rbuf, rcv_counts.data(), rcv_displs.data(), n, *rt, out)) return rc;
    size_t block = rbytes[static_cast<size_t>(x.c->rank)];
    if (int rc = build(x, v ? coll_kind::alltoallv : coll_kind::alltoall, shape_of(x, block),
                       {.in = in,
                        .out = out,
                        .blocks = rbytes.data(),
                        .offsets = roffs.data(),
                        .send_blocks = sbytes.data(),
                        .send_offsets = soffs.data()}))
        return rc;
    if (v)
        expect(x, coll_kind::alltoallv, -1, coll_check_rule::none);
    else
        expect(x, coll_kind::alltoall, -1, coll_check_rule::equal_ab, sbytes.empty() ? 0 : sbytes[0], block);
    return launch(x);
}

int do_reduce_scatter_block(call &x, const void *in, void *out, size_t count, weft_datatype type, weft_op op,
                            weft_comm comm) {
    if (int rc = begin(x, comm)) return rc;
    int n = x.c->size;
    size_t bytes, elem;
    bool in_place = in == WEFT_IN_PLACE;
    const void *input = in_place ? out : in;
    if (int rc = reduce_args(x, input, out, count, type, op, true, bytes, elem)) return rc;
    if (int rc = check_buf(x, input, bytes * static_cast<size_t>(n), "sendbuf")) return rc;
    const char *src = static_cast<const char *>(input);
    if (in_place && n > 1) {
        char *copy = x.s->alloc(bytes * static_cast<size_t>(n));
        if (copy == nullptr) return fail(WEFT_ERR_NO_MEM, "%s: out of memory", x.fn);
        copy_input(x, src, copy, bytes * static_cast<size_t>(n));
        src = copy;
    }
    if (int rc = build(x, coll_kind::reduce_scatter_block, shape_of(x, bytes, count),
                       {.in = src, .out = static_cast<char *>(out), .count = count, .elem = elem}))
        return rc;
    expect(x, coll_kind::reduce_scatter_block, -1, coll_check_rule::equal, bytes);
    return launch(x);
}

int do_scan(call &x, const void *in, void *out, size_t count, weft_datatype type, weft_op op, weft_comm comm,
            bool exclusive) {
    if (int rc = begin(x, comm)) return rc;
    size_t bytes, elem;
    if (int rc = reduce_args(x, in, out, count, type, op, true, bytes, elem, true)) return rc;
    auto *o = static_cast<char *>(out);
    const char *i = static_cast<const char *>(in);
    if (!exclusive) {
        x.s->copy(i, o, bytes);
        x.s->end_round();
    }
    if (int rc = build(x, exclusive ? coll_kind::exscan : coll_kind::scan, shape_of(x, bytes, count),
                       {.in = i, .out = o, .count = count, .elem = elem, .exclusive = exclusive}))
        return rc;
    expect(x, exclusive ? coll_kind::exscan : coll_kind::scan, -1, coll_check_rule::equal, bytes);
    return launch(x);
}

}  // namespace coll_impl
}  // namespace weft

using namespace weft;
using namespace weft::coll_impl;

#define WEFT_BLOCKING(fn) \
    call x { fn, false, nullptr }
#define WEFT_NONBLOCKING(fn) \
    call x { fn, true, request }

extern "C" int weft_barrier(weft_comm comm) {
    WEFT_BLOCKING("weft_barrier");
    return comm_error_return(comm, do_barrier(x, comm), x.fn);
}
extern "C" int weft_ibarrier(weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_ibarrier");
    return comm_error_return(comm, do_barrier(x, comm), x.fn);
}

extern "C" int weft_bcast(void *buffer, size_t count, weft_datatype datatype, int root, weft_comm comm) {
    WEFT_BLOCKING("weft_bcast");
    return comm_error_return(comm, do_bcast(x, buffer, count, datatype, root, comm), x.fn);
}
extern "C" int weft_ibcast(void *buffer, size_t count, weft_datatype datatype, int root, weft_comm comm,
                           weft_request *request) {
    WEFT_NONBLOCKING("weft_ibcast");
    return comm_error_return(comm, do_bcast(x, buffer, count, datatype, root, comm), x.fn);
}

extern "C" int weft_reduce(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                           int root, weft_comm comm) {
    WEFT_BLOCKING("weft_reduce");
    return comm_error_return(comm, do_reduce(x, sendbuf, recvbuf, count, datatype, op, root, comm), x.fn);
}
extern "C" int weft_ireduce(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                            int root, weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_ireduce");
    return comm_error_return(comm, do_reduce(x, sendbuf, recvbuf, count, datatype, op, root, comm), x.fn);
}

extern "C" int weft_allreduce(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                              weft_comm comm) {
    WEFT_BLOCKING("weft_allreduce");
    return comm_error_return(comm, do_allreduce(x, sendbuf, recvbuf, count, datatype, op, comm), x.fn);
}
extern "C" int weft_iallreduce(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                               weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_iallreduce");
    return comm_error_return(comm, do_allreduce(x, sendbuf, recvbuf, count, datatype, op, comm), x.fn);
}

extern "C" int weft_gather(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                           size_t recvcount, weft_datatype recvtype, int root, weft_comm comm) {
    WEFT_BLOCKING("weft_gather");
    return comm_error_return(
        comm,
        do_gather(x, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, root, comm),
        x.fn);
}
extern "C" int weft_igather(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                            size_t recvcount, weft_datatype recvtype, int root, weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_igather");
    return comm_error_return(
        comm,
        do_gather(x, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, root, comm),
        x.fn);
}
extern "C" int weft_gatherv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                            const size_t recvcounts[], const size_t displs[], weft_datatype recvtype, int root,
                            weft_comm comm) {
    WEFT_BLOCKING("weft_gatherv");
    return comm_error_return(
        comm, do_gather(x, true, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, root, comm),
        x.fn);
}
extern "C" int weft_igatherv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                             const size_t recvcounts[], const size_t displs[], weft_datatype recvtype, int root,
                             weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_igatherv");
    return comm_error_return(
        comm, do_gather(x, true, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, root, comm),
        x.fn);
}

extern "C" int weft_scatter(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                            size_t recvcount, weft_datatype recvtype, int root, weft_comm comm) {
    WEFT_BLOCKING("weft_scatter");
    return comm_error_return(
        comm,
        do_scatter(x, false, sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype, root, comm),
        x.fn);
}
extern "C" int weft_iscatter(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                             size_t recvcount, weft_datatype recvtype, int root, weft_comm comm,
                             weft_request *request) {
    WEFT_NONBLOCKING("weft_iscatter");
    return comm_error_return(
        comm,
        do_scatter(x, false, sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype, root, comm),
        x.fn);
}
extern "C" int weft_scatterv(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                             weft_datatype sendtype, void *recvbuf, size_t recvcount, weft_datatype recvtype, int root,
                             weft_comm comm) {
    WEFT_BLOCKING("weft_scatterv");
    return comm_error_return(
        comm, do_scatter(x, true, sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm),
        x.fn);
}
extern "C" int weft_iscatterv(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                              weft_datatype sendtype, void *recvbuf, size_t recvcount, weft_datatype recvtype, int root,
                              weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_iscatterv");
    return comm_error_return(
        comm, do_scatter(x, true, sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm),
        x.fn);
}

extern "C" int weft_allgather(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                              size_t recvcount, weft_datatype recvtype, weft_comm comm) {
    WEFT_BLOCKING("weft_allgather");
    return comm_error_return(
        comm,
        do_allgather(x, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, comm),
        x.fn);
}
extern "C" int weft_iallgather(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                               size_t recvcount, weft_datatype recvtype, weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_iallgather");
    return comm_error_return(
        comm,
        do_allgather(x, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, comm),
        x.fn);
}
extern "C" int weft_allgatherv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                               const size_t recvcounts[], const size_t displs[], weft_datatype recvtype,
                               weft_comm comm) {
    WEFT_BLOCKING("weft_allgatherv");
    return comm_error_return(
        comm, do_allgather(x, true, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm),
        x.fn);
}
extern "C" int weft_iallgatherv(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                const size_t recvcounts[], const size_t displs[], weft_datatype recvtype,
                                weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_iallgatherv");
    return comm_error_return(
        comm, do_allgather(x, true, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm),
        x.fn);
}

extern "C" int weft_alltoall(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                             size_t recvcount, weft_datatype recvtype, weft_comm comm) {
    WEFT_BLOCKING("weft_alltoall");
    return comm_error_return(comm,
                             do_alltoall(x, false, sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount,
                                         nullptr, nullptr, recvtype, comm),
                             x.fn);
}
extern "C" int weft_ialltoall(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                              size_t recvcount, weft_datatype recvtype, weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_ialltoall");
    return comm_error_return(comm,
                             do_alltoall(x, false, sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount,
                                         nullptr, nullptr, recvtype, comm),
                             x.fn);
}
extern "C" int weft_alltoallv(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                              weft_datatype sendtype, void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                              weft_datatype recvtype, weft_comm comm) {
    WEFT_BLOCKING("weft_alltoallv");
    return comm_error_return(comm,
                             do_alltoall(x, true, sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts,
                                         rdispls, recvtype, comm),
                             x.fn);
}
extern "C" int weft_ialltoallv(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                               weft_datatype sendtype, void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                               weft_datatype recvtype, weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_ialltoallv");
    return comm_error_return(comm,
                             do_alltoall(x, true, sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts,
                                         rdispls, recvtype, comm),
                             x.fn);
}

extern "C" int weft_reduce_scatter_block(const void *sendbuf, void *recvbuf, size_t recvcount, weft_datatype datatype,
                                         weft_op op, weft_comm comm) {
    WEFT_BLOCKING("weft_reduce_scatter_block");
    return comm_error_return(comm, do_reduce_scatter_block(x, sendbuf, recvbuf, recvcount, datatype, op, comm), x.fn);
}
extern "C" int weft_ireduce_scatter_block(const void *sendbuf, void *recvbuf, size_t recvcount, weft_datatype datatype,
                                          weft_op op, weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_ireduce_scatter_block");
    return comm_error_return(comm, do_reduce_scatter_block(x, sendbuf, recvbuf, recvcount, datatype, op, comm), x.fn);
}

extern "C" int weft_scan(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                         weft_comm comm) {
    WEFT_BLOCKING("weft_scan");
    return comm_error_return(comm, do_scan(x, sendbuf, recvbuf, count, datatype, op, comm, false), x.fn);
}
extern "C" int weft_iscan(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                          weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_iscan");
    return comm_error_return(comm, do_scan(x, sendbuf, recvbuf, count, datatype, op, comm, false), x.fn);
}
extern "C" int weft_exscan(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                           weft_comm comm) {
    WEFT_BLOCKING("weft_exscan");
    return comm_error_return(comm, do_scan(x, sendbuf, recvbuf, count, datatype, op, comm, true), x.fn);
}
extern "C" int weft_iexscan(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                            weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_iexscan");
    return comm_error_return(comm, do_scan(x, sendbuf, recvbuf, count, datatype, op, comm, true), x.fn);
}

// ---- reduce_scatter and alltoallw (weft.h): their schedules are built by
// coll_reduce_scatter_build and coll_alltoallw_build (coll_more.hpp); here the frame every
// collective shares ----

namespace weft {
namespace coll_impl {

int do_reduce_scatter(call &x, const void *in, void *out, const size_t *counts, weft_datatype type, weft_op op,
                      weft_comm comm) {
    if (int rc = begin(x, comm)) return rc;
    size_t bytes = 0;
    if (int rc = coll_reduce_scatter_build(*x.s, x.fn, in, out, counts, type, op, bytes)) return rc;
    expect(x, coll_kind::reduce_scatter, -1, coll_check_rule::equal, bytes);
    return launch(x);
}

int do_alltoallw(call &x, const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                 const weft_datatype *stypes, void *rbuf, const size_t *rcounts, const ptrdiff_t *rdispls,
                 const weft_datatype *rtypes, weft_comm comm) {
    if (int rc = begin(x, comm)) return rc;
    if (int rc = coll_alltoallw_build(*x.s, x.fn, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes))
        return rc;
    expect(x, coll_kind::alltoallw, -1, coll_check_rule::none);
    return launch(x);
}

}  // namespace coll_impl
}  // namespace weft

extern "C" int weft_reduce_scatter(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                                   weft_datatype datatype, weft_op op, weft_comm comm) {
    WEFT_BLOCKING("weft_reduce_scatter");
    return do_reduce_scatter(x, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
extern "C" int weft_ireduce_scatter(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                                    weft_datatype datatype, weft_op op, weft_comm comm, weft_request *request) {
    WEFT_NONBLOCKING("weft_ireduce_scatter");
    return do_reduce_scatter(x, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

extern "C" int weft_alltoallw(const void *sendbuf, const size_t sendcounts[], const ptrdiff_t sdispls[],
                              const weft_datatype sendtypes[], void *recvbuf, const size_t recvcounts[],
                              const ptrdiff_t rdispls[], const weft_datatype recvtypes[], weft_comm comm) {
    WEFT_BLOCKING("weft_alltoallw");
    return do_alltoallw(x, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
}
extern "C" int weft_ialltoallw(const void *sendbuf, const size_t sendcounts[], const ptrdiff_t sdispls[],
                               const weft_datatype sendtypes[], void *recvbuf, const size_t recvcounts[],
                               const ptrdiff_t rdispls[], const weft_datatype recvtypes[], weft_comm comm,
                               weft_request *request) {
    WEFT_NONBLOCKING("weft_ialltoallw");
    return do_alltoallw(x, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
}
