# shellcheck shell=bash
# Request completion: the cost of the forms, the message rate with the tool, fairness, the
# memory floor of a scan, threads, the profile.
# Sourced by bench/run-bench, which defines build, say, median and the prefixes.

run_cost() {
    say "== cost per call (ns per request; one process, receives from itself; *_IGNORE statuses)"
    "$CUSTOM_PREFIX/bin/mpiexec" -n 1 "$BIN/custom/bench_cost" "$MAX_N" > "$OUT/cost.custom"
    "$STOCK_PREFIX/bin/mpiexec" -n 1 "$BIN/stock/bench_cost" "$MAX_N" > "$OUT/cost.stock"
    # one row per n and state: the custom figures, then stock's Test* and emulation
    awk '
        FNR == NR { stock[$3 " " $4 " " $5] = $7; next }
        { key = $3 " " $4; v[key " " $5] = $7; if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
        END {
            printf "%-11s | %-27s | %-27s | %-27s | %-25s\n", "n state", "get_status_some/any/all", "Testsome/any/all", "stock Testsome/any/all", "emulated some/any/all";
            for (i = 1; i <= k; i++) {
                key = order[i];
                printf "%-11s | %8s %8s %8s | %8s %8s %8s | %8s %8s %8s | %7s %7s %7s\n", key,
                    v[key " get_status_some"], v[key " get_status_any"], v[key " get_status_all"],
                    v[key " Testsome"], v[key " Testany"], v[key " Testall"],
                    stock[key " Testsome"], stock[key " Testany"], stock[key " Testall"],
                    v[key " emulated_some"], v[key " emulated_any"], v[key " emulated_all"];
            }
        }' "$OUT/cost.stock" "$OUT/cost.custom" | tee -a "$RESULTS"
    say "(stock's emulation loop, ns per request:" \
        "$(awk '$5 == "emulated_some" {printf "%s/%s %s  ", $3, $4, $7}' "$OUT/cost.stock"))"
}

# Rates on this 2-core VM vary by +-20% from run to run (steal time, scheduling), more than the
# difference measured; so each custom run alternates phases with and without the tool (see
# bench_tool_rate.cpp) and the ratio is taken within a run. Median [min-max] of RATE_RUNS runs.
RATE_RUNS=${RATE_RUNS:-7}
RATE_MESSAGES=${RATE_MESSAGES:-2000000}
run_rate() {
    say "== MPI_Testsome message rate, 2 ranks, 8-byte messages, flow-controlled window" \
        "(messages/s: median [min-max] of $RATE_RUNS runs of $RATE_MESSAGES)"
    local w i
    for w in 64 1024; do
        : > "$OUT/rate.$w"
        for ((i = 0; i < RATE_RUNS; i++)); do
            "$CUSTOM_PREFIX/bin/mpiexec" -n 2 "$BIN/custom/bench_tool_rate_tooled" $w "$RATE_MESSAGES" alternate |
                paste -d' ' - - | awk '{print "ratio", $14 / $7; print $1, $2, $3, $7; print $8, $9, $10, $14}'
            "$STOCK_PREFIX/bin/mpiexec" -n 2 "$BIN/stock/bench_tool_rate" $w "$RATE_MESSAGES" plain |
                awk '{print $1, $2, $3, $7}'
        done >> "$OUT/rate.$w"
        say "$(awk -v w=$w '
            { key = ($1 == "ratio") ? "ratio" : $2 " " $3; v = ($1 == "ratio") ? $2 : $4
              n[key]++; r[key, n[key]] = v }
            function stats(key, fmt,    i, j, t, m) {
                m = n[key]
                for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
                    if (r[key, j] < r[key, i]) { t = r[key, i]; r[key, i] = r[key, j]; r[key, j] = t }
                return sprintf(fmt " [" fmt "-" fmt "]", r[key, int((m + 1) / 2)], r[key, 1], r[key, m])
            }
            END {
                printf "%5d in flight: custom plain %s  with tool %s  tool/plain %s  stock plain %s", w,
                    stats("custom plain", "%.0f"), stats("custom tool", "%.0f"),
                    stats("ratio", "%.3f"), stats("stock plain", "%.0f")
            }' "$OUT/rate.$w")"
    done
}

run_fairness() {
    say "== flood: 8 slots, 100 messages waiting for each (2 senders); the first 400 services"
    say "   build / policy: Jain index, worst wait in services, services per slot"
    local line
    line=$("$CUSTOM_PREFIX/bin/mpiexec" -n 3 "$BIN/custom/bench_fairness" 8 100 rotate)
    say "   custom, get_status_any + MPI_Test, rotate (default): $(cut -d' ' -f6- <<< "$line")"
    line=$(MPIR_CVAR_REQUEST_SCAN_ORDER=lowest "$CUSTOM_PREFIX/bin/mpiexec" -n 3 "$BIN/custom/bench_fairness" 8 100 lowest)
    say "   custom, get_status_any + MPI_Test, lowest:           $(cut -d' ' -f6- <<< "$line")"
    line=$("$STOCK_PREFIX/bin/mpiexec" -n 3 "$BIN/stock/bench_fairness" 8 100 stock)
    say "   stock 4.0.2, MPI_Testany:                            $(cut -d' ' -f6- <<< "$line")"
}

run_floor() {
    say "== the memory floor of a scan, per step (ns per request; a model of MPICH's request"
    say "   objects, ${FLOOR_OBJECT_SIZE:-512}-byte objects in blocks of 1024; best of 5; see bench/bench_floor.cpp)"
    "$BIN/bench_floor" "${FLOOR_OBJECT_SIZE:-512}" > "$OUT/floor.txt"
    say "$(awk '{ if (!($2 in seen)) { seen[$2] = 1; order[++k] = $2 } v[$2, $3] = $4; if (!($3 in ns)) { ns[$3] = 1; nl[++m] = $3 } }
        END { printf "   %-9s", "step"; for (j = 1; j <= m; j++) printf " | n = %-6s", nl[j]; printf "\n"
              for (i = 1; i <= k; i++) { printf "   %-9s", order[i]; for (j = 1; j <= m; j++) printf " | %8.2f  ", v[order[i], nl[j]]; printf "\n" } }' "$OUT/floor.txt")"
}

run_threads() {
    say "== message rate with threads: 2 processes, T threads each on its own communicator,"
    say "   windows of 64 one-int messages for 1 s; builds alternate, median of 5 runs (messages/s)"
    local t round build
    for t in 1 2; do
        : > "$OUT/threads.$t"
        for round in 1 2 3 4 5; do
            for build in custom stock; do
                local prefix=$CUSTOM_PREFIX
                [ $build = stock ] && prefix=$STOCK_PREFIX
                "$prefix/bin/mpiexec" -n 2 "$BIN/$build/bench_thread_rate" $t 1 >> "$OUT/threads.$t"
            done
        done
        local c s
        c=$(awk '$2 == "custom" {print $4}' "$OUT/threads.$t" | median)
        s=$(awk '$2 == "stock" {print $4}' "$OUT/threads.$t" | median)
        say "$(awk -v t=$t -v c=$c -v s=$s 'BEGIN {printf "   %d thread(s) per process: custom %.0f  stock %.0f  custom/stock %.3f", t, c, s, c / s}')"
    done
}

PROFILE_N=${PROFILE_N:-512}
run_profile() {
    if ! command -v perf >/dev/null; then
        say "== profile: no perf (maint/install-deps installs linux-perf)"
        return
    fi
    say "== where one call over $PROFILE_N pending receives spends its time (custom build; perf"
    say "   cpu-clock samples at 20 kHz over 3 s of calls; functions with >= 2% of the samples)"
    local form
    for form in Testsome Testany Testall get_status_some get_status_any get_status_all; do
        local data=$OUT/perf.$form.data line
        line=$(perf record -q -e cpu-clock -F 20000 -o "$data" -- \
            "$CUSTOM_PREFIX/bin/mpiexec" -n 1 "$BIN/custom/bench_cost" profile $form "$PROFILE_N" 3 2>/dev/null)
        # the time per request under perf is inflated by the sampling (a VM's timer interrupts):
        # only the shares mean something
        say "   -- $form ($(awk '{printf "%.1f ns per request under perf", $7}' <<< "$line"))"
        say "$(perf report -i "$data" --stdio --no-children --sort dso,symbol --percent-limit 2 \
            --comm bench_cost 2>/dev/null |
            awk '!/^#/ && /%/ { for (i = 2; i < NF; i++) if ($i == "[.]" || $i == "[k]") { printf "   %8s  %s (%s)\n", $1, $(i + 1), $2; break } }')"
    done
}
