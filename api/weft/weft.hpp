// Weft C++ layer: header-only RAII wrappers over weft.h (C++20).
//
// Failing calls throw weft::error, whose code() is the WEFT_ERR_* value and whose what() is the
// error string followed by the detail message (which names the argument or key at fault).
// Handles of the C API stay reachable (handle()), so both layers can be mixed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft.h"

namespace weft {

// ---- Errors ----

class error : public std::runtime_error {
  public:
    explicit error(int code) : std::runtime_error(describe(code)), code_(code) {}
    int code() const noexcept { return code_; }

    // "<error string>: <detail>" (the detail of the calling thread's last error, if any).
    static std::string describe(int code) {
        char buf[WEFT_MAX_ERROR_STRING + 1] = {};
        size_t len = 0;
        std::string text;
        if (weft_error_string(code, buf, &len) == WEFT_SUCCESS)
            text.assign(buf, len < sizeof buf ? len : sizeof buf - 1);
        else
            text = "weft error " + std::to_string(code);
        len = 0;
        buf[0] = '\0';
        if (weft_error_detail(buf, &len) == WEFT_SUCCESS && len > 0)
            text += ": " + std::string(buf, len < sizeof buf ? len : sizeof buf - 1);
        return text;
    }

  private:
    int code_;
};

// Throws weft::error for anything but WEFT_SUCCESS.
inline void check(int rc) {
    if (rc != WEFT_SUCCESS) throw error(rc);
}

// ---- Built-in datatype of a C++ type ----

template <class T>
struct datatype_of {};  // no member `value`: T has no built-in datatype
#define WEFT_CXX_TYPE(T, H)                       \
    template <>                                   \
    struct datatype_of<T> {                       \
        static constexpr weft_datatype value = H; \
    }
WEFT_CXX_TYPE(char, WEFT_CHAR);
WEFT_CXX_TYPE(signed char, WEFT_SIGNED_CHAR);
WEFT_CXX_TYPE(unsigned char, WEFT_UNSIGNED_CHAR);
WEFT_CXX_TYPE(std::byte, WEFT_BYTE);
WEFT_CXX_TYPE(short, WEFT_SHORT);
WEFT_CXX_TYPE(unsigned short, WEFT_UNSIGNED_SHORT);
WEFT_CXX_TYPE(int, WEFT_INT);
WEFT_CXX_TYPE(unsigned, WEFT_UNSIGNED);
WEFT_CXX_TYPE(long, WEFT_LONG);
WEFT_CXX_TYPE(unsigned long, WEFT_UNSIGNED_LONG);
WEFT_CXX_TYPE(long long, WEFT_LONG_LONG);
WEFT_CXX_TYPE(unsigned long long, WEFT_UNSIGNED_LONG_LONG);
WEFT_CXX_TYPE(float, WEFT_FLOAT);
WEFT_CXX_TYPE(double, WEFT_DOUBLE);
WEFT_CXX_TYPE(long double, WEFT_LONG_DOUBLE);
WEFT_CXX_TYPE(bool, WEFT_C_BOOL);

// (value, index) pairs for WEFT_MINLOC / WEFT_MAXLOC, laid out as the C structs of the WEFT_*_INT
// pair types.
template <class T>
struct value_index {
    T value;
    int index;
    friend constexpr bool operator==(const value_index &, const value_index &) = default;
};
WEFT_CXX_TYPE(value_index<float>, WEFT_FLOAT_INT);
WEFT_CXX_TYPE(value_index<double>, WEFT_DOUBLE_INT);
WEFT_CXX_TYPE(value_index<long>, WEFT_LONG_INT);
WEFT_CXX_TYPE(value_index<int>, WEFT_2INT);
WEFT_CXX_TYPE(value_index<short>, WEFT_SHORT_INT);
#undef WEFT_CXX_TYPE

// Types with a built-in datatype (cv-qualifiers ignored, so spans of const T qualify).
template <class T>
concept builtin_type = requires {
    datatype_of<std::remove_cv_t<T>>::value;
};

template <builtin_type T>
inline constexpr weft_datatype datatype_of_v = datatype_of<std::remove_cv_t<T>>::value;

// ---- Info ----

class Info {
  public:
    Info() { check(weft_info_create(&h_)); }
    // Takes ownership of an existing handle (freed by the destructor).
    explicit Info(weft_info adopt) noexcept : h_(adopt) {}
    ~Info() { reset(); }
    Info(const Info &) = delete;
    Info &operator=(const Info &) = delete;
    Info(Info &&o) noexcept : h_(std::exchange(o.h_, WEFT_INFO_NULL)) {}
    Info &operator=(Info &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, WEFT_INFO_NULL);
        }
        return *this;
    }

    weft_info handle() const noexcept { return h_; }
    weft_info release() noexcept { return std::exchange(h_, WEFT_INFO_NULL); }

    Info dup() const {
        weft_info n = WEFT_INFO_NULL;
        check(weft_info_dup(h_, &n));
        return Info(n);
    }

    void set(const std::string &key, const std::string &value) { check(weft_info_set(h_, key.c_str(), value.c_str())); }

    std::optional<std::string> get(const std::string &key) const {
        size_t len = 0;
        int flag = 0;
        check(weft_info_get_valuelen(h_, key.c_str(), &len, &flag));
        if (!flag) return std::nullopt;
        // len + 1 bytes: weft_info_get writes at most len characters and a NUL.
        std::string buf(len + 1, '\0');
        check(weft_info_get(h_, key.c_str(), len, buf.data(), &flag));
        if (!flag) return std::nullopt;  // deleted by another thread in between
        buf.resize(std::char_traits<char>::length(buf.c_str()));
        return buf;
    }

    void erase(const std::string &key) { check(weft_info_delete(h_, key.c_str())); }

    int nkeys() const {
        int n = 0;
        check(weft_info_get_nkeys(h_, &n));
        return n;
    }

    std::string nthkey(int n) const {
        char key[WEFT_MAX_INFO_KEY + 1] = {};
        check(weft_info_get_nthkey(h_, n, key));
        return key;
    }

    // Stores the bytes of value, hex-encoded (e.g. a cudaStream_t for the `value` key).
    template <class T>
    requires std::is_trivially_copyable_v<T>
    void set_hex(const std::string &key, const T &value) {
        check(weft_info_set_hex(h_, key.c_str(), &value, sizeof(T)));
    }

    // nullopt when the key is absent; throws when it does not decode to exactly sizeof(T) bytes.
    template <class T>
    requires(std::is_trivially_copyable_v<T> &&std::is_default_constructible_v<T>) std::optional<T> get_hex(
        const std::string &key)
    const {
        T value{};
        int flag = 0;
        check(weft_info_get_hex(h_, key.c_str(), &value, sizeof(T), &flag));
        if (!flag) return std::nullopt;
        return value;
    }

  private:
    void reset() noexcept {
        if (h_ != WEFT_INFO_NULL) weft_info_free(&h_);
        h_ = WEFT_INFO_NULL;
    }
    weft_info h_ = WEFT_INFO_NULL;
};

// ---- Datatypes ----

// An owned derived datatype, freed by the destructor.  Built-ins need no wrapper: use the
// WEFT_* handles or datatype_of_v<T>.
class Datatype {
  public:
    Datatype() = default;
    explicit Datatype(weft_datatype adopt) noexcept : h_(adopt) {}
    ~Datatype() { reset(); }
    Datatype(const Datatype &) = delete;
    Datatype &operator=(const Datatype &) = delete;
    Datatype(Datatype &&o) noexcept : h_(std::exchange(o.h_, WEFT_DATATYPE_NULL)) {}
    Datatype &operator=(Datatype &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, WEFT_DATATYPE_NULL);
        }
        return *this;
    }

    static Datatype contiguous(size_t count, weft_datatype oldtype) {
        weft_datatype n = WEFT_DATATYPE_NULL;
        check(weft_type_contiguous(count, oldtype, &n));
        return Datatype(n);
    }
    // stride counts oldtype extents and may be negative.
    static Datatype vector(size_t count, size_t blocklength, std::ptrdiff_t stride, weft_datatype oldtype) {
        weft_datatype n = WEFT_DATATYPE_NULL;
        check(weft_type_vector(count, blocklength, stride, oldtype, &n));
        return Datatype(n);
    }

    Datatype &commit() {
        check(weft_type_commit(&h_));
        return *this;
    }

    size_t size() const {
        size_t s = 0;
        check(weft_type_size(h_, &s));
        return s;
    }
    struct extent_t {
        std::ptrdiff_t lb, extent;
    };
    extent_t extent() const {
        extent_t e{};
        check(weft_type_get_extent(h_, &e.lb, &e.extent));
        return e;
    }

    weft_datatype handle() const noexcept { return h_; }
    operator weft_datatype() const noexcept { return h_; }
    weft_datatype release() noexcept { return std::exchange(h_, WEFT_DATATYPE_NULL); }

  private:
    void reset() noexcept {
        if (h_ != WEFT_DATATYPE_NULL) weft_type_free(&h_);
        h_ = WEFT_DATATYPE_NULL;
    }
    weft_datatype h_ = WEFT_DATATYPE_NULL;
};

