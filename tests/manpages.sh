#!/bin/bash
# The man page generator on its samples and the tarball's pages (maint/make-manpages --check),
# and the installed pages through man -l.
. "$(dirname "$0")/lib.sh"
check_log "maint/make-manpages --check" "$OUT/log" "$TOP_SRCDIR/maint/make-manpages" --check "$MPICH_BUILD_DIR/mpich"
for page in man3/MPI_Request_get_status_all.3 man3/MPI_Request_get_status_any.3 \
    man3/MPI_Request_get_status_some.3 man3/MPIX_Grequest_class_create.3 \
    man7/mpich-request-engine-cvars.7; do
    check "$page renders" sh -c "man -l '$MPICH_PREFIX/share/man/$page' 2>/dev/null | grep -q ."
done
check "the control variables' page lists MPIR_CVAR_REQUEST_SCAN_ORDER" sh -c \
    "man -l '$MPICH_PREFIX/share/man/man7/mpich-request-engine-cvars.7' | grep -q MPIR_CVAR_REQUEST_SCAN_ORDER"
