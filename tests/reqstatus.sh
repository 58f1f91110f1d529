#!/bin/bash
# The series' tests in MPICH's test-suite format (test/mpi/reqstatus) with MPICH's runtests:
# its TAP lines.
. "$(dirname "$0")/lib.sh"
dir=$TESTMPI/reqstatus
[ -x "$TESTMPI/runtests" ] || { skip "test/mpi/reqstatus" "no configured MPICH test suite in $TESTMPI"; exit 0; }
rm -f "$OUT/reqstatus.tap"
(cd "$dir" && "$TESTMPI/runtests" -srcdir=. -tests=testlist -mpiexec="$MPIEXEC" \
    -tapfile="$OUT/reqstatus.tap") > "$OUT/runtests.log" 2>&1
grep -E '^(not )?ok ' "$OUT/reqstatus.tap" | sed -E 's/^(not )?ok +[0-9]+ /\1ok /'
tap_n=$(grep -cE '^(not )?ok ' "$OUT/reqstatus.tap" 2>/dev/null)
[ "$tap_n" -gt 0 ] || { not_ok "runtests wrote no results for test/mpi/reqstatus"; diag "$OUT/runtests.log"; }
