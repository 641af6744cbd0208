#include "collectives.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "check.hpp"
#include "context.hpp"
#include "options.hpp"
#include "p2p.hpp"
#include "random.hpp"
#include "report.hpp"

namespace soak {

namespace {

enum coll_op {
    C_BARRIER,
    C_BCAST,
    C_REDUCE,
    C_ALLREDUCE,
    C_GATHER,
    C_GATHERV,
    C_SCATTER,
    C_SCATTERV,
    C_ALLGATHER,
    C_ALLGATHERV,
    C_ALLTOALL,
    C_ALLTOALLV,
    C_RSB,
    C_SCAN,
    C_EXSCAN,
    C_NOPS
};
const char *coll_name[] = {"barrier",
                           "bcast",
                           "reduce",
                           "allreduce",
                           "gather",
                           "gatherv",
                           "scatter",
                           "scatterv",
                           "allgather",
                           "allgatherv",
                           "alltoall",
                           "alltoallv",
                           "reduce_scatter_block",
                           "scan",
                           "exscan"};

enum red_type { RT_U64, RT_I32, RT_DBL, RT_U8 };

template <typename V>
V red_value(uint64_t key, size_t i) {
    uint64_t w = word_at(key, i);
    if constexpr (std::is_same_v<V, uint64_t>) return w;
    if constexpr (std::is_same_v<V, uint8_t>) return uint8_t(w);
    if constexpr (std::is_same_v<V, int32_t>) return int32_t(w % 2001) - 1000;
    if constexpr (std::is_same_v<V, double>) return double(int64_t(w % 2001) - 1000);
}
template <typename V>
V red_apply(weft_op op, V a, V b) {
    if (op == WEFT_SUM) return V(a + b);
    if (op == WEFT_MAX) return std::max(a, b);
    if (op == WEFT_MIN) return std::min(a, b);
    if constexpr (std::is_integral_v<V>) {
        if (op == WEFT_PROD) return V(a * b);
        if (op == WEFT_BXOR) return V(a ^ b);
        if (op == WEFT_BOR) return V(a | b);
        if (op == WEFT_BAND) return V(a & b);
    }
    fail("internal: unexpected reduction op 0x%x", op);
}

struct coll_round {
    thread_ctx *T;
    weft_comm comm;
    uint64_t dom;
    uint32_t r;
    bool poll;  // nonblocking only, completed by polling (conventional communicator)
    std::string cname;
    int n = 0, me = 0;

    std::string what;
    uint64_t bkey(int from, int to) const { return hkey(opt.seed, D_CDATA, dom, T->t, r, from, to); }

    void wait(weft_request &q) {
        if (poll) {
            int flag = 0;
            while (!flag) {
                WEFT_OK(weft_test(&q, &flag, WEFT_STATUS_IGNORE));
                if (!flag) progress(*T);
            }
        } else {
            WEFT_OK(weft_wait(&q, WEFT_STATUS_IGNORE));
        }
        if (q != WEFT_REQUEST_NULL) fail("%s: request not null after completion", what.c_str());
    }

    template <typename V>
    void check_red(const V *got, size_t count, const std::vector<int> &contrib, weft_op op, size_t elem_from,
                   const char *which) {
        for (size_t i = 0; i < count; ++i) {
            V e{};
            bool first = true;
            for (int p : contrib) {
                V x = red_value<V>(bkey(p, -1), elem_from + i);
                e = first ? x : red_apply(op, e, x);
                first = false;
            }
            if (std::memcmp(&e, &got[i], sizeof(V)) != 0) {
                uint64_t ge = 0, ee = 0;
                std::memcpy(&ge, &got[i], sizeof(V));
                std::memcpy(&ee, &e, sizeof(V));
                fail("%s: %s element %zu of %zu: got 0x%" PRIx64 ", expected 0x%" PRIx64, what.c_str(), which, i, count,
                     ge, ee);
            }
        }
    }