// ---- Reduction operations ----

// The built-in operations, for code that prefers names to the WEFT_* macros (which work too).
namespace ops {
inline constexpr weft_op max = WEFT_MAX;
inline constexpr weft_op min = WEFT_MIN;
inline constexpr weft_op sum = WEFT_SUM;
inline constexpr weft_op prod = WEFT_PROD;
inline constexpr weft_op land = WEFT_LAND;
inline constexpr weft_op band = WEFT_BAND;
inline constexpr weft_op lor = WEFT_LOR;
inline constexpr weft_op bor = WEFT_BOR;
inline constexpr weft_op lxor = WEFT_LXOR;
inline constexpr weft_op bxor = WEFT_BXOR;
inline constexpr weft_op minloc = WEFT_MINLOC;  // on value_index<T> (the WEFT_*_INT pair types)
inline constexpr weft_op maxloc = WEFT_MAXLOC;
}  // namespace ops

// An owned user operation (weft_op_create), freed by the destructor.  Built-ins need no
// wrapper: use the WEFT_* handles or weft::ops.  A collective still using the operation keeps
// it alive after the free.
class Op {
  public:
    Op() = default;
    explicit Op(weft_op adopt) noexcept : h_(adopt) {}
    // fn(invec, inoutvec, len, datatype): inoutvec[i] = invec[i] op inoutvec[i].
    explicit Op(weft_user_function *fn, bool commute = true) { check(weft_op_create(fn, commute ? 1 : 0, &h_)); }
    ~Op() { reset(); }
    Op(const Op &) = delete;
    Op &operator=(const Op &) = delete;
    Op(Op &&o) noexcept : h_(std::exchange(o.h_, WEFT_OP_NULL)) {}
    Op &operator=(Op &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, WEFT_OP_NULL);
        }
        return *this;
    }

    // An operation on elements of T from a stateless callable: f(const T &in, const T &inout)
    // returns the new inout value.  The datatype passed to the collective must hold T elements
    // (e.g. datatype_of_v<T>, or a contiguous type of them).
    template <class T, class F>
    requires(std::is_empty_v<F> &&std::is_default_constructible_v<F>
                 &&std::is_invocable_r_v<T, const F &, const T &, const T &>) static Op create(F, bool commute = true) {
        weft_user_function *fn = [](void *in, void *inout, size_t *len, weft_datatype *type) {
            size_t n = *len;
            size_t bytes = 0;
            // A contiguous derived type carries several T per element.
            if (weft_type_size(*type, &bytes) == WEFT_SUCCESS && bytes > sizeof(T)) n *= bytes / sizeof(T);
            const F f{};
            const T *a = static_cast<const T *>(in);
            T *b = static_cast<T *>(inout);
            for (size_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
        };
        return Op(fn, commute);
    }

    weft_op handle() const noexcept { return h_; }
    operator weft_op() const noexcept { return h_; }
    weft_op release() noexcept { return std::exchange(h_, WEFT_OP_NULL); }

  private:
    void reset() noexcept {
        if (h_ != WEFT_OP_NULL) weft_op_free(&h_);
        h_ = WEFT_OP_NULL;
    }
    weft_op h_ = WEFT_OP_NULL;
};

namespace detail {
// Throws std::invalid_argument when a span's length does not fit the collective.
inline void check_count(bool ok, const char *fn, const char *what, size_t got, const char *want_text, size_t want) {
    if (!ok)
        throw std::invalid_argument(std::string("weft::Comm::") + fn + ": " + what + " has " + std::to_string(got) +
                                    " elements, " + want_text + " " + std::to_string(want));
}
// The element type of an input span (const or not) matches the output span's.
template <class In, class Out>
concept same_elements =
    builtin_type<Out> && !std::is_const_v<Out> && std::is_same_v<std::remove_cv_t<In>, std::remove_cv_t<Out>>;
}  // namespace detail

// ---- Status and requests ----

class Status {
  public:
    Status() = default;
    explicit Status(const weft_status &s) : s_(s) {}
    int source() const noexcept { return s_.source; }
    int tag() const noexcept { return s_.tag; }
    int error() const noexcept { return s_.error; }
    int stream_index() const noexcept { return s_.stream_index; }
    // Elements of datatype received; WEFT_UNDEFINED when not a whole number.
    size_t count(weft_datatype datatype) const {
        size_t n = 0;
        check(weft_get_count(&s_, datatype, &n));
        return n;
    }
    template <builtin_type T>
    size_t count() const {
        return count(datatype_of_v<T>);
    }
    bool cancelled() const {
        int flag = 0;
        check(weft_test_cancelled(&s_, &flag));
        return flag != 0;
    }
    weft_status *c_status() noexcept { return &s_; }
    const weft_status *c_status() const noexcept { return &s_; }

  private:
    weft_status s_{};
};

// A pending operation.  Destroying one that is still active cancels it and waits, so that the
// library never writes into a buffer the program has already released.
class Request {
  public:
    Request() = default;
    explicit Request(weft_request adopt) noexcept : h_(adopt) {}
    ~Request() {
        if (h_ != WEFT_REQUEST_NULL) {
            weft_cancel(&h_);
            weft_wait(&h_, WEFT_STATUS_IGNORE);
        }
    }
    Request(const Request &) = delete;
    Request &operator=(const Request &) = delete;
    Request(Request &&o) noexcept : h_(std::exchange(o.h_, WEFT_REQUEST_NULL)) {}
    Request &operator=(Request &&o) noexcept {
        if (this != &o) {
            Request old(std::exchange(h_, std::exchange(o.h_, WEFT_REQUEST_NULL)));
        }
        return *this;
    }

    bool active() const noexcept { return h_ != WEFT_REQUEST_NULL; }
    weft_request handle() const noexcept { return h_; }

    Status wait() {
        Status s;
        check(weft_wait(&h_, s.c_status()));
        return s;
    }
    // The status once complete, nullopt while pending.
    std::optional<Status> test() {
        Status s;
        int flag = 0;
        check(weft_test(&h_, &flag, s.c_status()));
        if (!flag) return std::nullopt;
        return s;
    }
    void cancel() { check(weft_cancel(&h_)); }

  private:
    weft_request h_ = WEFT_REQUEST_NULL;
};

// A request of weft_isend_enqueue / weft_irecv_enqueue: completed on its GPU queue.  Dropping
// an active one enqueues its wait, so the queue never runs past an unfinished operation.
class QueueRequest {
  public:
    QueueRequest() = default;
    explicit QueueRequest(weft_request adopt) noexcept : h_(adopt) {}
    ~QueueRequest() {
        if (h_ != WEFT_REQUEST_NULL) weft_wait_enqueue(&h_, WEFT_STATUS_IGNORE);
    }
    QueueRequest(const QueueRequest &) = delete;
    QueueRequest &operator=(const QueueRequest &) = delete;
    QueueRequest(QueueRequest &&o) noexcept : h_(std::exchange(o.h_, WEFT_REQUEST_NULL)) {}
    QueueRequest &operator=(QueueRequest &&o) noexcept {
        if (this != &o) {
            QueueRequest old(std::exchange(h_, std::exchange(o.h_, WEFT_REQUEST_NULL)));
        }
        return *this;
    }
    bool active() const noexcept { return h_ != WEFT_REQUEST_NULL; }
    weft_request handle() const noexcept { return h_; }
    // Enqueues the wait; *status (if given) is written when the request completes.
    void wait_enqueue(weft_status *status = WEFT_STATUS_IGNORE) { check(weft_wait_enqueue(&h_, status)); }

  private:
    weft_request h_ = WEFT_REQUEST_NULL;
};

// ---- Communicators ----

// A non-owning view of a communicator (WEFT_COMM_WORLD by default).
class Comm {
  public:
    constexpr Comm() noexcept = default;
    constexpr explicit Comm(weft_comm c) noexcept : c_(c) {}
    static constexpr Comm world() noexcept { return Comm(WEFT_COMM_WORLD); }
    static constexpr Comm self() noexcept { return Comm(WEFT_COMM_SELF); }
    weft_comm handle() const noexcept { return c_; }

    int rank() const {
        int r = -1;
        check(weft_comm_rank(c_, &r));
        return r;
    }
    int size() const {
        int s = 0;
        check(weft_comm_size(c_, &s));
        return s;
    }

    // Raw forms: any datatype, including derived ones.
    void send(const void *buf, size_t count, weft_datatype type, int dest, int tag) const {
        check(weft_send(buf, count, type, dest, tag, c_));
    }
    Status recv(void *buf, size_t count, weft_datatype type, int source, int tag) const {
        Status s;
        check(weft_recv(buf, count, type, source, tag, c_, s.c_status()));
        return s;
    }
    Request isend(const void *buf, size_t count, weft_datatype type, int dest, int tag) const {
        weft_request r = WEFT_REQUEST_NULL;
        check(weft_isend(buf, count, type, dest, tag, c_, &r));
        return Request(r);
    }
    Request irecv(void *buf, size_t count, weft_datatype type, int source, int tag) const {
        weft_request r = WEFT_REQUEST_NULL;
        check(weft_irecv(buf, count, type, source, tag, c_, &r));
        return Request(r);
    }

