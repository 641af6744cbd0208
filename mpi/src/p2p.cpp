// Point-to-point (MPI 4.0 chapter 3): blocking, nonblocking, synchronous and ready sends,
// persistent requests, sendrecv, probe and matched probe; int and large-count (_c) forms.
//
// The hot path (MPI_Isend, MPI_Irecv): a sign test of the count, one compare per handle, one
// table load for a predefined datatype, the rank swap, then Weft's call: no allocation, no lock.
#include "handles.hpp"

using namespace weft_mpi;

namespace {
int count_fail(MPI_Comm comm, const char *fn) { return fail(wcomm(comm), WEFT_ERR_COUNT, "%s: negative count", fn); }
int arg_fail(MPI_Comm comm, const char *fn, const char *what) {
    return fail(wcomm(comm), WEFT_ERR_ARG, "%s: %s", fn, what);
}

using send_fn = int (*)(const void *, size_t, weft_datatype, int, int, weft_comm);
template <class Buf>
using post_fn = int (*)(Buf, size_t, weft_datatype, int, int, weft_comm, weft_request *);

template <send_fn F, class C>
WEFT_MPI_HOT int send(const char *fn, const void *buf, C count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
    if (bad_count(count)) return count_fail(comm, fn);
    return merr(F(buf, static_cast<size_t>(count), wtype(t), wrank(dest), tag, wcomm(comm)));
}
// Nonblocking and persistent sends and receives (Buf: const void * or void *).  Weft checks the
// request pointer (and everything else) itself; only the sign of the count is the front end's
// (a negative int would become a huge size_t).
template <class Buf, post_fn<Buf> F, class C>
WEFT_MPI_HOT int post(const char *fn, Buf buf, C count, MPI_Datatype t, int peer, int tag, MPI_Comm comm,
                      MPI_Request *request) {
    if (bad_count(count)) return count_fail(comm, fn);
    int rc = F(buf, static_cast<size_t>(count), wtype(t), wrank(peer), tag, wcomm(comm), request);
    if (WEFT_MPI_UNLIKELY(rc != WEFT_SUCCESS)) return merr(rc);
    return MPI_SUCCESS;  // a Weft request handle is never MPI_REQUEST_NULL's value
}
template <class C>
int recv(const char *fn, void *buf, C count, MPI_Datatype t, int source, int tag, MPI_Comm comm, MPI_Status *status) {
    if (bad_count(count)) return count_fail(comm, fn);
    status_out s{status, {}};
    int rc = weft_recv(buf, static_cast<size_t>(count), wtype(t), wrank(source), tag, wcomm(comm), s.arg());
    s.done();
    return merr(rc);
}
template <class C>
int sendrecv(const char *fn, const void *sbuf, C scount, MPI_Datatype stype, int dest, int stag, void *rbuf, C rcount,
             MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status) {
    if (bad_count(scount) || bad_count(rcount)) return count_fail(comm, fn);
    status_out s{status, {}};
    int rc = weft_sendrecv(sbuf, static_cast<size_t>(scount), wtype(stype), wrank(dest), stag, rbuf,
                           static_cast<size_t>(rcount), wtype(rtype), wrank(source), rtag, wcomm(comm), s.arg());
    s.done();
    return merr(rc);
}
template <class C>
int sendrecv_replace(const char *fn, void *buf, C count, MPI_Datatype t, int dest, int stag, int source, int rtag,
                     MPI_Comm comm, MPI_Status *status) {
    if (bad_count(count)) return count_fail(comm, fn);
    status_out s{status, {}};
    int rc = weft_sendrecv_replace(buf, static_cast<size_t>(count), wtype(t), wrank(dest), stag, wrank(source), rtag,
                                   wcomm(comm), s.arg());
    s.done();
    return merr(rc);
}
template <class C>
int isendrecv(const char *fn, const void *sbuf, C scount, MPI_Datatype stype, int dest, int stag, void *rbuf, C rcount,
              MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Request *request) {
    if (bad_count(scount) || bad_count(rcount)) return count_fail(comm, fn);
    if (request == nullptr) return arg_fail(comm, fn, "request is NULL");
    return merr(weft_isendrecv(sbuf, static_cast<size_t>(scount), wtype(stype), wrank(dest), stag, rbuf,
                               static_cast<size_t>(rcount), wtype(rtype), wrank(source), rtag, wcomm(comm), request));
}
template <class C>
int isendrecv_replace(const char *fn, void *buf, C count, MPI_Datatype t, int dest, int stag, int source, int rtag,
                      MPI_Comm comm, MPI_Request *request) {
    if (bad_count(count)) return count_fail(comm, fn);
    if (request == nullptr) return arg_fail(comm, fn, "request is NULL");
    return merr(weft_isendrecv_replace(buf, static_cast<size_t>(count), wtype(t), wrank(dest), stag, wrank(source),
                                       rtag, wcomm(comm), request));
}
template <class C>
int mrecv(const char *fn, void *buf, C count, MPI_Datatype t, MPI_Message *message, MPI_Status *status) {
    if (bad_count(count)) return count_fail(MPI_COMM_SELF, fn);
    if (message == nullptr) return arg_fail(MPI_COMM_SELF, fn, "message is NULL");
    weft_message m = wmsg(*message);
    status_out s{status, {}};
    int rc = weft_mrecv(buf, static_cast<size_t>(count), wtype(t), &m, s.arg());
    s.done();
    if (rc == WEFT_SUCCESS) *message = mmsg(m);
    return merr(rc);
}
template <class C>
int imrecv(const char *fn, void *buf, C count, MPI_Datatype t, MPI_Message *message, MPI_Request *request) {
    if (bad_count(count)) return count_fail(MPI_COMM_SELF, fn);
    if (message == nullptr || request == nullptr) return arg_fail(MPI_COMM_SELF, fn, "message or request is NULL");
    weft_message m = wmsg(*message);
    int rc = weft_imrecv(buf, static_cast<size_t>(count), wtype(t), &m, request);
    if (rc == WEFT_SUCCESS) *message = mmsg(m);
    return merr(rc);
}
}  // namespace