    template <typename V>
    void reduction(coll_op op_kind, rng &g, weft_datatype type, weft_op op, bool nb, exchange *ex) {
        const size_t es = sizeof(V);
        const int root = int(g.below(uint64_t(n)));
        const bool rsb = op_kind == C_RSB;
        size_t count = pick_size(g, rsb ? opt.max_size / size_t(n) : opt.max_size) / es;
        const bool ip = g.pct(25);
        const bool in_place = (op_kind == C_ALLREDUCE || (op_kind == C_REDUCE && me == root)) && ip;
        what += ", " + std::to_string(count) + " elements" + (rsb ? " a block" : "") + (in_place ? ", in place" : "");
        if (op_kind == C_REDUCE) what += ", root " + std::to_string(root);
        T->st.v[S_COLL_BYTES] += count * es * (rsb ? size_t(n) : 1);
        const size_t scount = rsb ? count * size_t(n) : count;
        std::vector<V> send(scount), recv(scount + GUARD / es + 1);
        for (size_t i = 0; i < scount; ++i) send[i] = red_value<V>(bkey(me, -1), i);
        fill(bkey(me, -2), recv.data(), recv.size() * es);
        if (in_place && scount) std::memcpy(recv.data(), send.data(), scount * es);
        const void *sb = in_place ? WEFT_IN_PLACE : send.data();
        void *rb = recv.data();
        weft_request q = WEFT_REQUEST_NULL;
        int rc = 0;
        switch (op_kind) {
            case C_REDUCE:
                rc = nb ? weft_ireduce(sb, rb, count, type, op, root, comm, &q)
                        : weft_reduce(sb, rb, count, type, op, root, comm);
                break;
            case C_ALLREDUCE:
                rc = nb ? weft_iallreduce(sb, rb, count, type, op, comm, &q)
                        : weft_allreduce(sb, rb, count, type, op, comm);
                break;
            case C_RSB:
                rc = nb ? weft_ireduce_scatter_block(sb, rb, count, type, op, comm, &q)
                        : weft_reduce_scatter_block(sb, rb, count, type, op, comm);
                break;
            case C_SCAN:
                rc = nb ? weft_iscan(sb, rb, count, type, op, comm, &q) : weft_scan(sb, rb, count, type, op, comm);
                break;
            case C_EXSCAN:
                rc = nb ? weft_iexscan(sb, rb, count, type, op, comm, &q) : weft_exscan(sb, rb, count, type, op, comm);
                break;
            default:
                break;
        }
        if (rc) fail("%s: the call returned %s", what.c_str(), weft_err(rc).c_str());
        finish(nb, q, ex);
        std::vector<int> all, upto, below;
        for (int p = 0; p < n; ++p) {
            all.push_back(p);
            if (p <= me) upto.push_back(p);
            if (p < me) below.push_back(p);
        }
        switch (op_kind) {
            case C_REDUCE:
                if (me == root) check_red<V>(recv.data(), count, all, op, 0, "result");
                break;
            case C_ALLREDUCE:
                check_red<V>(recv.data(), count, all, op, 0, "result");
                break;
            case C_RSB:
                check_red<V>(recv.data(), count, all, op, size_t(me) * count, "result");
                break;
            case C_SCAN:
                check_red<V>(recv.data(), count, upto, op, 0, "result");
                break;
            case C_EXSCAN:
                if (me > 0) check_red<V>(recv.data(), count, below, op, 0, "result");  // undefined at rank 0
                break;
            default:
                break;
        }
        // A non-root's receive buffer of reduce is not significant: it must stay untouched.
        const size_t from = (op_kind == C_REDUCE && me != root) ? 0 : count * es;
        check_bytes(what + ": bytes past the result changed", bkey(me, -2),
                    reinterpret_cast<uint8_t *>(recv.data()) + from, recv.size() * es - from, from);
    }

