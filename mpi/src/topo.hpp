// Cartesian topologies (topo.cpp), for the calls that duplicate and free communicators.
#pragma once

#include <mpi.h>

namespace weft_mpi {
// MPI_Comm_dup / idup: newcomm gets oldcomm's topology, if it has one.
void topo_copy(MPI_Comm oldcomm, MPI_Comm newcomm);
// MPI_Comm_free: forgets comm's topology.
void topo_forget(MPI_Comm comm);
}  // namespace weft_mpi
