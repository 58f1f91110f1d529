#!/bin/bash
# MPI_Request_get_status_all/_any/_some through mpif.h, `use mpi` and `use mpi_f08`: each
# program passes when it exits 0 under mpiexec -n 2 and prints "PASS <name>".
. "$(dirname "$0")/lib.sh"
for name in getstatus_mpif getstatus_usempi getstatus_f08; do
    rc=0
    (cd "$OUT" && timeout 60 "$MPIEXEC" -n 2 "$TESTS_BUILDDIR/fortran/$name") > "$OUT/$name.log" 2>&1 || rc=$?
    if [ $rc -eq 0 ] && grep -qx "PASS $name" "$OUT/$name.log"; then
        ok "$name"
    else
        not_ok "$name (exit $rc)"
        diag "$OUT/$name.log"
    fi
done
