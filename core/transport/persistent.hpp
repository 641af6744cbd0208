// Persistent requests (MPI_Send_init, MPI_Start, persistent collectives) and the request calls
// that complete or free a request without a wait: the framework every persistent kind shares.
//
// A persistent request is an ordinary pool request with `persistent` set, so its handle is
// found, waited and tested like any other; it owns a persistent_op, which knows how to post one
// run of its operation into the request.  Inactive, it reads as complete (every wait loop sees
// it done at once) and request_finish gives an empty status; a wait or test that completes an
// active run finishes that run and leaves the request inactive, handle kept.
//
// To add a kind (a synchronous send, a new collective): derive from persistent_op, implement
// start (and finish when request_finish_op does not fit), and make the request with
// persistent_create.  Point-to-point kinds only need a post function (comm/p2p_persistent.hpp),
// collectives none (coll/coll_call.hpp).
#pragma once
#include <memory>

#include "transport/request.hpp"
#include "transport/vci.hpp"

namespace weft {

struct persistent_op {
    virtual ~persistent_op() = default;
    // Posts one run into r: r is not complete, the caller holds no endpoint.  On an error
    // nothing is in flight (the request stays inactive).
    virtual int start(request &r) = 0;
    // Finishes the run that completed: fills status and returns its error; the request must be
    // ready for the next start afterwards.
    virtual int finish(request &r, weft_status *status) { return request_finish_op(r, status); }
    // Whether weft_request_free may let a run in flight complete on its own (point-to-point), or
    // must refuse (collectives: erroneous in MPI, and their schedule needs the communicator).
    virtual bool detachable() const { return true; }

    bool active = false;  // started and not yet completed by a wait or test
};

// Makes a persistent request on endpoint v that owns op, inactive, counted pending on
// comm_pending (may be null) until it is freed.  *handle gets its handle.
int persistent_create(vci &v, int *comm_pending, std::shared_ptr<persistent_op> op, weft_request *handle,
                      const char *fn);

// request_finish of a persistent request: an empty status when inactive, else the run's.
int persistent_finish(request &r, weft_status *status);

// A persistent request that is not running (or a null one): the completion calls skip it.
inline bool request_inactive(const request &r) { return r.persistent && !r.persist->active; }

// Starts the inactive persistent request r (validated by the caller).
int persistent_start(request &r);

// Frees r (its handle was valid): releases it now when nothing is in flight, else detaches it
// (request_detach).  Errors as weft_request_free.
int request_free(request &r);

// Lets an operation in flight complete without a waiter: r stops counting as pending and is
// released (and, persistent, destroyed) once it completes, by its endpoint's progress.
void request_detach(request &r);

// What a wait would report for the completed request r, without retiring it (a receive's
// staged data is unpacked now, so its buffer is ready): MPI_Request_get_status.
int request_peek(request &r, weft_status *status);

// The error of a completed collective request so far (defined by the collectives, as
// coll_request_finish is).
int coll_request_error(const request &r);

// The status of an inactive or null request: source WEFT_ANY_SOURCE, tag WEFT_ANY_TAG, 0 bytes.
void request_empty_status(weft_status *status);

}  // namespace weft
