# shellcheck shell=bash
# Sourced by the test scripts (tests/*.sh, run by make check): the installed MPICH under test,
# where the programs are, and TAP output. Environment from tests/Makefile.am: MPICH_PREFIX,
# MPICH_BUILD_DIR, TOP_SRCDIR, TESTS_BUILDDIR (and MANPAGES_BUILD_DIR, for maint/make-manpages).
: "${MPICH_PREFIX:?}" "${TOP_SRCDIR:?}" "${TESTS_BUILDDIR:?}"
MPIEXEC=$MPICH_PREFIX/bin/mpiexec
export PATH=$MPICH_PREFIX/bin:$PATH
export MPITEST_TIMEOUT=${MPITEST_TIMEOUT:-180}
MPICH_BUILD_DIR=${MPICH_BUILD_DIR:-}
TESTMPI=$MPICH_BUILD_DIR/mpich/test/mpi
# the device of the installed MPICH (ch4:ofi, ch4:ucx) and stock's test-suite result on it
MPICH_DEVICE=$("$MPICH_PREFIX/bin/mpichversion" 2>/dev/null | sed -n 's/^MPICH Device:[[:space:]]*//p')
MPICH_VERSION=$("$MPICH_PREFIX/bin/mpichversion" 2>/dev/null | sed -n "s/^MPICH Version:[[:space:]]*//p")
BASELINE=$TOP_SRCDIR/tests/testsuite/stock-$MPICH_VERSION-${MPICH_DEVICE/:/-}.txt
# where a test keeps its files: its name's directory under tests/
OUT=$TESTS_BUILDDIR/out/$(basename "$0" .sh)
mkdir -p "$OUT"

tap_n=0
tap_failed=0
ok() { tap_n=$((tap_n + 1)); echo "ok - $*"; }
not_ok() { tap_n=$((tap_n + 1)); tap_failed=1; echo "not ok - $*"; }
skip() { tap_n=$((tap_n + 1)); echo "ok - $1 # SKIP ${2:-}"; }
# ok or not_ok by the status of the command after the name
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
# the same with the command's output in a log, shown as diagnostics when it fails
check_log() {
    local name=$1 log=$2; shift 2
    if "$@" > "$log" 2>&1; then ok "$name"; else not_ok "$name"; diag "$log"; fi
}
# prints a file's first lines indented, as TAP diagnostics
diag() { sed 's/^/# /' "$@" | head -n 40; }
tap_end() { echo "1..$tap_n"; }
trap tap_end EXIT