    // Typed forms: the datatype follows from T; spans of any extent.
    template <builtin_type T, size_t N>
    void send(std::span<T, N> buf, int dest, int tag) const {
        send(buf.data(), buf.size(), datatype_of_v<T>, dest, tag);
    }
    template <builtin_type T, size_t N>
    requires(!std::is_const_v<T>) Status recv(std::span<T, N> buf, int source = WEFT_ANY_SOURCE, int tag = WEFT_ANY_TAG)
    const { return recv(buf.data(), buf.size(), datatype_of_v<T>, source, tag); }
    template <builtin_type T, size_t N>
    Request isend(std::span<T, N> buf, int dest, int tag) const {
        return isend(buf.data(), buf.size(), datatype_of_v<T>, dest, tag);
    }
    template <builtin_type T, size_t N>
    requires(!std::is_const_v<T>) Request
        irecv(std::span<T, N> buf, int source = WEFT_ANY_SOURCE, int tag = WEFT_ANY_TAG)
    const { return irecv(buf.data(), buf.size(), datatype_of_v<T>, source, tag); }

    Status probe(int source = WEFT_ANY_SOURCE, int tag = WEFT_ANY_TAG) const {
        Status s;
        check(weft_probe(source, tag, c_, s.c_status()));
        return s;
    }
    std::optional<Status> iprobe(int source = WEFT_ANY_SOURCE, int tag = WEFT_ANY_TAG) const {
        Status s;
        int flag = 0;
        check(weft_iprobe(source, tag, c_, &flag, s.c_status()));
        if (!flag) return std::nullopt;
        return s;
    }

    // Multiplex point-to-point between local stream src_idx and the peer's stream dst_idx.
    template <builtin_type T, size_t N>
    void stream_send(std::span<T, N> buf, int dest, int tag, int src_idx, int dst_idx) const {
        check(weft_stream_send(buf.data(), buf.size(), datatype_of_v<T>, dest, tag, c_, src_idx, dst_idx));
    }
    template <builtin_type T, size_t N>
    requires(!std::is_const_v<T>) Status stream_recv(std::span<T, N> buf, int source, int tag, int src_idx, int dst_idx)
    const {
        Status s;
        check(weft_stream_recv(buf.data(), buf.size(), datatype_of_v<T>, source, tag, c_, src_idx, dst_idx,
                               s.c_status()));
        return s;
    }

    weft_stream stream(int idx = 0) const {
        weft_stream s = WEFT_STREAM_NULL;
        check(weft_comm_get_stream(c_, idx, &s));
        return s;
    }

    // ---- Collectives ----
    // Every process calls the same collectives in the same order.  The typed forms take the
    // datatype from T and check span lengths (std::invalid_argument on a mismatch; on roots
    // only where the buffer matters only there); the raw forms take any datatype, derived ones
    // included, and WEFT_IN_PLACE where weft.h allows it.  Nonblocking forms return a Request:
    // the buffers must stay alive and untouched until it completes.

    void barrier() const { check(weft_barrier(c_)); }
    Request ibarrier() const {
        weft_request r = WEFT_REQUEST_NULL;
        check(weft_ibarrier(c_, &r));
        return Request(r);
    }

    void bcast(void *buf, size_t count, weft_datatype type, int root) const {
        check(weft_bcast(buf, count, type, root, c_));
    }
    template <builtin_type T, size_t N>
    requires(!std::is_const_v<T>) void bcast(std::span<T, N> buf, int root) const {
        bcast(buf.data(), buf.size(), datatype_of_v<T>, root);
    }
    Request ibcast(void *buf, size_t count, weft_datatype type, int root) const {
        weft_request r = WEFT_REQUEST_NULL;
        check(weft_ibcast(buf, count, type, root, c_, &r));
        return Request(r);
    }
    template <builtin_type T, size_t N>
    requires(!std::is_const_v<T>) Request ibcast(std::span<T, N> buf, int root)
    const { return ibcast(buf.data(), buf.size(), datatype_of_v<T>, root); }

    // Reduction results land in out (at the root only for reduce).
    void reduce(const void *in, void *out, size_t count, weft_datatype type, weft_op op, int root) const {
        check(weft_reduce(in, out, count, type, op, root, c_));
    }
    // out is significant at the root only, where it must be as long as in (elsewhere it may be empty).
    template <class In, size_t N, class Out, size_t M>
    requires detail::same_elements<In, Out>
    void reduce(std::span<In, N> in, std::span<Out, M> out, weft_op op, int root) const {
        if (out.size() != in.size())
            detail::check_count(rank() != root, "reduce", "out", out.size(), "at the root, expected", in.size());
        reduce(in.data(), out.data(), in.size(), datatype_of_v<Out>, op, root);
    }

    void allreduce(const void *in, void *out, size_t count, weft_datatype type, weft_op op) const {
        check(weft_allreduce(in, out, count, type, op, c_));
    }
    template <class In, size_t N, class Out, size_t M>
    requires detail::same_elements<In, Out>
    void allreduce(std::span<In, N> in, std::span<Out, M> out, weft_op op) const {
        detail::check_count(out.size() == in.size(), "allreduce", "out", out.size(), "expected", in.size());
        allreduce(in.data(), out.data(), in.size(), datatype_of_v<Out>, op);
    }
    // In place: inout holds this process's contribution and receives the result.
    template <builtin_type T, size_t N>
    requires(!std::is_const_v<T>) void allreduce(std::span<T, N> inout, weft_op op) const {
        allreduce(WEFT_IN_PLACE, inout.data(), inout.size(), datatype_of_v<T>, op);
    }
    Request iallreduce(const void *in, void *out, size_t count, weft_datatype type, weft_op op) const {
        weft_request r = WEFT_REQUEST_NULL;
        check(weft_iallreduce(in, out, count, type, op, c_, &r));
        return Request(r);
    }
    template <class In, size_t N, class Out, size_t M>
    requires detail::same_elements<In, Out> Request iallreduce(std::span<In, N> in, std::span<Out, M> out, weft_op op)
    const {
        detail::check_count(out.size() == in.size(), "iallreduce", "out", out.size(), "expected", in.size());
        return iallreduce(in.data(), out.data(), in.size(), datatype_of_v<Out>, op);
    }
    template <builtin_type T, size_t N>
    requires(!std::is_const_v<T>) Request iallreduce(std::span<T, N> inout, weft_op op)
    const { return iallreduce(WEFT_IN_PLACE, inout.data(), inout.size(), datatype_of_v<T>, op); }

    void gather(const void *in, size_t incount, weft_datatype intype, void *out, size_t outcount, weft_datatype outtype,
                int root) const {
        check(weft_gather(in, incount, intype, out, outcount, outtype, root, c_));
    }
    // At the root out receives in.size() elements from each rank, in rank order.
    template <class In, size_t N, class Out, size_t M>
    requires detail::same_elements<In, Out>
    void gather(std::span<In, N> in, std::span<Out, M> out, int root) const {
        if (rank() == root)
            detail::check_count(out.size() == in.size() * static_cast<size_t>(size()), "gather", "out", out.size(),
                                "at the root, expected in.size() * size() =", in.size() * static_cast<size_t>(size()));
        gather(in.data(), in.size(), datatype_of_v<Out>, out.data(), in.size(), datatype_of_v<Out>, root);
    }

    void scatter(const void *in, size_t incount, weft_datatype intype, void *out, size_t outcount,
                 weft_datatype outtype, int root) const {
        check(weft_scatter(in, incount, intype, out, outcount, outtype, root, c_));
    }
    // The root's in holds out.size() elements for each rank, in rank order.
    template <class In, size_t N, class Out, size_t M>
    requires detail::same_elements<In, Out>
    void scatter(std::span<In, N> in, std::span<Out, M> out, int root) const {
        if (rank() == root)
            detail::check_count(
                in.size() == out.size() * static_cast<size_t>(size()), "scatter", "in", in.size(),
                "at the root, expected out.size() * size() =", out.size() * static_cast<size_t>(size()));
        scatter(in.data(), out.size(), datatype_of_v<Out>, out.data(), out.size(), datatype_of_v<Out>, root);
    }

    void allgather(const void *in, size_t incount, weft_datatype intype, void *out, size_t outcount,
                   weft_datatype outtype) const {
        check(weft_allgather(in, incount, intype, out, outcount, outtype, c_));
    }
    template <class In, size_t N, class Out, size_t M>
    requires detail::same_elements<In, Out>
    void allgather(std::span<In, N> in, std::span<Out, M> out) const {
        size_t want = in.size() * static_cast<size_t>(size());
        detail::check_count(out.size() == want, "allgather", "out", out.size(), "expected in.size() * size() =", want);
        allgather(in.data(), in.size(), datatype_of_v<Out>, out.data(), in.size(), datatype_of_v<Out>);
    }

