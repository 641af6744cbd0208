// Completion (wait, test and their all/any/some forms), persistent requests, cancel (MPI 4.0
// sections 3.7-3.9).  Request arrays are translated in place (MPI_REQUEST_NULL <-> Weft's 0)
// and back; statuses go through Weft's layout in a scratch array.
#include "handles.hpp"

using namespace weft_mpi;

namespace {
void empty_status(MPI_Status *s) {
    if (ignored(s)) return;
    s->MPI_SOURCE = MPI_ANY_SOURCE;
    s->MPI_TAG = MPI_ANY_TAG;
    s->MPI_ERROR = MPI_SUCCESS;
    s->count_lo = 0;
    s->count_hi_and_cancelled = 0;
}
// In place: MPI handles -> Weft handles, and back.
void to_weft(MPI_Request *r, size_t n) {
    for (size_t i = 0; i < n; ++i) r[i] = wreq(r[i]);
}
void to_mpi(MPI_Request *r, size_t n) {
    for (size_t i = 0; i < n; ++i) r[i] = mreq(r[i]);
}
int arg_fail(const char *fn, const char *what) { return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "%s: %s", fn, what); }
void statuses_out(const weft_status *w, MPI_Status *m, size_t n) {
    for (size_t i = 0; i < n; ++i) mstatus(w[i], &m[i]);
}
}  // namespace

extern "C" int PMPI_Wait(MPI_Request *request, MPI_Status *status) {
    if (WEFT_MPI_UNLIKELY(request == nullptr)) return arg_fail("MPI_Wait", "request is NULL");
    if (WEFT_MPI_UNLIKELY(*request == MPI_REQUEST_NULL)) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    if (WEFT_MPI_LIKELY(ignored(status))) {
        int rc = weft_wait(request, WEFT_STATUS_IGNORE);
        if (*request == WEFT_REQUEST_NULL) *request = MPI_REQUEST_NULL;
        return merr(rc);
    }
    weft_status w;
    int rc = weft_wait(request, &w);
    if (*request == WEFT_REQUEST_NULL) *request = MPI_REQUEST_NULL;
    mstatus(w, status);
    return merr(rc);
}

extern "C" int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    if (WEFT_MPI_UNLIKELY(request == nullptr || flag == nullptr))
        return arg_fail("MPI_Test", "request or flag is NULL");
    if (WEFT_MPI_UNLIKELY(*request == MPI_REQUEST_NULL)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    status_out s{status, {}};
    int rc = weft_test(request, flag, s.arg());
    if (*request == WEFT_REQUEST_NULL) *request = MPI_REQUEST_NULL;
    if (*flag) s.done();
    return merr(rc);
}

extern "C" int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
    if (count < 0 || (count > 0 && reqs == nullptr)) return arg_fail("MPI_Waitall", "bad count or requests");
    size_t n = static_cast<size_t>(count);
    to_weft(reqs, n);
    int rc;
    if (ignored(statuses)) {
        rc = weft_waitall(n, reqs, WEFT_STATUSES_IGNORE);
    } else {
        scratch<weft_status> w(n);
        rc = weft_waitall(n, reqs, w.get());
        statuses_out(w.get(), statuses, n);
    }
    to_mpi(reqs, n);
    return merr(rc);
}

extern "C" int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
    if (count < 0 || (count > 0 && reqs == nullptr) || flag == nullptr)
        return arg_fail("MPI_Testall", "bad count, requests or flag");
    size_t n = static_cast<size_t>(count);
    to_weft(reqs, n);
    int rc;
    if (ignored(statuses)) {
        rc = weft_testall(n, reqs, flag, WEFT_STATUSES_IGNORE);
    } else {
        scratch<weft_status> w(n);
        rc = weft_testall(n, reqs, flag, w.get());
        if (*flag || rc == WEFT_ERR_IN_STATUS) statuses_out(w.get(), statuses, n);
    }
    to_mpi(reqs, n);
    return merr(rc);
}

extern "C" int PMPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status) {
    if (count < 0 || (count > 0 && reqs == nullptr) || index == nullptr)
        return arg_fail("MPI_Waitany", "bad count, requests or index");
    size_t n = static_cast<size_t>(count), i = WEFT_UNDEFINED;
    to_weft(reqs, n);
    status_out s{status, {}};
    int rc = weft_waitany(n, reqs, &i, s.arg());
    to_mpi(reqs, n);
    *index = i == WEFT_UNDEFINED ? MPI_UNDEFINED : static_cast<int>(i);
    if (i == WEFT_UNDEFINED && rc == WEFT_SUCCESS)
        empty_status(status);
    else
        s.done();
    return merr(rc);
}

extern "C" int PMPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
    if (count < 0 || (count > 0 && reqs == nullptr) || index == nullptr || flag == nullptr)
        return arg_fail("MPI_Testany", "bad count, requests, index or flag");
    size_t n = static_cast<size_t>(count), i = WEFT_UNDEFINED;
    to_weft(reqs, n);
    status_out s{status, {}};
    int rc = weft_testany(n, reqs, &i, flag, s.arg());
    to_mpi(reqs, n);
    *index = i == WEFT_UNDEFINED ? MPI_UNDEFINED : static_cast<int>(i);
    if (*flag) {
        if (i == WEFT_UNDEFINED)
            empty_status(status);
        else
            s.done();
    }
    return merr(rc);
}

