#!/bin/bash
# The Fortran tests of MPI_Request_get_status_all/_any/_some, one program per binding:
#   getstatus_mpif        getstatus_mpi.F90: include 'mpif.h'
#   getstatus_usempi      getstatus_mpi.F90 with -DUSE_MPI_MODULE: use mpi
#   getstatus_f08.f90     use mpi_f08
# Each is compiled with the installed MPICH's mpifort and run under `timeout 60 mpiexec -n 2`;
# it passes when it exits 0 and prints "PASS <name>".  Prints one line per program and a
# closing "N passed, N failed"; exits non-zero on any failure (a program that does not
# compile is a failure).  Needs an MPICH configured with --enable-fortran=all.
#
# Environment: MPICH_PREFIX (install prefix; default: _build/install of this repository),
# FORTRAN_TEST_DIR (where the programs are built; default: $MPICH_BUILD_DIR/tests/fortran or
# _build/tests/fortran), FCFLAGS (extra flags for mpifort), TEST_TIMEOUT (seconds, default 60).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
MPICH_PREFIX=${MPICH_PREFIX:-$TOP/_build/install}
OUT=${FORTRAN_TEST_DIR:-${MPICH_BUILD_DIR:-$TOP/_build}/tests/fortran}
TEST_TIMEOUT=${TEST_TIMEOUT:-60}
MPIFORT=$MPICH_PREFIX/bin/mpifort
MPIEXEC=$MPICH_PREFIX/bin/mpiexec
PROGRAMS="getstatus_mpif getstatus_usempi getstatus_f08"

if [ ! -x "$MPIFORT" ]; then
    echo "FAIL fortran: no $MPIFORT (is MPICH configured with --enable-fortran=all?)"
    echo "0 passed, 1 failed"
    exit 1
fi
if [ ! -x "$MPIEXEC" ]; then
    echo "FAIL fortran: no $MPIEXEC"
    echo "0 passed, 1 failed"
    exit 1
fi
mkdir -p "$OUT"

passed=0 failed=0
for name in $PROGRAMS; do
    log=$OUT/$name.log
    # getstatus_mpif and getstatus_usempi are one source, getstatus_mpi.F90, with mpif.h or `use mpi`
    case $name in
        getstatus_mpif) src=$HERE/getstatus_mpi.F90 defs= ;;
        getstatus_usempi) src=$HERE/getstatus_mpi.F90 defs=-DUSE_MPI_MODULE ;;
        *) src=$HERE/$name.f90 defs= ;;
    esac
    # shellcheck disable=SC2086
    if ! (cd "$OUT" && "$MPIFORT" -g $defs ${FCFLAGS:-} -o "$name" "$src") > "$log" 2>&1; then
        echo "FAIL $name: does not compile with $MPIFORT"
        sed 's/^/    /' "$log" | head -n 30
        failed=$((failed + 1))
        continue
    fi
    rc=0
    (cd "$OUT" && timeout "$TEST_TIMEOUT" "$MPIEXEC" -n 2 "./$name") > "$log" 2>&1 || rc=$?
    if [ $rc -eq 0 ] && grep -qx "PASS $name" "$log"; then
        echo "PASS $name"
        passed=$((passed + 1))
    else
        if [ $rc -eq 124 ]; then
            echo "FAIL $name: timed out after $TEST_TIMEOUT s"
        else
            echo "FAIL $name: exit status $rc"
        fi
        sed 's/^/    /' "$log" | head -n 30
        failed=$((failed + 1))
    fi
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