    void alltoall(const void *in, size_t incount, weft_datatype intype, void *out, size_t outcount,
                  weft_datatype outtype) const {
        check(weft_alltoall(in, incount, intype, out, outcount, outtype, c_));
    }
    // in and out hold size() equal blocks, block r going to / coming from rank r.
    template <class In, size_t N, class Out, size_t M>
    requires detail::same_elements<In, Out>
    void alltoall(std::span<In, N> in, std::span<Out, M> out) const {
        size_t n = static_cast<size_t>(size());
        detail::check_count(out.size() == in.size(), "alltoall", "out", out.size(), "expected", in.size());
        detail::check_count(in.size() % n == 0, "alltoall", "in", in.size(), "not a multiple of size() =", n);
        size_t block = in.size() / n;
        alltoall(in.data(), block, datatype_of_v<Out>, out.data(), block, datatype_of_v<Out>);
    }

    void reduce_scatter_block(const void *in, void *out, size_t outcount, weft_datatype type, weft_op op) const {
        check(weft_reduce_scatter_block(in, out, outcount, type, op, c_));
    }
    // in holds size() blocks of out.size() elements; block r of the reduction lands on rank r.
    template <class In, size_t N, class Out, size_t M>
    requires detail::same_elements<In, Out>
    void reduce_scatter_block(std::span<In, N> in, std::span<Out, M> out, weft_op op) const {
        size_t want = out.size() * static_cast<size_t>(size());
        detail::check_count(in.size() == want, "reduce_scatter_block", "in", in.size(),
                            "expected out.size() * size() =", want);
        reduce_scatter_block(in.data(), out.data(), out.size(), datatype_of_v<Out>, op);
    }

    // Inclusive prefix reduction over ranks 0..rank().
    void scan(const void *in, void *out, size_t count, weft_datatype type, weft_op op) const {
        check(weft_scan(in, out, count, type, op, c_));
    }
    template <class In, size_t N, class Out, size_t M>
    requires detail::same_elements<In, Out>
    void scan(std::span<In, N> in, std::span<Out, M> out, weft_op op) const {
        detail::check_count(out.size() == in.size(), "scan", "out", out.size(), "expected", in.size());
        scan(in.data(), out.data(), in.size(), datatype_of_v<Out>, op);
    }
    // Exclusive prefix reduction over ranks 0..rank()-1; out is left unchanged on rank 0.
    void exscan(const void *in, void *out, size_t count, weft_datatype type, weft_op op) const {
        check(weft_exscan(in, out, count, type, op, c_));
    }
    template <class In, size_t N, class Out, size_t M>
    requires detail::same_elements<In, Out>
    void exscan(std::span<In, N> in, std::span<Out, M> out, weft_op op) const {
        detail::check_count(out.size() == in.size(), "exscan", "out", out.size(), "expected", in.size());
        exscan(in.data(), out.data(), in.size(), datatype_of_v<Out>, op);
    }

    // GPU enqueue (on a communicator whose stream has a GPU queue; see weft.h).  The status of
    // recv_enqueue is written when the receive completes, before the queue goes on.
    void send_enqueue(const void *buf, size_t count, weft_datatype type, int dest, int tag) const {
        check(weft_send_enqueue(buf, count, type, dest, tag, c_));
    }
    void recv_enqueue(void *buf, size_t count, weft_datatype type, int source, int tag,
                      weft_status *status = WEFT_STATUS_IGNORE) const {
        check(weft_recv_enqueue(buf, count, type, source, tag, c_, status));
    }
    QueueRequest isend_enqueue(const void *buf, size_t count, weft_datatype type, int dest, int tag) const {
        weft_request r = WEFT_REQUEST_NULL;
        check(weft_isend_enqueue(buf, count, type, dest, tag, c_, &r));
        return QueueRequest(r);
    }
    QueueRequest irecv_enqueue(void *buf, size_t count, weft_datatype type, int source, int tag) const {
        weft_request r = WEFT_REQUEST_NULL;
        check(weft_irecv_enqueue(buf, count, type, source, tag, c_, &r));
        return QueueRequest(r);
    }
    template <builtin_type T, size_t N>
    void send_enqueue(std::span<T, N> buf, int dest, int tag) const {
        send_enqueue(buf.data(), buf.size(), datatype_of_v<T>, dest, tag);
    }
    template <builtin_type T, size_t N>
    requires(!std::is_const_v<T>) void recv_enqueue(std::span<T, N> buf, int source, int tag,
                                                    weft_status *status = WEFT_STATUS_IGNORE) const {
        recv_enqueue(buf.data(), buf.size(), datatype_of_v<T>, source, tag, status);
    }
    void allreduce_enqueue(const void *in, void *out, size_t count, weft_datatype type, weft_op op) const {
        check(weft_allreduce_enqueue(in, out, count, type, op, c_));
    }
    void bcast_enqueue(void *buf, size_t count, weft_datatype type, int root) const {
        check(weft_bcast_enqueue(buf, count, type, root, c_));
    }
    void barrier_enqueue() const { check(weft_barrier_enqueue(c_)); }
    void allgather_enqueue(const void *in, size_t in_count, weft_datatype in_type, void *out, size_t out_count,
                           weft_datatype out_type) const {
        check(weft_allgather_enqueue(in, in_count, in_type, out, out_count, out_type, c_));
    }

  protected:
    weft_comm c_ = WEFT_COMM_WORLD;
};

// A communicator this program created (dup, split, stream communicators): freed on destruction.
class UniqueComm : public Comm {
  public:
    UniqueComm() noexcept : Comm(WEFT_COMM_NULL) {}
    explicit UniqueComm(weft_comm adopt) noexcept : Comm(adopt) {}
    ~UniqueComm() { reset(); }
    UniqueComm(const UniqueComm &) = delete;
    UniqueComm &operator=(const UniqueComm &) = delete;
    UniqueComm(UniqueComm &&o) noexcept : Comm(std::exchange(o.c_, WEFT_COMM_NULL)) {}
    UniqueComm &operator=(UniqueComm &&o) noexcept {
        if (this != &o) {
            reset();
            c_ = std::exchange(o.c_, WEFT_COMM_NULL);
        }
        return *this;
    }
    explicit operator bool() const noexcept { return c_ != WEFT_COMM_NULL; }
    void reset() noexcept {
        if (c_ != WEFT_COMM_NULL) weft_comm_free(&c_);
    }
};

inline UniqueComm dup(Comm parent) {
    weft_comm c = WEFT_COMM_NULL;
    check(weft_comm_dup(parent.handle(), &c));
    return UniqueComm(c);
}
// color < 0 gives an empty UniqueComm, as WEFT_UNDEFINED does in C.
inline UniqueComm split(Comm parent, int color, int key) {
    weft_comm c = WEFT_COMM_NULL;
    check(weft_comm_split(parent.handle(), color, key, &c));
    return UniqueComm(c);
}

// ---- Streams ----

// A serial execution context with its own network endpoint (weft_stream_create).
class Stream {
  public:
    Stream() { check(weft_stream_create(WEFT_INFO_NULL, &s_)); }
    explicit Stream(const Info &hints) { check(weft_stream_create(hints.handle(), &s_)); }
    ~Stream() {
        if (s_ == WEFT_STREAM_NULL) return;
        weft_stop_progress_thread(s_);  // fails harmlessly when none runs
        weft_stream_free(&s_);
    }
    Stream(const Stream &) = delete;
    Stream &operator=(const Stream &) = delete;
    Stream(Stream &&o) noexcept : s_(std::exchange(o.s_, WEFT_STREAM_NULL)) {}
    Stream &operator=(Stream &&o) noexcept {
        if (this != &o) std::swap(s_, o.s_);
        return *this;
    }
    weft_stream handle() const noexcept { return s_; }
    void progress() const { check(weft_stream_progress(s_)); }
    void start_progress_thread() const { check(weft_start_progress_thread(s_)); }
    void stop_progress_thread() const { check(weft_stop_progress_thread(s_)); }

  private:
    weft_stream s_ = WEFT_STREAM_NULL;
};

// Collective: a communicator whose operations on this process run on `stream` (which may be
// WEFT_STREAM_NULL for a process that attaches none).
inline UniqueComm stream_comm(Comm parent, weft_stream stream) {
    weft_comm c = WEFT_COMM_NULL;
    check(weft_stream_comm_create(parent.handle(), stream, &c));
    return UniqueComm(c);
}
inline UniqueComm stream_comm(Comm parent, const Stream &stream) { return stream_comm(parent, stream.handle()); }
// Collective: one communicator over several local streams, addressed by index.
inline UniqueComm multiplex_comm(Comm parent, std::span<const weft_stream> streams) {
    weft_comm c = WEFT_COMM_NULL;
    check(weft_stream_comm_create_multiplex(parent.handle(), streams.size(), streams.data(), &c));
    return UniqueComm(c);
}

