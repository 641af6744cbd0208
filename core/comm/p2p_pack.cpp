// weft_pack, weft_unpack and weft_pack_size: the user's view of the
// datatype engine (base/datatype_pack.cpp).  Weft's packed format is the typemap's bytes in
// order, the same on every communicator, so comm is only validated.
#include "base/datatype.hpp"
#include "base/error.hpp"
#include "base/lifecycle.hpp"
#include "comm/comm.hpp"
#include "weft/weft.h"

namespace weft {
namespace {

// The committed type and bytes of count elements, for fn.
int check_pack(const char *fn, size_t count, weft_datatype type, weft_comm handle, const datatype *&t, size_t &bytes) {
    if (int rc = runtime_check(fn)) return rc;
    if (comm_get(handle) == nullptr) return fail(WEFT_ERR_COMM, "%s: invalid communicator handle 0x%x", fn, handle);
    t = datatype_get(type);
    if (t == nullptr) return fail(WEFT_ERR_TYPE, "%s: invalid datatype handle 0x%x", fn, type);
    if (!t->committed)
        return fail(WEFT_ERR_TYPE, "%s: datatype 0x%x is not committed (call weft_type_commit)", fn, type);
    if (__builtin_mul_overflow(count, t->size, &bytes))
        return fail(WEFT_ERR_COUNT, "%s: count %zu of a %zu-byte datatype overflows", fn, count, t->size);
    return WEFT_SUCCESS;
}

}  // namespace
}  // namespace weft

using namespace weft;

extern "C" {

static int pack_impl(const void *inbuf, size_t incount, weft_datatype datatype, void *outbuf, size_t outsize,
                     size_t *position, weft_comm comm) {
    const char *fn = "weft_pack";
    const weft::datatype *t;
    size_t bytes;
    if (int rc = check_pack(fn, incount, datatype, comm, t, bytes)) return rc;
    if (position == nullptr) return fail(WEFT_ERR_ARG, "%s: position is NULL", fn);
    if (*position > outsize || bytes > outsize - *position)
        return fail(WEFT_ERR_TRUNCATE, "%s: %zu bytes do not fit at position %zu of a %zu-byte outbuf", fn, bytes,
                    *position, outsize);
    if (bytes == 0) return WEFT_SUCCESS;
    if (inbuf == nullptr || outbuf == nullptr)
        return fail(WEFT_ERR_BUFFER, "%s: inbuf and outbuf must not be NULL with %zu bytes to pack", fn, bytes);
    datatype_pack(*t, inbuf, incount, static_cast<char *>(outbuf) + *position);
    *position += bytes;
    return WEFT_SUCCESS;
}

WEFT_API int weft_pack(const void *inbuf, size_t incount, weft_datatype datatype, void *outbuf, size_t outsize,
                       size_t *position, weft_comm comm) {
    return comm_entry(comm, "weft_pack",
                      [&] { return pack_impl(inbuf, incount, datatype, outbuf, outsize, position, comm); });
}

static int unpack_impl(const void *inbuf, size_t insize, size_t *position, void *outbuf, size_t outcount,
                       weft_datatype datatype, weft_comm comm) {
    const char *fn = "weft_unpack";
    const weft::datatype *t;
    size_t bytes;
    if (int rc = check_pack(fn, outcount, datatype, comm, t, bytes)) return rc;
    if (position == nullptr) return fail(WEFT_ERR_ARG, "%s: position is NULL", fn);
    if (*position > insize || bytes > insize - *position)
        return fail(WEFT_ERR_TRUNCATE, "%s: %zu bytes to unpack, but only %zu left after position %zu", fn, bytes,
                    *position > insize ? 0 : insize - *position, *position);
    if (bytes == 0) return WEFT_SUCCESS;
    if (inbuf == nullptr || outbuf == nullptr)
        return fail(WEFT_ERR_BUFFER, "%s: inbuf and outbuf must not be NULL with %zu bytes to unpack", fn, bytes);
    datatype_unpack(*t, static_cast<const char *>(inbuf) + *position, bytes, outbuf, outcount);
    *position += bytes;
    return WEFT_SUCCESS;
}

WEFT_API int weft_unpack(const void *inbuf, size_t insize, size_t *position, void *outbuf, size_t outcount,
                         weft_datatype datatype, weft_comm comm) {
    return comm_entry(comm, "weft_unpack",
                      [&] { return unpack_impl(inbuf, insize, position, outbuf, outcount, datatype, comm); });
}

static int pack_size_impl(size_t incount, weft_datatype datatype, weft_comm comm, size_t *size) {
    const weft::datatype *t;
    size_t bytes;
    if (int rc = check_pack("weft_pack_size", incount, datatype, comm, t, bytes)) return rc;
    if (size == nullptr) return fail(WEFT_ERR_ARG, "weft_pack_size: size is NULL");
    *size = bytes;
    return WEFT_SUCCESS;
}

WEFT_API int weft_pack_size(size_t incount, weft_datatype datatype, weft_comm comm, size_t *size) {
    return comm_entry(comm, "weft_pack_size", [&] { return pack_size_impl(incount, datatype, comm, size); });
}

}  // extern "C"
