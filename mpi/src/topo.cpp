// Cartesian topologies (MPI 4.0 chapter 8): MPI_Dims_create, MPI_Cart_create (a split of the
// old communicator in rank order: reorder is a hint Weft does not act on), coordinates, ranks,
// shifts, MPI_Cart_sub, MPI_Topo_test.  The shape of each Cartesian communicator is the front
// end's own table (dims, periods), under one lock; none of these calls communicates but
// MPI_Cart_create and MPI_Cart_sub.
#include "topo.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "handles.hpp"

namespace weft_mpi {
namespace {
struct cart {
    std::vector<int> dims, periods;
    weft_comm internal = WEFT_COMM_NULL;  // the neighbourhood collectives' own context (made at first use)
};
std::mutex lock;
std::map<MPI_Comm, cart> carts;

bool find(MPI_Comm comm, cart &out) {
    std::lock_guard<std::mutex> g(lock);
    auto it = carts.find(comm);
    if (it == carts.end()) return false;
    out = it->second;
    return true;
}
void coords_of(const cart &c, int rank, int *coords) {  // row-major: the last dimension fastest
    for (size_t i = c.dims.size(); i-- > 0;) {
        coords[i] = rank % c.dims[i];
        rank /= c.dims[i];
    }
}
int rank_of(const cart &c, const int *coords, int *rank) {  // -1: out of range in a non-periodic dimension
    int r = 0;
    for (size_t i = 0; i < c.dims.size(); ++i) {
        int x = coords[i], d = c.dims[i];
        if (c.periods[i])
            x = ((x % d) + d) % d;
        else if (x < 0 || x >= d)
            return -1;
        r = r * d + x;
    }
    *rank = r;
    return 0;
}
int not_cart(MPI_Comm comm, const char *fn) {
    return fail(wcomm(comm), WEFT_ERR_COMM, "%s: the communicator has no Cartesian topology", fn);
}
}  // namespace

void topo_copy(MPI_Comm oldcomm, MPI_Comm newcomm) {
    std::lock_guard<std::mutex> g(lock);
    auto it = carts.find(oldcomm);
    if (it != carts.end()) carts[newcomm] = cart{it->second.dims, it->second.periods, WEFT_COMM_NULL};
}
void topo_forget(MPI_Comm comm) {
    weft_comm internal = WEFT_COMM_NULL;
    {
        std::lock_guard<std::mutex> g(lock);
        auto it = carts.find(comm);
        if (it == carts.end()) return;
        internal = it->second.internal;
        carts.erase(it);
    }
    if (internal != WEFT_COMM_NULL) weft_comm_free(&internal);
}
}  // namespace weft_mpi

using namespace weft_mpi;

// Fills the zero entries of dims so that the product is nnodes, as balanced as possible and in
// non-increasing order: each prime factor of what is left, largest first, multiplies the
// smallest free dimension.
extern "C" int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
    if (nnodes <= 0 || ndims < 0 || (ndims > 0 && dims == nullptr))
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Dims_create: nnodes must be > 0 and ndims >= 0");
    long fixed = 1;
    int free_dims = 0;
    for (int i = 0; i < ndims; ++i) {
        if (dims[i] < 0) return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Dims_create: dims[%d] is negative", i);
        if (dims[i] > 0)
            fixed *= dims[i];
        else
            ++free_dims;
    }
    if (nnodes % fixed != 0)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG,
                    "MPI_Dims_create: %d is not a multiple of the given dims' product %ld", nnodes, fixed);
    int left = static_cast<int>(nnodes / fixed);
    if (free_dims == 0) {
        if (left != 1)
            return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "MPI_Dims_create: the given dims' product is not %d", nnodes);
        return MPI_SUCCESS;
    }
    std::vector<int> primes;
    for (int p = 2; static_cast<long>(p) * p <= left; ++p)
        while (left % p == 0) primes.push_back(p), left /= p;
    if (left > 1) primes.push_back(left);
    std::vector<int> f(static_cast<size_t>(free_dims), 1);
    for (auto p = primes.rbegin(); p != primes.rend(); ++p) *std::min_element(f.begin(), f.end()) *= *p;
    std::sort(f.begin(), f.end(), std::greater<int>());
    size_t k = 0;
    for (int i = 0; i < ndims; ++i)
        if (dims[i] == 0) dims[i] = f[k++];
    return MPI_SUCCESS;
}

