#!/bin/bash
# Communicator assertions: the seed paper's listings (comm_assert/seed_listings.cpp) get the
# report its static analysis gives (tests/comm_assert/check-report, one TAP line per verdict);
# MPICH's pt2pt and comm tests pass as on stock with detection on, each writing a report (comm
# frees communicators in every order: detection must not make that wait); a per-run report
# name another run's file holds gets a suffix.
. "$(dirname "$0")/lib.sh"
"$TOP_SRCDIR/tests/comm_assert/check-report" "$TESTS_BUILDDIR/comm_assert/seed_listings" \
    "$OUT/listings" "$MPIEXEC" > "$OUT/listings.log" 2>&1
rc=$?
sed -n -e 's/^    ok: /ok - /p' -e 's/^    FAILED: /not ok - /p' "$OUT/listings.log"
tap_n=$(grep -cE '^    (ok|FAILED): ' "$OUT/listings.log")
[ $rc = 0 ] || [ "$(grep -c '^    FAILED: ' "$OUT/listings.log")" != 0 ] ||
    { not_ok "comm_assert/check-report exited $rc"; diag "$OUT/listings.log"; }
if [ ! -x "$TESTMPI/runtests" ]; then
    # an installed MPICH without the pipeline's build tree (maint/test-debian-packages)
    skip "MPICH's pt2pt and comm tests with detection on" "no configured MPICH test suite in $TESTMPI"
    exit 0
fi
rm -rf "$OUT/reports"
mkdir -p "$OUT/reports"
MPIR_CVAR_COMM_ASSERT_REPORT=1 MPIR_CVAR_COMM_ASSERT_REPORT_FILE="$OUT/reports/report.%p" \
    "$TOP_SRCDIR/maint/mpich-testsuite" run "$MPICH_BUILD_DIR" "$MPICH_PREFIX" "$OUT/pt2pt.txt" pt2pt comm \
    > "$OUT/testsuite.log" 2>&1
out=$("$TOP_SRCDIR/maint/mpich-testsuite" compare "$BASELINE" "$OUT/pt2pt.txt" pt2pt comm)
sed 's/^/# /' <<< "$out"
read -r p _ f _ k _ <<< "$(tail -n 1 <<< "$out" | tr -d ,)"
n=$(grep -l '^== end of report ==$' "$OUT"/reports/report.* 2>/dev/null | wc -l)
check "with detection on, no pt2pt or comm test fails that passes on stock ($f failed)" test "$f" -eq 0
check "a report per passing program ($n reports, $p passing)" test "$n" -ge "$p"
# a report lists MPI_COMM_SELF once per process, in world rank order
self_in_rank_order() {
    local r ranks multi=0
    for r in "$OUT"/reports/report.*; do
        ranks=$(sed -n 's/^communicator "MPI_COMM_SELF" of world rank \([0-9]*\) .*/\1/p' "$r")
        [ "$ranks" = "$(sort -n -u <<< "$ranks")" ] || { echo "out of order in $r: $ranks"; return 1; }
        [ "$(wc -l <<< "$ranks")" -lt 2 ] || multi=$((multi + 1))
    done
    echo "$multi reports list MPI_COMM_SELF of several processes"
    [ "$multi" -gt 0 ]
}
check_log "MPI_COMM_SELF entries in world rank order" "$OUT/self-order.log" self_in_rank_order
# a per-run report name another run's file holds (a process id that came back) gets a suffix
taken=$OUT/taken
rm -rf "$taken"
mkdir -p "$taken"
pid=$(REPORT_DIR=$taken MPIR_CVAR_COMM_ASSERT_REPORT=1 MPIR_CVAR_COMM_ASSERT_REPORT_FILE="$taken/report.%p" \
    timeout 60 "$MPIEXEC" -n 2 "$TESTS_BUILDDIR/comm_assert/report_name_taken" 2> "$taken.err")
check_log "a report name in use: the report goes to NAME.1, the other file kept" "$taken.log" sh -c \
    "ls -l '$taken'; [ -n '$pid' ] && [ \"\$(cat '$taken/report.$pid')\" = \"another run's report\" ] &&
     grep -qx '== end of report ==' '$taken/report.$pid.1'"
