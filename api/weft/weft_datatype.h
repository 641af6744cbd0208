/* Weft derived datatypes beyond contiguous and vector, pack/unpack, and element counts (C11
 * and C++).  Same rules as weft.h (which this header includes): MPI's names and argument
 * order with the prefix weft_, counts, block lengths and positions are size_t.
 *
 * Displacements and strides: ptrdiff_t everywhere.  Where MPI takes an int displacement in
 * multiples of the old type's extent (weft_type_vector, weft_type_indexed,
 * weft_type_create_indexed_block) so does Weft, as a ptrdiff_t; where MPI takes an MPI_Aint
 * byte displacement (the h-variants, struct, resized) Weft takes a byte ptrdiff_t.
 * Displacements and strides may be negative; the extent given to weft_type_create_resized may
 * not (WEFT_ERR_ARG).  A size, extent or displacement that overflows gives WEFT_ERR_COUNT.
 *
 * Non-contiguous datatypes in point-to-point calls travel as an iovec of their runs where the
 * fabric takes one (ucx, ofi) and the runs are few enough (WEFT_IOV_MAX in the environment,
 * default 1024; 0: always pack), packed otherwise; receives land in place the same way.  Predefined reductions (WEFT_SUM ...) accept a derived type whose basic
 * elements are all of one predefined type (e.g. a vector of WEFT_DOUBLE). */
#ifndef WEFT_WEFT_DATATYPE_H
#define WEFT_WEFT_DATATYPE_H

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Array orders of weft_type_create_subarray (MPICH's values of MPI_ORDER_C/FORTRAN). */
enum { WEFT_ORDER_C = 56, WEFT_ORDER_FORTRAN = 57 };

/* stride in bytes. */
WEFT_API int weft_type_create_hvector(size_t count, size_t blocklength, ptrdiff_t stride, weft_datatype oldtype,
                                      weft_datatype *newtype);
/* Block i: blocklengths[i] elements at displacements[i] extents of oldtype. */
WEFT_API int weft_type_indexed(size_t count, const size_t blocklengths[], const ptrdiff_t displacements[],
                               weft_datatype oldtype, weft_datatype *newtype);
WEFT_API int weft_type_create_indexed_block(size_t count, size_t blocklength, const ptrdiff_t displacements[],
                                            weft_datatype oldtype, weft_datatype *newtype);
/* displacements in bytes. */
WEFT_API int weft_type_create_hindexed(size_t count, const size_t blocklengths[], const ptrdiff_t displacements[],
                                       weft_datatype oldtype, weft_datatype *newtype);
WEFT_API int weft_type_create_hindexed_block(size_t count, size_t blocklength, const ptrdiff_t displacements[],
                                             weft_datatype oldtype, weft_datatype *newtype);
/* Block i: blocklengths[i] elements of types[i] at displacements[i] bytes. */
WEFT_API int weft_type_create_struct(size_t count, const size_t blocklengths[], const ptrdiff_t displacements[],
                                     const weft_datatype types[], weft_datatype *newtype);
/* The same typemap with lower bound lb and extent bytes (extent >= 0). */
WEFT_API int weft_type_create_resized(weft_datatype oldtype, ptrdiff_t lb, ptrdiff_t extent, weft_datatype *newtype);
/* A new handle for the same layout (committed when oldtype is). */
WEFT_API int weft_type_dup(weft_datatype oldtype, weft_datatype *newtype);
/* The subsizes[] block at starts[] of an ndims-dimensional array of sizes[] elements of oldtype,
 * in WEFT_ORDER_C (last index fastest) or WEFT_ORDER_FORTRAN; lb 0, extent the whole array's. */
WEFT_API int weft_type_create_subarray(size_t ndims, const size_t sizes[], const size_t subsizes[],
                                       const size_t starts[], int order, weft_datatype oldtype, weft_datatype *newtype);
/* Bounds of the bytes the type touches (MPI_Type_get_true_extent). */
WEFT_API int weft_type_get_true_extent(weft_datatype datatype, ptrdiff_t *true_lb, ptrdiff_t *true_extent);

/* Basic elements received (a pair type such as WEFT_DOUBLE_INT counts two), or WEFT_UNDEFINED
 * when the message ends inside one. */
WEFT_API int weft_get_elements(const weft_status *status, weft_datatype datatype, size_t *count);

/* Packs incount elements at inbuf into outbuf[outsize] at *position, which advances; a
 * committed datatype; WEFT_ERR_TRUNCATE when outsize is too small (nothing written).  comm
 * must be valid (Weft's packed format is the same on every communicator). */
WEFT_API int weft_pack(const void *inbuf, size_t incount, weft_datatype datatype, void *outbuf, size_t outsize,
                       size_t *position, weft_comm comm);
/* Unpacks outcount elements from inbuf[insize] at *position, which advances;
 * WEFT_ERR_TRUNCATE when fewer bytes are left than that needs (nothing written). */
WEFT_API int weft_unpack(const void *inbuf, size_t insize, size_t *position, void *outbuf, size_t outcount,
                         weft_datatype datatype, weft_comm comm);
/* An upper bound of the bytes weft_pack needs for incount elements (exact in Weft). */
WEFT_API int weft_pack_size(size_t incount, weft_datatype datatype, weft_comm comm, size_t *size);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_WEFT_DATATYPE_H */