// ---- PGAS active messages ----

namespace detail {
// A span longer than any valid count reaches the C API as an invalid count (never as a
// truncated valid one), so the library rejects it with its own error.
inline unsigned am_nargs(std::span<const uint64_t> args) noexcept {
    return args.size() > WEFT_AM_MAX_ARGS ? WEFT_AM_MAX_ARGS + 1u : static_cast<unsigned>(args.size());
}
}  // namespace detail

// What a handler is told: a view of weft_am_info, valid until the handler returns.
class AmMessage {
  public:
    AmMessage(weft_pgas kernel, const weft_am_info &info) noexcept : kernel_(kernel), info_(&info) {}

    weft_pgas kernel() const noexcept { return kernel_; }  // the kernel the handler runs on
    int source() const noexcept { return info_->source; }
    unsigned handler() const noexcept { return info_->handler; }
    unsigned token() const noexcept { return info_->token; }
    int kind() const noexcept { return info_->kind; }  // WEFT_AM_SHORT ... WEFT_AM_LONG_VECTORED
    bool is_reply() const noexcept { return info_->is_reply != 0; }
    std::span<const uint64_t> args() const noexcept { return {info_->args, info_->args ? info_->nargs : 0u}; }
    // Medium: the payload.  Empty for the other kinds, whose data is in the segment.
    std::span<const std::byte> payload() const noexcept {
        if (info_->payload == nullptr) return {};
        return {static_cast<const std::byte *>(info_->payload), info_->length};
    }
    size_t length() const noexcept { return info_->length; }  // Medium, Long: payload bytes
    size_t offset() const noexcept { return info_->offset; }  // Long: where the data landed
    // Once, from a request's handler: a Short reply running `handler` on the sender.
    void reply_short(unsigned handler, std::span<const uint64_t> args = {}) const {
        check(weft_am_reply_short(info_, handler, args.data(), detail::am_nargs(args)));
    }
    const weft_am_info &c_info() const noexcept { return *info_; }

  private:
    weft_pgas kernel_;
    const weft_am_info *info_;
};

namespace detail {
// Callables registered through weft::Pgas, shared by the owning Pgas and its kernel() views so
// that a view may register handlers that outlive it.  Heap nodes: the C library holds their
// addresses as user_data, so they must not move when a Pgas does.
struct pgas_handlers {
    using function = std::function<void(const AmMessage &)>;
    std::mutex lock;
    std::map<std::pair<weft_pgas, unsigned>, std::unique_ptr<function>> slots;

    // An escaping exception would unwind through the C library: it terminates instead.
    static void trampoline(weft_pgas kernel, const weft_am_info *info, void *user_data) noexcept {
        (*static_cast<function *>(user_data))(AmMessage(kernel, *info));
    }
};
}  // namespace detail

// One local kernel of a PGAS context (the Shoal kernel API).  The Pgas made by the constructor
// owns the context and frees it (collectively, like weft_pgas_free) on destruction; kernel()
// and view() give non-owning ones.  Remote addresses are byte offsets into the target kernel's
// segment; kernels are numbered as weft.h describes (kernel_id(), num_kernels()).
class Pgas {
  public:
    Pgas() noexcept = default;
    // Collective over comm: each local kernel gets a zero-filled segment of segment_size bytes.
    Pgas(Comm comm, size_t segment_size) : Pgas(comm, segment_size, WEFT_INFO_NULL) {}
    // With hints such as weft_am_shoal_compat=true.
    Pgas(Comm comm, size_t segment_size, const Info &hints) : Pgas(comm, segment_size, hints.handle()) {}
    // Takes ownership of the handle weft_pgas_create returned (freed by the destructor).
    explicit Pgas(weft_pgas adopt)
        : h_(adopt), owns_(adopt != WEFT_PGAS_NULL), handlers_(std::make_shared<detail::pgas_handlers>()) {}
    // A non-owning Pgas for a kernel handle (e.g. the one a C handler is given).  Callables
    // registered through it live only as long as it does, unlike those of a kernel() view.
    static Pgas view(weft_pgas kernel) noexcept { return Pgas(kernel, false, nullptr); }
    ~Pgas() { reset(); }
    Pgas(const Pgas &) = delete;
    Pgas &operator=(const Pgas &) = delete;
    Pgas(Pgas &&o) noexcept
        : h_(std::exchange(o.h_, WEFT_PGAS_NULL)),
          owns_(std::exchange(o.owns_, false)),
          handlers_(std::move(o.handlers_)) {}
    Pgas &operator=(Pgas &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, WEFT_PGAS_NULL);
            owns_ = std::exchange(o.owns_, false);
            handlers_ = std::move(o.handlers_);
        }
        return *this;
    }

    weft_pgas handle() const noexcept { return h_; }
    bool owns() const noexcept { return owns_; }
    explicit operator bool() const noexcept { return h_ != WEFT_PGAS_NULL; }
    // Gives up ownership: the caller frees the handle with weft_pgas_free.
    weft_pgas release() noexcept {
        owns_ = false;
        return std::exchange(h_, WEFT_PGAS_NULL);
    }

    // Local kernel `index` (its stream index on a multiplex communicator), not owned.
    Pgas kernel(int index) const {
        weft_pgas k = WEFT_PGAS_NULL;
        check(weft_pgas_get_kernel(h_, index, &k));
        return Pgas(k, false, handlers_);
    }
    int kernel_id() const {
        int id = -1;
        check(weft_pgas_kernel_id(h_, &id));
        return id;
    }
    int num_kernels() const {
        int n = 0;
        check(weft_pgas_num_kernels(h_, &n));
        return n;
    }
    std::span<std::byte> segment() const {
        void *base = nullptr;
        size_t size = 0;
        check(weft_pgas_segment(h_, &base, &size));
        return {static_cast<std::byte *>(base), size};
    }

    void progress() const { check(weft_pgas_progress(h_)); }
    // Waits until the kernel's counter reaches value, then subtracts value.
    void wait_counter(uint64_t value) const { check(weft_pgas_wait_counter(h_, value)); }
    void barrier() const { check(weft_pgas_barrier(h_)); }
    uint64_t bad_packets() const {
        uint64_t n = 0;
        check(weft_pgas_bad_packets(h_, &n));
        return n;
    }
    size_t max_medium() const {
        size_t n = 0;
        check(weft_am_max_medium(h_, &n));
        return n;
    }
    size_t max_long() const {
        size_t n = 0;
        check(weft_am_max_long(h_, &n));
        return n;
    }
    unsigned max_args() const {
        unsigned n = 0;
        check(weft_am_max_args(h_, &n));
        return n;
    }

    // Handlers WEFT_AM_HANDLER_FIRST..255.  A C function (replacing any callable there):
    void register_handler(unsigned index, weft_am_handler fn, void *user_data = nullptr) {
        check(weft_am_register(h_, index, fn, user_data));
        forget_callable(index);
    }
    // A callable f(const AmMessage &), kept until the context is freed or the index is
    // registered again (not from inside that handler itself: it would destroy the running
    // callable).  It must not throw.  Allocates here, never per message.
    template <class F>
    requires(std::is_invocable_v<F &, const AmMessage &> &&
             !std::is_convertible_v<F, weft_am_handler>) void register_handler(unsigned index, F &&f) {
        auto fn = std::make_unique<detail::pgas_handlers::function>(std::forward<F>(f));
        if (!handlers_) handlers_ = std::make_shared<detail::pgas_handlers>();
        check(weft_am_register(h_, index, &detail::pgas_handlers::trampoline, fn.get()));
        std::lock_guard<std::mutex> g(handlers_->lock);
        handlers_->slots[{h_, index}] = std::move(fn);
    }

    // ---- Messages ----
    // args: up to WEFT_AM_MAX_ARGS words.  flags: WEFT_AM_ASYNC (no automatic reply).  Each
    // returns once a caller's buffer may be reused; segment data must stay unchanged until the
    // reply arrives.  Payload spans may hold any trivially copyable type.
    void short_am(int dst, unsigned handler, std::span<const uint64_t> args = {}, unsigned flags = 0) const {
        check(weft_am_short(h_, dst, handler, args.data(), detail::am_nargs(args), flags));
    }

    // Medium: the payload goes to the target's handler.
    template <class T, size_t N>
    requires std::is_trivially_copyable_v<T>
    void medium(int dst, unsigned handler, std::span<const uint64_t> args, std::span<T, N> payload,
                unsigned flags = 0) const {
        check(weft_am_medium(h_, dst, handler, args.data(), detail::am_nargs(args), payload.data(),
                             payload.size_bytes(), flags));
    }
    // Medium whose payload is this kernel's segment bytes [src_offset, src_offset + length).
    void medium_seg(int dst, unsigned handler, std::span<const uint64_t> args, size_t src_offset, size_t length,
                    unsigned flags = 0) const {
        check(weft_am_medium_seg(h_, dst, handler, args.data(), detail::am_nargs(args), src_offset, length, flags));
    }

    // Long: the payload is written at dst_offset in the target's segment before its handler runs.
    template <class T, size_t N>
    requires std::is_trivially_copyable_v<T>
    void long_am(int dst, unsigned handler, std::span<const uint64_t> args, std::span<T, N> payload, size_t dst_offset,
                 unsigned flags = 0) const {
        check(weft_am_long(h_, dst, handler, args.data(), detail::am_nargs(args), payload.data(), payload.size_bytes(),
                           dst_offset, flags));
    }
    void long_seg(int dst, unsigned handler, std::span<const uint64_t> args, size_t src_offset, size_t length,
                  size_t dst_offset, unsigned flags = 0) const {
        check(weft_am_long_seg(h_, dst, handler, args.data(), detail::am_nargs(args), src_offset, length, dst_offset,
                               flags));
    }
    // Strided and vectored Longs read this kernel's segment; both sides move the same bytes.
    void long_strided(int dst, unsigned handler, std::span<const uint64_t> args, const weft_am_stride &src,
                      const weft_am_stride &dst_region, unsigned flags = 0) const {
        check(weft_am_long_strided(h_, dst, handler, args.data(), detail::am_nargs(args), &src, &dst_region, flags));
    }
    void long_vectored(int dst, unsigned handler, std::span<const uint64_t> args, std::span<const weft_am_piece> src,
                       std::span<const weft_am_piece> dst_pieces, unsigned flags = 0) const {
        check(weft_am_long_vectored(h_, dst, handler, args.data(), detail::am_nargs(args), src.data(), src.size(),
                                    dst_pieces.data(), dst_pieces.size(), flags));
    }

    // Gets: the target's segment data lands in this kernel's segment; its arrival is the reply
    // (wait_replies counts it) and then runs `handler` here (WEFT_AM_H_EMPTY for none).
    void get_long(int target, unsigned handler, std::span<const uint64_t> args, size_t remote_offset, size_t length,
                  size_t local_offset, unsigned flags = 0) const {
        check(weft_am_get_long(h_, target, handler, args.data(), detail::am_nargs(args), remote_offset, length,
                               local_offset, flags));
    }
    void get_strided(int target, unsigned handler, std::span<const uint64_t> args, const weft_am_stride &remote,
                     const weft_am_stride &local, unsigned flags = 0) const {
        check(weft_am_get_strided(h_, target, handler, args.data(), detail::am_nargs(args), &remote, &local, flags));
    }

    // Waits until n automatic replies arrived (counting since the last call) and consumes them.
    void wait_replies(size_t n) const { check(weft_am_wait_replies(h_, n)); }

  private:
    Pgas(Comm comm, size_t segment_size, weft_info hints) : handlers_(std::make_shared<detail::pgas_handlers>()) {
        check(weft_pgas_create(comm.handle(), segment_size, hints, &h_));
        owns_ = true;
    }
    Pgas(weft_pgas kernel, bool owns, std::shared_ptr<detail::pgas_handlers> handlers) noexcept
        : h_(kernel), owns_(owns), handlers_(std::move(handlers)) {}

    void forget_callable(unsigned index) noexcept {
        if (!handlers_) return;
        std::lock_guard<std::mutex> g(handlers_->lock);
        handlers_->slots.erase({h_, index});
    }
    // After the free no handler can run, so the callables may go (with the last Pgas sharing them).
    void reset() noexcept {
        if (owns_ && h_ != WEFT_PGAS_NULL) weft_pgas_free(&h_);
        h_ = WEFT_PGAS_NULL;
        owns_ = false;
        handlers_.reset();
    }

    weft_pgas h_ = WEFT_PGAS_NULL;
    bool owns_ = false;
    std::shared_ptr<detail::pgas_handlers> handlers_;
};

