#!/bin/bash
# Requests freed while active complete at MPI_Finalize (order/free_then_finalize.cpp), through
# shared memory and through the netmod; one nobody matches delays it by the timeout only, with a
# warning.
. "$(dirname "$0")/lib.sh"
prog=$TESTS_BUILDDIR/order/free_then_finalize
for nolocal in 0 1; do
    for mode in send persistent recv self_attr many; do
        log=$OUT/$mode-$nolocal.log
        MPIR_CVAR_NOLOCAL=$nolocal timeout 90 "$MPIEXEC" -n 2 "$prog" $mode > "$log" 2>&1
        check "free_then_finalize $mode, MPIR_CVAR_NOLOCAL=$nolocal" sh -c \
            "[ $? = 0 ] && grep -q ' 0 wrong$\| 0 of [0-9]* bytes wrong$' '$log' && ! grep -q 'WARNING: MPI_Finalize' '$log'"
    done
    log=$OUT/unmatched-$nolocal.log
    MPIR_CVAR_FINALIZE_FREED_REQUEST_TIMEOUT=2 MPIR_CVAR_NOLOCAL=$nolocal timeout 60 "$MPIEXEC" -n 2 \
        "$prog" unmatched > "$log" 2>&1
    check "free_then_finalize unmatched, MPIR_CVAR_NOLOCAL=$nolocal" grep -q "freed requests still active: 1 " "$log"
done