// Ready sends are standard sends (MPI allows it: a ready send's receive is already posted).
#define WEFT_MPI_SEND(Name, F)                                                                                 \
    extern "C" int PMPI_##Name(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) { \
        return send<F>("MPI_" #Name, buf, count, t, dest, tag, comm);                                          \
    }                                                                                                          \
    extern "C" int PMPI_##Name##_c(const void *buf, MPI_Count count, MPI_Datatype t, int dest, int tag,        \
                                   MPI_Comm comm) {                                                            \
        return send<F>("MPI_" #Name "_c", buf, count, t, dest, tag, comm);                                     \
    }
WEFT_MPI_SEND(Send, weft_send)
WEFT_MPI_SEND(Ssend, weft_ssend)
WEFT_MPI_SEND(Rsend, weft_send)

#define WEFT_MPI_ISEND(Name, F)                                                                                        \
    extern "C" int PMPI_##Name(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm,           \
                               MPI_Request *request) {                                                                 \
        return post<const void *, F>("MPI_" #Name, buf, count, t, dest, tag, comm, request);                           \
    }                                                                                                                  \
    extern "C" int PMPI_##Name##_c(const void *buf, MPI_Count count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, \
                                   MPI_Request *request) {                                                             \
        return post<const void *, F>("MPI_" #Name "_c", buf, count, t, dest, tag, comm, request);                      \
    }
WEFT_MPI_ISEND(Isend, weft_isend)
WEFT_MPI_ISEND(Issend, weft_issend)
WEFT_MPI_ISEND(Irsend, weft_isend)
WEFT_MPI_ISEND(Send_init, weft_send_init)
WEFT_MPI_ISEND(Ssend_init, weft_ssend_init)
WEFT_MPI_ISEND(Rsend_init, weft_send_init)

#define WEFT_MPI_IRECV(Name, F)                                                                                    \
    extern "C" int PMPI_##Name(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm,           \
                               MPI_Request *request) {                                                             \
        return post<void *, F>("MPI_" #Name, buf, count, t, source, tag, comm, request);                           \
    }                                                                                                              \
    extern "C" int PMPI_##Name##_c(void *buf, MPI_Count count, MPI_Datatype t, int source, int tag, MPI_Comm comm, \
                                   MPI_Request *request) {                                                         \
        return post<void *, F>("MPI_" #Name "_c", buf, count, t, source, tag, comm, request);                      \
    }
WEFT_MPI_IRECV(Irecv, weft_irecv)
WEFT_MPI_IRECV(Recv_init, weft_recv_init)

extern "C" int PMPI_Recv(void *buf, int count, MPI_Datatype t, int source, int tag, MPI_Comm comm, MPI_Status *status) {
    return recv("MPI_Recv", buf, count, t, source, tag, comm, status);
}
extern "C" int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype t, int source, int tag, MPI_Comm comm,
                           MPI_Status *status) {
    return recv("MPI_Recv_c", buf, count, t, source, tag, comm, status);
}
extern "C" int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                             int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status) {
    return sendrecv("MPI_Sendrecv", sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
}
extern "C" int PMPI_Sendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                               MPI_Count rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                               MPI_Status *status) {
    return sendrecv("MPI_Sendrecv_c", sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
}
extern "C" int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype t, int dest, int stag, int source, int rtag,
                                     MPI_Comm comm, MPI_Status *status) {
    return sendrecv_replace("MPI_Sendrecv_replace", buf, count, t, dest, stag, source, rtag, comm, status);
}
extern "C" int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype t, int dest, int stag, int source,
                                       int rtag, MPI_Comm comm, MPI_Status *status) {
    return sendrecv_replace("MPI_Sendrecv_replace_c", buf, count, t, dest, stag, source, rtag, comm, status);
}
extern "C" int PMPI_Isendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                              int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                              MPI_Request *request) {
    return isendrecv("MPI_Isendrecv", sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                     request);
}
extern "C" int PMPI_Isendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                                MPI_Count rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                                MPI_Request *request) {
    return isendrecv("MPI_Isendrecv_c", sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                     request);
}
extern "C" int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype t, int dest, int stag, int source, int rtag,
                                      MPI_Comm comm, MPI_Request *request) {
    return isendrecv_replace("MPI_Isendrecv_replace", buf, count, t, dest, stag, source, rtag, comm, request);
}
extern "C" int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype t, int dest, int stag, int source,
                                        int rtag, MPI_Comm comm, MPI_Request *request) {
    return isendrecv_replace("MPI_Isendrecv_replace_c", buf, count, t, dest, stag, source, rtag, comm, request);
}

