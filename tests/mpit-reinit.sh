#!/bin/bash
# The series' performance variables after a second initialization of MPI
# (mpit/pvars_after_reinit.cpp): MPI_T's tables freed by MPI_Finalize, or kept by a tool.
. "$(dirname "$0")/lib.sh"
prog=$TESTS_BUILDDIR/mpit/pvars_after_reinit
for mode in freed kept; do
    log=$OUT/$mode.log
    timeout 60 "$MPIEXEC" -n 1 "$prog" $mode > "$log" 2>&1
    check_log "pvars found in a session after MPI_Finalize, MPI_T's tables $mode" "$OUT/$mode.check" \
        sh -c "[ $? = 0 ] && grep -qx 'all found' '$log' || { cat '$log'; exit 1; }"
done
