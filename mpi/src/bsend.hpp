// Buffered sends (bsend.cpp), for MPI_Finalize.
#pragma once

namespace weft_mpi {
// Waits for the buffered sends still in flight (MPI_Finalize); an MPI error code.
int bsend_finalize();
}  // namespace weft_mpi
