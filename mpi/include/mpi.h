/* Weft's MPI front end: the MPI C API on Weft (libweft-mpi).
 *
 * Binary compatible with the MPICH ABI (libmpi.so.12 / libmpich.so.12 on x86_64): handles are
 * ints with MPICH's values for predefined objects, MPI_Status has MPICH's layout, MPI_Aint is a
 * long, and the constants and error classes have MPICH's numbers (taken from MPICH 4.0.2).  So
 * a program compiled against MPICH runs on Weft by library path alone (docs/mpi.md).
 *
 * Installed as include/weft-mpi/mpi.h, a folder of its own, so that it never hides a system
 * MPI's header: build with weftcc / weftcxx, `pkg-config weft-mpi` or CMake's weft::mpi.
 *
 * The functions are declared from weft_mpi_functions.def, the one list of what the front end
 * defines (weft-info --mpi prints it).  What is not there is not defined: a program that calls
 * it fails to link. */
#ifndef WEFT_MPI_H_INCLUDED
#define WEFT_MPI_H_INCLUDED
#define MPI_INCLUDED 1

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define WEFT_MPI_API __attribute__((visibility("default")))
#else
#define WEFT_MPI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The standard version this front end follows, and which library this is. */
#define MPI_VERSION 4
#define MPI_SUBVERSION 0
#define WEFT_MPI 1

/* ---- Scalar types (LP64: long is 64 bits) ---- */
typedef long MPI_Aint;
typedef long MPI_Count;
typedef long MPI_Offset;
typedef int MPI_Fint;

/* ---- Handles: ints.  Predefined objects have MPICH's values. ---- */
typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Request;
typedef int MPI_Message;
typedef int MPI_Info;
typedef int MPI_Errhandler;
typedef int MPIX_Stream;

#define MPI_COMM_NULL ((MPI_Comm)0x04000000)
#define MPI_COMM_WORLD ((MPI_Comm)0x44000000)
#define MPI_COMM_SELF ((MPI_Comm)0x44000001)
#define MPI_GROUP_NULL ((MPI_Group)0x08000000)
#define MPI_GROUP_EMPTY ((MPI_Group)0x48000000)
#define MPI_OP_NULL ((MPI_Op)0x18000000)
#define MPI_DATATYPE_NULL ((MPI_Datatype)0x0c000000)
#define MPI_REQUEST_NULL ((MPI_Request)0x2c000000)
#define MPI_MESSAGE_NULL ((MPI_Message)0x2c000000)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)0x6c000000)
#define MPI_INFO_NULL ((MPI_Info)0x1c000000)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0x14000000)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)0x54000000)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)0x54000001)
#define MPI_ERRORS_ABORT ((MPI_Errhandler)0x54000003)
#define MPIX_STREAM_NULL ((MPIX_Stream)0x3c000000)

