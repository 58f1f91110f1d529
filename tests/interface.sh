#!/bin/bash
# The installed interface: the MPI 4.1 prototypes in mpi.h, MPI_ and PMPI_ symbols exported by
# libmpi.so, the feature macro.
. "$(dirname "$0")/lib.sh"
symbols=$(nm -D --defined-only "$MPICH_PREFIX/lib/libmpi.so" | awk '{print $3}')
for f in all any some; do
    check "MPI_Request_get_status_$f prototype in mpi.h" grep -q \
        "^int MPI_Request_get_status_$f(.*const MPI_Request array_of_requests\[\]" \
        "$MPICH_PREFIX/include/mpi_proto.h" "$MPICH_PREFIX/include/mpi.h"
    for p in MPI PMPI; do
        check "libmpi.so exports ${p}_Request_get_status_$f" grep -qx "${p}_Request_get_status_$f" <<< "$symbols"
    done
done
check "mpi.h defines MPIX_HAVE_REQUEST_GET_STATUS_MULTIPLE" \
    grep -q '^#define MPIX_HAVE_REQUEST_GET_STATUS_MULTIPLE 1' "$MPICH_PREFIX/include/mpi.h"
