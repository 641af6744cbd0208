// Buffered sends (MPI 4.0 section 3.6): MPI_Buffer_attach / detach, MPI_Bsend, MPI_Ibsend.
// A buffered send packs the message into the attached buffer and sends it from there with
// weft_isend; the space comes back when that send completes (checked at the next buffered send,
// at detach, and at MPI_Finalize, which wait for the rest).  The bookkeeping lives outside the
// buffer, under one lock (buffered sends copy anyway: they are not the fast path).
#include "bsend.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "handles.hpp"

namespace weft_mpi {
namespace {
struct segment {
    size_t offset, length;
    weft_request request;
};
std::mutex lock;
char *buffer = nullptr;
size_t buffer_size = 0;
bool attached = false;
std::vector<segment> live;  // by offset

void reclaim() {  // under the lock: drop the segments whose send completed
    live.erase(std::remove_if(live.begin(), live.end(),
                              [](segment &s) {
                                  int flag = 0;
                                  return weft_test(&s.request, &flag, WEFT_STATUS_IGNORE) != WEFT_SUCCESS || flag;
                              }),
               live.end());
}
int wait_all() {  // under the lock
    int first = WEFT_SUCCESS;
    for (segment &s : live) {
        int rc = weft_wait(&s.request, WEFT_STATUS_IGNORE);
        if (first == WEFT_SUCCESS) first = rc;
    }
    live.clear();
    return first;
}
// First fit among the gaps between live segments (kept in offset order).
bool place(size_t length, size_t &offset, size_t &index) {
    size_t at = 0;
    for (size_t i = 0; i <= live.size(); ++i) {
        size_t end = i < live.size() ? live[i].offset : buffer_size;
        if (end >= at && end - at >= length) {
            offset = at, index = i;
            return true;
        }
        if (i < live.size()) at = live[i].offset + live[i].length;
    }
    return false;
}

template <class C>
int attach(const char *fn, void *buf, C size) {
    if (size < 0 || (buf == nullptr && size > 0))
        return fail(WEFT_COMM_SELF, WEFT_ERR_BUFFER, "%s: NULL buffer or negative size", fn);
    std::lock_guard<std::mutex> g(lock);
    if (attached) return fail(WEFT_COMM_SELF, WEFT_ERR_BUFFER, "%s: a buffer is attached already", fn);
    buffer = static_cast<char *>(buf), buffer_size = static_cast<size_t>(size), attached = true;
    return MPI_SUCCESS;
}
template <class C>
int detach(const char *fn, void *buffer_addr, C *size) {
    if (buffer_addr == nullptr || size == nullptr)
        return fail(WEFT_COMM_SELF, WEFT_ERR_ARG, "%s: buffer_addr and size must not be NULL", fn);
    std::lock_guard<std::mutex> g(lock);
    if (!attached) return fail(WEFT_COMM_SELF, WEFT_ERR_BUFFER, "%s: no buffer is attached", fn);
    int rc = wait_all();  // MPI: detach blocks until the buffered messages are sent
    *static_cast<void **>(buffer_addr) = buffer;
    *size = static_cast<C>(buffer_size);
    buffer = nullptr, buffer_size = 0, attached = false;
    return merr(rc);
}
template <class C>
int bsend(const char *fn, const void *buf, C count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    weft_comm c = wcomm(comm);
    if (bad_count(count)) return fail(c, WEFT_ERR_COUNT, "%s: negative count", fn);
    weft_datatype t = wtype(datatype);
    size_t n = static_cast<size_t>(count), bytes = 0;
    if (int rc = weft_pack_size(n, t, c, &bytes)) return merr(rc);
    if (dest == MPI_PROC_NULL) return merr(weft_send(buf, n, t, WEFT_PROC_NULL, tag, c));  // checks the rest
    std::lock_guard<std::mutex> g(lock);
    reclaim();
    size_t offset = 0, index = 0;
    if (!attached || !place(std::max<size_t>(bytes, 1), offset, index))
        return fail(c, WEFT_ERR_BUFFER,
                    "%s: %zu bytes do not fit the attached buffer (%zu bytes, %zu messages in flight; "
                    "MPI_Buffer_attach a larger one)",
                    fn, bytes, buffer_size, live.size());
    size_t position = 0;
    if (int rc = weft_pack(buf, n, t, buffer + offset, bytes, &position, c)) return merr(rc);
    weft_request r = WEFT_REQUEST_NULL;
    if (int rc = weft_isend(buffer + offset, position, WEFT_BYTE, wrank(dest), tag, c, &r)) return merr(rc);
    live.insert(live.begin() + static_cast<ptrdiff_t>(index), segment{offset, std::max<size_t>(bytes, 1), r});
    return MPI_SUCCESS;
}
// MPI_Ibsend's request completes once the message is in the buffer, that is at once: a send
// to MPI_PROC_NULL gives such a request.
template <class C>
int ibsend(const char *fn, const void *buf, C count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request) {
    if (request == nullptr) return fail(wcomm(comm), WEFT_ERR_ARG, "%s: request is NULL", fn);
    if (int rc = bsend(fn, buf, count, datatype, dest, tag, comm)) return rc;
    return merr(weft_isend(nullptr, 0, WEFT_BYTE, WEFT_PROC_NULL, tag, wcomm(comm), request));
}
}  // namespace

int bsend_finalize() {
    std::lock_guard<std::mutex> g(lock);
    return merr(wait_all());
}
}  // namespace weft_mpi

using namespace weft_mpi;

extern "C" int PMPI_Buffer_attach(void *buffer, int size) { return attach("MPI_Buffer_attach", buffer, size); }
extern "C" int PMPI_Buffer_attach_c(void *buffer, MPI_Count size) {
    return attach("MPI_Buffer_attach_c", buffer, size);
}
extern "C" int PMPI_Buffer_detach(void *buffer_addr, int *size) {
    return detach("MPI_Buffer_detach", buffer_addr, size);
}
extern "C" int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size) {
    return detach("MPI_Buffer_detach_c", buffer_addr, size);
}
extern "C" int PMPI_Bsend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
    return bsend("MPI_Bsend", buf, count, t, dest, tag, comm);
}
extern "C" int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
    return bsend("MPI_Bsend_c", buf, count, t, dest, tag, comm);
}
extern "C" int PMPI_Ibsend(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
                           MPI_Request *request) {
    return ibsend("MPI_Ibsend", buf, count, t, dest, tag, comm, request);
}
extern "C" int PMPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
                             MPI_Request *request) {
    return ibsend("MPI_Ibsend_c", buf, count, t, dest, tag, comm, request);
}

#define WEFT_MPI_FAMILY_bsend 1
#include "alias.hpp"
