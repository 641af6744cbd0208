// Weft C++ layer for weft_sync.h (synchronous sends, sendrecv, matched probe): free functions
// over weft::Comm in the style of weft.hpp (folded into it when merged).  Failing calls throw
// weft::error.
#pragma once

#include <optional>
#include <span>
#include <utility>

#include "weft.hpp"
#include "weft_sync.h"

namespace weft {

// ---- Synchronous sends: complete once the receiver has matched the message ----

inline void ssend(Comm c, const void *buf, size_t count, weft_datatype type, int dest, int tag) {
    check(weft_ssend(buf, count, type, dest, tag, c.handle()));
}
template <builtin_type T, size_t N>
void ssend(Comm c, std::span<T, N> buf, int dest, int tag) {
    ssend(c, buf.data(), buf.size(), datatype_of_v<T>, dest, tag);
}
inline Request issend(Comm c, const void *buf, size_t count, weft_datatype type, int dest, int tag) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_issend(buf, count, type, dest, tag, c.handle(), &r));
    return Request(r);
}
template <builtin_type T, size_t N>
Request issend(Comm c, std::span<T, N> buf, int dest, int tag) {
    return issend(c, buf.data(), buf.size(), datatype_of_v<T>, dest, tag);
}
// Multiplex forms: local stream src_idx to the peer's stream dst_idx.
template <builtin_type T, size_t N>
void stream_ssend(Comm c, std::span<T, N> buf, int dest, int tag, int src_idx, int dst_idx) {
    check(weft_stream_ssend(buf.data(), buf.size(), datatype_of_v<T>, dest, tag, c.handle(), src_idx, dst_idx));
}
template <builtin_type T, size_t N>
Request stream_issend(Comm c, std::span<T, N> buf, int dest, int tag, int src_idx, int dst_idx) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_stream_issend(buf.data(), buf.size(), datatype_of_v<T>, dest, tag, c.handle(), src_idx, dst_idx, &r));
    return Request(r);
}

// ---- Send and receive in one call (the status is the receive's) ----

inline Status sendrecv(Comm c, const void *sendbuf, size_t sendcount, weft_datatype sendtype, int dest, int sendtag,
                       void *recvbuf, size_t recvcount, weft_datatype recvtype, int source, int recvtag) {
    Status s;
    check(weft_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                        c.handle(), s.c_status()));
    return s;
}
template <builtin_type S, size_t N, builtin_type R, size_t M>
requires(!std::is_const_v<R>) Status
    sendrecv(Comm c, std::span<S, N> sendbuf, int dest, int sendtag, std::span<R, M> recvbuf,
             int source = WEFT_ANY_SOURCE, int recvtag = WEFT_ANY_TAG) {
    return sendrecv(c, sendbuf.data(), sendbuf.size(), datatype_of_v<S>, dest, sendtag, recvbuf.data(), recvbuf.size(),
                    datatype_of_v<R>, source, recvtag);
}
template <builtin_type T, size_t N>
requires(!std::is_const_v<T>) Status sendrecv_replace(Comm c, std::span<T, N> buf, int dest, int sendtag,
                                                      int source = WEFT_ANY_SOURCE, int recvtag = WEFT_ANY_TAG) {
    Status s;
    check(weft_sendrecv_replace(buf.data(), buf.size(), datatype_of_v<T>, dest, sendtag, source, recvtag, c.handle(),
                                s.c_status()));
    return s;
}
// One request for both parts.
inline Request isendrecv(Comm c, const void *sendbuf, size_t sendcount, weft_datatype sendtype, int dest, int sendtag,
                         void *recvbuf, size_t recvcount, weft_datatype recvtype, int source, int recvtag) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         c.handle(), &r));
    return Request(r);
}
template <builtin_type T, size_t N>
requires(!std::is_const_v<T>) Request isendrecv_replace(Comm c, std::span<T, N> buf, int dest, int sendtag,
                                                        int source = WEFT_ANY_SOURCE, int recvtag = WEFT_ANY_TAG) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_isendrecv_replace(buf.data(), buf.size(), datatype_of_v<T>, dest, sendtag, source, recvtag, c.handle(),
                                 &r));
    return Request(r);
}

// ---- Matched probe ----

// A probed message, taken off matching: only recv/irecv on it receive it.  Dropping one not yet
// received receives it into nothing (its data is discarded), so that its communicator is not
// left busy.
class Message {
  public:
    Message() = default;
    explicit Message(weft_message adopt) noexcept : h_(adopt) {}
    ~Message() {
        if (h_ != WEFT_MESSAGE_NULL) weft_mrecv(nullptr, 0, WEFT_BYTE, &h_, WEFT_STATUS_IGNORE);
    }
    Message(const Message &) = delete;
    Message &operator=(const Message &) = delete;
    Message(Message &&o) noexcept : h_(std::exchange(o.h_, WEFT_MESSAGE_NULL)) {}
    Message &operator=(Message &&o) noexcept {
        if (this != &o) {
            Message old(std::exchange(h_, std::exchange(o.h_, WEFT_MESSAGE_NULL)));
        }
        return *this;
    }
    bool pending() const noexcept { return h_ != WEFT_MESSAGE_NULL; }
    weft_message handle() const noexcept { return h_; }

    Status recv(void *buf, size_t count, weft_datatype type) {
        Status s;
        check(weft_mrecv(buf, count, type, &h_, s.c_status()));
        return s;
    }
    template <builtin_type T, size_t N>
    requires(!std::is_const_v<T>) Status recv(std::span<T, N> buf) {
        return recv(buf.data(), buf.size(), datatype_of_v<T>);
    }
    Request irecv(void *buf, size_t count, weft_datatype type) {
        weft_request r = WEFT_REQUEST_NULL;
        check(weft_imrecv(buf, count, type, &h_, &r));
        return Request(r);
    }
    template <builtin_type T, size_t N>
    requires(!std::is_const_v<T>) Request irecv(std::span<T, N> buf) {
        return irecv(buf.data(), buf.size(), datatype_of_v<T>);
    }

  private:
    weft_message h_ = WEFT_MESSAGE_NULL;
};

inline std::pair<Message, Status> mprobe(Comm c, int source = WEFT_ANY_SOURCE, int tag = WEFT_ANY_TAG) {
    weft_message m = WEFT_MESSAGE_NULL;
    Status s;
    check(weft_mprobe(source, tag, c.handle(), &m, s.c_status()));
    return {Message(m), s};
}
// nullopt when no message is there.
inline std::optional<std::pair<Message, Status>> improbe(Comm c, int source = WEFT_ANY_SOURCE, int tag = WEFT_ANY_TAG) {
    weft_message m = WEFT_MESSAGE_NULL;
    Status s;
    int flag = 0;
    check(weft_improbe(source, tag, c.handle(), &flag, &m, s.c_status()));
    if (!flag) return std::nullopt;
    return std::pair<Message, Status>(Message(m), s);
}

}  // namespace weft