/* Basic datatypes (C, and the Fortran ones whose C layout is a basic C type). */
#define MPI_CHAR ((MPI_Datatype)0x4c000101)
#define MPI_UNSIGNED_CHAR ((MPI_Datatype)0x4c000102)
#define MPI_SHORT ((MPI_Datatype)0x4c000203)
#define MPI_UNSIGNED_SHORT ((MPI_Datatype)0x4c000204)
#define MPI_INT ((MPI_Datatype)0x4c000405)
#define MPI_UNSIGNED ((MPI_Datatype)0x4c000406)
#define MPI_LONG ((MPI_Datatype)0x4c000807)
#define MPI_UNSIGNED_LONG ((MPI_Datatype)0x4c000808)
#define MPI_LONG_LONG_INT ((MPI_Datatype)0x4c000809)
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_FLOAT ((MPI_Datatype)0x4c00040a)
#define MPI_DOUBLE ((MPI_Datatype)0x4c00080b)
#define MPI_LONG_DOUBLE ((MPI_Datatype)0x4c00100c)
#define MPI_BYTE ((MPI_Datatype)0x4c00010d)
#define MPI_WCHAR ((MPI_Datatype)0x4c00040e)
#define MPI_PACKED ((MPI_Datatype)0x4c00010f)
#define MPI_2INT ((MPI_Datatype)0x4c000816)
#define MPI_SIGNED_CHAR ((MPI_Datatype)0x4c000118)
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)0x4c000819)
#define MPI_CHARACTER ((MPI_Datatype)0x4c00011a)
#define MPI_INTEGER ((MPI_Datatype)0x4c00041b)
#define MPI_REAL ((MPI_Datatype)0x4c00041c)
#define MPI_LOGICAL ((MPI_Datatype)0x4c00041d)
#define MPI_DOUBLE_PRECISION ((MPI_Datatype)0x4c00081f)
#define MPI_2INTEGER ((MPI_Datatype)0x4c000820)
#define MPI_REAL4 ((MPI_Datatype)0x4c000427)
#define MPI_REAL8 ((MPI_Datatype)0x4c000829)
#define MPI_INTEGER1 ((MPI_Datatype)0x4c00012d)
#define MPI_INTEGER2 ((MPI_Datatype)0x4c00022f)
#define MPI_INTEGER4 ((MPI_Datatype)0x4c000430)
#define MPI_INTEGER8 ((MPI_Datatype)0x4c000831)
#define MPI_CXX_BOOL ((MPI_Datatype)0x4c000133)
#define MPI_INT8_T ((MPI_Datatype)0x4c000137)
#define MPI_INT16_T ((MPI_Datatype)0x4c000238)
#define MPI_INT32_T ((MPI_Datatype)0x4c000439)
#define MPI_INT64_T ((MPI_Datatype)0x4c00083a)
#define MPI_UINT8_T ((MPI_Datatype)0x4c00013b)
#define MPI_UINT16_T ((MPI_Datatype)0x4c00023c)
#define MPI_UINT32_T ((MPI_Datatype)0x4c00043d)
#define MPI_UINT64_T ((MPI_Datatype)0x4c00083e)
#define MPI_C_BOOL ((MPI_Datatype)0x4c00013f)
#define MPI_AINT ((MPI_Datatype)0x4c000843)
#define MPI_OFFSET ((MPI_Datatype)0x4c000844)
#define MPI_COUNT ((MPI_Datatype)0x4c000845)
/* Value and index pairs for MPI_MINLOC / MPI_MAXLOC: struct { T value; int index; }. */
#define MPI_FLOAT_INT ((MPI_Datatype)0x8c000000)
#define MPI_DOUBLE_INT ((MPI_Datatype)0x8c000001)
#define MPI_LONG_INT ((MPI_Datatype)0x8c000002)
#define MPI_SHORT_INT ((MPI_Datatype)0x8c000003)
/* Not provided (Weft has no such type): the complex types, MPI_LONG_DOUBLE_INT, the
 * Fortran REAL16/COMPLEX kinds.  Using them does not compile. */

#define MPI_MAX ((MPI_Op)0x58000001)
#define MPI_MIN ((MPI_Op)0x58000002)
#define MPI_SUM ((MPI_Op)0x58000003)
#define MPI_PROD ((MPI_Op)0x58000004)
#define MPI_LAND ((MPI_Op)0x58000005)
#define MPI_BAND ((MPI_Op)0x58000006)
#define MPI_LOR ((MPI_Op)0x58000007)
#define MPI_BOR ((MPI_Op)0x58000008)
#define MPI_LXOR ((MPI_Op)0x58000009)
#define MPI_BXOR ((MPI_Op)0x5800000a)
#define MPI_MINLOC ((MPI_Op)0x5800000b)
#define MPI_MAXLOC ((MPI_Op)0x5800000c)

/* ---- Status: MPICH's layout.  The count (bytes) is private: read it with MPI_Get_count. ---- */
typedef struct MPI_Status {
    int count_lo;
    int count_hi_and_cancelled;
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
} MPI_Status;
#define MPI_STATUS_IGNORE ((MPI_Status *)1)
#define MPI_STATUSES_IGNORE ((MPI_Status *)1)
#define MPI_F_STATUS_SIZE 5
#define MPI_F_SOURCE 2
#define MPI_F_TAG 3
#define MPI_F_ERROR 4

/* ---- Special values ---- */
#define MPI_PROC_NULL (-1)
#define MPI_ANY_SOURCE (-2)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_IN_PLACE ((void *)-1)
#define MPI_BOTTOM ((void *)0)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)
#define MPIX_ANY_INDEX (-1)

#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* MPI_Comm_split_type's split types. */
#define MPI_COMM_TYPE_SHARED 1
#define MPI_COMM_TYPE_HW_GUIDED 2
#define MPI_COMM_TYPE_HW_UNGUIDED 3

/* MPI_Topo_test's answers (MPICH's values; Weft makes Cartesian topologies only). */
#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3

#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57

/* Bytes MPI_Bsend may use in the attached buffer beyond the packed message (MPICH's value;
 * Weft's front end keeps its bookkeeping outside the buffer). */
#define MPI_BSEND_OVERHEAD 96

#define MPI_MAX_PROCESSOR_NAME 128
#define MPI_MAX_LIBRARY_VERSION_STRING 8192
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024