// ---- Environment ----

// weft_init_thread in the constructor, weft_finalize in the destructor.  One per process.
class Environment {
  public:
    explicit Environment(int required = WEFT_THREAD_SINGLE) {
        check(weft_init_thread(nullptr, nullptr, required, &provided_));
    }
    Environment(int &argc, char **&argv, int required = WEFT_THREAD_SINGLE) {
        check(weft_init_thread(&argc, &argv, required, &provided_));
    }
    // With hints such as "weft_fabric".
    Environment(int required, const Info &hints) {
        check(weft_init_info(nullptr, nullptr, required, hints.handle(), &provided_));
    }
    ~Environment() { weft_finalize(); }
    Environment(const Environment &) = delete;
    Environment &operator=(const Environment &) = delete;

    int thread_level() const noexcept { return provided_; }
    static bool initialized() {
        int flag = 0;
        check(weft_initialized(&flag));
        return flag != 0;
    }
    static bool finalized() {
        int flag = 0;
        check(weft_finalized(&flag));
        return flag != 0;
    }

  private:
    int provided_ = WEFT_THREAD_SINGLE;
};

inline double wtime() noexcept { return weft_wtime(); }
inline double wtick() noexcept { return weft_wtick(); }

}  // namespace weft

// ---- Error handlers and error classes.
//
// How they meet weft.hpp's exceptions: the C++ layer throws weft::error for every code a call
// returns.  With the default handler, WEFT_ERRORS_RETURN, C++ programs therefore get
// exceptions (what MPI's C++ bindings called MPI::ERRORS_THROW_EXCEPTIONS).  A user handler
// runs first, inside the failing call, and the exception follows once the call returns;
// WEFT_ERRORS_ARE_FATAL and WEFT_ERRORS_ABORT end the job before any exception.
namespace weft {

namespace detail {
// The C++ callables of handlers made by this layer, by handle.  An entry outlives its
// Errhandler (a communicator keeps a freed handler alive); a handle reused later replaces it.
struct errhandler_callables {
    std::mutex mutex;
    std::map<weft_errhandler, std::shared_ptr<const std::function<void(weft_comm, int)>>> by_handle;
    static errhandler_callables &get() {
        static errhandler_callables *c = new errhandler_callables;  // used until exit
        return *c;
    }
};

inline void errhandler_trampoline(weft_comm *comm, int *code, ...) {
    weft_errhandler h = WEFT_ERRHANDLER_NULL;
    if (weft_comm_get_errhandler(*comm, &h) != WEFT_SUCCESS) return;
    std::shared_ptr<const std::function<void(weft_comm, int)>> fn;
    {
        errhandler_callables &c = errhandler_callables::get();
        std::lock_guard lock(c.mutex);
        auto it = c.by_handle.find(h);
        if (it != c.by_handle.end()) fn = it->second;
    }
    weft_errhandler_free(&h);  // get_errhandler's reference
    if (fn) (*fn)(*comm, *code);
}
}  // namespace detail

// An error handler this program made: freed on destruction (a communicator it is set on keeps
// it alive meanwhile).  The predefined ones are plain handles: WEFT_ERRORS_RETURN ...
class Errhandler {
  public:
    // fn(communicator, code) runs inside the failing call, before it returns the code (and
    // before weft.hpp throws).  It must not throw: it runs inside the library.
    explicit Errhandler(std::function<void(Comm, int)> fn) {
        auto callable = std::make_shared<const std::function<void(weft_comm, int)>>(
            [fn = std::move(fn)](weft_comm c, int code) noexcept { fn(Comm(c), code); });
        // No error reaches the handle before it is registered: no communicator has it yet.
        check(weft_comm_create_errhandler(detail::errhandler_trampoline, &h_));
        detail::errhandler_callables &c = detail::errhandler_callables::get();
        std::lock_guard lock(c.mutex);
        c.by_handle[h_] = std::move(callable);
    }
    // A C handler.
    explicit Errhandler(weft_comm_errhandler_function *fn) { check(weft_comm_create_errhandler(fn, &h_)); }
    // Takes ownership of a handle (weft_comm_get_errhandler's reference); a predefined handle
    // is held without being freed.
    static Errhandler adopt(weft_errhandler h) noexcept { return Errhandler(h, 0); }
    ~Errhandler() { reset(); }
    Errhandler(const Errhandler &) = delete;
    Errhandler &operator=(const Errhandler &) = delete;
    Errhandler(Errhandler &&o) noexcept : h_(std::exchange(o.h_, WEFT_ERRHANDLER_NULL)) {}
    Errhandler &operator=(Errhandler &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, WEFT_ERRHANDLER_NULL);
        }
        return *this;
    }
    weft_errhandler handle() const noexcept { return h_; }
    void reset() noexcept {
        if (h_ != WEFT_ERRHANDLER_NULL && h_ != WEFT_ERRORS_RETURN && h_ != WEFT_ERRORS_ARE_FATAL &&
            h_ != WEFT_ERRORS_ABORT)
            weft_errhandler_free(&h_);
        h_ = WEFT_ERRHANDLER_NULL;
    }

  private:
    Errhandler(weft_errhandler h, int) noexcept : h_(h) {}
    weft_errhandler h_ = WEFT_ERRHANDLER_NULL;
};

