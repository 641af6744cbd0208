// Datatypes: built-in types and derived contiguous/vector types, with pack and unpack.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include "weft/weft.h"

namespace weft {

enum class basic_kind : uint8_t {
    byte_,
    char_,
    int8,
    uint8,
    int16,
    uint16,
    int32,
    uint32,
    int64,
    uint64,
    int_,
    long_,
    float_,
    double_,
    unsigned_,
    unsigned_long,
    short_,
    unsigned_short,
    long_long,
    unsigned_long_long,
    signed_char,
    unsigned_char,
    c_bool,
    long_double,
    float_int,
    double_int,
    long_int,
    two_int,
    short_int
};

struct datatype {
    size_t size = 0;         // bytes of data in one element
    ptrdiff_t lb = 0;        // lower bound, bytes
    ptrdiff_t extent = 0;    // extent, bytes
    bool contiguous = true;  // size == extent and lb == 0: buffers can be used as they are
    bool committed = false;
    bool builtin = false;
    basic_kind basic{};  // built-ins: which one; derived: the innermost built-in
    // Derived types: count blocks of blocklen elements of child, block starts stride bytes apart.
    size_t count = 0, blocklen = 0;
    ptrdiff_t stride = 0;
    std::shared_ptr<const datatype> child;
};

// Built-in datatypes by slot - 1 (WEFT_BYTE is slot 1): read without the table on the hot path.
constexpr uint32_t datatype_builtin_count = 29;
extern const datatype *g_builtin_datatypes[datatype_builtin_count];
const datatype *datatype_get_table(weft_datatype handle);

// nullptr for an invalid or freed handle.  The pointer stays valid while the handle is live.
inline const datatype *datatype_get(weft_datatype handle) {
    uint32_t u = static_cast<uint32_t>(handle), slot = (u & 0xfffff) - 1;
    if ((u >> 20) == 0x500 && slot < datatype_builtin_count) return g_builtin_datatypes[slot];
    return datatype_get_table(handle);
}
// Shared ownership, for operations that outlive a weft_type_free.
std::shared_ptr<const datatype> datatype_get_shared(weft_datatype handle);

// Copies count elements of type at src into the contiguous buffer dst (count * size bytes).
void datatype_pack(const datatype &type, const void *src, size_t count, void *dst);
// Scatters the first `bytes` bytes of the contiguous buffer src into count elements at dst.
void datatype_unpack(const datatype &type, const void *src, size_t bytes, void *dst, size_t count);

}  // namespace weft
