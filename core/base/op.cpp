// Reduction operations: the built-in kernels (one tight loop per op and basic datatype, picked
// from a table at bind time), the user-operation handle table, weft_op_create and weft_op_free.
#include "base/op.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "base/error.hpp"
#include "base/finalize_hooks.hpp"
#include "base/handle.hpp"
#include "base/lifecycle.hpp"

// GCC 12 at -O2 uses the "very cheap" vectorizer cost model, which leaves loops of unknown trip
// count scalar; the kernels ask for the full vectorizer.  Clang vectorizes them at -O2 as is.
#if defined(__GNUC__) && !defined(__clang__)
#define WEFT_VECTORIZE __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
#else
#define WEFT_VECTORIZE
#endif
#define WEFT_INLINE inline __attribute__((always_inline))

namespace weft {
namespace {

// ---- Kernels ----

using kernel_fn = void (*)(const void *, void *, size_t);

// Same layout as the pair types of datatype.cpp (the C struct {T value; int index;}).
template <class T>
struct pair_of {
    T v;
    int i;
};

// Integer arithmetic wraps (modulo 2^n) instead of overflowing: done in an unsigned type at
// least as wide as unsigned int, so that narrow types do not promote to (overflowing) int.
template <class T>
using wide_unsigned = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

struct f_max {
    template <class T>
    static WEFT_INLINE T apply(T a, T b) {
        return a > b ? a : b;
    }
};
struct f_min {
    template <class T>
    static WEFT_INLINE T apply(T a, T b) {
        return a < b ? a : b;
    }
};
struct f_sum {
    template <class T>
    static WEFT_INLINE T apply(T a, T b) {
        if constexpr (std::is_integral_v<T>) {
            using W = wide_unsigned<T>;
            return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
        } else {
            return a + b;
        }
    }
};
struct f_prod {
    template <class T>
    static WEFT_INLINE T apply(T a, T b) {
        if constexpr (std::is_integral_v<T>) {
            using W = wide_unsigned<T>;
            return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
        } else {
            return a * b;
        }
    }
};
// Logical ops give 0 or 1; any non-zero operand counts as true.
struct f_land {
    template <class T>
    static WEFT_INLINE T apply(T a, T b) {
        return static_cast<T>((a != 0) & (b != 0));
    }
};
struct f_lor {
    template <class T>
    static WEFT_INLINE T apply(T a, T b) {
        return static_cast<T>((a != 0) | (b != 0));
    }
};
struct f_lxor {
    template <class T>
    static WEFT_INLINE T apply(T a, T b) {
        return static_cast<T>((a != 0) != (b != 0));
    }
};
struct f_band {
    template <class T>
    static WEFT_INLINE T apply(T a, T b) {
        return static_cast<T>(a & b);
    }
};
struct f_bor {
    template <class T>
    static WEFT_INLINE T apply(T a, T b) {
        return static_cast<T>(a | b);
    }
};
struct f_bxor {
    template <class T>
    static WEFT_INLINE T apply(T a, T b) {
        return static_cast<T>(a ^ b);
    }
};

// inout[i] = in[i] op inout[i].  The buffers are distinct (restrict): no alias check, and the
// loop vectorizes.
template <class T, class F>
WEFT_VECTORIZE void loop(const T *__restrict in, T *__restrict inout, size_t n) {
    for (size_t i = 0; i < n; ++i) inout[i] = F::template apply<T>(in[i], inout[i]);
}
template <class T, class F>
void kernel(const void *in, void *inout, size_t n) {
    loop<T, F>(static_cast<const T *>(in), static_cast<T *>(inout), n);
}

// MINLOC / MAXLOC on (value, index) pairs: the better value wins; on equal values the smaller
// index.  Only the members are written, never the padding.
template <class T, bool Max>
WEFT_VECTORIZE void loc_loop(const pair_of<T> *__restrict in, pair_of<T> *__restrict inout, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        T av = in[i].v, bv = inout[i].v;
        int ai = in[i].i, bi = inout[i].i;
        bool take = Max ? (av > bv) : (av < bv);
        bool tie = av == bv;
        inout[i].v = take ? av : bv;
        inout[i].i = take ? ai : (tie ? (ai < bi ? ai : bi) : bi);
    }
}
template <class T, bool Max>
void loc_kernel(const void *in, void *inout, size_t n) {
    loc_loop<T, Max>(static_cast<const pair_of<T> *>(in), static_cast<pair_of<T> *>(inout), n);
}

// ---- The (op, basic kind) -> kernel table ----

constexpr size_t num_ops = WEFT_MAXLOC - WEFT_MAX + 1;
constexpr size_t num_kinds = datatype_builtin_count;
enum op_index : size_t {
    i_max,
    i_min,
    i_sum,
    i_prod,
    i_land,
    i_band,
    i_lor,
    i_bor,
    i_lxor,
    i_bxor,
    i_minloc,
    i_maxloc
};
static_assert(WEFT_MIN - WEFT_MAX == i_min && WEFT_BXOR - WEFT_MAX == i_bxor && WEFT_MAXLOC - WEFT_MAX == i_maxloc,
              "op_index out of step with weft.h");

using kernel_table = std::array<std::array<kernel_fn, num_kinds>, num_ops>;

constexpr size_t kind_index(basic_kind k) { return static_cast<size_t>(k); }

// Integer types: arithmetic, min/max, logical and bitwise.
template <class T>
constexpr void add_integer(kernel_table &t, basic_kind k) {
    size_t c = kind_index(k);
    t[i_max][c] = &kernel<T, f_max>;
    t[i_min][c] = &kernel<T, f_min>;
    t[i_sum][c] = &kernel<T, f_sum>;
    t[i_prod][c] = &kernel<T, f_prod>;
    t[i_land][c] = &kernel<T, f_land>;
    t[i_lor][c] = &kernel<T, f_lor>;
    t[i_lxor][c] = &kernel<T, f_lxor>;
    t[i_band][c] = &kernel<T, f_band>;
    t[i_bor][c] = &kernel<T, f_bor>;
    t[i_bxor][c] = &kernel<T, f_bxor>;
}
// Floating types: arithmetic and min/max.
template <class T>
constexpr void add_floating(kernel_table &t, basic_kind k) {
    size_t c = kind_index(k);
    t[i_max][c] = &kernel<T, f_max>;
    t[i_min][c] = &kernel<T, f_min>;
    t[i_sum][c] = &kernel<T, f_sum>;
    t[i_prod][c] = &kernel<T, f_prod>;
}
template <class T>
constexpr void add_pair(kernel_table &t, basic_kind k) {
    size_t c = kind_index(k);
    t[i_minloc][c] = &loc_kernel<T, false>;
    t[i_maxloc][c] = &loc_kernel<T, true>;
}

static_assert(sizeof(bool) == 1, "WEFT_C_BOOL is handled as one byte");

constexpr kernel_table build_kernels() {
    kernel_table t{};
    add_integer<int8_t>(t, basic_kind::int8);
    add_integer<uint8_t>(t, basic_kind::uint8);
    add_integer<int16_t>(t, basic_kind::int16);
    add_integer<uint16_t>(t, basic_kind::uint16);
    add_integer<int32_t>(t, basic_kind::int32);
    add_integer<uint32_t>(t, basic_kind::uint32);
    add_integer<int64_t>(t, basic_kind::int64);
    add_integer<uint64_t>(t, basic_kind::uint64);
    add_integer<int>(t, basic_kind::int_);
    add_integer<long>(t, basic_kind::long_);
    add_integer<unsigned>(t, basic_kind::unsigned_);
    add_integer<unsigned long>(t, basic_kind::unsigned_long);
    add_integer<short>(t, basic_kind::short_);
    add_integer<unsigned short>(t, basic_kind::unsigned_short);
    add_integer<long long>(t, basic_kind::long_long);
    add_integer<unsigned long long>(t, basic_kind::unsigned_long_long);
    add_integer<signed char>(t, basic_kind::signed_char);
    add_integer<unsigned char>(t, basic_kind::unsigned_char);
    add_floating<float>(t, basic_kind::float_);
    add_floating<double>(t, basic_kind::double_);
    add_floating<long double>(t, basic_kind::long_double);
    // WEFT_BYTE: bitwise only.
    size_t byte = kind_index(basic_kind::byte_);
    t[i_band][byte] = &kernel<unsigned char, f_band>;
    t[i_bor][byte] = &kernel<unsigned char, f_bor>;
    t[i_bxor][byte] = &kernel<unsigned char, f_bxor>;
    // WEFT_C_BOOL: logical only, read as bytes (any non-zero byte is true), written as 0/1.
    size_t cbool = kind_index(basic_kind::c_bool);
    t[i_land][cbool] = &kernel<unsigned char, f_land>;
    t[i_lor][cbool] = &kernel<unsigned char, f_lor>;
    t[i_lxor][cbool] = &kernel<unsigned char, f_lxor>;
    // WEFT_CHAR: nothing (MPI defines no reduction on MPI_CHAR).
    add_pair<float>(t, basic_kind::float_int);
    add_pair<double>(t, basic_kind::double_int);
    add_pair<long>(t, basic_kind::long_int);
    add_pair<int>(t, basic_kind::two_int);
    add_pair<short>(t, basic_kind::short_int);
    return t;
}

constexpr kernel_table g_kernels = build_kernels();

// The extent each kernel strides by, checked against the datatype at bind time.
constexpr std::array<size_t, num_kinds> kernel_extent = {
    sizeof(unsigned char),
    sizeof(char),
    1,
    1,
    2,
    2,
    4,
    4,
    8,
    8,
    sizeof(int),
    sizeof(long),
    sizeof(float),
    sizeof(double),
    sizeof(unsigned),
    sizeof(unsigned long),
    sizeof(short),
    sizeof(unsigned short),
    sizeof(long long),
    sizeof(unsigned long long),
    sizeof(signed char),
    sizeof(unsigned char),
    sizeof(bool),
    sizeof(long double),
    sizeof(pair_of<float>),
    sizeof(pair_of<double>),
    sizeof(pair_of<long>),
    sizeof(pair_of<int>),
    sizeof(pair_of<short>),
};

constexpr const char *op_names[num_ops] = {
    "WEFT_MAX", "WEFT_MIN", "WEFT_SUM",  "WEFT_PROD", "WEFT_LAND",   "WEFT_BAND",
    "WEFT_LOR", "WEFT_BOR", "WEFT_LXOR", "WEFT_BXOR", "WEFT_MINLOC", "WEFT_MAXLOC",
};

constexpr const char *type_names[num_kinds] = {
    "WEFT_BYTE",          "WEFT_CHAR",          "WEFT_INT8_T",         "WEFT_UINT8_T",     "WEFT_INT16_T",
    "WEFT_UINT16_T",      "WEFT_INT32_T",       "WEFT_UINT32_T",       "WEFT_INT64_T",     "WEFT_UINT64_T",
    "WEFT_INT",           "WEFT_LONG",          "WEFT_FLOAT",          "WEFT_DOUBLE",      "WEFT_UNSIGNED",
    "WEFT_UNSIGNED_LONG", "WEFT_SHORT",         "WEFT_UNSIGNED_SHORT", "WEFT_LONG_LONG",   "WEFT_UNSIGNED_LONG_LONG",
    "WEFT_SIGNED_CHAR",   "WEFT_UNSIGNED_CHAR", "WEFT_C_BOOL",         "WEFT_LONG_DOUBLE", "WEFT_FLOAT_INT",
    "WEFT_DOUBLE_INT",    "WEFT_LONG_INT",      "WEFT_2INT",           "WEFT_SHORT_INT",
};

// "WEFT_DOUBLE", or "the derived datatype 0x..." for anything else.
struct type_name {
    char buf[64];
    type_name(weft_datatype h, const datatype &t) {
        if (t.builtin && kind_index(t.basic) < num_kinds)
            std::snprintf(buf, sizeof buf, "%s", type_names[kind_index(t.basic)]);
        else
            std::snprintf(buf, sizeof buf, "the derived datatype 0x%08x", static_cast<unsigned>(h));
    }
};

bool is_predefined(weft_op op) { return op >= WEFT_MAX && op <= WEFT_MAXLOC; }

// ---- User operations ----

// Slots 1..12 are the predefined ops' (which live in no table); user ops start after.
constexpr uint32_t first_dynamic_slot = 0x20;

// Never destroyed, like the datatype table, so handles stay usable during static destruction.
handle_table<user_op> *const g_table = new handle_table<user_op>(handle_kind::op, first_dynamic_slot);

handle_table<user_op> &table() { return *g_table; }

}  // namespace

