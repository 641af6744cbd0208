// Datatypes: the built-in table, derived contiguous/vector types, and pack/unpack.
#include "base/datatype.hpp"

#include <cstring>
#include <limits>

#include "base/error.hpp"
#include "base/handle.hpp"

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
        g_builtin_datatypes[i] = dt.get();
        tab->put_predefined(first_builtin_slot + i, std::move(dt));
    }
    return tab;
}

// Built when libweft loads (before any program's own static initializers, which may already
// use datatypes) and never destroyed, so that handles stay usable during static destruction.
handle_table<datatype> *const g_table = build_table();

handle_table<datatype> &table() { return *g_table; }

const builtin_desc &desc_of(basic_kind k) { return builtins[static_cast<size_t>(k)]; }

// Resolves a handle for use as an argument; records a detail naming `what` on failure.
int lookup(weft_datatype handle, const char *what, std::shared_ptr<datatype> &out) {
    if (handle == WEFT_DATATYPE_NULL) return fail(WEFT_ERR_TYPE, "%s is WEFT_DATATYPE_NULL", what);
    out = table().get_shared(handle);
    if (!out)
        return fail(WEFT_ERR_TYPE, "%s (0x%08x) is not a valid datatype (freed or never created)", what,
                    static_cast<unsigned>(handle));
    return WEFT_SUCCESS;
}

// a * b into *r; false on overflow.
bool mul(size_t a, size_t b, size_t *r) { return !__builtin_mul_overflow(a, b, r); }
bool smul(ptrdiff_t a, ptrdiff_t b, ptrdiff_t *r) { return !__builtin_mul_overflow(a, b, r); }
bool sadd(ptrdiff_t a, ptrdiff_t b, ptrdiff_t *r) { return !__builtin_add_overflow(a, b, r); }
bool ssub(ptrdiff_t a, ptrdiff_t b, ptrdiff_t *r) { return !__builtin_sub_overflow(a, b, r); }

// Builds the derived type "count blocks of blocklen old elements, block starts stride_elems
// extents apart", computing size, lb and extent per MPI's typemap rules.
int make_derived(size_t count, size_t blocklen, ptrdiff_t stride_elems, weft_datatype oldtype, weft_datatype *newtype,
                 const char *call) {
    if (newtype == nullptr) return fail(WEFT_ERR_ARG, "%s: newtype is NULL", call);
    std::shared_ptr<datatype> old;
    if (int rc = lookup(oldtype, "oldtype", old)) return rc;

    auto dt = std::make_shared<datatype>();
    dt->basic = old->basic;
    dt->count = count;
    dt->blocklen = blocklen;
    dt->child = old;

    size_t elems, size;
    if (!mul(count, blocklen, &elems) || !mul(elems, old->size, &size) ||
        size > static_cast<size_t>(std::numeric_limits<ptrdiff_t>::max()))
        return fail(WEFT_ERR_COUNT, "%s: %zu x %zu elements of %zu bytes overflow the type size", call, count, blocklen,
                    old->size);
    dt->size = size;

    if (elems == 0) {
        // MPI: an empty type has lb 0 and extent 0.
        dt->lb = 0;
        dt->extent = 0;
        dt->stride = 0;
        dt->contiguous = true;
    } else {
        ptrdiff_t e = old->extent, stride_bytes, last_start, block_span, lb, ub;
        if (count > static_cast<size_t>(std::numeric_limits<ptrdiff_t>::max()) ||
            blocklen > static_cast<size_t>(std::numeric_limits<ptrdiff_t>::max()) ||
            !smul(stride_elems, e, &stride_bytes) ||
            !smul(static_cast<ptrdiff_t>(count - 1), stride_bytes, &last_start) ||
            !smul(static_cast<ptrdiff_t>(blocklen), e, &block_span) ||
            !sadd((last_start < 0 ? last_start : 0), old->lb, &lb) ||
            !sadd((last_start > 0 ? last_start : 0), block_span, &ub) || !sadd(ub, old->lb, &ub) || !ssub(ub, lb, &e))
            return fail(WEFT_ERR_COUNT,
                        "%s: count %zu, blocklength %zu, stride %td overflow the "
                        "type extent",
                        call, count, blocklen, stride_elems);
        dt->stride = stride_bytes;
        dt->lb = lb;
        dt->extent = e;
        // Dense and in order: the blocks abut, so memory is one run of size bytes from offset 0.
        dt->contiguous =
            old->contiguous && (count == 1 || stride_bytes == block_span) && lb == 0 && static_cast<size_t>(e) == size;
    }

    int h = table().insert(std::move(dt));
    if (h == 0) return fail(WEFT_ERR_NO_MEM, "%s: too many datatypes (the handle table is full)", call);
    *newtype = h;
    return WEFT_SUCCESS;
}

