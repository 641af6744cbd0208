// MPI 4.0 persistent collectives (weft_<coll>_init): the schedule is built once, at init, by
// the builder of the nonblocking form (coll/coll_call.hpp), and each start replays it: the
// input reads the build recorded, the schedule rewound to its first round, a fresh tag.  No
// argument checks, algorithm choice or allocation remain on a start.
#include <cstring>
#include <new>

#include "base/error.hpp"
#include "comm/errhandler.hpp"
#include "coll/coll_call.hpp"
#include "comm/stream.hpp"
#include "transport/persistent.hpp"
#include "transport/runtime.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

struct persistent_coll : persistent_op {
    std::unique_ptr<coll_sched> sched;
    std::vector<coll_input_read> inputs;  // read at each start, in order, before the schedule runs
    const char *fn = "";

    int start(request &r) override;
    int finish(request &r, weft_status *status) override;
    // The schedule needs its communicator until it ends, and MPI makes freeing an active
    // persistent collective erroneous.
    bool detachable() const override { return false; }
};

// Puts a finished schedule back at its first round; its steps, scratch and requests stay.
void rewind(coll_sched &s) {
    s.round = 0;
    s.posted = 0;
    s.started = false;
    s.aborted = false;
    s.done.store(false, std::memory_order_relaxed);
    s.error = WEFT_SUCCESS;
    s.next = nullptr;
}

int persistent_coll::start(request &r) {
    coll_sched &s = *sched;
    comm &c = *s.c;
    stream_use use(c.local_streams[0]);
    if (use.conflict())
        return fail(WEFT_ERR_STREAM,
                    "weft_start (%s): another thread is using the same stream; a stream is a serial context", fn);
    for (const coll_input_read &in : inputs) {
        if (in.type != nullptr)
            datatype_pack(*in.type, in.src, in.count, in.dst);
        else
            std::memcpy(in.dst, in.src, in.count);
    }
    rewind(s);
    s.user_request = &r;
    s.tag = coll_next_tag(c);
    r.op = request::kind::coll;
    r.sched = &s;  // not owned: request_peek reads its error
    vci &v = *s.endpoint;
    v.enter();
    coll_sched_start(s);
    v.leave();
    return WEFT_SUCCESS;
}

int persistent_coll::finish(request &, weft_status *status) {
    int err = sched->error;
    request_empty_status(status);
    if (status != WEFT_STATUS_IGNORE) status->error = err;
    return err;
}

// The checks every init makes before its builder's: the runtime and the info handle (whose
// keys no persistent collective reads yet).
int check_init(const coll_impl::call &x) {
    if (int rc = runtime_check(x.fn)) return rc;
    if (x.info != WEFT_INFO_NULL) {
        int n = 0;
        if (weft_info_get_nkeys(x.info, &n) != WEFT_SUCCESS)
            return fail(WEFT_ERR_INFO, "%s: invalid info handle 0x%x", x.fn, x.info);
    }
    return WEFT_SUCCESS;
}

}  // namespace

int coll_request_error(const request &r) { return r.sched->error; }

int coll_persistent_launch(coll_impl::call &x) {
    std::shared_ptr<persistent_coll> p(new (std::nothrow) persistent_coll);
    if (!p) return fail(WEFT_ERR_NO_MEM, "%s: out of memory", x.fn);
    p->sched = std::move(x.owned);
    p->inputs = std::move(x.inputs);
    p->fn = x.fn;
    comm &c = *x.c;
    vci &v = *p->sched->endpoint;
    return persistent_create(v, &c.pending[0], std::move(p), x.req, x.fn);
}

}  // namespace weft

using namespace weft;
using namespace weft::coll_impl;

#define WEFT_PERSISTENT(fn)    \
    call x{fn, request, info}; \
    if (int rc = check_init(x)) return rc

static int barrier_init_impl(weft_comm comm, weft_info info, weft_request *request) {
    WEFT_PERSISTENT("weft_barrier_init");
    return do_barrier(x, comm);
}

extern "C" int weft_barrier_init(weft_comm comm, weft_info info, weft_request *request) {
    return comm_entry(comm, "weft_barrier_init", [&] { return barrier_init_impl(comm, info, request); });
}

static int bcast_init_impl(void *buffer, size_t count, weft_datatype datatype, int root, weft_comm comm, weft_info info,
                           weft_request *request) {
    WEFT_PERSISTENT("weft_bcast_init");
    return do_bcast(x, buffer, count, datatype, root, comm);
}

extern "C" int weft_bcast_init(void *buffer, size_t count, weft_datatype datatype, int root, weft_comm comm,
                               weft_info info, weft_request *request) {
    return comm_entry(comm, "weft_bcast_init",
                      [&] { return bcast_init_impl(buffer, count, datatype, root, comm, info, request); });
}