int op_bind(const char *fn, weft_op op, weft_datatype type, const datatype &t, op_binding &out) {
    if (is_predefined(op)) {
        size_t oi = static_cast<size_t>(op - WEFT_MAX);
        if (!t.builtin)
            return fail(WEFT_ERR_OP,
                        "%s: %s is defined only on built-in datatypes, not on %s "
                        "(use a built-in datatype, or a user operation)",
                        fn, op_names[oi], type_name(type, t).buf);
        size_t ki = kind_index(t.basic);
        kernel_fn k = ki < num_kinds ? g_kernels[oi][ki] : nullptr;
        if (k == nullptr)
            return fail(WEFT_ERR_OP, "%s: %s is not defined on %s", fn, op_names[oi], type_name(type, t).buf);
        if (t.lb != 0 || static_cast<size_t>(t.extent) != kernel_extent[ki])
            return fail(WEFT_ERR_INTERNAL, "%s: %s has extent %td, the %s kernel expects %zu", fn,
                        type_name(type, t).buf, t.extent, op_names[oi], kernel_extent[ki]);
        out.builtin = k;
        out.user.reset();
        out.type = type;
        out.elem_size = kernel_extent[ki];
        out.commutative = true;
        return WEFT_SUCCESS;
    }
    if (op == WEFT_OP_NULL) return fail(WEFT_ERR_OP, "%s: op is WEFT_OP_NULL", fn);
    std::shared_ptr<user_op> u = table().get_shared(op);
    if (!u)
        return fail(WEFT_ERR_OP,
                    "%s: op 0x%08x is not a valid operation (freed, never created, "
                    "or not an operation handle)",
                    fn, static_cast<unsigned>(op));
    // Built-ins (pairs included) are laid out as their C types at extent stride; a derived type
    // must be one dense run so that the user function sees whole elements back to back.
    if (!t.builtin && !t.contiguous)
        return fail(WEFT_ERR_OP,
                    "%s: the user operation 0x%08x needs a contiguous datatype, and %s "
                    "is not (it has gaps or a non-zero lower bound)",
                    fn, static_cast<unsigned>(op), type_name(type, t).buf);
    out.builtin = nullptr;
    out.user = std::move(u);
    out.type = type;
    out.elem_size = static_cast<size_t>(t.extent);
    out.commutative = out.user->commutative;
    return WEFT_SUCCESS;
}

