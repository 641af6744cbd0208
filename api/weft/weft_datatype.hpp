// C++ layer for weft_datatype.h: the derived-datatype constructors as functions returning an
// owning weft::Datatype, the true extent, element counts, and pack/unpack over std::span.
// Same rules as weft.hpp (which this header includes): errors throw weft::error.
#pragma once
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "weft/weft.hpp"
#include "weft/weft_datatype.h"

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