extern "C" int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int,
                                MPI_Comm *comm_cart) {
    weft_comm c = wcomm(comm_old);
    if (ndims < 0 || comm_cart == nullptr || (ndims > 0 && (dims == nullptr || periods == nullptr)))
        return fail(c, WEFT_ERR_ARG, "MPI_Cart_create: bad ndims, dims, periods or comm_cart");
    int size = 0, rank = 0;
    if (int rc = weft_comm_size(c, &size)) return merr(rc);
    if (int rc = weft_comm_rank(c, &rank)) return merr(rc);
    long n = 1;
    for (int i = 0; i < ndims; ++i) {
        if (dims[i] <= 0) return fail(c, WEFT_ERR_ARG, "MPI_Cart_create: dims[%d] = %d is not positive", i, dims[i]);
        n *= dims[i];
        if (n > size) break;
    }
    if (n > size) return fail(c, WEFT_ERR_ARG, "MPI_Cart_create: the grid has more points than the %d processes", size);
    weft_comm out = WEFT_COMM_NULL;  // the first n ranks, in order; the others get MPI_COMM_NULL
    if (int rc = weft_comm_split(c, rank < n ? 0 : -1, rank, &out)) return merr(rc);
    *comm_cart = mcomm(out);
    if (out != WEFT_COMM_NULL) {
        std::lock_guard<std::mutex> g(lock);
        carts[*comm_cart] = cart{std::vector<int>(dims, dims + ndims), std::vector<int>(periods, periods + ndims)};
        for (int &p : carts[*comm_cart].periods) p = p != 0;
    }
    return MPI_SUCCESS;
}

extern "C" int PMPI_Cartdim_get(MPI_Comm comm, int *ndims) {
    cart c;
    if (!find(comm, c)) return not_cart(comm, "MPI_Cartdim_get");
    if (ndims == nullptr) return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Cartdim_get: ndims is NULL");
    *ndims = static_cast<int>(c.dims.size());
    return MPI_SUCCESS;
}

extern "C" int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
    cart c;
    if (!find(comm, c)) return not_cart(comm, "MPI_Cart_get");
    int rank = 0;
    if (int rc = weft_comm_rank(wcomm(comm), &rank)) return merr(rc);
    int n = static_cast<int>(c.dims.size());
    if (maxdims < n || (n > 0 && (dims == nullptr || periods == nullptr || coords == nullptr)))
        return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Cart_get: maxdims %d below the %d dimensions, or NULL arrays",
                    maxdims, n);
    std::copy(c.dims.begin(), c.dims.end(), dims);
    std::copy(c.periods.begin(), c.periods.end(), periods);
    coords_of(c, rank, coords);
    return MPI_SUCCESS;
}

extern "C" int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
    cart c;
    if (!find(comm, c)) return not_cart(comm, "MPI_Cart_coords");
    int size = 0;
    if (int rc = weft_comm_size(wcomm(comm), &size)) return merr(rc);
    int n = static_cast<int>(c.dims.size());
    if (rank < 0 || rank >= size)
        return fail(wcomm(comm), WEFT_ERR_RANK, "MPI_Cart_coords: rank %d out of range", rank);
    if (maxdims < n || (n > 0 && coords == nullptr))
        return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Cart_coords: maxdims %d below the %d dimensions", maxdims, n);
    coords_of(c, rank, coords);
    return MPI_SUCCESS;
}

extern "C" int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank) {
    cart c;
    if (!find(comm, c)) return not_cart(comm, "MPI_Cart_rank");
    if (rank == nullptr || (!c.dims.empty() && coords == nullptr))
        return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Cart_rank: coords and rank must not be NULL");
    if (rank_of(c, coords, rank) != 0)
        return fail(wcomm(comm), WEFT_ERR_RANK, "MPI_Cart_rank: a coordinate is outside a non-periodic dimension");
    return MPI_SUCCESS;
}

