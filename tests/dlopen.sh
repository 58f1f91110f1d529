#!/bin/bash
# libmpi loaded by an interpreter after it started, as mpi4py loads it (dlopen/dlopen_client.py,
# ctypes): the call record's initial-exec TLS must fit, with two threads of the process in the
# library; through shared memory and through the netmod.
. "$(dirname "$0")/lib.sh"
for nolocal in 0 1; do
    log=$OUT/client-$nolocal.log
    status=0
    MPIR_CVAR_NOLOCAL=$nolocal timeout 120 "$MPIEXEC" -n 2 python3 \
        "$TOP_SRCDIR/tests/dlopen/dlopen_client.py" "$MPICH_PREFIX" series > "$log" 2>&1 || status=$?
    if [ $status = 0 ] && grep -q 'rank 0: 0 failures' "$log" && grep -q 'rank 1: 0 failures' "$log"; then
        ok "python3 with libmpi through ctypes, MPIR_CVAR_NOLOCAL=$nolocal"
    else
        not_ok "python3 with libmpi through ctypes, MPIR_CVAR_NOLOCAL=$nolocal (exit $status)"
        diag "$log"
    fi
done