int op_bind_basic(const char *fn, weft_op op, weft_datatype type, const datatype &t, op_binding &out) {
    if (t.builtin || !is_predefined(op)) return op_bind(fn, op, type, t, out);
    size_t oi = static_cast<size_t>(op - WEFT_MAX);
    if (!t.homogeneous)
        return fail(WEFT_ERR_OP, "%s: %s needs a datatype of one basic type, and %s is made of several", fn,
                    op_names[oi], type_name(type, t).buf);
    const datatype &basic = datatype_of_kind(t.basic);
    size_t ki = kind_index(t.basic);
    if (!basic.contiguous)  // its packed elements lack the C struct's padding the kernel expects
        return fail(WEFT_ERR_OP, "%s: %s on a derived datatype of %s is not supported (use the pair type itself)", fn,
                    op_names[oi], type_names[ki]);
    // The kernel of the basic type: slot ki + 1 of the built-in handles (weft.h's WEFT_* values).
    weft_datatype basic_handle = static_cast<weft_datatype>((0x500u << 20) | static_cast<uint32_t>(ki + 1));
    return op_bind(fn, op, basic_handle, basic, out);
}

void op_finalize_all() { table().clear(); }

}  // namespace weft

using namespace weft;

extern "C" {

WEFT_API int weft_op_create(weft_user_function *user_fn, int commute, weft_op *op) {
    if (int rc = runtime_check("weft_op_create")) return self_error_return(rc, "weft_op_create");
    if (user_fn == nullptr)
        return self_error_return(fail(WEFT_ERR_ARG, "weft_op_create: user_fn is NULL"), "weft_op_create");
    if (op == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "weft_op_create: op is NULL"), "weft_op_create");
    auto u = std::make_shared<user_op>();
    u->fn = user_fn;
    u->commutative = commute != 0;
    finalize_hook_add(op_finalize_all, finalize_prio_ops);
    int h = table().insert(std::move(u));
    if (h == 0)
        return self_error_return(
            fail(WEFT_ERR_NO_MEM, "weft_op_create: too many operations (the handle table is full)"), "weft_op_create");
    *op = h;
    return WEFT_SUCCESS;
}

WEFT_API int weft_op_free(weft_op *op) {
    if (int rc = runtime_check("weft_op_free")) return self_error_return(rc, "weft_op_free");
    if (op == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "weft_op_free: op is NULL"), "weft_op_free");
    weft_op h = *op;
    if (h == WEFT_OP_NULL)
        return self_error_return(fail(WEFT_ERR_OP, "weft_op_free: *op is WEFT_OP_NULL"), "weft_op_free");
    if (is_predefined(h))
        return self_error_return(
            fail(WEFT_ERR_OP, "weft_op_free: *op (%s) is a predefined operation and cannot be freed",
                 op_names[h - WEFT_MAX]),
            "weft_op_free");
    // Collectives in flight hold their own reference (op_binding::user).
    if (!table().erase(h))
        return self_error_return(fail(WEFT_ERR_OP,
                                      "weft_op_free: *op (0x%08x) is not a valid operation (freed, never "
                                      "created, or not an operation handle)",
                                      static_cast<unsigned>(h)),
                                 "weft_op_free");
    *op = WEFT_OP_NULL;
    return WEFT_SUCCESS;
}

}  // extern "C"
