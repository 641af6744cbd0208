// Collectives (MPI 4.0 chapter 6): blocking, nonblocking (MPI_I...) and persistent
// (..._init), each with int and large-count (_c) forms.  One template per collective takes the
// mode; v-collectives convert their int (or MPI_Count / MPI_Aint) arrays to Weft's size_t
// arrays in a scratch buffer (stack for small communicators, heap otherwise; Weft copies what
// it keeps, so the buffer may go once the call returns).
#include "handles.hpp"

using namespace weft_mpi;

namespace {
enum mode { blocking, nonblocking, persistent };
struct tail {
    mode m;
    MPI_Info info;
    MPI_Request *req;
};
constexpr tail block{blocking, MPI_INFO_NULL, nullptr};
tail nb(MPI_Request *r) { return {nonblocking, MPI_INFO_NULL, r}; }
tail pers(MPI_Info i, MPI_Request *r) { return {persistent, i, r}; }

int count_fail(weft_comm c, const char *fn) { return fail(c, WEFT_ERR_COUNT, "%s: negative count", fn); }
int check_tail(weft_comm c, const char *fn, const tail &t) {
    if (t.m != blocking && t.req == nullptr) return fail(c, WEFT_ERR_ARG, "%s: request is NULL", fn);
    return MPI_SUCCESS;
}

// Calls the blocking, nonblocking or persistent Weft function with the same leading arguments.
#define WEFT_MPI_COLL_CALL(t, wb, wi, wp, ...)                 \
    merr((t).m == blocking          ? wb(__VA_ARGS__)          \
             : (t).m == nonblocking ? wi(__VA_ARGS__, (t).req) \
                                    : wp(__VA_ARGS__, winfo((t).info), (t).req))

// size_t counts and displacements for the n ranks of comm.
struct arrays {
    explicit arrays(size_t n) : counts(n), displs(n) {}
    scratch<size_t> counts, displs;
};
template <class C, class D>
bool convert(const C *counts, const D *displs, size_t n, arrays &a) {
    if (counts == nullptr || displs == nullptr) return false;
    if (!to_sizes(counts, n, a.counts.get())) return false;
    for (size_t i = 0; i < n; ++i) {
        if (displs[i] < 0) return false;
        a.displs[i] = static_cast<size_t>(displs[i]);
    }
    return true;
}
int comm_shape(weft_comm c, int *size, int *rank) {
    if (int rc = weft_comm_size(c, size)) return rc;
    return weft_comm_rank(c, rank);
}

int barrier(const char *fn, const tail &t, MPI_Comm comm) {
    weft_comm c = wcomm(comm);
    if (int rc = check_tail(c, fn, t)) return rc;
    switch (t.m) {
        case blocking: return merr(weft_barrier(c));
        case nonblocking: return merr(weft_ibarrier(c, t.req));
        default: return merr(weft_barrier_init(c, winfo(t.info), t.req));
    }
}
template <class C>
int bcast(const char *fn, const tail &t, void *buf, C count, MPI_Datatype dt, int root, MPI_Comm comm) {
    weft_comm c = wcomm(comm);
    if (bad_count(count)) return count_fail(c, fn);
    if (int rc = check_tail(c, fn, t)) return rc;
    return WEFT_MPI_COLL_CALL(t, weft_bcast, weft_ibcast, weft_bcast_init, buf, static_cast<size_t>(count), wtype(dt),
                              root, c);
}
template <class C>
int reduce(const char *fn, const tail &t, const void *sb, void *rb, C count, MPI_Datatype dt, MPI_Op op, int root,
           MPI_Comm comm) {
    weft_comm c = wcomm(comm);
    if (bad_count(count)) return count_fail(c, fn);
    if (int rc = check_tail(c, fn, t)) return rc;
    return WEFT_MPI_COLL_CALL(t, weft_reduce, weft_ireduce, weft_reduce_init, sb, rb, static_cast<size_t>(count),
                              wtype(dt), wop(op), root, c);
}
// allreduce, scan, exscan, reduce_scatter_block: (sendbuf, recvbuf, count, type, op, comm).
#define WEFT_MPI_REDUCE_LIKE(name)                                                                         \
    template <class C>                                                                                     \
    int name(const char *fn, const tail &t, const void *sb, void *rb, C count, MPI_Datatype dt, MPI_Op op, \
             MPI_Comm comm) {                                                                              \
        weft_comm c = wcomm(comm);                                                                         \
        if (bad_count(count)) return count_fail(c, fn);                                                    \
        if (int rc = check_tail(c, fn, t)) return rc;                                                      \
        return WEFT_MPI_COLL_CALL(t, weft_##name, weft_i##name, weft_##name##_init, sb, rb,                \
                                  static_cast<size_t>(count), wtype(dt), wop(op), c);                      \
    }
WEFT_MPI_REDUCE_LIKE(allreduce)
WEFT_MPI_REDUCE_LIKE(scan)
WEFT_MPI_REDUCE_LIKE(exscan)
WEFT_MPI_REDUCE_LIKE(reduce_scatter_block)

// gather, scatter (rooted), allgather, alltoall: two counts and types.
#define WEFT_MPI_ROOTED(name)                                                                                        \
    template <class C>                                                                                               \
    int name(const char *fn, const tail &t, const void *sb, C sc, MPI_Datatype st, void *rb, C rc_, MPI_Datatype rt, \
             int root, MPI_Comm comm) {                                                                              \
        weft_comm c = wcomm(comm);                                                                                   \
        if (bad_count(sc) || bad_count(rc_)) return count_fail(c, fn);                                               \
        if (int rc = check_tail(c, fn, t)) return rc;                                                                \
        return WEFT_MPI_COLL_CALL(t, weft_##name, weft_i##name, weft_##name##_init, sb, static_cast<size_t>(sc),     \
                                  wtype(st), rb, static_cast<size_t>(rc_), wtype(rt), root, c);                      \
    }
WEFT_MPI_ROOTED(gather)
WEFT_MPI_ROOTED(scatter)
#define WEFT_MPI_ALL(name)                                                                                           \
    template <class C>                                                                                               \
    int name(const char *fn, const tail &t, const void *sb, C sc, MPI_Datatype st, void *rb, C rc_, MPI_Datatype rt, \
             MPI_Comm comm) {                                                                                        \
        weft_comm c = wcomm(comm);                                                                                   \
        if (bad_count(sc) || bad_count(rc_)) return count_fail(c, fn);                                               \
        if (int rc = check_tail(c, fn, t)) return rc;                                                                \
        return WEFT_MPI_COLL_CALL(t, weft_##name, weft_i##name, weft_##name##_init, sb, static_cast<size_t>(sc),     \
                                  wtype(st), rb, static_cast<size_t>(rc_), wtype(rt), c);                            \
    }
WEFT_MPI_ALL(allgather)
WEFT_MPI_ALL(alltoall)

template <class C, class D>
int gatherv(const char *fn, const tail &t, const void *sb, C sc, MPI_Datatype st, void *rb, const C rcounts[],
            const D displs[], MPI_Datatype rt, int root, MPI_Comm comm) {
    weft_comm c = wcomm(comm);
    if (bad_count(sc)) return count_fail(c, fn);
    if (int rc = check_tail(c, fn, t)) return rc;
    int size, rank;
    if (int rc = comm_shape(c, &size, &rank)) return merr(rc);
    arrays a(rank == root ? static_cast<size_t>(size) : 0);
    const size_t *pc = nullptr, *pd = nullptr;
    if (rank == root) {
        if (!convert(rcounts, displs, static_cast<size_t>(size), a))
            return fail(c, WEFT_ERR_COUNT, "%s: receive counts or displacements NULL or negative", fn);
        pc = a.counts.get(), pd = a.displs.get();
    }
    return WEFT_MPI_COLL_CALL(t, weft_gatherv, weft_igatherv, weft_gatherv_init, sb, static_cast<size_t>(sc), wtype(st),
                              rb, pc, pd, wtype(rt), root, c);
}
template <class C, class D>
int scatterv(const char *fn, const tail &t, const void *sb, const C scounts[], const D displs[], MPI_Datatype st,
             void *rb, C rcount, MPI_Datatype rt, int root, MPI_Comm comm) {
    weft_comm c = wcomm(comm);
    if (bad_count(rcount)) return count_fail(c, fn);
    if (int rc = check_tail(c, fn, t)) return rc;
    int size, rank;
    if (int rc = comm_shape(c, &size, &rank)) return merr(rc);
    arrays a(rank == root ? static_cast<size_t>(size) : 0);
    const size_t *pc = nullptr, *pd = nullptr;
    if (rank == root) {
        if (!convert(scounts, displs, static_cast<size_t>(size), a))
            return fail(c, WEFT_ERR_COUNT, "%s: send counts or displacements NULL or negative", fn);
        pc = a.counts.get(), pd = a.displs.get();
    }
    return WEFT_MPI_COLL_CALL(t, weft_scatterv, weft_iscatterv, weft_scatterv_init, sb, pc, pd, wtype(st), rb,
                              static_cast<size_t>(rcount), wtype(rt), root, c);
}
template <class C, class D>
int allgatherv(const char *fn, const tail &t, const void *sb, C sc, MPI_Datatype st, void *rb, const C rcounts[],
               const D displs[], MPI_Datatype rt, MPI_Comm comm) {
    weft_comm c = wcomm(comm);
    if (bad_count(sc)) return count_fail(c, fn);
    if (int rc = check_tail(c, fn, t)) return rc;
    int size;
    if (int rc = weft_comm_size(c, &size)) return merr(rc);
    arrays a(static_cast<size_t>(size));
    if (!convert(rcounts, displs, static_cast<size_t>(size), a))
        return fail(c, WEFT_ERR_COUNT, "%s: receive counts or displacements NULL or negative", fn);
    return WEFT_MPI_COLL_CALL(t, weft_allgatherv, weft_iallgatherv, weft_allgatherv_init, sb, static_cast<size_t>(sc),
                              wtype(st), rb, a.counts.get(), a.displs.get(), wtype(rt), c);
}
template <class C, class D>
int alltoallv(const char *fn, const tail &t, const void *sb, const C scounts[], const D sdispls[], MPI_Datatype st,
              void *rb, const C rcounts[], const D rdispls[], MPI_Datatype rt, MPI_Comm comm) {
    weft_comm c = wcomm(comm);
    if (int rc = check_tail(c, fn, t)) return rc;
    int size;
    if (int rc = weft_comm_size(c, &size)) return merr(rc);
    size_t n = static_cast<size_t>(size);
    arrays s(sb == MPI_IN_PLACE ? 0 : n), r(n);
    if (!convert(rcounts, rdispls, n, r) || (sb != MPI_IN_PLACE && !convert(scounts, sdispls, n, s)))
        return fail(c, WEFT_ERR_COUNT, "%s: counts or displacements NULL or negative", fn);
    const size_t *psc = sb == MPI_IN_PLACE ? nullptr : s.counts.get();
    const size_t *psd = sb == MPI_IN_PLACE ? nullptr : s.displs.get();
    return WEFT_MPI_COLL_CALL(t, weft_alltoallv, weft_ialltoallv, weft_alltoallv_init, sb, psc, psd, wtype(st), rb,
                              r.counts.get(), r.displs.get(), wtype(rt), c);
}
template <class C, class D>
int alltoallw(const char *fn, const tail &t, const void *sb, const C scounts[], const D sdispls[],
              const MPI_Datatype stypes[], void *rb, const C rcounts[], const D rdispls[], const MPI_Datatype rtypes[],
              MPI_Comm comm) {
    weft_comm c = wcomm(comm);
    if (int rc = check_tail(c, fn, t)) return rc;
    int size;
    if (int rc = weft_comm_size(c, &size)) return merr(rc);
    size_t n = static_cast<size_t>(size);
    bool in_place = sb == MPI_IN_PLACE;
    size_t ns = in_place ? 0 : n;
    scratch<size_t> sc(ns), rc_(n);
    scratch<ptrdiff_t> sd(ns), rd(n);
    scratch<weft_datatype> stw(ns), rtw(n);
    if (rcounts == nullptr || rdispls == nullptr || rtypes == nullptr || !to_sizes(rcounts, n, rc_.get()))
        return fail(c, WEFT_ERR_COUNT, "%s: receive counts, displacements or types NULL, or a count negative", fn);
    to_diffs(rdispls, n, rd.get());
    to_wtypes(rtypes, n, rtw.get());
    if (!in_place) {
        if (scounts == nullptr || sdispls == nullptr || stypes == nullptr || !to_sizes(scounts, n, sc.get()))
            return fail(c, WEFT_ERR_COUNT, "%s: send counts, displacements or types NULL, or a count negative", fn);
        to_diffs(sdispls, n, sd.get());
        to_wtypes(stypes, n, stw.get());
    }
    return WEFT_MPI_COLL_CALL(t, weft_alltoallw, weft_ialltoallw, weft_alltoallw_init, sb,
                              in_place ? nullptr : sc.get(), in_place ? nullptr : sd.get(),
                              in_place ? nullptr : stw.get(), rb, rc_.get(), rd.get(), rtw.get(), c);
}
template <class C>
int reduce_scatter(const char *fn, const tail &t, const void *sb, void *rb, const C rcounts[], MPI_Datatype dt,
                   MPI_Op op, MPI_Comm comm) {
    weft_comm c = wcomm(comm);
    if (int rc = check_tail(c, fn, t)) return rc;
    int size;
    if (int rc = weft_comm_size(c, &size)) return merr(rc);
    size_t n = static_cast<size_t>(size);
    scratch<size_t> counts(n);
    if (rcounts == nullptr || !to_sizes(rcounts, n, counts.get()))
        return fail(c, WEFT_ERR_COUNT, "%s: receive counts NULL or negative", fn);
    return WEFT_MPI_COLL_CALL(t, weft_reduce_scatter, weft_ireduce_scatter, weft_reduce_scatter_init, sb, rb,
                              counts.get(), wtype(dt), wop(op), c);
}
}  // namespace

