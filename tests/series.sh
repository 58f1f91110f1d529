#!/bin/bash
# The patch series applies in order, without fuzz, to pristine MPICH 4.0.2, each patch with its
# DEP-3 header (maint/check-patches).
. "$(dirname "$0")/lib.sh"
check_log "patches/4.0.2/series applies to pristine MPICH 4.0.2, its end state holds src/ and test/mpi/" "$OUT/log" "$TOP_SRCDIR/maint/check-patches"