// ---- pack / unpack ----

// One element of `type` whose origin is at src, appended to dst.  Returns bytes written.
size_t pack_one(const datatype &t, const char *src, char *dst) {
    if (t.contiguous) {
        std::memcpy(dst, src, t.size);
        return t.size;
    }
    if (t.builtin) {  // a padded pair: value then int
        const builtin_desc &d = desc_of(t.basic);
        std::memcpy(dst, src, d.value_size);
        std::memcpy(dst + d.value_size, src + d.int_offset, sizeof(int));
        return t.size;
    }
    const datatype &c = *t.child;
    char *out = dst;
    for (size_t b = 0; b < t.count; ++b) {
        const char *block = src + static_cast<ptrdiff_t>(b) * t.stride;
        if (c.contiguous) {  // a block of contiguous children is one run
            size_t n = t.blocklen * c.size;
            std::memcpy(out, block, n);
            out += n;
        } else {
            for (size_t j = 0; j < t.blocklen; ++j)
                out += pack_one(c, block + static_cast<ptrdiff_t>(j) * c.extent, out);
        }
    }
    return static_cast<size_t>(out - dst);
}

// Copies at most `left` bytes, in pack order, from src into one element at dst; decrements left.
void unpack_one(const datatype &t, const char *&src, size_t &left, char *dst) {
    auto take = [&](char *to, size_t n) {
        if (n > left) n = left;
        std::memcpy(to, src, n);
        src += n;
        left -= n;
    };
    if (t.contiguous) {
        take(dst, t.size);
        return;
    }
    if (t.builtin) {
        const builtin_desc &d = desc_of(t.basic);
        take(dst, d.value_size);
        take(dst + d.int_offset, sizeof(int));
        return;
    }
    const datatype &c = *t.child;
    for (size_t b = 0; b < t.count && left > 0; ++b) {
        char *block = dst + static_cast<ptrdiff_t>(b) * t.stride;
        if (c.contiguous) {
            take(block, t.blocklen * c.size);
        } else {
            for (size_t j = 0; j < t.blocklen && left > 0; ++j)
                unpack_one(c, src, left, block + static_cast<ptrdiff_t>(j) * c.extent);
        }
    }
}

}  // namespace

const datatype *datatype_get_table(weft_datatype handle) { return table().get(handle); }

std::shared_ptr<const datatype> datatype_get_shared(weft_datatype handle) { return table().get_shared(handle); }

void datatype_pack(const datatype &type, const void *src, size_t count, void *dst) {
    if (count == 0 || type.size == 0) return;
    const char *s = static_cast<const char *>(src);
    char *d = static_cast<char *>(dst);
    if (type.contiguous) {  // callers checked count * size against overflow
        std::memcpy(d, s, count * type.size);
        return;
    }
    for (size_t i = 0; i < count; ++i) d += pack_one(type, s + static_cast<ptrdiff_t>(i) * type.extent, d);
}

void datatype_unpack(const datatype &type, const void *src, size_t bytes, void *dst, size_t count) {
    if (count == 0 || type.size == 0 || bytes == 0) return;
    const char *s = static_cast<const char *>(src);
    char *d = static_cast<char *>(dst);
    if (type.contiguous) {
        size_t total = count * type.size;
        std::memcpy(d, s, bytes < total ? bytes : total);
        return;
    }
    size_t left = bytes;
    for (size_t i = 0; i < count && left > 0; ++i)
        unpack_one(type, s, left, d + static_cast<ptrdiff_t>(i) * type.extent);
}

}  // namespace weft

using namespace weft;

extern "C" {

WEFT_API int weft_type_contiguous(size_t count, weft_datatype oldtype, weft_datatype *newtype) {
    // One block of count elements.
    return self_error_return(make_derived(1, count, 0, oldtype, newtype, "weft_type_contiguous"),
                             "weft_type_contiguous");
}

WEFT_API int weft_type_vector(size_t count, size_t blocklength, ptrdiff_t stride, weft_datatype oldtype,
                              weft_datatype *newtype) {
    return self_error_return(make_derived(count, blocklength, stride, oldtype, newtype, "weft_type_vector"),
                             "weft_type_vector");
}

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

}  // extern "C"