extern "C" int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest) {
    cart c;
    if (!find(comm, c)) return not_cart(comm, "MPI_Cart_shift");
    int n = static_cast<int>(c.dims.size());
    if (direction < 0 || direction >= n || rank_source == nullptr || rank_dest == nullptr)
        return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Cart_shift: direction %d outside 0..%d, or NULL outputs", direction,
                    n - 1);
    int rank = 0;
    if (int rc = weft_comm_rank(wcomm(comm), &rank)) return merr(rc);
    std::vector<int> co(static_cast<size_t>(n));
    coords_of(c, rank, co.data());
    int here = co[static_cast<size_t>(direction)];
    co[static_cast<size_t>(direction)] = here + disp;
    if (rank_of(c, co.data(), rank_dest) != 0) *rank_dest = MPI_PROC_NULL;
    co[static_cast<size_t>(direction)] = here - disp;
    if (rank_of(c, co.data(), rank_source) != 0) *rank_source = MPI_PROC_NULL;
    return MPI_SUCCESS;
}

// The processes that share the coordinates of the dropped dimensions form one subgrid, ranked
// by the coordinates they keep.
extern "C" int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) {
    cart c;
    if (!find(comm, c)) return not_cart(comm, "MPI_Cart_sub");
    if (newcomm == nullptr || (!c.dims.empty() && remain_dims == nullptr))
        return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Cart_sub: remain_dims and newcomm must not be NULL");
    int rank = 0;
    if (int rc = weft_comm_rank(wcomm(comm), &rank)) return merr(rc);
    std::vector<int> co(c.dims.size());
    coords_of(c, rank, co.data());
    int color = 0, key = 0;
    cart sub;
    for (size_t i = 0; i < c.dims.size(); ++i) {
        if (remain_dims[i]) {
            key = key * c.dims[i] + co[i];
            sub.dims.push_back(c.dims[i]);
            sub.periods.push_back(c.periods[i]);
        } else {
            color = color * c.dims[i] + co[i];
        }
    }
    weft_comm out = WEFT_COMM_NULL;
    if (int rc = weft_comm_split(wcomm(comm), color, key, &out)) return merr(rc);
    *newcomm = mcomm(out);
    std::lock_guard<std::mutex> g(lock);
    carts[*newcomm] = sub;
    return MPI_SUCCESS;
}