static int reduce_init_impl(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                            int root, weft_comm comm, weft_info info, weft_request *request) {
    WEFT_PERSISTENT("weft_reduce_init");
    return do_reduce(x, sendbuf, recvbuf, count, datatype, op, root, comm);
}

extern "C" int weft_reduce_init(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                                int root, weft_comm comm, weft_info info, weft_request *request) {
    return comm_entry(comm, "weft_reduce_init", [&] {
        return reduce_init_impl(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
    });
}

static int allreduce_init_impl(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                               weft_comm comm, weft_info info, weft_request *request) {
    WEFT_PERSISTENT("weft_allreduce_init");
    return do_allreduce(x, sendbuf, recvbuf, count, datatype, op, comm);
}

extern "C" int weft_allreduce_init(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                                   weft_comm comm, weft_info info, weft_request *request) {
    return comm_entry(comm, "weft_allreduce_init",
                      [&] { return allreduce_init_impl(sendbuf, recvbuf, count, datatype, op, comm, info, request); });
}

static int gather_init_impl(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                            size_t recvcount, weft_datatype recvtype, int root, weft_comm comm, weft_info info,
                            weft_request *request) {
    WEFT_PERSISTENT("weft_gather_init");
    return do_gather(x, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, root,
                     comm);
}

extern "C" int weft_gather_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                size_t recvcount, weft_datatype recvtype, int root, weft_comm comm, weft_info info,
                                weft_request *request) {
    return comm_entry(comm, "weft_gather_init", [&] {
        return gather_init_impl(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request);
    });
}

static int gatherv_init_impl(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                             const size_t recvcounts[], const size_t displs[], weft_datatype recvtype, int root,
                             weft_comm comm, weft_info info, weft_request *request) {
    WEFT_PERSISTENT("weft_gatherv_init");
    return do_gather(x, true, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, root, comm);
}

extern "C" int weft_gatherv_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                 const size_t recvcounts[], const size_t displs[], weft_datatype recvtype, int root,
                                 weft_comm comm, weft_info info, weft_request *request) {
    return comm_entry(comm, "weft_gatherv_init", [&] {
        return gatherv_init_impl(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, info,
                                 request);
    });
}

static int scatter_init_impl(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                             size_t recvcount, weft_datatype recvtype, int root, weft_comm comm, weft_info info,
                             weft_request *request) {
    WEFT_PERSISTENT("weft_scatter_init");
    return do_scatter(x, false, sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype, root,
                      comm);
}

extern "C" int weft_scatter_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                 size_t recvcount, weft_datatype recvtype, int root, weft_comm comm, weft_info info,
                                 weft_request *request) {
    return comm_entry(comm, "weft_scatter_init", [&] {
        return scatter_init_impl(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request);
    });
}

