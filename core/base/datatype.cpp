// Datatypes: the built-in table, handles, commit, free and the size queries.
// Constructors: datatype_build.cpp; pack, unpack and iovecs: datatype_pack.cpp.
#include "base/datatype.hpp"

#include "base/error.hpp"
#include "base/handle.hpp"
#include "weft/weft.h"

namespace weft {

const datatype *g_builtin_datatypes[datatype_builtin_count];

namespace {

// Slots 1..0x1d hold the built-ins (WEFT_BYTE .. WEFT_SHORT_INT); derived types start after.
constexpr uint32_t first_builtin_slot = 1;
constexpr uint32_t first_dynamic_slot = 0x40;

template <class T>
struct pair_of {
    T v;
    int i;
};

struct builtin_desc {
    basic_kind kind;
    size_t size;        // bytes of data
    size_t extent;      // sizeof the C type (pairs: of the struct, with padding)
    size_t int_offset;  // pairs: offset of the int member; 0 for plain types
    size_t value_size;  // pairs: size of the value member
};

template <class T>
constexpr builtin_desc plain(basic_kind k) {
    return {k, sizeof(T), sizeof(T), 0, sizeof(T)};
}
template <class T>
constexpr builtin_desc pair(basic_kind k) {
    return {k, sizeof(T) + sizeof(int), sizeof(pair_of<T>), offsetof(pair_of<T>, i), sizeof(T)};
}

// In slot order: slot = index + 1 (see the WEFT_* values in weft.h).
constexpr builtin_desc builtins[] = {
    plain<unsigned char>(basic_kind::byte_),
    plain<char>(basic_kind::char_),
    plain<int8_t>(basic_kind::int8),
    plain<uint8_t>(basic_kind::uint8),
    plain<int16_t>(basic_kind::int16),
    plain<uint16_t>(basic_kind::uint16),
    plain<int32_t>(basic_kind::int32),
    plain<uint32_t>(basic_kind::uint32),
    plain<int64_t>(basic_kind::int64),
    plain<uint64_t>(basic_kind::uint64),
    plain<int>(basic_kind::int_),
    plain<long>(basic_kind::long_),
    plain<float>(basic_kind::float_),
    plain<double>(basic_kind::double_),
    plain<unsigned>(basic_kind::unsigned_),
    plain<unsigned long>(basic_kind::unsigned_long),
    plain<short>(basic_kind::short_),
    plain<unsigned short>(basic_kind::unsigned_short),
    plain<long long>(basic_kind::long_long),
    plain<unsigned long long>(basic_kind::unsigned_long_long),
    plain<signed char>(basic_kind::signed_char),
    plain<unsigned char>(basic_kind::unsigned_char),
    plain<bool>(basic_kind::c_bool),
    plain<long double>(basic_kind::long_double),
    pair<float>(basic_kind::float_int),
    pair<double>(basic_kind::double_int),
    pair<long>(basic_kind::long_int),
    pair<int>(basic_kind::two_int),
    pair<short>(basic_kind::short_int),
};
constexpr uint32_t num_builtins = sizeof(builtins) / sizeof(builtins[0]);
static_assert(num_builtins == (WEFT_SHORT_INT & 0xfffff), "built-in table out of step with weft.h");
static_assert(first_dynamic_slot > num_builtins);
static_assert(num_builtins == datatype_builtin_count);

handle_table<datatype> *build_table() {
    auto *tab = new handle_table<datatype>(handle_kind::datatype, first_dynamic_slot);
    for (uint32_t i = 0; i < num_builtins; ++i) {
        const builtin_desc &d = builtins[i];
        auto dt = std::make_shared<datatype>();
        dt->size = d.size;
        dt->lb = 0;
        dt->extent = static_cast<ptrdiff_t>(d.extent);
        dt->contiguous = d.size == d.extent;  // padded pairs are packed member by member
        dt->committed = true;
        dt->builtin = true;
        dt->basic = d.kind;
        dt->homogeneous = true;
        dt->flat = true;
        if (d.int_offset == 0) {  // a plain type: one run
            dt->blocks = {{0, d.size}};
            dt->basic_count = 1;
            dt->true_ub = static_cast<ptrdiff_t>(d.size);
        } else {  // a pair: the value, then the int (padding between or after them)
            dt->blocks = {{0, d.value_size}, {static_cast<ptrdiff_t>(d.int_offset), sizeof(int)}};
            if (d.value_size == d.int_offset) dt->blocks = {{0, d.size}};
            dt->basic_count = 2;
            dt->true_ub = static_cast<ptrdiff_t>(d.int_offset + sizeof(int));
        }
        g_builtin_datatypes[i] = dt.get();
        tab->put_predefined(first_builtin_slot + i, std::move(dt));
    }
    return tab;
}

// Built when libweft loads (before any program's own static initializers, which may already
// use datatypes) and never destroyed, so that handles stay usable during static destruction.
handle_table<datatype> *const g_table = build_table();

handle_table<datatype> &table() { return *g_table; }

// Resolves a handle for use as an argument; records a detail naming `what` on failure.
int lookup(weft_datatype handle, const char *what, std::shared_ptr<datatype> &out) {
    if (handle == WEFT_DATATYPE_NULL) return fail(WEFT_ERR_TYPE, "%s is WEFT_DATATYPE_NULL", what);
    out = table().get_shared(handle);
    if (!out)
        return fail(WEFT_ERR_TYPE, "%s (0x%08x) is not a valid datatype (freed or never created)", what,
                    static_cast<unsigned>(handle));
    return WEFT_SUCCESS;
}

}  // namespace

const datatype *datatype_get_table(weft_datatype handle) { return table().get(handle); }

std::shared_ptr<const datatype> datatype_get_shared(weft_datatype handle) { return table().get_shared(handle); }

const datatype &datatype_of_kind(basic_kind k) { return *g_builtin_datatypes[static_cast<size_t>(k)]; }

int datatype_lookup(weft_datatype handle, const char *what, std::shared_ptr<const datatype> &out) {
    std::shared_ptr<datatype> dt;
    if (int rc = lookup(handle, what, dt)) return rc;
    out = std::move(dt);
    return WEFT_SUCCESS;
}

int datatype_register(std::shared_ptr<datatype> type, weft_datatype *out, const char *call) {
    int h = table().insert(std::move(type));
    if (h == 0) return fail(WEFT_ERR_NO_MEM, "%s: too many datatypes (the handle table is full)", call);
    *out = h;
    return WEFT_SUCCESS;
}

}  // namespace weft