namespace {
using some_fn = int (*)(size_t, weft_request[], size_t *, size_t[], weft_status[]);
int some(const char *fn, some_fn f, int incount, MPI_Request reqs[], int *outcount, int indices[],
         MPI_Status statuses[]) {
    if (incount < 0 || (incount > 0 && (reqs == nullptr || indices == nullptr)) || outcount == nullptr)
        return arg_fail(fn, "bad incount, requests, outcount or indices");
    size_t n = static_cast<size_t>(incount), out = 0;
    scratch<size_t> idx(n);
    to_weft(reqs, n);
    int rc;
    if (ignored(statuses)) {
        rc = f(n, reqs, &out, idx.get(), WEFT_STATUSES_IGNORE);
    } else {
        scratch<weft_status> w(n);
        rc = f(n, reqs, &out, idx.get(), w.get());
        if (out != WEFT_UNDEFINED && (rc == WEFT_SUCCESS || rc == WEFT_ERR_IN_STATUS))
            statuses_out(w.get(), statuses, out);
    }
    to_mpi(reqs, n);
    if (out == WEFT_UNDEFINED) {
        *outcount = MPI_UNDEFINED;
    } else {
        *outcount = static_cast<int>(out);
        for (size_t i = 0; i < out; ++i) indices[i] = static_cast<int>(idx[i]);
    }
    return merr(rc);
}
}  // namespace

extern "C" int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    return some("MPI_Waitsome", weft_waitsome, incount, reqs, outcount, indices, statuses);
}
extern "C" int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    return some("MPI_Testsome", weft_testsome, incount, reqs, outcount, indices, statuses);
}

extern "C" int PMPI_Start(MPI_Request *request) {
    if (request == nullptr) return arg_fail("MPI_Start", "request is NULL");
    weft_request r = wreq(*request);
    return merr(weft_start(&r));
}
extern "C" int PMPI_Startall(int count, MPI_Request reqs[]) {
    if (count < 0 || (count > 0 && reqs == nullptr)) return arg_fail("MPI_Startall", "bad count or requests");
    size_t n = static_cast<size_t>(count);
    to_weft(reqs, n);
    int rc = weft_startall(n, reqs);
    to_mpi(reqs, n);
    return merr(rc);
}
extern "C" int PMPI_Request_free(MPI_Request *request) {
    if (request == nullptr) return arg_fail("MPI_Request_free", "request is NULL");
    weft_request r = wreq(*request);
    if (int rc = weft_request_free(&r)) return merr(rc);
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}
extern "C" int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status) {
    status_out s{status, {}};
    int rc = weft_request_get_status(wreq(request), flag, s.arg());
    if (flag != nullptr && *flag) s.done();
    return merr(rc);
}
// MPICH's extension: whether the request completed, without progress; 1 for MPI_REQUEST_NULL.
extern "C" int PMPIX_Request_is_complete(MPI_Request request) {
    int flag = 0;
    if (weft_request_is_complete(wreq(request), &flag) != WEFT_SUCCESS) return 0;
    return flag;
}
extern "C" int PMPI_Cancel(MPI_Request *request) {
    if (request == nullptr) return arg_fail("MPI_Cancel", "request is NULL");
    weft_request r = wreq(*request);
    return merr(weft_cancel(&r));
}
extern "C" int PMPI_Test_cancelled(const MPI_Status *status, int *flag) {
    if (ignored(status) || flag == nullptr) return arg_fail("MPI_Test_cancelled", "status or flag is NULL");
    *flag = status->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}

// For generalized-request style code that fills statuses itself: the cancelled bit, and the
// count as MPICH stores it (count elements of datatype, in bytes).
extern "C" int PMPI_Status_set_cancelled(MPI_Status *status, int flag) {
    if (ignored(status)) return arg_fail("MPI_Status_set_cancelled", "status is NULL or MPI_STATUS_IGNORE");
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
    return MPI_SUCCESS;
}
namespace {
template <class C>
int set_elements(const char *fn, MPI_Status *status, MPI_Datatype datatype, C count) {
    if (ignored(status) || count < 0) return arg_fail(fn, "status is NULL or MPI_STATUS_IGNORE, or count negative");
    // count times the datatype's size, as MPICH stores it (exact for a basic datatype).
    size_t size = 0;
    if (int rc = weft_type_size(wtype(datatype), &size)) return merr(rc);
    uint64_t bytes = static_cast<uint64_t>(count) * size;
    status->count_lo = static_cast<int>(static_cast<uint32_t>(bytes));
    status->count_hi_and_cancelled =
        static_cast<int>(((bytes >> 32) << 1) | static_cast<uint32_t>(status->count_hi_and_cancelled & 1));
    return MPI_SUCCESS;
}
}  // namespace
extern "C" int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count) {
    return set_elements("MPI_Status_set_elements", status, datatype, count);
}
extern "C" int PMPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count) {
    return set_elements("MPI_Status_set_elements_c", status, datatype, count);
}
extern "C" int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count) {
    return set_elements("MPI_Status_set_elements_x", status, datatype, count);
}

#define WEFT_MPI_FAMILY_request 1
#include "alias.hpp"