extern "C" int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    status_out s{status, {}};
    int rc = weft_probe(wrank(source), tag, wcomm(comm), s.arg());
    s.done();
    return merr(rc);
}
extern "C" int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    status_out s{status, {}};
    int rc = weft_iprobe(wrank(source), tag, wcomm(comm), flag, s.arg());
    if (rc == WEFT_SUCCESS && *flag) s.done();
    return merr(rc);
}
extern "C" int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    if (message == nullptr) return arg_fail(comm, "MPI_Mprobe", "message is NULL");
    status_out s{status, {}};
    weft_message m = WEFT_MESSAGE_NULL;
    int rc = weft_mprobe(wrank(source), tag, wcomm(comm), &m, s.arg());
    if (rc == WEFT_SUCCESS) *message = mmsg(m), s.done();
    return merr(rc);
}
extern "C" int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status) {
    if (message == nullptr) return arg_fail(comm, "MPI_Improbe", "message is NULL");
    status_out s{status, {}};
    weft_message m = WEFT_MESSAGE_NULL;
    int rc = weft_improbe(wrank(source), tag, wcomm(comm), flag, &m, s.arg());
    if (rc == WEFT_SUCCESS && *flag) *message = mmsg(m), s.done();
    return merr(rc);
}
extern "C" int PMPI_Mrecv(void *buf, int count, MPI_Datatype t, MPI_Message *message, MPI_Status *status) {
    return mrecv("MPI_Mrecv", buf, count, t, message, status);
}
extern "C" int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype t, MPI_Message *message, MPI_Status *status) {
    return mrecv("MPI_Mrecv_c", buf, count, t, message, status);
}
extern "C" int PMPI_Imrecv(void *buf, int count, MPI_Datatype t, MPI_Message *message, MPI_Request *request) {
    return imrecv("MPI_Imrecv", buf, count, t, message, request);
}
extern "C" int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype t, MPI_Message *message, MPI_Request *request) {
    return imrecv("MPI_Imrecv_c", buf, count, t, message, request);
}

#define WEFT_MPI_FAMILY_p2p 1
#include "alias.hpp"