    // Completion: alone, or together with a p2p exchange on the same communicator.
    void finish(bool nb, weft_request &q, exchange *ex) {
        if (!nb) return;
        if (ex) {
            ex->add_extra(q);
            q = WEFT_REQUEST_NULL;
            ex->complete();
            ex->verify();
        } else {
            wait(q);
        }
    }

    void run(thread_ctx &T_) {
        T = &T_;
        WEFT_OK(weft_comm_size(comm, &n));
        WEFT_OK(weft_comm_rank(comm, &me));
        rng g(hkey(opt.seed, D_COLL, dom, T->t, r));
        const coll_op op = coll_op(g.below(C_NOPS));
        const bool nb = poll || g.pct(40);
        const bool with_p2p = nb && g.pct(30);
        what = "round " + std::to_string(r) + " " + (nb ? "i" : "") + coll_name[op] + " on " + cname +
               (with_p2p ? " (with a concurrent p2p exchange)" : "");
        doing("round %u collective on %s", r, cname.c_str());
        T->st.v[S_COLLECTIVES]++;
        std::unique_ptr<exchange> ex;
        if (with_p2p) {
            ex = std::make_unique<exchange>(
                make_comm_exchange(*T, comm, D_P2P_INCOLL + dom * 16, r, poll, ("p2p alongside " + what).c_str()));
            // On mc only thread 0's stream (index 0) takes part: peers are thread 0 of each rank.
            if (dom == D_COLL_MC) {
                ex->mux = true;
                ex->me = {g_rank, 0};
                for (auto &p : ex->peers) p.thread = 0;
            }
            ex->post();
        }
        exchange *exp = ex.get();
        if (op == C_BARRIER) {
            weft_request q = WEFT_REQUEST_NULL;
            int rc = nb ? weft_ibarrier(comm, &q) : weft_barrier(comm);
            if (rc) fail("%s: the call returned %s", what.c_str(), weft_err(rc).c_str());
            finish(nb, q, exp);
            return;
        }
        if (op == C_REDUCE || op == C_ALLREDUCE || op == C_RSB || op == C_SCAN || op == C_EXSCAN) {
            red_type rt = red_type(g.below(4));
            static const weft_op int_ops[] = {WEFT_SUM, WEFT_PROD, WEFT_BXOR, WEFT_MAX, WEFT_MIN, WEFT_BOR, WEFT_BAND};
            static const weft_op small_ops[] = {WEFT_SUM, WEFT_MAX, WEFT_MIN};
            static const char *opn[] = {"SUM", "PROD", "BXOR", "MAX", "MIN", "BOR", "BAND"};
            switch (rt) {
                case RT_U64: {
                    unsigned o = unsigned(g.below(7));
                    what += std::string(", UINT64_T ") + opn[o];
                    reduction<uint64_t>(op, g, WEFT_UINT64_T, int_ops[o], nb, exp);
                    break;
                }
                case RT_U8: {
                    unsigned o = unsigned(g.below(7));
                    what += std::string(", UINT8_T ") + opn[o];
                    reduction<uint8_t>(op, g, WEFT_UINT8_T, int_ops[o], nb, exp);
                    break;
                }
                case RT_I32: {
                    unsigned o = unsigned(g.below(3));
                    what += std::string(", INT32_T ") + (o == 0 ? "SUM" : o == 1 ? "MAX" : "MIN");
                    reduction<int32_t>(op, g, WEFT_INT32_T, small_ops[o], nb, exp);
                    break;
                }
                case RT_DBL: {
                    unsigned o = unsigned(g.below(3));
                    what += std::string(", DOUBLE ") + (o == 0 ? "SUM" : o == 1 ? "MAX" : "MIN");
                    reduction<double>(op, g, WEFT_DOUBLE, small_ops[o], nb, exp);
                    break;
                }
            }
            return;
        }
        movement(op, g, nb, exp);
    }

