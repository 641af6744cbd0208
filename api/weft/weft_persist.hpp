// Weft C++ layer for weft_persist.h: persistent requests, persistent collectives, and
// completion of some of many (C++20, header-only, in weft.hpp's style: failing calls throw
// weft::error).
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "weft.hpp"
#include "weft_persist.h"

namespace weft {

// An owned persistent request (made by the *_init functions below): start it, complete it with
// wait or test as often as needed; its handle stays the same.  Destroying one that is active
// cancels it if it is a receive, waits for it, then frees it, so that the library never writes
// into a buffer the program has already released.
class PersistentRequest {
  public:
    PersistentRequest() = default;
    explicit PersistentRequest(weft_request adopt) noexcept : h_(adopt) {}
    ~PersistentRequest() { reset(); }
    PersistentRequest(const PersistentRequest &) = delete;
    PersistentRequest &operator=(const PersistentRequest &) = delete;
    PersistentRequest(PersistentRequest &&o) noexcept : h_(std::exchange(o.h_, WEFT_REQUEST_NULL)) {}
    PersistentRequest &operator=(PersistentRequest &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, WEFT_REQUEST_NULL);
        }
        return *this;
    }

    weft_request handle() const noexcept { return h_; }
    explicit operator bool() const noexcept { return h_ != WEFT_REQUEST_NULL; }

    void start() { check(weft_start(&h_)); }
    // Completes the current run (at once, with an empty status, when inactive).
    Status wait() {
        Status s;
        check(weft_wait(&h_, s.c_status()));
        return s;
    }
    std::optional<Status> test() {
        Status s;
        int flag = 0;
        check(weft_test(&h_, &flag, s.c_status()));
        if (!flag) return std::nullopt;
        return s;
    }
    // MPI_Request_get_status: the status once complete, without completing the run.
    std::optional<Status> get_status() const {
        Status s;
        int flag = 0;
        check(weft_request_get_status(h_, &flag, s.c_status()));
        if (!flag) return std::nullopt;
        return s;
    }
    // No progress at all (MPIX_Request_is_complete).
    bool is_complete() const {
        int flag = 0;
        check(weft_request_is_complete(h_, &flag));
        return flag != 0;
    }
    void cancel() { check(weft_cancel(&h_)); }
    // Frees it now; an active point-to-point run completes on its own (weft_request_free).
    void free() { check(weft_request_free(&h_)); }

  private:
    void reset() noexcept {
        if (h_ == WEFT_REQUEST_NULL) return;
        int done = 0;
        if (weft_request_is_complete(h_, &done) == WEFT_SUCCESS && !done) {
            weft_cancel(&h_);  // a receive; sends and collectives just complete
            weft_wait(&h_, WEFT_STATUS_IGNORE);
        }
        weft_request_free(&h_);
    }
    weft_request h_ = WEFT_REQUEST_NULL;
};

// Starts every request (all are checked first: weft_startall).
inline void start_all(std::span<PersistentRequest> requests) {
    std::vector<weft_request> h;
    h.reserve(requests.size());
    for (auto &r : requests) h.push_back(r.handle());
    check(weft_startall(h.size(), h.data()));
}

// weft_waitsome / weft_testsome over C handles: the indices of the requests completed now
// (statuses, when not empty, holds one per request and gets theirs in the same order), or
// nullopt when none was active (WEFT_UNDEFINED).  A failed request throws (WEFT_ERR_IN_STATUS
// with statuses: see each status's error).
inline std::optional<std::vector<size_t>> wait_some(std::span<weft_request> requests,
                                                    std::span<weft_status> statuses = {}) {
    std::vector<size_t> idx(requests.size());
    size_t n = 0;
    check(weft_waitsome(requests.size(), requests.data(), &n, idx.data(),
                        statuses.empty() ? WEFT_STATUSES_IGNORE : statuses.data()));
    if (n == WEFT_UNDEFINED) return std::nullopt;
    idx.resize(n);
    return idx;
}
inline std::optional<std::vector<size_t>> test_some(std::span<weft_request> requests,
                                                    std::span<weft_status> statuses = {}) {
    std::vector<size_t> idx(requests.size());
    size_t n = 0;
    check(weft_testsome(requests.size(), requests.data(), &n, idx.data(),
                        statuses.empty() ? WEFT_STATUSES_IGNORE : statuses.data()));
    if (n == WEFT_UNDEFINED) return std::nullopt;
    idx.resize(n);
    return idx;
}
// weft_testany: the index completed, WEFT_UNDEFINED when none was active, nullopt when none
// completed.
inline std::optional<size_t> test_any(std::span<weft_request> requests, weft_status *status = WEFT_STATUS_IGNORE) {
    size_t index = WEFT_UNDEFINED;
    int flag = 0;
    check(weft_testany(requests.size(), requests.data(), &index, &flag, status));
    if (!flag) return std::nullopt;
    return index;
}

// ---- Persistent point-to-point ----

inline PersistentRequest send_init(Comm c, const void *buf, size_t count, weft_datatype type, int dest, int tag) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_send_init(buf, count, type, dest, tag, c.handle(), &r));
    return PersistentRequest(r);
}
template <builtin_type T, size_t N>
PersistentRequest send_init(Comm c, std::span<T, N> buf, int dest, int tag) {
    return send_init(c, buf.data(), buf.size(), datatype_of_v<std::remove_cv_t<T>>, dest, tag);
}
inline PersistentRequest recv_init(Comm c, void *buf, size_t count, weft_datatype type, int source, int tag) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_recv_init(buf, count, type, source, tag, c.handle(), &r));
    return PersistentRequest(r);
}
template <builtin_type T, size_t N>
requires(!std::is_const_v<T>) PersistentRequest recv_init(Comm c, std::span<T, N> buf, int source, int tag) {
    return recv_init(c, buf.data(), buf.size(), datatype_of_v<T>, source, tag);
}
// Multiplex communicators: from local stream src_idx to the peer's dst_idx.
inline PersistentRequest stream_send_init(Comm c, const void *buf, size_t count, weft_datatype type, int dest, int tag,
                                          int src_idx, int dst_idx) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_stream_send_init(buf, count, type, dest, tag, c.handle(), src_idx, dst_idx, &r));
    return PersistentRequest(r);
}
inline PersistentRequest stream_recv_init(Comm c, void *buf, size_t count, weft_datatype type, int source, int tag,
                                          int src_idx, int dst_idx) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_stream_recv_init(buf, count, type, source, tag, c.handle(), src_idx, dst_idx, &r));
    return PersistentRequest(r);
}

