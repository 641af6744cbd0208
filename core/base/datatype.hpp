// Datatypes: built-in types and derived types (contiguous, vector, hvector, indexed, hindexed,
// indexed_block, struct, resized, subarray), with pack, unpack and iovec generation.
//
// A derived type is a list of parts, each "count blocks of blocklen elements of a child, block
// starts stride bytes apart, the first at disp": every MPI constructor maps onto a few parts
// (vector: one; indexed and struct: one per block).  At construction the typemap is also
// flattened into the (offset, length) runs of one element, in typemap order, adjacent runs
// merged (MPICH's typerep and UCX's iov do the same), so that pack, unpack and iovecs are one
// loop over a short list.  A type whose flat list would exceed flat_blocks_max runs is not
// flattened (memory stays bounded for vector(1e9, 1, 2, ...)): its parts are walked instead.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

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

struct datatype;

// One run of bytes of an element, relative to the element's origin.
struct datatype_block {
    ptrdiff_t offset;
    size_t length;
};

// count blocks of blocklen child elements (child extents apart); block b starts at
// disp + b * stride bytes from the element's origin.
struct datatype_part {
    std::shared_ptr<const datatype> child;
    ptrdiff_t disp = 0;
    size_t count = 0;
    size_t blocklen = 0;
    ptrdiff_t stride = 0;
};

// Runs in one element's flat list at most (16 bytes each): larger types walk their parts.
constexpr size_t flat_blocks_max = size_t{1} << 16;

struct datatype {
    size_t size = 0;         // bytes of data in one element
    ptrdiff_t lb = 0;        // lower bound, bytes
    ptrdiff_t extent = 0;    // extent, bytes (never negative)
    bool contiguous = true;  // size == extent, lb == 0, one dense run: buffers can be used as they are
    bool committed = false;
    bool builtin = false;
    basic_kind basic{};  // built-ins: which one; derived: the first built-in of the typemap
    // Every basic element of the typemap is of kind `basic` (what predefined reductions need).
    bool homogeneous = true;
    bool flat = true;  // blocks describes one element (else walk parts)
    // The typemap has an entry or explicit bounds (resized): an empty type adds no bounds.
    bool bounded = true;
    ptrdiff_t true_lb = 0, true_ub = 0;  // bounds of the bytes actually touched
    size_t basic_count = 0;              // basic elements in one element (a pair type counts 2)
    std::vector<datatype_block> blocks;  // flat: one element's runs in typemap order
    std::vector<datatype_part> parts;    // derived: the typemap
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

// The built-in type of a basic kind (never null).
const datatype &datatype_of_kind(basic_kind k);

// Copies count elements of type at src into the contiguous buffer dst (count * size bytes).
void datatype_pack(const datatype &type, const void *src, size_t count, void *dst);
// Scatters the first `bytes` bytes of the contiguous buffer src into count elements at dst.
void datatype_unpack(const datatype &type, const void *src, size_t bytes, void *dst, size_t count);

// The runs of count elements at buf, in pack order, adjacent runs merged, into iov[0..max):
// their number, or max + 1 when there are more (iov then holds the first max).
struct datatype_iov {
    void *base;
    size_t len;
};
size_t datatype_iovec(const datatype &type, const void *buf, size_t count, datatype_iov *iov, size_t max);

// Basic elements in the first `bytes` bytes of a packed sequence of elements of type;
// *exact false when the bytes end inside a basic element.
size_t datatype_count_basic(const datatype &type, size_t bytes, bool *exact);

// ---- construction (datatype_build.cpp) ----

// A derived type from parts: size, bounds, homogeneity and the flat list computed.  nullptr
// and a recorded error (code in *rc, detail naming `call`) when a size or bound overflows.
std::shared_ptr<datatype> datatype_build(std::vector<datatype_part> parts, const char *call, int *rc);
// Registers a type and writes its handle (WEFT_ERR_NO_MEM when the table is full).
int datatype_register(std::shared_ptr<datatype> type, weft_datatype *out, const char *call);
// Resolves a handle for use as an argument; records a detail naming `what` on failure.
int datatype_lookup(weft_datatype handle, const char *what, std::shared_ptr<const datatype> &out);

}  // namespace weft