// comm's handler from now on (communicators created from comm inherit it).
inline void set_errhandler(Comm comm, weft_errhandler h) { check(weft_comm_set_errhandler(comm.handle(), h)); }
inline void set_errhandler(Comm comm, const Errhandler &h) { set_errhandler(comm, h.handle()); }
// comm's handler, as an owning Errhandler (compare handle() with WEFT_ERRORS_RETURN ...).
inline Errhandler get_errhandler(Comm comm) {
    weft_errhandler h = WEFT_ERRHANDLER_NULL;
    check(weft_comm_get_errhandler(comm.handle(), &h));
    return Errhandler::adopt(h);
}
// Runs comm's handler with code, as a failing call would.
inline void call_errhandler(Comm comm, int code) { check(weft_comm_call_errhandler(comm.handle(), code)); }

// ---- Error classes ----
inline int error_class(int code) {
    int cls = 0;
    check(weft_error_class(code, &cls));
    return cls;
}
inline int add_error_class() {
    int cls = 0;
    check(weft_add_error_class(&cls));
    return cls;
}
inline int add_error_code(int error_class) {
    int code = 0;
    check(weft_add_error_code(error_class, &code));
    return code;
}
inline void add_error_string(int code, const std::string &text) { check(weft_add_error_string(code, text.c_str())); }

}  // namespace weft

// ---- Groups and communicators made from them: failing calls throw weft::error; handles stay
// reachable (handle()).
namespace weft {

// ---- Groups ----

// An owned group, freed by the destructor (WEFT_GROUP_EMPTY, predefined, is never freed).
class Group {
  public:
    Group() noexcept = default;
    explicit Group(weft_group adopt) noexcept : h_(adopt) {}
    ~Group() { reset(); }
    Group(const Group &) = delete;
    Group &operator=(const Group &) = delete;
    Group(Group &&o) noexcept : h_(std::exchange(o.h_, WEFT_GROUP_NULL)) {}
    Group &operator=(Group &&o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, WEFT_GROUP_NULL);
        }
        return *this;
    }

    static Group of(Comm c) {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_comm_group(c.handle(), &g));
        return Group(g);
    }
    static Group empty() noexcept { return Group(WEFT_GROUP_EMPTY); }

    int size() const {
        int s = 0;
        check(weft_group_size(h_, &s));
        return s;
    }
    // The calling process's rank, or (int)WEFT_UNDEFINED (-1) when it is not a member.
    int rank() const {
        int r = -1;
        check(weft_group_rank(h_, &r));
        return r;
    }
    bool contains_me() const { return rank() != static_cast<int>(WEFT_UNDEFINED); }

    Group incl(std::span<const int> ranks) const {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_incl(h_, ranks.size(), ranks.data(), &g));
        return Group(g);
    }
    Group excl(std::span<const int> ranks) const {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_excl(h_, ranks.size(), ranks.data(), &g));
        return Group(g);
    }
    // Triplets (first, last, stride).
    Group range_incl(std::span<const std::array<int, 3>> ranges) const {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_range_incl(h_, ranges.size(), triplets(ranges), &g));
        return Group(g);
    }
    Group range_excl(std::span<const std::array<int, 3>> ranges) const {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_range_excl(h_, ranges.size(), triplets(ranges), &g));
        return Group(g);
    }
    friend Group set_union(const Group &a, const Group &b) {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_union(a.h_, b.h_, &g));
        return Group(g);
    }
    friend Group set_intersection(const Group &a, const Group &b) {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_intersection(a.h_, b.h_, &g));
        return Group(g);
    }
    friend Group set_difference(const Group &a, const Group &b) {
        weft_group g = WEFT_GROUP_NULL;
        check(weft_group_difference(a.h_, b.h_, &g));
        return Group(g);
    }
    // The ranks in `to` of the processes at `ranks` here (WEFT_UNDEFINED as int: not in `to`).
    std::vector<int> translate(std::span<const int> ranks, const Group &to) const {
        std::vector<int> out(ranks.size());
        check(weft_group_translate_ranks(h_, ranks.size(), ranks.data(), to.h_, out.data()));
        return out;
    }
    // WEFT_IDENT, WEFT_SIMILAR or WEFT_UNEQUAL.
    int compare(const Group &o) const {
        int r = WEFT_UNEQUAL;
        check(weft_group_compare(h_, o.h_, &r));
        return r;
    }

    weft_group handle() const noexcept { return h_; }
    operator weft_group() const noexcept { return h_; }
    weft_group release() noexcept { return std::exchange(h_, WEFT_GROUP_NULL); }

  private:
    // The C API takes int[][3], as MPI does; the triplets are only read.
    static int (*triplets(std::span<const std::array<int, 3>> ranges))[3] {
        static_assert(sizeof(std::array<int, 3>) == 3 * sizeof(int));
        return reinterpret_cast<int(*)[3]>(const_cast<std::array<int, 3> *>(ranges.data()));
    }
    void reset() noexcept {
        if (h_ != WEFT_GROUP_NULL && h_ != WEFT_GROUP_EMPTY) weft_group_free(&h_);
        h_ = WEFT_GROUP_NULL;
    }
    weft_group h_ = WEFT_GROUP_NULL;
};

// ---- Communicators from groups ----

// Collective over parent; an empty UniqueComm where this process is not in group.
inline UniqueComm create(Comm parent, const Group &group) {
    weft_comm c = WEFT_COMM_NULL;
    check(weft_comm_create(parent.handle(), group.handle(), &c));
    return UniqueComm(c);
}
// Collective over group's members only.
inline UniqueComm create_group(Comm parent, const Group &group, int tag) {
    weft_comm c = WEFT_COMM_NULL;
    check(weft_comm_create_group(parent.handle(), group.handle(), tag, &c));
    return UniqueComm(c);
}
// WEFT_IDENT, WEFT_CONGRUENT, WEFT_SIMILAR or WEFT_UNEQUAL.
inline int compare(Comm a, Comm b) {
    int r = WEFT_UNEQUAL;
    check(weft_comm_compare(a.handle(), b.handle(), &r));
    return r;
}
inline void set_name(Comm c, const std::string &name) { check(weft_comm_set_name(c.handle(), name.c_str())); }
inline std::string get_name(Comm c) {
    char buf[WEFT_MAX_OBJECT_NAME] = {};
    size_t len = 0;
    check(weft_comm_get_name(c.handle(), buf, &len));
    return std::string(buf, len);
}

// A nonblocking dup: the communicator is usable once request has completed.
struct IdupResult {
    UniqueComm comm;
    Request request;
};
inline IdupResult idup(Comm parent) {
    weft_comm c = WEFT_COMM_NULL;
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_comm_idup(parent.handle(), &c, &r));
    return IdupResult{UniqueComm(c), Request(r)};
}

}  // namespace weft

