# weft_mpi_wrapper(IMPL VAR): VAR = the wrapper compiler of the system MPI IMPL ("mpich":
# mpicc.mpich, "ompi": mpicc.openmpi), or empty with a status message naming WHAT is not built.
# Programs built with it get exactly that MPI's include and link flags (bench/, tests/coexist/).
function(weft_mpi_wrapper impl var what)
  if(impl STREQUAL "mpich")
    find_program(WEFT_MPICH_CC NAMES mpicc.mpich DOC "MPICH wrapper compiler")
    set(cc "${WEFT_MPICH_CC}")
  else()
    find_program(WEFT_OMPI_CC NAMES mpicc.openmpi DOC "Open MPI wrapper compiler")
    set(cc "${WEFT_OMPI_CC}")
  endif()
  if(NOT cc)
    message(STATUS "weft: no ${impl} wrapper compiler (Debian: mpich / libopenmpi-dev); ${what} not built")
    set(cc "")
  endif()
  set(${var} "${cc}" PARENT_SCOPE)
endfunction()