    // Data-movement collectives: bytes of datatype BYTE, UINT32_T or UINT64_T.
    void movement(coll_op op, rng &g, bool nb, exchange *ex) {
        static const weft_datatype types[] = {WEFT_BYTE, WEFT_UINT32_T, WEFT_UINT64_T};
        static const size_t sizes[] = {1, 4, 8};
        static const char *tnames[] = {"BYTE", "UINT32_T", "UINT64_T"};
        const unsigned ti = unsigned(g.below(3));
        const weft_datatype type = types[ti];
        const size_t es = sizes[ti];
        const int root = int(g.below(uint64_t(n)));
        const size_t N = size_t(n);
        const bool per_block = op != C_BCAST;
        const size_t cmax = (per_block ? opt.max_size / N : opt.max_size) / es;
        const size_t count = pick_size(g, cmax * es) / es;
        // v variants: per-rank (or per-pair) counts and displacements with gaps.
        std::vector<size_t> counts(N), displs(N);
        std::vector<std::vector<size_t>> pc(N, std::vector<size_t>(N));  // alltoallv: pc[from][to]
        auto layout = [&](const std::vector<size_t> &c, std::vector<size_t> &d) {
            size_t at = 0;
            for (size_t p = 0; p < N; ++p) {
                at += g.below(4);
                d[p] = at;
                at += c[p];
            }
            return at + g.below(4);
        };
        for (size_t p = 0; p < N; ++p) counts[p] = pick_size(g, cmax * es) / es;
        for (size_t p = 0; p < N; ++p)
            for (size_t q = 0; q < N; ++q) pc[p][q] = pick_size(g, (opt.max_size / N / N / es) * es) / es;
        const bool in_place = (op == C_ALLGATHER || op == C_ALLGATHERV) && g.pct(25);
        char b[200];
        std::snprintf(b, sizeof b, ", %s, count %zu, root %d%s", tnames[ti], count, root, in_place ? ", in place" : "");
        what += b;
        const size_t me_ = size_t(me);
        auto bytes_of = [&](size_t elems) { return elems * es; };
        std::vector<uint8_t> sbuf, rbuf;
        size_t rsize = 0;  // elements of rbuf that the collective may write
        const void *sb = nullptr;
        void *rb = nullptr;
        weft_request q = WEFT_REQUEST_NULL;
        int rc = 0;
        // Expected contents: a list of (offset in rbuf elements, elements, key, key offset).
        struct piece {
            size_t at, elems;
            uint64_t key;
            const char *from;
            int peer;
        };
        std::vector<piece> expect;
        auto alloc_recv = [&](size_t elems) {
            rsize = elems;
            rbuf.resize(bytes_of(elems) + GUARD);
            fill(bkey(me, -2), rbuf.data(), rbuf.size());
            rb = rbuf.data();
        };
        switch (op) {
            case C_BCAST: {
                alloc_recv(count);
                if (me == root) fill(bkey(root, -1), rbuf.data(), bytes_of(count));
                rc = nb ? weft_ibcast(rb, count, type, root, comm, &q) : weft_bcast(rb, count, type, root, comm);
                expect.push_back({0, count, bkey(root, -1), "root", root});
                T->st.v[S_COLL_BYTES] += bytes_of(count);
                break;
            }
            case C_GATHER:
            case C_ALLGATHER: {
                const bool all = op == C_ALLGATHER;
                sbuf.resize(bytes_of(count));
                fill(bkey(me, -1), sbuf.data(), sbuf.size());
                sb = sbuf.data();
                if (all || me == root) {
                    alloc_recv(N * count);
                    for (size_t p = 0; p < N; ++p)
                        expect.push_back({p * count, count, bkey(int(p), -1), "rank", int(p)});
                }
                if (in_place) {
                    if (!sbuf.empty()) std::memcpy(rbuf.data() + bytes_of(me_ * count), sbuf.data(), sbuf.size());
                    sb = WEFT_IN_PLACE;
                }
                if (all)
                    rc = nb ? weft_iallgather(sb, count, type, rb, count, type, comm, &q)
                            : weft_allgather(sb, count, type, rb, count, type, comm);
                else
                    rc = nb ? weft_igather(sb, count, type, rb, count, type, root, comm, &q)
                            : weft_gather(sb, count, type, rb, count, type, root, comm);
                T->st.v[S_COLL_BYTES] += bytes_of(count);
                break;
            }
            case C_GATHERV:
            case C_ALLGATHERV: {
                const bool all = op == C_ALLGATHERV;
                size_t total = layout(counts, displs);
                sbuf.resize(bytes_of(counts[me_]));
                fill(bkey(me, -1), sbuf.data(), sbuf.size());
                sb = sbuf.data();
                if (all || me == root) {
                    alloc_recv(total);
                    for (size_t p = 0; p < N; ++p)
                        expect.push_back({displs[p], counts[p], bkey(int(p), -1), "rank", int(p)});
                }
                if (in_place) {
                    if (!sbuf.empty()) std::memcpy(rbuf.data() + bytes_of(displs[me_]), sbuf.data(), sbuf.size());
                    sb = WEFT_IN_PLACE;
                }
                if (all)
                    rc = nb ? weft_iallgatherv(sb, counts[me_], type, rb, counts.data(), displs.data(), type, comm, &q)
                            : weft_allgatherv(sb, counts[me_], type, rb, counts.data(), displs.data(), type, comm);
                else
                    rc = nb ? weft_igatherv(sb, counts[me_], type, rb, counts.data(), displs.data(), type, root, comm,
                                            &q)
                            : weft_gatherv(sb, counts[me_], type, rb, counts.data(), displs.data(), type, root, comm);
                what += ", counts";
                for (size_t c : counts) what += " " + std::to_string(c);
                T->st.v[S_COLL_BYTES] += bytes_of(counts[me_]);
                break;
            }
            case C_SCATTER: {
                if (me == root) {
                    sbuf.resize(bytes_of(N * count));
                    for (size_t p = 0; p < N; ++p)
                        fill(bkey(root, int(p)), sbuf.data() + bytes_of(p * count), bytes_of(count));
                    sb = sbuf.data();
                }
                alloc_recv(count);
                expect.push_back({0, count, bkey(root, me), "root", root});
                rc = nb ? weft_iscatter(sb, count, type, rb, count, type, root, comm, &q)
                        : weft_scatter(sb, count, type, rb, count, type, root, comm);
                T->st.v[S_COLL_BYTES] += bytes_of(count);
                break;
            }
            case C_SCATTERV: {
                size_t total = layout(counts, displs);
                if (me == root) {
                    sbuf.resize(bytes_of(total));
                    for (size_t p = 0; p < N; ++p)
                        fill(bkey(root, int(p)), sbuf.data() + bytes_of(displs[p]), bytes_of(counts[p]));
                    sb = sbuf.data();
                }
                alloc_recv(counts[me_]);
                expect.push_back({0, counts[me_], bkey(root, me), "root", root});
                rc = nb ? weft_iscatterv(sb, counts.data(), displs.data(), type, rb, counts[me_], type, root, comm, &q)
                        : weft_scatterv(sb, counts.data(), displs.data(), type, rb, counts[me_], type, root, comm);
                what += ", counts";
                for (size_t c : counts) what += " " + std::to_string(c);
                T->st.v[S_COLL_BYTES] += bytes_of(counts[me_]);
                break;
            }
            case C_ALLTOALL: {
                const size_t c = count / N;
                sbuf.resize(bytes_of(N * c));
                for (size_t p = 0; p < N; ++p) fill(bkey(me, int(p)), sbuf.data() + bytes_of(p * c), bytes_of(c));
                sb = sbuf.data();
                alloc_recv(N * c);
                for (size_t p = 0; p < N; ++p) expect.push_back({p * c, c, bkey(int(p), me), "rank", int(p)});
                rc = nb ? weft_ialltoall(sb, c, type, rb, c, type, comm, &q)
                        : weft_alltoall(sb, c, type, rb, c, type, comm);
                what += ", block " + std::to_string(c);
                T->st.v[S_COLL_BYTES] += bytes_of(N * c);
                break;
            }
            case C_ALLTOALLV: {
                std::vector<size_t> sc(N), sd(N), rc_(N), rd(N);
                for (size_t p = 0; p < N; ++p) sc[p] = pc[me_][p], rc_[p] = pc[p][me_];
                size_t stotal = layout(sc, sd), rtotal = layout(rc_, rd);
                sbuf.resize(bytes_of(stotal));
                for (size_t p = 0; p < N; ++p) fill(bkey(me, int(p)), sbuf.data() + bytes_of(sd[p]), bytes_of(sc[p]));
                sb = sbuf.data();
                alloc_recv(rtotal);
                for (size_t p = 0; p < N; ++p) expect.push_back({rd[p], rc_[p], bkey(int(p), me), "rank", int(p)});
                rc = nb ? weft_ialltoallv(sb, sc.data(), sd.data(), type, rb, rc_.data(), rd.data(), type, comm, &q)
                        : weft_alltoallv(sb, sc.data(), sd.data(), type, rb, rc_.data(), rd.data(), type, comm);
                for (size_t p = 0; p < N; ++p) T->st.v[S_COLL_BYTES] += bytes_of(sc[p]);
                break;
            }
            default:
                fail("internal: collective %d", op);
        }
        if (rc) fail("%s: the call returned %s", what.c_str(), weft_err(rc).c_str());
        finish(nb, q, ex);
        if (rb == nullptr) return;
        // Every expected piece, then every byte nobody should have written (gaps and guard).
        std::vector<uint8_t> covered(rsize, 0);
        for (auto &p : expect) {
            check_bytes(what + ": block from " + p.from + " " + std::to_string(p.peer) + " at element " +
                            std::to_string(p.at) + " (" + std::to_string(p.elems) + " elements)",
                        p.key, rbuf.data() + bytes_of(p.at), bytes_of(p.elems));
            std::fill(covered.begin() + long(p.at), covered.begin() + long(p.at + p.elems), 1);
        }
        for (size_t i = 0; i <= rsize; ++i) {
            size_t j = i;
            while (j < rsize && !covered[j]) ++j;
            if (j == rsize) {  // the tail: uncovered elements and the guard
                check_bytes(what + ": bytes past the last block changed", bkey(me, -2), rbuf.data() + bytes_of(i),
                            rbuf.size() - bytes_of(i), bytes_of(i));
                break;
            }
            if (j > i)
                check_bytes(what + ": gap at elements [" + std::to_string(i) + ", " + std::to_string(j) + ") changed",
                            bkey(me, -2), rbuf.data() + bytes_of(i), bytes_of(j - i), bytes_of(i));
            i = j;
            while (i < rsize && covered[i]) ++i;
            --i;
        }
    }
};

}  // namespace

void round_coll(thread_ctx &T, uint32_t r, round_kind k) {
    coll_round c;
    c.T = &T;
    c.r = r;
    switch (k) {
        case R_COLL:
            c.comm = T.sc, c.dom = D_COLL_SC, c.poll = false, c.cname = "sc_" + std::to_string(T.t);
            break;
        case R_CCOLL:
            c.comm = T.cc, c.dom = D_COLL_CC, c.poll = !opt.progress_threads, c.cname = "cc_" + std::to_string(T.t);
            break;
        default:
            c.comm = g_mc, c.dom = D_COLL_MC, c.poll = false, c.cname = "mc (stream 0)";
            break;
    }
    c.run(T);
}

}  // namespace soak