static int scatterv_init_impl(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                              weft_datatype sendtype, void *recvbuf, size_t recvcount, weft_datatype recvtype, int root,
                              weft_comm comm, weft_info info, weft_request *request) {
    WEFT_PERSISTENT("weft_scatterv_init");
    return do_scatter(x, true, sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

extern "C" int weft_scatterv_init(const void *sendbuf, const size_t sendcounts[], const size_t displs[],
                                  weft_datatype sendtype, void *recvbuf, size_t recvcount, weft_datatype recvtype,
                                  int root, weft_comm comm, weft_info info, weft_request *request) {
    return comm_entry(comm, "weft_scatterv_init", [&] {
        return scatterv_init_impl(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, info,
                                  request);
    });
}

static int allgather_init_impl(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                               size_t recvcount, weft_datatype recvtype, weft_comm comm, weft_info info,
                               weft_request *request) {
    WEFT_PERSISTENT("weft_allgather_init");
    return do_allgather(x, false, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, comm);
}

extern "C" int weft_allgather_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                   size_t recvcount, weft_datatype recvtype, weft_comm comm, weft_info info,
                                   weft_request *request) {
    return comm_entry(comm, "weft_allgather_init", [&] {
        return allgather_init_impl(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
    });
}

static int allgatherv_init_impl(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                const size_t recvcounts[], const size_t displs[], weft_datatype recvtype,
                                weft_comm comm, weft_info info, weft_request *request) {
    WEFT_PERSISTENT("weft_allgatherv_init");
    return do_allgather(x, true, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm);
}

extern "C" int weft_allgatherv_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                    const size_t recvcounts[], const size_t displs[], weft_datatype recvtype,
                                    weft_comm comm, weft_info info, weft_request *request) {
    return comm_entry(comm, "weft_allgatherv_init", [&] {
        return allgatherv_init_impl(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
                                    request);
    });
}

static int alltoall_init_impl(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                              size_t recvcount, weft_datatype recvtype, weft_comm comm, weft_info info,
                              weft_request *request) {
    WEFT_PERSISTENT("weft_alltoall_init");
    return do_alltoall(x, false, sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, nullptr, nullptr,
                       recvtype, comm);
}

extern "C" int weft_alltoall_init(const void *sendbuf, size_t sendcount, weft_datatype sendtype, void *recvbuf,
                                  size_t recvcount, weft_datatype recvtype, weft_comm comm, weft_info info,
                                  weft_request *request) {
    return comm_entry(comm, "weft_alltoall_init", [&] {
        return alltoall_init_impl(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
    });
}

static int alltoallv_init_impl(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                               weft_datatype sendtype, void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                               weft_datatype recvtype, weft_comm comm, weft_info info, weft_request *request) {
    WEFT_PERSISTENT("weft_alltoallv_init");
    return do_alltoall(x, true, sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts, rdispls, recvtype,
                       comm);
}

extern "C" int weft_alltoallv_init(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                                   weft_datatype sendtype, void *recvbuf, const size_t recvcounts[],
                                   const size_t rdispls[], weft_datatype recvtype, weft_comm comm, weft_info info,
                                   weft_request *request) {
    return comm_entry(comm, "weft_alltoallv_init", [&] {
        return alltoallv_init_impl(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                   info, request);
    });
}

static int reduce_scatter_block_init_impl(const void *sendbuf, void *recvbuf, size_t recvcount, weft_datatype datatype,
                                          weft_op op, weft_comm comm, weft_info info, weft_request *request) {
    WEFT_PERSISTENT("weft_reduce_scatter_block_init");
    return do_reduce_scatter_block(x, sendbuf, recvbuf, recvcount, datatype, op, comm);
}

extern "C" int weft_reduce_scatter_block_init(const void *sendbuf, void *recvbuf, size_t recvcount,
                                              weft_datatype datatype, weft_op op, weft_comm comm, weft_info info,
                                              weft_request *request) {
    return comm_entry(comm, "weft_reduce_scatter_block_init", [&] {
        return reduce_scatter_block_init_impl(sendbuf, recvbuf, recvcount, datatype, op, comm, info, request);
    });
}

static int scan_init_impl(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                          weft_comm comm, weft_info info, weft_request *request) {
    WEFT_PERSISTENT("weft_scan_init");
    return do_scan(x, sendbuf, recvbuf, count, datatype, op, comm, false);
}

extern "C" int weft_scan_init(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                              weft_comm comm, weft_info info, weft_request *request) {
    return comm_entry(comm, "weft_scan_init",
                      [&] { return scan_init_impl(sendbuf, recvbuf, count, datatype, op, comm, info, request); });
}

static int exscan_init_impl(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                            weft_comm comm, weft_info info, weft_request *request) {
    WEFT_PERSISTENT("weft_exscan_init");
    return do_scan(x, sendbuf, recvbuf, count, datatype, op, comm, true);
}

extern "C" int weft_exscan_init(const void *sendbuf, void *recvbuf, size_t count, weft_datatype datatype, weft_op op,
                                weft_comm comm, weft_info info, weft_request *request) {
    return comm_entry(comm, "weft_exscan_init",
                      [&] { return exscan_init_impl(sendbuf, recvbuf, count, datatype, op, comm, info, request); });
}

static int reduce_scatter_init_impl(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                                    weft_datatype datatype, weft_op op, weft_comm comm, weft_info info,
                                    weft_request *request) {
    WEFT_PERSISTENT("weft_reduce_scatter_init");
    return do_reduce_scatter(x, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

extern "C" int weft_reduce_scatter_init(const void *sendbuf, void *recvbuf, const size_t recvcounts[],
                                        weft_datatype datatype, weft_op op, weft_comm comm, weft_info info,
                                        weft_request *request) {
    return comm_entry(comm, "weft_reduce_scatter_init", [&] {
        return reduce_scatter_init_impl(sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request);
    });
}

static int alltoallw_init_impl(const void *sendbuf, const size_t sendcounts[], const ptrdiff_t sdispls[],
                               const weft_datatype sendtypes[], void *recvbuf, const size_t recvcounts[],
                               const ptrdiff_t rdispls[], const weft_datatype recvtypes[], weft_comm comm,
                               weft_info info, weft_request *request) {
    WEFT_PERSISTENT("weft_alltoallw_init");
    return do_alltoallw(x, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
}

extern "C" int weft_alltoallw_init(const void *sendbuf, const size_t sendcounts[], const ptrdiff_t sdispls[],
                                   const weft_datatype sendtypes[], void *recvbuf, const size_t recvcounts[],
                                   const ptrdiff_t rdispls[], const weft_datatype recvtypes[], weft_comm comm,
                                   weft_info info, weft_request *request) {
    return comm_entry(comm, "weft_alltoallw_init", [&] {
        return alltoallw_init_impl(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                                   comm, info, request);
    });
}
