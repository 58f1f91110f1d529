# shellcheck shell=bash
# MPI_T events and QMPI compiled in against a build without them.
# Sourced by bench/run-bench, which defines build, say, median and the prefixes.

# MPI_T events and QMPI compiled in (this build, nobody listening) against the same series built
# without them: EVENT_ROUNDS rounds, each running both builds one after the other, medians.
EVENT_ROUNDS=${EVENT_ROUNDS:-5}
run_events() {
    if [ ! -x "$NOEVENTS_PREFIX/bin/mpicxx" ]; then
        MPICH_BUILD_DIR=$TOP/_build-noevents MPICH_PREFIX=$NOEVENTS_PREFIX \
            MPICH_CONFIG_OPTS="$(maint/mpich-pipeline default-config-opts) --disable-mpit-events --disable-qmpi" \
            maint/mpich-pipeline install
    fi
    mkdir -p "$OUT/noevents"
    local prog
    for prog in bench_cost bench_tool_rate bench_aio bench_single; do
        build noevents/$prog
    done
    build custom/bench_tool_rate
    build custom/bench_single
    build custom/bench_event_cost
    local dir=${AIO_DIR:-$OUT/aio} round side prefix
    mkdir -p "$dir"
    : > "$OUT/events.runs"
    for round in $(seq "$EVENT_ROUNDS"); do
        for side in custom noevents; do
            prefix=$CUSTOM_PREFIX
            [ $side = noevents ] && prefix=$NOEVENTS_PREFIX
            "$prefix/bin/mpiexec" -n 1 "$BIN/$side/bench_cost" 512 |
                awk -v s=$side '$3 == 512 && $4 == "none" {print s, "cost", $5, $7}' >> "$OUT/events.runs"
            "$prefix/bin/mpiexec" -n 2 "$BIN/$side/bench_tool_rate" 64 "${RATE_MESSAGES:-2000000}" plain |
                awk -v s=$side '{print s, "rate", "Testsome64", $7}' >> "$OUT/events.runs"
            "$prefix/bin/mpiexec" -n 1 "$BIN/$side/bench_aio" "$dir" wait 64 |
                awk -v s=$side '{print s, "aio", "wait64MiB", $6}' >> "$OUT/events.runs"
            "$prefix/bin/mpiexec" -n 1 "$BIN/$side/bench_single" |
                awk -v s=$side '{print s, "single", $3, $4}' >> "$OUT/events.runs"
        done
    done
    say "== MPI_T events and QMPI compiled in, nobody listening (custom) vs the same series without them (noevents)"
    say "   median [min-max] of $EVENT_ROUNDS rounds; cost: ns per request, 512 pending; rate: messages/s; aio: MiB/s;"
    say "   single: ns per call on one request (bench_single: MPI_Test/MPI_Request_get_status pending, MPI_Wait/MPI_Test complete)"
    say "$(awk '
        { key = $2 " " $3; v[$1, key, ++n[$1, key]] = $4; keys[key] = 1 }
        function stats(side, key,    m, i, j, t) {
            m = n[side, key]
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
                if (v[side, key, j] < v[side, key, i]) { t = v[side, key, i]; v[side, key, i] = v[side, key, j]; v[side, key, j] = t }
            med[side] = v[side, key, int((m + 1) / 2)]
            return sprintf("%10.2f [%.2f-%.2f]", med[side], v[side, key, 1], v[side, key, m])
        }
        END {
            printf "%-28s %-28s %-28s %s\n", "figure", "custom", "noevents", "custom/noevents"
            for (key in keys) {
                a = stats("custom", key); b = stats("noevents", key)
                printf "%-28s %-28s %-28s %.3f\n", key, a, b, med["custom"] / med["noevents"]
            }
        }' "$OUT/events.runs" | sort)"
    say "== one listener on request_complete: cost per completion (bench_event_cost, 2 ranks, 64 in flight," \
        "phases alternating within each run; ns per completion = 1e9/rate(mode) - 1e9/rate(none); median [min-max] of $EVENT_ROUNDS runs)"
    : > "$OUT/event_cost.runs"
    for round in $(seq "$EVENT_ROUNDS"); do
        "$CUSTOM_PREFIX/bin/mpiexec" -n 2 "$BIN/custom/bench_event_cost" 64 "${EVENT_MESSAGES:-1200000}" >> "$OUT/event_cost.runs"
    done
    say "$(awk '
        { r[$2, ++n[$2]] = $6; c[$2, n[$2]] = $7; modes[$2] = 1 }
        function med(a, mode,    m, i, j, t, x) {
            m = n[mode]
            for (i = 1; i <= m; i++) x[i] = a[mode, i]
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
            return sprintf("%.1f [%.1f-%.1f]", x[int((m + 1) / 2)], x[1], x[m])
        }
        END {
            for (mode in modes) printf "%-9s rate %s msg/s  cost %s ns per completion\n", mode, med(r, mode), med(c, mode)
        }' "$OUT/event_cost.runs" | sort)"
}