// ---- entry points: blocking, MPI_I..., ..._init; int and _c forms ----
extern "C" int PMPI_Barrier(MPI_Comm comm) { return barrier("MPI_Barrier", block, comm); }
extern "C" int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request) { return barrier("MPI_Ibarrier", nb(request), comm); }
extern "C" int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return barrier("MPI_Barrier_init", pers(info, request), comm);
}
extern "C" int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    return bcast("MPI_Bcast", block, buffer, count, datatype, root, comm);
}
extern "C" int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    return bcast("MPI_Bcast_c", block, buffer, count, datatype, root, comm);
}
extern "C" int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                           MPI_Request *request) {
    return bcast("MPI_Ibcast", nb(request), buffer, count, datatype, root, comm);
}
extern "C" int PMPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                             MPI_Request *request) {
    return bcast("MPI_Ibcast_c", nb(request), buffer, count, datatype, root, comm);
}
extern "C" int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request) {
    return bcast("MPI_Bcast_init", pers(info, request), buffer, count, datatype, root, comm);
}
extern "C" int PMPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request) {
    return bcast("MPI_Bcast_init_c", pers(info, request), buffer, count, datatype, root, comm);
}
extern "C" int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                           MPI_Comm comm) {
    return reduce("MPI_Reduce", block, sendbuf, recvbuf, count, datatype, op, root, comm);
}
extern "C" int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                             int root, MPI_Comm comm) {
    return reduce("MPI_Reduce_c", block, sendbuf, recvbuf, count, datatype, op, root, comm);
}
extern "C" int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                            MPI_Comm comm, MPI_Request *request) {
    return reduce("MPI_Ireduce", nb(request), sendbuf, recvbuf, count, datatype, op, root, comm);
}
extern "C" int PMPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                              int root, MPI_Comm comm, MPI_Request *request) {
    return reduce("MPI_Ireduce_c", nb(request), sendbuf, recvbuf, count, datatype, op, root, comm);
}
extern "C" int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return reduce("MPI_Reduce_init", pers(info, request), sendbuf, recvbuf, count, datatype, op, root, comm);
}
extern "C" int PMPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                  int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return reduce("MPI_Reduce_init_c", pers(info, request), sendbuf, recvbuf, count, datatype, op, root, comm);
}
extern "C" int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm) {
    return allreduce("MPI_Allreduce", block, sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm) {
    return allreduce("MPI_Allreduce_c", block, sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request *request) {
    return allreduce("MPI_Iallreduce", nb(request), sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm, MPI_Request *request) {
    return allreduce("MPI_Iallreduce_c", nb(request), sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                   MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return allreduce("MPI_Allreduce_init", pers(info, request), sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return allreduce("MPI_Allreduce_init_c", pers(info, request), sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return gather("MPI_Gather", block, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
extern "C" int PMPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return gather("MPI_Gather_c", block, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
extern "C" int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
    return gather("MPI_Igather", nb(request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
extern "C" int PMPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request *request) {
    return gather("MPI_Igather_c", nb(request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
extern "C" int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return gather("MPI_Gather_init", pers(info, request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  root, comm);
}
extern "C" int PMPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request) {
    return gather("MPI_Gather_init_c", pers(info, request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  root, comm);
}
extern "C" int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                            MPI_Comm comm) {
    return gatherv("MPI_Gatherv", block, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                   comm);
}
extern "C" int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                              MPI_Comm comm) {
    return gatherv("MPI_Gatherv_c", block, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                   comm);
}
extern "C" int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Request *request) {
    return gatherv("MPI_Igatherv", nb(request), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                   root, comm);
}
extern "C" int PMPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                               MPI_Comm comm, MPI_Request *request) {
    return gatherv("MPI_Igatherv_c", nb(request), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                   root, comm);
}
extern "C" int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                                 MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return gatherv("MPI_Gatherv_init", pers(info, request), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                   recvtype, root, comm);
}
extern "C" int PMPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                   int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return gatherv("MPI_Gatherv_init_c", pers(info, request), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                   recvtype, root, comm);
}
extern "C" int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return scatter("MPI_Scatter", block, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
extern "C" int PMPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return scatter("MPI_Scatter_c", block, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
extern "C" int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
    return scatter("MPI_Iscatter", nb(request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
extern "C" int PMPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                               MPI_Request *request) {
    return scatter("MPI_Iscatter_c", nb(request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                   comm);
}
extern "C" int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request) {
    return scatter("MPI_Scatter_init", pers(info, request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                   root, comm);
}
extern "C" int PMPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request) {
    return scatter("MPI_Scatter_init_c", pers(info, request), sendbuf, sendcount, sendtype, recvbuf, recvcount,
                   recvtype, root, comm);
}
extern "C" int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    return scatterv("MPI_Scatterv", block, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                    comm);
}
extern "C" int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                               MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                               int root, MPI_Comm comm) {
    return scatterv("MPI_Scatterv_c", block, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                    comm);
}
extern "C" int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request *request) {
    return scatterv("MPI_Iscatterv", nb(request), sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                    root, comm);
}
extern "C" int PMPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                                MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                int root, MPI_Comm comm, MPI_Request *request) {
    return scatterv("MPI_Iscatterv_c", nb(request), sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                    root, comm);
}
extern "C" int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return scatterv("MPI_Scatterv_init", pers(info, request), sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                    recvtype, root, comm);
}
extern "C" int PMPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                    int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return scatterv("MPI_Scatterv_init_c", pers(info, request), sendbuf, sendcounts, displs, sendtype, recvbuf,
                    recvcount, recvtype, root, comm);
}
extern "C" int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm) {
    return allgather("MPI_Allgather", block, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
extern "C" int PMPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    return allgather("MPI_Allgather_c", block, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
extern "C" int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return allgather("MPI_Iallgather", nb(request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
extern "C" int PMPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return allgather("MPI_Iallgather_c", nb(request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
extern "C" int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request) {
    return allgather("MPI_Allgather_init", pers(info, request), sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     recvtype, comm);
}
extern "C" int PMPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request) {
    return allgather("MPI_Allgather_init_c", pers(info, request), sendbuf, sendcount, sendtype, recvbuf, recvcount,
                     recvtype, comm);
}
extern "C" int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    return allgatherv("MPI_Allgatherv", block, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                      comm);
}
extern "C" int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                 MPI_Comm comm) {
    return allgatherv("MPI_Allgatherv_c", block, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                      comm);
}
extern "C" int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request *request) {
    return allgatherv("MPI_Iallgatherv", nb(request), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                      recvtype, comm);
}
extern "C" int PMPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Request *request) {
    return allgatherv("MPI_Iallgatherv_c", nb(request), sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                      recvtype, comm);
}
extern "C" int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                    MPI_Info info, MPI_Request *request) {
    return allgatherv("MPI_Allgatherv_init", pers(info, request), sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                      displs, recvtype, comm);
}
extern "C" int PMPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                      const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                      MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return allgatherv("MPI_Allgatherv_init_c", pers(info, request), sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                      displs, recvtype, comm);
}
extern "C" int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm) {
    return alltoall("MPI_Alltoall", block, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
extern "C" int PMPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    return alltoall("MPI_Alltoall_c", block, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
extern "C" int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return alltoall("MPI_Ialltoall", nb(request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
extern "C" int PMPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return alltoall("MPI_Ialltoall_c", nb(request), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
extern "C" int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request) {
    return alltoall("MPI_Alltoall_init", pers(info, request), sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, comm);
}
extern "C" int PMPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request) {
    return alltoall("MPI_Alltoall_init_c", pers(info, request), sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, comm);
}
extern "C" int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm) {
    return alltoallv("MPI_Alltoallv", block, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                     recvtype, comm);
}
extern "C" int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    return alltoallv("MPI_Alltoallv_c", block, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                     recvtype, comm);
}
extern "C" int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                               void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request *request) {
    return alltoallv("MPI_Ialltoallv", nb(request), sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                     rdispls, recvtype, comm);
}
extern "C" int PMPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    return alltoallv("MPI_Ialltoallv_c", nb(request), sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                     rdispls, recvtype, comm);
}
extern "C" int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return alltoallv("MPI_Alltoallv_init", pers(info, request), sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm);
}
extern "C" int PMPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request) {
    return alltoallv("MPI_Alltoallv_init_c", pers(info, request), sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm);
}
extern "C" int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                              const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                              const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    return alltoallw("MPI_Alltoallw", block, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm);
}
extern "C" int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    return alltoallw("MPI_Alltoallw_c", block, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm);
}
extern "C" int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                               const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                               MPI_Request *request) {
    return alltoallw("MPI_Ialltoallw", nb(request), sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                     rdispls, recvtypes, comm);
}
extern "C" int PMPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                 MPI_Request *request) {
    return alltoallw("MPI_Ialltoallw_c", nb(request), sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                     rdispls, recvtypes, comm);
}
extern "C" int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request) {
    return alltoallw("MPI_Alltoallw_init", pers(info, request), sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                     recvcounts, rdispls, recvtypes, comm);
}
extern "C" int PMPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                     MPI_Info info, MPI_Request *request) {
    return alltoallw("MPI_Alltoallw_init_c", pers(info, request), sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                     recvcounts, rdispls, recvtypes, comm);
}
extern "C" int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                         MPI_Op op, MPI_Comm comm) {
    return reduce_scatter_block("MPI_Reduce_scatter_block", block, sendbuf, recvbuf, recvcount, datatype, op, comm);
}
extern "C" int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    return reduce_scatter_block("MPI_Reduce_scatter_block_c", block, sendbuf, recvbuf, recvcount, datatype, op, comm);
}
extern "C" int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    return reduce_scatter_block("MPI_Ireduce_scatter_block", nb(request), sendbuf, recvbuf, recvcount, datatype, op,
                                comm);
}
extern "C" int PMPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    return reduce_scatter_block("MPI_Ireduce_scatter_block_c", nb(request), sendbuf, recvbuf, recvcount, datatype, op,
                                comm);
}
extern "C" int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                              MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return reduce_scatter_block("MPI_Reduce_scatter_block_init", pers(info, request), sendbuf, recvbuf, recvcount,
                                datatype, op, comm);
}
extern "C" int PMPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                                MPI_Request *request) {
    return reduce_scatter_block("MPI_Reduce_scatter_block_init_c", pers(info, request), sendbuf, recvbuf, recvcount,
                                datatype, op, comm);
}
extern "C" int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm) {
    return reduce_scatter("MPI_Reduce_scatter", block, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
extern "C" int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    return reduce_scatter("MPI_Reduce_scatter_c", block, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
extern "C" int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                    MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    return reduce_scatter("MPI_Ireduce_scatter", nb(request), sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
extern "C" int PMPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    return reduce_scatter("MPI_Ireduce_scatter_c", nb(request), sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
extern "C" int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                        MPI_Request *request) {
    return reduce_scatter("MPI_Reduce_scatter_init", pers(info, request), sendbuf, recvbuf, recvcounts, datatype, op,
                          comm);
}
extern "C" int PMPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                          MPI_Request *request) {
    return reduce_scatter("MPI_Reduce_scatter_init_c", pers(info, request), sendbuf, recvbuf, recvcounts, datatype, op,
                          comm);
}
extern "C" int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm) {
    return scan("MPI_Scan", block, sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm) {
    return scan("MPI_Scan_c", block, sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, MPI_Request *request) {
    return scan("MPI_Iscan", nb(request), sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, MPI_Request *request) {
    return scan("MPI_Iscan_c", nb(request), sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return scan("MPI_Scan_init", pers(info, request), sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return scan("MPI_Scan_init_c", pers(info, request), sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm) {
    return exscan("MPI_Exscan", block, sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
    return exscan("MPI_Exscan_c", block, sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, MPI_Request *request) {
    return exscan("MPI_Iexscan", nb(request), sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request *request) {
    return exscan("MPI_Iexscan_c", nb(request), sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return exscan("MPI_Exscan_init", pers(info, request), sendbuf, recvbuf, count, datatype, op, comm);
}
extern "C" int PMPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    return exscan("MPI_Exscan_init_c", pers(info, request), sendbuf, recvbuf, count, datatype, op, comm);
}

#define WEFT_MPI_FAMILY_coll 1
#include "alias.hpp"