// ---- Persistent collectives (raw forms: any datatype; info defaults to none) ----

inline PersistentRequest barrier_init(Comm c, weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_barrier_init(c.handle(), info, &r));
    return PersistentRequest(r);
}
inline PersistentRequest bcast_init(Comm c, void *buf, size_t count, weft_datatype type, int root,
                                    weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_bcast_init(buf, count, type, root, c.handle(), info, &r));
    return PersistentRequest(r);
}
inline PersistentRequest reduce_init(Comm c, const void *in, void *out, size_t count, weft_datatype type, weft_op op,
                                     int root, weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_reduce_init(in, out, count, type, op, root, c.handle(), info, &r));
    return PersistentRequest(r);
}
inline PersistentRequest allreduce_init(Comm c, const void *in, void *out, size_t count, weft_datatype type, weft_op op,
                                        weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_allreduce_init(in, out, count, type, op, c.handle(), info, &r));
    return PersistentRequest(r);
}
template <class In, size_t N, class Out, size_t M>
requires detail::same_elements<In, Out> PersistentRequest allreduce_init(Comm c, std::span<In, N> in,
                                                                         std::span<Out, M> out, weft_op op) {
    detail::check_count(out.size() == in.size(), "allreduce_init", "out", out.size(), "expected", in.size());
    return allreduce_init(c, in.data(), out.data(), in.size(), datatype_of_v<Out>, op);
}
inline PersistentRequest gather_init(Comm c, const void *sbuf, size_t scount, weft_datatype stype, void *rbuf,
                                     size_t rcount, weft_datatype rtype, int root, weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_gather_init(sbuf, scount, stype, rbuf, rcount, rtype, root, c.handle(), info, &r));
    return PersistentRequest(r);
}
inline PersistentRequest gatherv_init(Comm c, const void *sbuf, size_t scount, weft_datatype stype, void *rbuf,
                                      const size_t *rcounts, const size_t *displs, weft_datatype rtype, int root,
                                      weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_gatherv_init(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, c.handle(), info, &r));
    return PersistentRequest(r);
}
inline PersistentRequest scatter_init(Comm c, const void *sbuf, size_t scount, weft_datatype stype, void *rbuf,
                                      size_t rcount, weft_datatype rtype, int root, weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_scatter_init(sbuf, scount, stype, rbuf, rcount, rtype, root, c.handle(), info, &r));
    return PersistentRequest(r);
}
inline PersistentRequest scatterv_init(Comm c, const void *sbuf, const size_t *scounts, const size_t *displs,
                                       weft_datatype stype, void *rbuf, size_t rcount, weft_datatype rtype, int root,
                                       weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_scatterv_init(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, c.handle(), info, &r));
    return PersistentRequest(r);
}
inline PersistentRequest allgather_init(Comm c, const void *sbuf, size_t scount, weft_datatype stype, void *rbuf,
                                        size_t rcount, weft_datatype rtype, weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_allgather_init(sbuf, scount, stype, rbuf, rcount, rtype, c.handle(), info, &r));
    return PersistentRequest(r);
}
inline PersistentRequest allgatherv_init(Comm c, const void *sbuf, size_t scount, weft_datatype stype, void *rbuf,
                                         const size_t *rcounts, const size_t *displs, weft_datatype rtype,
                                         weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_allgatherv_init(sbuf, scount, stype, rbuf, rcounts, displs, rtype, c.handle(), info, &r));
    return PersistentRequest(r);
}
inline PersistentRequest alltoall_init(Comm c, const void *sbuf, size_t scount, weft_datatype stype, void *rbuf,
                                       size_t rcount, weft_datatype rtype, weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_alltoall_init(sbuf, scount, stype, rbuf, rcount, rtype, c.handle(), info, &r));
    return PersistentRequest(r);
}
inline PersistentRequest alltoallv_init(Comm c, const void *sbuf, const size_t *scounts, const size_t *sdispls,
                                        weft_datatype stype, void *rbuf, const size_t *rcounts, const size_t *rdispls,
                                        weft_datatype rtype, weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_alltoallv_init(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, c.handle(), info, &r));
    return PersistentRequest(r);
}
inline PersistentRequest reduce_scatter_block_init(Comm c, const void *in, void *out, size_t count, weft_datatype type,
                                                   weft_op op, weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_reduce_scatter_block_init(in, out, count, type, op, c.handle(), info, &r));
    return PersistentRequest(r);
}
inline PersistentRequest scan_init(Comm c, const void *in, void *out, size_t count, weft_datatype type, weft_op op,
                                   weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_scan_init(in, out, count, type, op, c.handle(), info, &r));
    return PersistentRequest(r);
}
inline PersistentRequest exscan_init(Comm c, const void *in, void *out, size_t count, weft_datatype type, weft_op op,
                                     weft_info info = WEFT_INFO_NULL) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_exscan_init(in, out, count, type, op, c.handle(), info, &r));
    return PersistentRequest(r);
}

}  // namespace weft