/* MPIX_GPU_query_support's gpu_type. */
#define MPIX_GPU_SUPPORT_CUDA 0
#define MPIX_GPU_SUPPORT_ZE 1
#define MPIX_GPU_SUPPORT_HIP 2

/* ---- Error classes (MPICH's numbers).  Error codes the front end returns are a class, or a
 * class with Weft's own code in bits 8 and up (MPI_Error_class takes it off; MPI_Error_string
 * gives Weft's text and the failing call's detail). ---- */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_ROOT 7
#define MPI_ERR_GROUP 8
#define MPI_ERR_OP 9
#define MPI_ERR_TOPOLOGY 10
#define MPI_ERR_DIMS 11
#define MPI_ERR_ARG 12
#define MPI_ERR_UNKNOWN 13
#define MPI_ERR_TRUNCATE 14
#define MPI_ERR_OTHER 15
#define MPI_ERR_INTERN 16
#define MPI_ERR_IN_STATUS 17
#define MPI_ERR_PENDING 18
#define MPI_ERR_REQUEST 19
#define MPI_ERR_INFO 28
#define MPI_ERR_INFO_KEY 29
#define MPI_ERR_INFO_VALUE 30
#define MPI_ERR_INFO_NOKEY 31
#define MPI_ERR_NO_MEM 34
#define MPI_ERR_UNSUPPORTED_OPERATION 44
#define MPI_ERR_VALUE_TOO_LARGE 77
#define MPI_ERR_LASTCODE 0x3fffffff
#define MPIX_ERR_PROC_FAILED 101

/* ---- Attributes: predefined keys (on every communicator), MPI_KEYVAL_INVALID ---- */
#define MPI_KEYVAL_INVALID 0x24000000
#define MPI_TAG_UB 0x64400001
#define MPI_HOST 0x64400003
#define MPI_IO 0x64400005
#define MPI_WTIME_IS_GLOBAL 0x64400007
#define MPI_UNIVERSE_SIZE 0x64400009
#define MPI_LASTUSEDCODE 0x6440000b
#define MPI_APPNUM 0x6440000d

/* ---- Function types ---- */
typedef int(MPI_Comm_copy_attr_function)(MPI_Comm, int, void *, void *, void *, int *);
typedef int(MPI_Comm_delete_attr_function)(MPI_Comm, int, void *, void *);
/* The copy function MPI_COMM_DUP_FN names (MPICH's symbol, exported by libweft-mpi too). */
WEFT_MPI_API int MPIR_Dup_fn(MPI_Comm, int, void *, void *, void *, int *);
#define MPI_COMM_NULL_COPY_FN ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)
#define MPI_COMM_DUP_FN ((MPI_Comm_copy_attr_function *)MPIR_Dup_fn)
typedef void(MPI_Comm_errhandler_function)(MPI_Comm *, int *, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef void(MPI_User_function)(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void(MPI_User_function_c)(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype *datatype);

/* ---- Functions: MPI_X and its profiling name PMPI_X for each entry of the list ---- */
#define WEFT_MPI_FN(family, ret, name, params) \
    WEFT_MPI_API ret MPI_##name params;        \
    WEFT_MPI_API ret PMPI_##name params;
#define WEFT_MPIX_FN(family, ret, name, params) \
    WEFT_MPI_API ret MPIX_##name params;        \
    WEFT_MPI_API ret PMPIX_##name params;
#include "weft_mpi_functions.def"
#undef WEFT_MPI_FN
#undef WEFT_MPIX_FN

/* Handle conversions to and from Fortran integers: the same values. */
#define MPI_Comm_c2f(h) ((MPI_Fint)(h))
#define MPI_Comm_f2c(h) ((MPI_Comm)(h))
#define MPI_Type_c2f(h) ((MPI_Fint)(h))
#define MPI_Type_f2c(h) ((MPI_Datatype)(h))
#define MPI_Group_c2f(h) ((MPI_Fint)(h))
#define MPI_Group_f2c(h) ((MPI_Group)(h))
#define MPI_Request_c2f(h) ((MPI_Fint)(h))
#define MPI_Request_f2c(h) ((MPI_Request)(h))
#define MPI_Op_c2f(h) ((MPI_Fint)(h))
#define MPI_Op_f2c(h) ((MPI_Op)(h))
#define MPI_Info_c2f(h) ((MPI_Fint)(h))
#define MPI_Info_f2c(h) ((MPI_Info)(h))

#ifdef __cplusplus
}
#endif
#endif /* WEFT_MPI_H_INCLUDED */