extern "C" int PMPI_Topo_test(MPI_Comm comm, int *status) {
    if (status == nullptr) return fail(wcomm(comm), WEFT_ERR_ARG, "MPI_Topo_test: status is NULL");
    int size;
    if (int rc = weft_comm_size(wcomm(comm), &size)) return merr(rc);  // checks the handle
    cart c;
    *status = find(comm, c) ? MPI_CART : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

// ---- Neighbourhood collectives on a Cartesian communicator (MPI 4.0 section 8.6): the
// neighbours are, for each dimension d, the source then the destination of MPI_Cart_shift(d, 1)
// (MPI_PROC_NULL ones are skipped, their blocks untouched).  Block i goes to and comes from
// neighbour i.  The messages travel on a duplicate of the communicator made at the first such
// call (so they never match the program's own messages), tagged by direction, so that the two
// neighbours of a periodic dimension of 1 or 2 processes, which are the same process, are kept
// apart: a block received from neighbour i carries tag i, one sent to neighbour i tag i ^ 1.
namespace {
struct block {
    const void *buf;  // send side (recv side: cast back)
    size_t count;
    weft_datatype type;
};
int neighbours(MPI_Comm comm, const char *fn, std::vector<int> &nb, weft_comm &internal) {
    cart c;
    if (!find(comm, c)) return not_cart(comm, fn);
    int rank = 0;
    if (int rc = weft_comm_rank(wcomm(comm), &rank)) return merr(rc);
    std::vector<int> co(c.dims.size());
    nb.clear();
    for (size_t d = 0; d < c.dims.size(); ++d) {
        for (int step : {-1, 1}) {
            coords_of(c, rank, co.data());
            co[d] += step;
            int r = 0;
            nb.push_back(rank_of(c, co.data(), &r) == 0 ? r : -1);
        }
    }
    internal = c.internal;
    if (internal == WEFT_COMM_NULL) {
        if (int rc = weft_comm_dup(wcomm(comm), &internal)) return merr(rc);
        std::lock_guard<std::mutex> g(lock);
        carts[comm].internal = internal;
    }
    return MPI_SUCCESS;
}
int exchange(weft_comm internal, const std::vector<int> &nb, const std::vector<block> &sends,
             const std::vector<block> &recvs) {
    std::vector<weft_request> reqs;
    reqs.reserve(2 * nb.size());
    int rc = WEFT_SUCCESS;
    for (size_t i = 0; i < nb.size() && rc == WEFT_SUCCESS; ++i) {
        if (nb[i] < 0) continue;
        reqs.push_back(WEFT_REQUEST_NULL);
        rc = weft_irecv(const_cast<void *>(recvs[i].buf), recvs[i].count, recvs[i].type, nb[i], static_cast<int>(i),
                        internal, &reqs.back());
    }
    for (size_t i = 0; i < nb.size() && rc == WEFT_SUCCESS; ++i) {
        if (nb[i] < 0) continue;
        reqs.push_back(WEFT_REQUEST_NULL);
        rc = weft_isend(sends[i].buf, sends[i].count, sends[i].type, nb[i], static_cast<int>(i ^ 1u), internal,
                        &reqs.back());
    }
    if (rc != WEFT_SUCCESS) reqs.pop_back();  // the failed post made no request
    int wrc = weft_waitall(reqs.size(), reqs.data(), WEFT_STATUSES_IGNORE);
    return merr(rc != WEFT_SUCCESS ? rc : wrc);
}
ptrdiff_t extent_of(weft_datatype t) {
    ptrdiff_t lb = 0, extent = 0;
    weft_type_get_extent(t, &lb, &extent);
    return extent;
}
// One block per neighbour, uniform (allgather: the same send block to all) or by arrays.
template <class C>
int nb_uniform(const char *fn, bool alltoall, const void *sb, C sc, MPI_Datatype st, void *rb, C rc_, MPI_Datatype rt,
               MPI_Comm comm) {
    if (bad_count(sc) || bad_count(rc_)) return fail(wcomm(comm), WEFT_ERR_COUNT, "%s: negative count", fn);
    std::vector<int> nb;
    weft_comm internal;
    if (int rc = neighbours(comm, fn, nb, internal)) return rc;
    weft_datatype wst = wtype(st), wrt = wtype(rt);
    ptrdiff_t sx = extent_of(wst) * static_cast<ptrdiff_t>(sc), rx = extent_of(wrt) * static_cast<ptrdiff_t>(rc_);
    std::vector<block> sends, recvs;
    for (size_t i = 0; i < nb.size(); ++i) {
        sends.push_back({static_cast<const char *>(sb) + (alltoall ? static_cast<ptrdiff_t>(i) * sx : 0),
                         static_cast<size_t>(sc), wst});
        recvs.push_back({static_cast<char *>(rb) + static_cast<ptrdiff_t>(i) * rx, static_cast<size_t>(rc_), wrt});
    }
    return exchange(internal, nb, sends, recvs);
}
// v and w: counts per neighbour; displacements in extents (v) or bytes (w, types per neighbour).
template <class C, class D>
int nb_arrays(const char *fn, bool bytes, const void *sb, const C *scounts, const D *sdispls,
              const MPI_Datatype *stypes, void *rb, const C *rcounts, const D *rdispls, const MPI_Datatype *rtypes,
              MPI_Comm comm, bool uniform_send, C sc) {
    std::vector<int> nb;
    weft_comm internal;
    if (int rc = neighbours(comm, fn, nb, internal)) return rc;
    std::vector<block> sends, recvs;
    for (size_t i = 0; i < nb.size(); ++i) {
        weft_datatype st = wtype(stypes[bytes ? i : 0]), rt = wtype(rtypes[bytes ? i : 0]);
        C scount = uniform_send ? sc : scounts[i];
        if (bad_count(scount) || bad_count(rcounts[i]))
            return fail(wcomm(comm), WEFT_ERR_COUNT, "%s: negative count", fn);
        ptrdiff_t so = uniform_send ? 0 : static_cast<ptrdiff_t>(sdispls[i]) * (bytes ? 1 : extent_of(st));
        ptrdiff_t ro = static_cast<ptrdiff_t>(rdispls[i]) * (bytes ? 1 : extent_of(rt));
        sends.push_back({static_cast<const char *>(sb) + so, static_cast<size_t>(scount), st});
        recvs.push_back({static_cast<char *>(rb) + ro, static_cast<size_t>(rcounts[i]), rt});
    }
    return exchange(internal, nb, sends, recvs);
}
}  // namespace

extern "C" int PMPI_Neighbor_allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                                       MPI_Comm comm) {
    return nb_uniform("MPI_Neighbor_allgather", false, sb, sc, st, rb, rc, rt, comm);
}
extern "C" int PMPI_Neighbor_allgather_c(const void *sb, MPI_Count sc, MPI_Datatype st, void *rb, MPI_Count rc,
                                         MPI_Datatype rt, MPI_Comm comm) {
    return nb_uniform("MPI_Neighbor_allgather_c", false, sb, sc, st, rb, rc, rt, comm);
}
extern "C" int PMPI_Neighbor_alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
                                      MPI_Comm comm) {
    return nb_uniform("MPI_Neighbor_alltoall", true, sb, sc, st, rb, rc, rt, comm);
}
extern "C" int PMPI_Neighbor_alltoall_c(const void *sb, MPI_Count sc, MPI_Datatype st, void *rb, MPI_Count rc,
                                        MPI_Datatype rt, MPI_Comm comm) {
    return nb_uniform("MPI_Neighbor_alltoall_c", true, sb, sc, st, rb, rc, rt, comm);
}
extern "C" int PMPI_Neighbor_allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcounts[],
                                        const int displs[], MPI_Datatype rt, MPI_Comm comm) {
    return nb_arrays<int, int>("MPI_Neighbor_allgatherv", false, sb, nullptr, nullptr, &st, rb, rcounts, displs, &rt,
                               comm, true, sc);
}
extern "C" int PMPI_Neighbor_allgatherv_c(const void *sb, MPI_Count sc, MPI_Datatype st, void *rb,
                                          const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rt,
                                          MPI_Comm comm) {
    return nb_arrays<MPI_Count, MPI_Aint>("MPI_Neighbor_allgatherv_c", false, sb, nullptr, nullptr, &st, rb, rcounts,
                                          displs, &rt, comm, true, sc);
}
extern "C" int PMPI_Neighbor_alltoallv(const void *sb, const int scounts[], const int sdispls[], MPI_Datatype st,
                                       void *rb, const int rcounts[], const int rdispls[], MPI_Datatype rt,
                                       MPI_Comm comm) {
    return nb_arrays<int, int>("MPI_Neighbor_alltoallv", false, sb, scounts, sdispls, &st, rb, rcounts, rdispls, &rt,
                               comm, false, 0);
}
extern "C" int PMPI_Neighbor_alltoallv_c(const void *sb, const MPI_Count scounts[], const MPI_Aint sdispls[],
                                         MPI_Datatype st, void *rb, const MPI_Count rcounts[], const MPI_Aint rdispls[],
                                         MPI_Datatype rt, MPI_Comm comm) {
    return nb_arrays<MPI_Count, MPI_Aint>("MPI_Neighbor_alltoallv_c", false, sb, scounts, sdispls, &st, rb, rcounts,
                                          rdispls, &rt, comm, false, 0);
}
extern "C" int PMPI_Neighbor_alltoallw(const void *sb, const int scounts[], const MPI_Aint sdispls[],
                                       const MPI_Datatype stypes[], void *rb, const int rcounts[],
                                       const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm) {
    return nb_arrays<int, MPI_Aint>("MPI_Neighbor_alltoallw", true, sb, scounts, sdispls, stypes, rb, rcounts, rdispls,
                                    rtypes, comm, false, 0);
}
extern "C" int PMPI_Neighbor_alltoallw_c(const void *sb, const MPI_Count scounts[], const MPI_Aint sdispls[],
                                         const MPI_Datatype stypes[], void *rb, const MPI_Count rcounts[],
                                         const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm) {
    return nb_arrays<MPI_Count, MPI_Aint>("MPI_Neighbor_alltoallw_c", true, sb, scounts, sdispls, stypes, rb, rcounts,
                                          rdispls, rtypes, comm, false, 0);
}

#define WEFT_MPI_FAMILY_topo 1
#include "alias.hpp"