// ---- Derived datatypes: the constructors as functions returning an owning weft::Datatype, the
// true extent, element counts, and pack/unpack over std::span.
namespace weft {
namespace types {

namespace detail {
// Throws std::invalid_argument when arrays that go together differ in length.
inline void same_length(size_t a, size_t b, const char *fn) {
    if (a != b)
        throw std::invalid_argument(std::string("weft::types::") + fn + ": the arrays have " + std::to_string(a) +
                                    " and " + std::to_string(b) + " elements; they must match");
}
}  // namespace detail

// stride in bytes.
inline Datatype hvector(size_t count, size_t blocklength, std::ptrdiff_t stride, weft_datatype oldtype) {
    weft_datatype n = WEFT_DATATYPE_NULL;
    check(weft_type_create_hvector(count, blocklength, stride, oldtype, &n));
    return Datatype(n);
}
// Block i: blocklengths[i] elements at displacements[i] extents of oldtype.
inline Datatype indexed(std::span<const size_t> blocklengths, std::span<const std::ptrdiff_t> displacements,
                        weft_datatype oldtype) {
    detail::same_length(blocklengths.size(), displacements.size(), "indexed");
    weft_datatype n = WEFT_DATATYPE_NULL;
    check(weft_type_indexed(blocklengths.size(), blocklengths.data(), displacements.data(), oldtype, &n));
    return Datatype(n);
}
// displacements in bytes.
inline Datatype hindexed(std::span<const size_t> blocklengths, std::span<const std::ptrdiff_t> displacements,
                         weft_datatype oldtype) {
    detail::same_length(blocklengths.size(), displacements.size(), "hindexed");
    weft_datatype n = WEFT_DATATYPE_NULL;
    check(weft_type_create_hindexed(blocklengths.size(), blocklengths.data(), displacements.data(), oldtype, &n));
    return Datatype(n);
}
inline Datatype indexed_block(size_t blocklength, std::span<const std::ptrdiff_t> displacements,
                              weft_datatype oldtype) {
    weft_datatype n = WEFT_DATATYPE_NULL;
    check(weft_type_create_indexed_block(displacements.size(), blocklength, displacements.data(), oldtype, &n));
    return Datatype(n);
}
inline Datatype hindexed_block(size_t blocklength, std::span<const std::ptrdiff_t> displacements,
                               weft_datatype oldtype) {
    weft_datatype n = WEFT_DATATYPE_NULL;
    check(weft_type_create_hindexed_block(displacements.size(), blocklength, displacements.data(), oldtype, &n));
    return Datatype(n);
}
// One field of a struct type: blocklength elements of type at displacement bytes.
struct field {
    size_t blocklength;
    std::ptrdiff_t displacement;
    weft_datatype type;
};
inline Datatype structure(std::span<const field> fields) {
    std::vector<size_t> bl;
    std::vector<std::ptrdiff_t> d;
    std::vector<weft_datatype> t;
    for (const field &f : fields) {
        bl.push_back(f.blocklength);
        d.push_back(f.displacement);
        t.push_back(f.type);
    }
    weft_datatype n = WEFT_DATATYPE_NULL;
    check(weft_type_create_struct(fields.size(), bl.data(), d.data(), t.data(), &n));
    return Datatype(n);
}
inline Datatype resized(weft_datatype oldtype, std::ptrdiff_t lb, std::ptrdiff_t extent) {
    weft_datatype n = WEFT_DATATYPE_NULL;
    check(weft_type_create_resized(oldtype, lb, extent, &n));
    return Datatype(n);
}
inline Datatype dup(weft_datatype oldtype) {
    weft_datatype n = WEFT_DATATYPE_NULL;
    check(weft_type_dup(oldtype, &n));
    return Datatype(n);
}
enum class order { c = WEFT_ORDER_C, fortran = WEFT_ORDER_FORTRAN };
inline Datatype subarray(std::span<const size_t> sizes, std::span<const size_t> subsizes,
                         std::span<const size_t> starts, order o, weft_datatype oldtype) {
    detail::same_length(sizes.size(), subsizes.size(), "subarray");
    detail::same_length(sizes.size(), starts.size(), "subarray");
    weft_datatype n = WEFT_DATATYPE_NULL;
    check(weft_type_create_subarray(sizes.size(), sizes.data(), subsizes.data(), starts.data(), static_cast<int>(o),
                                    oldtype, &n));
    return Datatype(n);
}

struct true_extent_t {
    std::ptrdiff_t lb, extent;
};
inline true_extent_t true_extent(weft_datatype type) {
    true_extent_t e{};
    check(weft_type_get_true_extent(type, &e.lb, &e.extent));
    return e;
}

// Basic elements received (WEFT_UNDEFINED when the message ends inside one).
inline size_t elements(const Status &s, weft_datatype type) {
    size_t n = 0;
    check(weft_get_elements(s.c_status(), type, &n));
    return n;
}

inline size_t pack_size(size_t count, weft_datatype type, Comm comm = Comm::world()) {
    size_t n = 0;
    check(weft_pack_size(count, type, comm.handle(), &n));
    return n;
}
// Packs count elements at in into out from position on; returns the position after them.
inline size_t pack(const void *in, size_t count, weft_datatype type, std::span<std::byte> out, size_t position = 0,
                   Comm comm = Comm::world()) {
    check(weft_pack(in, count, type, out.data(), out.size(), &position, comm.handle()));
    return position;
}
// Unpacks count elements from in at position into out; returns the position after them.
inline size_t unpack(std::span<const std::byte> in, size_t position, void *out, size_t count, weft_datatype type,
                     Comm comm = Comm::world()) {
    check(weft_unpack(in.data(), in.size(), &position, out, count, type, comm.handle()));
    return position;
}

}  // namespace types
}  // namespace weft

// ---- Synchronous sends, sendrecv, matched probe: free functions over weft::Comm.
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

// ---- reduce_scatter, alltoallw, reduce_local and op_commutative, as free functions taking the
// communicator first.  Span forms check their lengths and throw std::invalid_argument before
// calling.
namespace weft {

// Raw form: in holds the whole vector (sum of outcounts elements; WEFT_IN_PLACE: out holds it),
// rank r receives outcounts[r] elements of the reduction.
inline void reduce_scatter(const Comm &comm, const void *in, void *out, const size_t *outcounts, weft_datatype type,
                           weft_op op) {
    check(weft_reduce_scatter(in, out, outcounts, type, op, comm.handle()));
}
inline Request ireduce_scatter(const Comm &comm, const void *in, void *out, const size_t *outcounts, weft_datatype type,
                               weft_op op) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_ireduce_scatter(in, out, outcounts, type, op, comm.handle(), &r));
    return Request(r);
}

namespace detail {
// counts has one entry per rank; returns their sum.
inline size_t check_counts(const Comm &comm, std::span<const size_t> counts, const char *fn) {
    size_t n = static_cast<size_t>(comm.size());
    check_count(counts.size() == n, fn, "counts", counts.size(), "expected size() =", n);
    return std::accumulate(counts.begin(), counts.end(), size_t{0});
}
}  // namespace detail

// in holds the blocks of every rank (counts[r] elements for rank r, in rank order); out
// receives this rank's block of the reduction.
template <class In, size_t N, class Out, size_t M>
requires detail::same_elements<In, Out>
void reduce_scatter(const Comm &comm, std::span<In, N> in, std::span<Out, M> out, std::span<const size_t> counts,
                    weft_op op) {
    size_t total = detail::check_counts(comm, counts, "reduce_scatter");
    detail::check_count(in.size() == total, "reduce_scatter", "in", in.size(), "expected the sum of counts =", total);
    size_t mine = counts[static_cast<size_t>(comm.rank())];
    detail::check_count(out.size() == mine, "reduce_scatter", "out", out.size(), "expected counts[rank()] =", mine);
    reduce_scatter(comm, in.data(), out.data(), counts.data(), datatype_of_v<Out>, op);
}
// In place: inout holds every rank's blocks; this rank's result lands at its start.
template <builtin_type T, size_t N>
requires(!std::is_const_v<T>) void reduce_scatter(const Comm &comm, std::span<T, N> inout,
                                                  std::span<const size_t> counts, weft_op op) {
    size_t total = detail::check_counts(comm, counts, "reduce_scatter");
    detail::check_count(inout.size() == total, "reduce_scatter", "inout", inout.size(),
                        "expected the sum of counts =", total);
    reduce_scatter(comm, WEFT_IN_PLACE, inout.data(), counts.data(), datatype_of_v<T>, op);
}
template <class In, size_t N, class Out, size_t M>
requires detail::same_elements<In, Out> Request ireduce_scatter(const Comm &comm, std::span<In, N> in,
                                                                std::span<Out, M> out, std::span<const size_t> counts,
                                                                weft_op op) {
    size_t total = detail::check_counts(comm, counts, "ireduce_scatter");
    detail::check_count(in.size() == total, "ireduce_scatter", "in", in.size(), "expected the sum of counts =", total);
    size_t mine = counts[static_cast<size_t>(comm.rank())];
    detail::check_count(out.size() == mine, "ireduce_scatter", "out", out.size(), "expected counts[rank()] =", mine);
    return ireduce_scatter(comm, in.data(), out.data(), counts.data(), datatype_of_v<Out>, op);
}

// Per peer r: incounts[r] elements of intypes[r] at (char *)in + indispls[r] go to rank r;
// outcounts[r] elements of outtypes[r] at (char *)out + outdispls[r] come from it.
// Displacements in bytes.  in = WEFT_IN_PLACE: the in arrays are ignored (may be null).
inline void alltoallw(const Comm &comm, const void *in, const size_t *incounts, const std::ptrdiff_t *indispls,
                      const weft_datatype *intypes, void *out, const size_t *outcounts, const std::ptrdiff_t *outdispls,
                      const weft_datatype *outtypes) {
    check(weft_alltoallw(in, incounts, indispls, intypes, out, outcounts, outdispls, outtypes, comm.handle()));
}
inline Request ialltoallw(const Comm &comm, const void *in, const size_t *incounts, const std::ptrdiff_t *indispls,
                          const weft_datatype *intypes, void *out, const size_t *outcounts,
                          const std::ptrdiff_t *outdispls, const weft_datatype *outtypes) {
    weft_request r = WEFT_REQUEST_NULL;
    check(weft_ialltoallw(in, incounts, indispls, intypes, out, outcounts, outdispls, outtypes, comm.handle(), &r));
    return Request(r);
}

// inout[i] = in[i] op inout[i], locally.
inline void reduce_local(const void *in, void *inout, size_t count, weft_datatype type, weft_op op) {
    check(weft_reduce_local(in, inout, count, type, op));
}
template <class In, size_t N, class Out, size_t M>
requires detail::same_elements<In, Out>
void reduce_local(std::span<In, N> in, std::span<Out, M> inout, weft_op op) {
    detail::check_count(inout.size() == in.size(), "reduce_local", "inout", inout.size(), "expected", in.size());
    reduce_local(in.data(), inout.data(), in.size(), datatype_of_v<Out>, op);
}

inline bool op_commutative(weft_op op) {
    int commute = 0;
    check(weft_op_commutative(op, &commute));
    return commute != 0;
}

}  // namespace weft

// ---- Persistent requests, persistent collectives, and completion of some of many.
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
