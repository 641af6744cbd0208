// The collective builders of coll/coll.cpp, shared with the persistent collectives
// (coll/coll_persistent.cpp).  A call is one collective being built: blocking, nonblocking or
// persistent.  A persistent call builds the schedule as a nonblocking one would, but keeps it
// instead of starting it, and records the reads of the caller's input that the build would
// do at once (packing a derived type, copying an in-place input) so that each start redoes
// them.
//
// To make a persistent form of a collective whose builder is here (do_x):
//   extern "C" int weft_x_init(<weft_x's arguments>, weft_info info, weft_request *request) {
//       WEFT_PERSISTENT("weft_x_init");
//       return do_x(x, <weft_x's arguments>);
//   }
// in coll_persistent.cpp, with do_x declared below.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "coll/coll_check.hpp"
#include "coll/coll_sched.hpp"
#include "weft/weft.h"

namespace weft {

// Tags of user collectives have the top tag bit set; the core's own (communicator creation)
// stay below it.
constexpr uint32_t coll_tag_bit = 0x80000;

// The tag of the next collective started on c: every process starts its collectives on c in
// the same order, so they agree.
inline int coll_next_tag(comm &c) { return static_cast<int>(coll_tag_bit | (c.coll_seq++ & (coll_tag_bit - 1))); }

// A read of the caller's input that a persistent collective repeats at each start, before its
// schedule runs: count elements of type packed from src into dst, or (type null) count bytes
// copied.
struct coll_input_read {
    const void *src;
    void *dst;
    size_t count;
    const datatype *type;
};

namespace coll_impl {

struct call {
    call(const char *f, bool nb, weft_request *r) : fn(f), nonblocking(nb), req(r) {}
    // A persistent init: built as a nonblocking call, then kept (coll_persistent_launch).
    call(const char *f, weft_request *r, weft_info i) : fn(f), nonblocking(true), persistent(true), req(r), info(i) {}
    const char *fn;
    bool nonblocking;
    bool persistent = false;
    weft_request *req;
    weft_info info = WEFT_INFO_NULL;  // persistent: the init's info
    comm *c = nullptr;
    coll_sched *s = nullptr;  // owned, or the communicator's cached one
    std::unique_ptr<coll_sched> owned;
    std::vector<coll_step> unpacks;       // appended as the last round
    std::vector<coll_input_read> inputs;  // persistent: what each start reads first
    coll_check_record check;              // what WEFT_COLL_CHECK compares (see expect)
    bool through_shm = false;             // built on the shared-memory segment: counted when it runs
};

int do_barrier(call &x, weft_comm comm);
int do_bcast(call &x, void *buf, size_t count, weft_datatype type, int root, weft_comm comm);
int do_reduce(call &x, const void *in, void *out, size_t count, weft_datatype type, weft_op op, int root,
              weft_comm comm);
int do_allreduce(call &x, const void *in, void *out, size_t count, weft_datatype type, weft_op op, weft_comm comm);
// counts null: uniform recvcount (gather), else gatherv.
int do_gather(call &x, bool v, const void *sbuf, size_t scount, weft_datatype stype, void *rbuf, size_t rcount,
              const size_t *rcounts, const size_t *displs, weft_datatype rtype, int root, weft_comm comm);
int do_scatter(call &x, bool v, const void *sbuf, size_t scount, const size_t *scounts, const size_t *displs,
               weft_datatype stype, void *rbuf, size_t rcount, weft_datatype rtype, int root, weft_comm comm);
int do_allgather(call &x, bool v, const void *sbuf, size_t scount, weft_datatype stype, void *rbuf, size_t rcount,
                 const size_t *rcounts, const size_t *displs, weft_datatype rtype, weft_comm comm);
int do_alltoall(call &x, bool v, const void *sbuf, size_t scount, const size_t *scounts, const size_t *sdispls,
                weft_datatype stype, void *rbuf, size_t rcount, const size_t *rcounts, const size_t *rdispls,
                weft_datatype rtype, weft_comm comm);
int do_reduce_scatter_block(call &x, const void *in, void *out, size_t count, weft_datatype type, weft_op op,
                            weft_comm comm);
int do_scan(call &x, const void *in, void *out, size_t count, weft_datatype type, weft_op op, weft_comm comm,
            bool exclusive);

int do_reduce_scatter(call &x, const void *in, void *out, const size_t *counts, weft_datatype type, weft_op op,
                      weft_comm comm);
int do_alltoallw(call &x, const void *sbuf, const size_t *scounts, const ptrdiff_t *sdispls,
                 const weft_datatype *stypes, void *rbuf, const size_t *rcounts, const ptrdiff_t *rdispls,
                 const weft_datatype *rtypes, weft_comm comm);
}  // namespace coll_impl

// A persistent call's end (coll_persistent.cpp): makes the request that owns the built schedule.
int coll_persistent_launch(coll_impl::call &x);

}  // namespace weft
