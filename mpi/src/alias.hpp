// MPI_X as a weak alias of PMPI_X (and MPIX_X of PMPIX_X), as MPICH does, so that a profiling
// library's MPI_X wrappers take precedence and reach the implementation through PMPI_X.
//
// Included at the end of each family's file, after
//   #define WEFT_MPI_FAMILY_<family> 1
// it emits the aliases of that family's entries of the one list (weft_mpi_functions.def).  An
// alias needs its target defined in the same file: an entry whose PMPI_X the family does not
// define fails to compile there, so the list cannot name a function that does not exist.
#include <mpi.h>

#define WEFT_MPI_ALIAS(ret, name, params) \
    extern "C" WEFT_MPI_API ret MPI_##name params __attribute__((weak, alias("PMPI_" #name)));
#define WEFT_MPIX_ALIAS(ret, name, params) \
    extern "C" WEFT_MPI_API ret MPIX_##name params __attribute__((weak, alias("PMPIX_" #name)));
#define WEFT_MPI_SKIP(ret, name, params)

#define WEFT_MPI_PICK_1 WEFT_MPI_ALIAS
#define WEFT_MPIX_PICK_1 WEFT_MPIX_ALIAS
#define WEFT_MPI_PICK_0 WEFT_MPI_SKIP
#define WEFT_MPIX_PICK_0 WEFT_MPI_SKIP
#define WEFT_MPI_CAT(a, b) a##b
#define WEFT_MPI_XCAT(a, b) WEFT_MPI_CAT(a, b)
// WEFT_MPI_FAMILY_<family> is 1 for this file's family, 0 for the others.
#define WEFT_MPI_FN(family, ret, name, params) \
    WEFT_MPI_XCAT(WEFT_MPI_PICK_, WEFT_MPI_FAMILY_##family)(ret, name, params)
#define WEFT_MPIX_FN(family, ret, name, params) \
    WEFT_MPI_XCAT(WEFT_MPIX_PICK_, WEFT_MPI_FAMILY_##family)(ret, name, params)
#ifndef WEFT_MPI_FAMILY_init
#define WEFT_MPI_FAMILY_init 0
#endif
#ifndef WEFT_MPI_FAMILY_error
#define WEFT_MPI_FAMILY_error 0
#endif
#ifndef WEFT_MPI_FAMILY_info
#define WEFT_MPI_FAMILY_info 0
#endif
#ifndef WEFT_MPI_FAMILY_comm
#define WEFT_MPI_FAMILY_comm 0
#endif
#ifndef WEFT_MPI_FAMILY_topo
#define WEFT_MPI_FAMILY_topo 0
#endif
#ifndef WEFT_MPI_FAMILY_bsend
#define WEFT_MPI_FAMILY_bsend 0
#endif
#ifndef WEFT_MPI_FAMILY_attr
#define WEFT_MPI_FAMILY_attr 0
#endif
#ifndef WEFT_MPI_FAMILY_group
#define WEFT_MPI_FAMILY_group 0
#endif
#ifndef WEFT_MPI_FAMILY_datatype
#define WEFT_MPI_FAMILY_datatype 0
#endif
#ifndef WEFT_MPI_FAMILY_op
#define WEFT_MPI_FAMILY_op 0
#endif
#ifndef WEFT_MPI_FAMILY_p2p
#define WEFT_MPI_FAMILY_p2p 0
#endif
#ifndef WEFT_MPI_FAMILY_request
#define WEFT_MPI_FAMILY_request 0
#endif
#ifndef WEFT_MPI_FAMILY_coll
#define WEFT_MPI_FAMILY_coll 0
#endif
#ifndef WEFT_MPI_FAMILY_stream
#define WEFT_MPI_FAMILY_stream 0
#endif
#include <weft_mpi_functions.def>
#undef WEFT_MPI_FN
#undef WEFT_MPIX_FN
