// Attribute caching on communicators (attr.cpp), for the calls that create and free them.
#pragma once

#include <mpi.h>

namespace weft_mpi {
// MPI_Comm_dup / MPI_Comm_idup: runs the copy callbacks of oldcomm's attributes and attaches
// what they return to newcomm.  An MPI error code (a callback's failure).
int attr_copy(MPI_Comm oldcomm, MPI_Comm newcomm);
// MPI_Comm_free (before Weft frees it) and MPI_Finalize (MPI_COMM_SELF, then MPI_COMM_WORLD):
// runs the delete callbacks of comm's attributes, the last set first, and forgets them.
int attr_delete_all(MPI_Comm comm);
// MPI_LASTUSEDCODE's value: MPI_Add_error_class / MPI_Add_error_code raise it.
extern int last_used_code;
}  // namespace weft_mpi
