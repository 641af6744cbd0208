// The MPI front end's translations between MPI (MPICH ABI) and Weft: handles, ranks, error
// codes, statuses, count arrays.  Inline: the hot path (MPI_Isend, MPI_Irecv, MPI_Wait,
// MPI_Test) is one compare or one table load per handle, no allocation, no lock.
//
// Predefined MPI objects have MPICH's values, which never equal a Weft handle of the same
// kind (Weft's kind lives in bits [31:28]); dynamic objects carry the Weft handle unchanged.
#pragma once

#include <mpi.h>
#include <weft/weft.h>

#include <climits>
#include <limits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

static_assert(sizeof(MPI_Aint) == sizeof(ptrdiff_t) && sizeof(MPI_Count) == sizeof(size_t),
              "the front end passes MPI_Aint / MPI_Count arrays to Weft as ptrdiff_t / size_t arrays");
static_assert(sizeof(MPI_Request) == sizeof(weft_request) && sizeof(MPI_Datatype) == sizeof(weft_datatype),
              "MPI handle arrays are translated in place");

namespace weft_mpi {

#define WEFT_MPI_HOT __attribute__((always_inline)) inline
#define WEFT_MPI_LIKELY(x) __builtin_expect(!!(x), 1)
#define WEFT_MPI_UNLIKELY(x) __builtin_expect(!!(x), 0)

// ---- communicators ----
WEFT_MPI_HOT weft_comm wcomm(MPI_Comm c) {
    if (WEFT_MPI_LIKELY(c == MPI_COMM_WORLD)) return WEFT_COMM_WORLD;
    if (c == MPI_COMM_SELF) return WEFT_COMM_SELF;
    if (c == MPI_COMM_NULL) return WEFT_COMM_NULL;
    return c;
}
WEFT_MPI_HOT MPI_Comm mcomm(weft_comm c) {
    if (c == WEFT_COMM_NULL) return MPI_COMM_NULL;
    if (c == WEFT_COMM_WORLD) return MPI_COMM_WORLD;
    if (c == WEFT_COMM_SELF) return MPI_COMM_SELF;
    return c;
}

// ---- datatypes: 0x4c00SSII (size SS, index II) and the pair types 0x8c00000i ----
struct type_row {
    MPI_Datatype mpi;
    weft_datatype weft;
};
struct basic_type_table {
    type_row rows[256];  // by the low byte
};
// The Weft type of each 0x4c00xxxx value, by its low 16 bits (an invalid type for values that
// are no MPI datatype): one load translates and validates a predefined type.
struct basic_type_index {
    weft_datatype weft[65536];
};
struct pair_type_table {
    type_row rows[4];
};
struct reverse_type_table {
    MPI_Datatype rows[32];  // Weft's built-in types, by their low bits
};
extern const basic_type_table basic_types;
extern const basic_type_index basic_type_of;
extern const pair_type_table pair_types;
extern const reverse_type_table weft_to_mpi_type;

WEFT_MPI_HOT weft_datatype wtype(MPI_Datatype t) {
    uint32_t u = static_cast<uint32_t>(t);
    if (WEFT_MPI_LIKELY((u >> 16) == 0x4c00u)) return basic_type_of.weft[u & 0xffffu];
    if ((u >> 4) == 0x8c00000u)
        return (u & 0xfu) < 4 ? pair_types.rows[u & 0xfu].weft : static_cast<weft_datatype>(0x5fffffff);
    if (t == MPI_DATATYPE_NULL) return WEFT_DATATYPE_NULL;
    return t;
}
inline MPI_Datatype mtype(weft_datatype t) {
    if (t == WEFT_DATATYPE_NULL) return MPI_DATATYPE_NULL;
    uint32_t u = static_cast<uint32_t>(t);
    if ((u & 0xffffffe0u) == 0x50000000u && weft_to_mpi_type.rows[u & 0x1fu] != 0)
        return weft_to_mpi_type.rows[u & 0x1fu];
    return t;
}

// ---- operations: MPI_MAX..MPI_MAXLOC (0x58000001..0c) are WEFT_MAX..WEFT_MAXLOC in order ----
WEFT_MPI_HOT weft_op wop(MPI_Op o) {
    uint32_t u = static_cast<uint32_t>(o);
    if ((u & 0xffffff00u) == 0x58000000u)
        return (u & 0xffu) >= 1 && (u & 0xffu) <= 0x0c ? static_cast<weft_op>(0x60000000u | (u & 0xffu))
                                                       : static_cast<weft_op>(0x6fffffff);
    if (o == MPI_OP_NULL) return WEFT_OP_NULL;
    return o;
}
inline MPI_Op mop(weft_op o) {
    uint32_t u = static_cast<uint32_t>(o);
    if (o == WEFT_OP_NULL) return MPI_OP_NULL;
    if ((u & 0xffffff00u) == 0x60000000u && (u & 0xffu) >= 1 && (u & 0xffu) <= 0x0c)  // Weft's predefined ops
        return static_cast<MPI_Op>(0x58000000u | (u & 0xffu));
    return o;
}

// ---- the other kinds: one null (and one predefined) value each ----
WEFT_MPI_HOT weft_request wreq(MPI_Request r) { return r == MPI_REQUEST_NULL ? WEFT_REQUEST_NULL : r; }
WEFT_MPI_HOT MPI_Request mreq(weft_request r) { return r == WEFT_REQUEST_NULL ? MPI_REQUEST_NULL : r; }
inline weft_group wgroup(MPI_Group g) {
    return g == MPI_GROUP_NULL ? WEFT_GROUP_NULL : g == MPI_GROUP_EMPTY ? WEFT_GROUP_EMPTY : g;
}
inline MPI_Group mgroup(weft_group g) {
    return g == WEFT_GROUP_NULL ? MPI_GROUP_NULL : g == WEFT_GROUP_EMPTY ? MPI_GROUP_EMPTY : g;
}
inline weft_message wmsg(MPI_Message m) {
    return m == MPI_MESSAGE_NULL ? WEFT_MESSAGE_NULL : m == MPI_MESSAGE_NO_PROC ? WEFT_MESSAGE_NO_PROC : m;
}
inline MPI_Message mmsg(weft_message m) {
    return m == WEFT_MESSAGE_NULL ? MPI_MESSAGE_NULL : m == WEFT_MESSAGE_NO_PROC ? MPI_MESSAGE_NO_PROC : m;
}
inline weft_info winfo(MPI_Info i) { return i == MPI_INFO_NULL ? WEFT_INFO_NULL : i; }
inline MPI_Info minfo(weft_info i) { return i == WEFT_INFO_NULL ? MPI_INFO_NULL : i; }
inline weft_stream wstream(MPIX_Stream s) { return s == MPIX_STREAM_NULL ? WEFT_STREAM_NULL : s; }
inline MPIX_Stream mstream(weft_stream s) { return s == WEFT_STREAM_NULL ? MPIX_STREAM_NULL : s; }
inline weft_errhandler werrh(MPI_Errhandler e) {
    switch (e) {
        case MPI_ERRHANDLER_NULL: return WEFT_ERRHANDLER_NULL;
        case MPI_ERRORS_ARE_FATAL: return WEFT_ERRORS_ARE_FATAL;
        case MPI_ERRORS_RETURN: return WEFT_ERRORS_RETURN;
        case MPI_ERRORS_ABORT: return WEFT_ERRORS_ABORT;
        default: return e;
    }
}
inline MPI_Errhandler merrh(weft_errhandler e) {
    switch (e) {
        case WEFT_ERRHANDLER_NULL: return MPI_ERRHANDLER_NULL;
        case WEFT_ERRORS_ARE_FATAL: return MPI_ERRORS_ARE_FATAL;
        case WEFT_ERRORS_RETURN: return MPI_ERRORS_RETURN;
        case WEFT_ERRORS_ABORT: return MPI_ERRORS_ABORT;
        default: return e;
    }
}

// ---- ranks: MPI_PROC_NULL (-1) / MPI_ANY_SOURCE (-2) are WEFT_PROC_NULL (-2) /
// WEFT_ANY_SOURCE (-1): the two values swap, by flipping bit 0 of every negative value (other
// negative values are invalid ranks on both sides and stay invalid); others are the same ----
WEFT_MPI_HOT int wrank(int r) { return r ^ static_cast<int>(static_cast<uint32_t>(r) >> 31); }
WEFT_MPI_HOT int mrank(int r) { return r ^ static_cast<int>(static_cast<uint32_t>(r) >> 31); }

// ---- error codes ----
// Weft code w (1..63) -> MPI class | w << 8; codes and classes a program added (Weft numbers
// them from 64) -> w | 0x40000000 (MPICH marks its dynamic codes with the same bit).
struct class_table {
    unsigned char rows[64];
};
extern const class_table weft_code_class;
constexpr int dynamic_bit = 0x40000000;
inline int merr(int w) {
    if (WEFT_MPI_LIKELY(w == WEFT_SUCCESS)) return MPI_SUCCESS;
    if (w > 0 && w < WEFT_ERR_FIRST_USER) return weft_code_class.rows[w] | (w << 8);
    return w | dynamic_bit;
}
int werr(int m);  // the Weft code of an MPI code or class (error.cpp)

// A failure found by the front end itself (a negative count, say): runs comm's error handler
// as a failing Weft call would, then returns the MPI code.
int fail(weft_comm comm, int weft_code, const char *fmt, ...) __attribute__((format(printf, 3, 4), cold));

// ---- statuses ----
inline void mstatus(const weft_status &w, MPI_Status *m) {
    m->MPI_SOURCE = mrank(w.source);
    m->MPI_TAG = w.tag;
    m->MPI_ERROR = merr(w.error);
    uint64_t bytes = w.weft_bytes_;
    m->count_lo = static_cast<int>(static_cast<uint32_t>(bytes));
    m->count_hi_and_cancelled = static_cast<int>(((bytes >> 32) << 1) | (w.weft_cancelled_ ? 1u : 0u));
}
inline uint64_t status_bytes(const MPI_Status *m) {
    return static_cast<uint32_t>(m->count_lo) |
        (static_cast<uint64_t>(static_cast<uint32_t>(m->count_hi_and_cancelled) >> 1) << 32);
}
inline weft_status wstatus(const MPI_Status *m) {
    weft_status w{};
    w.source = wrank(m->MPI_SOURCE);
    w.tag = m->MPI_TAG;
    w.error = werr(m->MPI_ERROR);
    w.weft_bytes_ = status_bytes(m);
    w.weft_cancelled_ = m->count_hi_and_cancelled & 1;
    return w;
}
// MPI_STATUS_IGNORE is (MPI_Status *)1: Weft's is NULL.
inline bool ignored(const MPI_Status *s) { return s == MPI_STATUS_IGNORE || s == nullptr; }

// A buffer of n T: on the stack up to N, else on the heap (collectives, multiple completion).
template <class T, size_t N = 64>
class scratch {
  public:
    explicit scratch(size_t n) : p_(n <= N ? stack_ : (heap_.reset(new T[n]), heap_.get())) {}
    T *get() { return p_; }
    T &operator[](size_t i) { return p_[i]; }