using namespace weft;

extern "C" {

WEFT_API int weft_type_commit(weft_datatype *datatype) {
    if (datatype == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "datatype is NULL"), "weft_type_commit");
    std::shared_ptr<weft::datatype> dt;
    if (int rc = lookup(*datatype, "*datatype", dt)) return self_error_return(rc, "weft_type_commit");
    // Built-ins already are (committing them is a no-op, as in MPI); not writing to them keeps
    // the shared built-in objects free of data races.
    if (!dt->builtin) dt->committed = true;
    return WEFT_SUCCESS;
}

WEFT_API int weft_type_free(weft_datatype *datatype) {
    if (datatype == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "datatype is NULL"), "weft_type_free");
    std::shared_ptr<weft::datatype> dt;
    if (int rc = lookup(*datatype, "*datatype", dt)) return self_error_return(rc, "weft_type_free");
    if (dt->builtin)
        return self_error_return(fail(WEFT_ERR_TYPE, "*datatype (0x%08x) is a built-in datatype and cannot be freed",
                                      static_cast<unsigned>(*datatype)),
                                 "weft_type_free");
    // Derived types and pending operations that use it keep their own shared_ptr.
    if (!table().erase(*datatype))
        return self_error_return(
            fail(WEFT_ERR_TYPE, "*datatype (0x%08x) was freed concurrently", static_cast<unsigned>(*datatype)),
            "weft_type_free");
    *datatype = WEFT_DATATYPE_NULL;
    return WEFT_SUCCESS;
}

WEFT_API int weft_type_size(weft_datatype datatype, size_t *size) {
    if (size == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "size is NULL"), "weft_type_size");
    std::shared_ptr<weft::datatype> dt;
    if (int rc = lookup(datatype, "datatype", dt)) return self_error_return(rc, "weft_type_size");
    *size = dt->size;
    return WEFT_SUCCESS;
}

WEFT_API int weft_type_get_extent(weft_datatype datatype, ptrdiff_t *lb, ptrdiff_t *extent) {
    if (lb == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "lb is NULL"), "weft_type_get_extent");
    if (extent == nullptr) return self_error_return(fail(WEFT_ERR_ARG, "extent is NULL"), "weft_type_get_extent");
    std::shared_ptr<weft::datatype> dt;
    if (int rc = lookup(datatype, "datatype", dt)) return self_error_return(rc, "weft_type_get_extent");
    *lb = dt->lb;
    *extent = dt->extent;
    return WEFT_SUCCESS;
}

static int type_get_true_extent_impl(weft_datatype datatype, ptrdiff_t *true_lb, ptrdiff_t *true_extent) {
    if (true_lb == nullptr) return fail(WEFT_ERR_ARG, "weft_type_get_true_extent: true_lb is NULL");
    if (true_extent == nullptr) return fail(WEFT_ERR_ARG, "weft_type_get_true_extent: true_extent is NULL");
    std::shared_ptr<weft::datatype> dt;
    if (int rc = lookup(datatype, "datatype", dt)) return rc;
    *true_lb = dt->true_lb;
    *true_extent = dt->true_ub - dt->true_lb;
    return WEFT_SUCCESS;
}

WEFT_API int weft_type_get_true_extent(weft_datatype datatype, ptrdiff_t *true_lb, ptrdiff_t *true_extent) {
    return self_error_return(type_get_true_extent_impl(datatype, true_lb, true_extent), "weft_type_get_true_extent");
}

static int type_dup_impl(weft_datatype oldtype, weft_datatype *newtype) {
    if (newtype == nullptr) return fail(WEFT_ERR_ARG, "weft_type_dup: newtype is NULL");
    std::shared_ptr<weft::datatype> old;
    if (int rc = lookup(oldtype, "oldtype", old)) return rc;
    // A new handle on a copy of the layout; MPI: the copy of a committed type is committed.
    auto dt = std::make_shared<weft::datatype>(*old);
    dt->builtin = false;
    if (old->builtin) dt->parts = {{old, 0, 1, 1, 0}};
    return datatype_register(std::move(dt), newtype, "weft_type_dup");
}

WEFT_API int weft_type_dup(weft_datatype oldtype, weft_datatype *newtype) {
    return self_error_return(type_dup_impl(oldtype, newtype), "weft_type_dup");
}

}  // extern "C"
