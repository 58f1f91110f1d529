# shellcheck shell=bash
# Communicator assertions: message rate and matching time.
# Sourced by bench/run-bench, which defines build, say, median and the prefixes.

ASSERT_ROUNDS=${ASSERT_ROUNDS:-5}
run_assertions() {
    say "== communicator assertions: message rate of a 64-receive window (2 processes, phases of the"
    say "   modes alternating within each run; builds alternate; median [min-max] of $ASSERT_ROUNDS runs, messages/s)"
    local round build prefix d
    : > "$OUT/assert.rate"
    for round in $(seq "$ASSERT_ROUNDS"); do
        for build in custom stock; do
            prefix=$CUSTOM_PREFIX
            [ $build = stock ] && prefix=$STOCK_PREFIX
            "$prefix/bin/mpiexec" -n 2 "$BIN/$build/bench_comm_assert" rate 64 "${ASSERT_MESSAGES:-1000000}" >> "$OUT/assert.rate"
        done
    done
    say "$(awk '
        { key = $1 " " $3; v[key, ++n[key]] = $4; keys[key] = 1 }
        END {
            for (key in keys) {
                m = n[key]
                for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
                    if (v[key, j] < v[key, i]) { t = v[key, i]; v[key, i] = v[key, j]; v[key, j] = t }
                med[key] = v[key, int((m + 1) / 2)]
                line[key] = sprintf("   %-18s %10.0f [%.0f-%.0f]", key, med[key], v[key, 1], v[key, m])
            }
            for (key in keys) printf "%s  /stock plain %.3f\n", line[key], med[key] / med["stock plain"]
        }' "$OUT/assert.rate" | sort)"
    say "== communicator assertions: matching; each other rank sends DEPTH messages, tags DEPTH-1..0, rank 0"
    say "   receives tags 0..DEPTH-1 from each: receives posted first (match-posted) or messages queued first"
    say "   (match-unexp); the senders sleep while rank 0 matches; ns per message, median of $ASSERT_ROUNDS runs of 10"
    say "   rounds per mode"
    local np
    for np in 2 4; do
        for d in 256 1024 4096; do
            local file=$OUT/assert.match.$np.$d
            : > "$file"
            for round in $(seq "$ASSERT_ROUNDS"); do
                for build in custom stock; do
                    prefix=$CUSTOM_PREFIX
                    [ $build = stock ] && prefix=$STOCK_PREFIX
                    # every sender's DEPTH messages in the shared-memory cells at once
                    MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_NUM_CELLS=$((d + 256)) \
                        MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE=4096 \
                        "$prefix/bin/mpiexec" -n $np "$BIN/$build/bench_comm_assert" match "$d" 10 |
                        grep -E 'ns/message|senders had not' >> "$file"
                done
            done
            grep 'senders had not' "$file" | sed 's/^/   warning: /' | tee -a "$RESULTS" || true
            say "$(grep ns/message "$file" | awk -v d=$d -v s=$((np - 1)) '
                { key = $2 " " $1 " " $3; v[key, ++n[key]] = $4; keys[key] = 1 }
                END {
                    for (key in keys) {
                        m = n[key]
                        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
                            if (v[key, j] < v[key, i]) { t = v[key, i]; v[key, i] = v[key, j]; v[key, j] = t }
                        printf "   %d sources x %5d %-28s %9.1f ns [%.1f-%.1f]\n", s, d, key, v[key, int((m + 1) / 2)], v[key, 1], v[key, m]
                    }
                }' | sort)"
        done
    done
}