  private:
    T stack_[N];
    std::unique_ptr<T[]> heap_;
    T *p_;
};

// int or MPI_Count counts: negative ones are refused (MPI_ERR_COUNT).
template <class C>
WEFT_MPI_HOT bool bad_count(C c) {
    return WEFT_MPI_UNLIKELY(c < 0);
}

// Count and displacement arrays (int or MPI_Count / MPI_Aint) as Weft's size_t / ptrdiff_t
// arrays.  to_sizes is false when a count is negative.
template <class C>
bool to_sizes(const C *in, size_t n, size_t *out) {
    for (size_t i = 0; i < n; ++i) {
        if (in[i] < 0) return false;
        out[i] = static_cast<size_t>(in[i]);
    }
    return true;
}
template <class C>
void to_diffs(const C *in, size_t n, ptrdiff_t *out) {
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<ptrdiff_t>(in[i]);
}
inline void to_wtypes(const MPI_Datatype *in, size_t n, weft_datatype *out) {
    for (size_t i = 0; i < n; ++i) out[i] = wtype(in[i]);
}

// The status pointer to give Weft, and the copy back.
struct status_out {
    MPI_Status *m;
    weft_status w;
    weft_status *arg() { return ignored(m) ? WEFT_STATUS_IGNORE : &w; }
    void done() {
        if (!ignored(m)) mstatus(w, m);
    }
};

}  // namespace weft_mpi
