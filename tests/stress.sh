#!/bin/bash
# The MPI_THREAD_MULTIPLE stress programs (stress/): request_stress (9 threads per process on
# their own arrays, one shared array, generalized requests completed from other threads, ROMIO
# I/O) under -n 1 and -n 2 and on each ROMIO engine, STRESS_ROUNDS rounds; tool_stress (a tool
# thread reading every performance variable and allocating and freeing event handles while
# application threads complete every request kind), TOOL_STRESS_ROUNDS rounds.
. "$(dirname "$0")/lib.sh"
for run in "1 auto" "2 auto" "2 posix"; do
    read -r np engine <<< "$run"
    log=$OUT/request_stress.n$np.$engine.log
    if MPIR_CVAR_ROMIO_NBIO_ENGINE=$engine timeout "${STRESS_TIMEOUT:-600}" "$MPIEXEC" -n "$np" \
            "$TESTS_BUILDDIR/stress/request_stress" "${STRESS_ROUNDS:-200}" "${STRESS_DEADLINE:-300}" \
            > "$log" 2>&1 && grep -q ' 0 failures$' "$log"; then
        ok "request_stress -n $np, ROMIO engine $engine"
        grep '^request_stress:' "$log" | sed 's/^/# /'
    else
        not_ok "request_stress -n $np, ROMIO engine $engine"; diag "$log"
    fi
done
for np in 1 2; do
    log=$OUT/tool_stress.n$np.log
    if timeout "${STRESS_TIMEOUT:-600}" "$MPIEXEC" -n "$np" "$TESTS_BUILDDIR/stress/tool_stress" \
            "${TOOL_STRESS_ROUNDS:-2000}" "${STRESS_DEADLINE:-300}" > "$log" 2>&1 &&
            grep -q ' 0 failures$' "$log"; then
        ok "tool_stress -n $np"
        grep '^tool_stress:' "$log" | sed 's/^/# /'
    else
        not_ok "tool_stress -n $np"; diag "$log"
    fi
done
