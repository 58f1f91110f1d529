# shellcheck shell=bash
# Generalized request classes and ROMIO's nonblocking I/O on them: the class engine, seed
# 003's bandwidth and phase experiments, ROMIO's polls.
# Sourced by bench/run-bench, which defines build, say, median and the prefixes.

run_greq() {
    say "== generalized request classes (custom, custom with MPIR_CVAR_GREQUEST_WAIT_BATCH=0, stock)"
    local line build
    for build in custom nobatch stock; do
        local prefix=$CUSTOM_PREFIX side=custom env=()
        [ $build = stock ] && prefix=$STOCK_PREFIX side=stock
        [ $build = nobatch ] && env=(MPIR_CVAR_GREQUEST_WAIT_BATCH=0)
        line=$(env "${env[@]}" "$prefix/bin/mpiexec" -n 2 "$BIN/$side/bench_greq_class" cross)
        say "$(printf '   %-8s 64 MiB message landed after %s s while the sender waited %s s on a class request' \
            $build $(cut -d' ' -f3,4 <<< "$line"))"
        line=$(env "${env[@]}" "$prefix/bin/mpiexec" -n 1 "$BIN/$side/bench_greq_class" waitall)
        say "$(awk -v b=$build '{printf "   %-8s MPI_Waitall on 100 class requests: %d wait_fn calls, largest count %d, CPU %.4f s of %.4f s", b, $3, $4, $5, $6}' <<< "$line")"
    done
}

AIO_SIZES=${AIO_SIZES:-1 2 4 8 16 32 64 128 256 512}
run_aio() {
    local dir=${AIO_DIR:-$OUT/aio} np mode build
    mkdir -p "$dir"
    : > "$OUT/aio.runs"
    # the builds take turns, AIO_ROUNDS times, so that the disk's drift over minutes (tens of
    # percent on this VM) falls on all three alike; each figure is the median over the rounds of
    # bench_aio's own median of three
    local round
    for round in $(seq "${AIO_ROUNDS:-3}"); do
        for np in 1 2; do
            for mode in wait waitall; do
                for build in custom nobatch stock; do
                    local prefix=$CUSTOM_PREFIX side=custom env=()
                    [ $build = stock ] && prefix=$STOCK_PREFIX side=stock
                    [ $build = nobatch ] && env=(MPIR_CVAR_GREQUEST_WAIT_BATCH=0)
                    # shellcheck disable=SC2086
                    env "${env[@]}" "$prefix/bin/mpiexec" -n $np "$BIN/$side/bench_aio" "$dir" $mode $AIO_SIZES |
                        awk -v b=$build '{$2 = b; print}' >> "$OUT/aio.runs"
                done
            done
        done
    done
    # one line per build, mode, processes and size: the medians of bandwidth, wait, CPU
    awk '
        function median(list,   v, n, i, j, t) {
            n = split(list, v, " ")
            for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > t + 0; j--) v[j + 1] = v[j]; v[j + 1] = t }
            return v[int((n + 1) / 2)]
        }
        { key = $2 " " $3 " " $4 " " $5; if (!(key in bw)) order[++k] = key
          bw[key] = bw[key] " " $6; wt[key] = wt[key] " " $7; cpu[key] = cpu[key] " " $8; res[key] = $9 }
        END { for (i = 1; i <= k; i++) { key = order[i]
              print "aio", key, median(bw[key]), median(wt[key]), median(cpu[key]), res[key] } }
    ' "$OUT/aio.runs" > "$OUT/aio.txt"
    # the floor: what waking from aio_suspend costs a thread here, without MPI
    local floor
    floor=$(for np in 1 2; do "$BIN/bench_aio_wake" "$dir" 256 $np 0.01 0.04 0.01 0.04; done)
    say "== glibc aio_suspend in slices, no MPI: 256 MiB per process, page cache dropped"
    say "   (thread CPU in the wait as % of its wall time, and per wake-up; two runs per slice)"
    say "$(awk '{ printf "   %d process(es), %.0f ms slices: %5.1f%% cpu, %4d wakes, %5.0f us per wake\n", $2, 1000 * $3, $6, $7, $8 }' <<< "$floor")"
    say "== seed 003: MPI_File_iread_at + 0.1 s compute + wait, private files, page cache dropped"
    say "   (median of ${AIO_ROUNDS:-3} rounds in which the three builds take turns)"
    say "   (effective MiB/s; calling thread's CPU in the wait as % of the wait; file resident before the read)"
    for np in 1 2; do
        for mode in wait waitall; do
            say "   -- $np process(es), $mode$([ $mode = waitall ] && echo ' (8 requests per process)')"
            say "$(printf '   %6s | %-20s | %-20s | %-20s | %s' MiB custom 'custom, batching off' stock 'custom/stock')"
            say "$(awk -v np=$np -v mode=$mode '
                $3 == mode && $4 == np {
                    # the CPU share only when the wait lasted (the CPU clock ticks in ms)
                    key = $5; bw[$2, key] = $6; cpu[$2, key] = ($7 >= 0.02) ? sprintf("%5.1f%%", 100 * $8 / $7) : "    -"
                    res[$2, key] = $9; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
                }
                END {
                    for (i = 1; i <= n; i++) {
                        k = order[i]
                        printf "   %6s | %8.1f %s cpu | %8.1f %s cpu | %8.1f %s cpu | %.2f (resident %.0f%%)\n",
                            k, bw["custom", k], cpu["custom", k], bw["nobatch", k], cpu["nobatch", k],
                            bw["stock", k], cpu["stock", k], (bw["stock", k] > 0) ? bw["custom", k] / bw["stock", k] : 0,
                            res["custom", k]
                    }
                }' "$OUT/aio.txt")"
        done
    done
    aio_plot
}

# the bandwidth of seed 003's wait mode as a PNG, if gnuplot is there
aio_plot() {
    local data=$OUT/aio.dat build np
    if command -v gnuplot >/dev/null; then
        for build in custom nobatch stock; do
            for np in 1 2; do
                echo "# $build $np"
                awk -v b=$build -v np=$np '$2 == b && $3 == "wait" && $4 == np {print $5, $6}' "$OUT/aio.txt"
                printf '\n\n'
            done
        done > "$data"
        gnuplot <<PLOT
set terminal pngcairo size 900,560 noenhanced
set output "$OUT/aio-bandwidth.png"
set title "MPI_File_iread_at + 0.1 s compute + MPI_Wait, private files (seed 003, section 6)"
set xlabel "MiB read per process"
set ylabel "effective bandwidth (MiB/s)"
set logscale x 2
set key top left
set grid
plot "$data" index 0 with linespoints title "custom, 1 process", \
     "$data" index 1 with linespoints title "custom, 2 processes", \
     "$data" index 2 with linespoints dashtype 2 title "custom batching off, 1 process", \
     "$data" index 3 with linespoints dashtype 2 title "custom batching off, 2 processes", \
     "$data" index 4 with linespoints title "stock 4.0.2, 1 process", \
     "$data" index 5 with linespoints title "stock 4.0.2, 2 processes"
PLOT
        say "   plot: $OUT/aio-bandwidth.png"
    else
        say "   (no gnuplot: maint/install-deps installs gnuplot-nox for the plot)"
    fi
}

PHASE_SIZES=${PHASE_SIZES:-16 64 256}
run_phase() {
    local dir=${AIO_DIR:-$OUT/aio} round build
    mkdir -p "$dir"
    : > "$OUT/phase.runs"
    for round in $(seq "${AIO_ROUNDS:-3}"); do
        for build in custom stock; do
            local prefix=$CUSTOM_PREFIX
            [ $build = stock ] && prefix=$STOCK_PREFIX
            # shellcheck disable=SC2086
            "$prefix/bin/mpiexec" -n 2 "$BIN/$build/bench_aio" "$dir" phase $PHASE_SIZES >> "$OUT/phase.runs"
        done
    done
    say "== seed 003, fully subscribed: 2 processes out of phase on 2 cores (one computes while the"
    say "   other waits, then the other way); a fixed computation of 0.1 s on an idle core"
    say "   (median of ${AIO_ROUNDS:-3} rounds: effective MiB/s of the slower process; the computation's"
    say "   time; CPU of the waiting thread in the wait; CPU of glibc's AIO threads; page cache dropped)"
    say "$(printf '   %6s | %-44s | %-44s | %s' MiB custom stock 'custom/stock')"
    say "$(awk '
        function median(list,   v, n, i, j, t) {
            n = split(list, v, " ")
            for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > t + 0; j--) v[j + 1] = v[j]; v[j + 1] = t }
            return v[int((n + 1) / 2)]
        }
        { key = $2 " " $4; if (!($4 in seen)) { seen[$4] = 1; order[++k] = $4 }
          bw[key] = bw[key] " " $5; wcpu[key] = wcpu[key] " " $7; comp[key] = comp[key] " " $8; helper[key] = helper[key] " " $9 }
        END {
            for (i = 1; i <= k; i++) {
                m = order[i]; c = "custom " m; s = "stock " m
                printf "   %6s | %7.1f MiB/s compute %.3f s wait cpu %.3f s aio %.3f s | %7.1f MiB/s compute %.3f s wait cpu %.3f s aio %.3f s | %.2f\n",
                    m, median(bw[c]), median(comp[c]), median(wcpu[c]), median(helper[c]),
                    median(bw[s]), median(comp[s]), median(wcpu[s]), median(helper[s]),
                    (median(bw[s]) > 0) ? median(bw[c]) / median(bw[s]) : 0
            }
        }' "$OUT/phase.runs")"
}

run_polls() {
    local dir=${AIO_DIR:-$OUT/aio} np
    mkdir -p "$dir"
    say "== ROMIO poll_fn calls (aio_error) per completion call: 256 MPI_File_iread_at of 256 KiB"
    say "   per process, page cache dropped, a loop until all complete"
    say "   (build, form, processes: calls, poll_fn calls, per call, per pending request per call)"
    for np in 1 2; do
        say "$("$CUSTOM_PREFIX/bin/mpiexec" -n $np "$BIN/custom/bench_romio_polls" "$dir" testsome |
            awk '{printf "   custom %-32s %d: %6d calls %8d polls %7.1f per call %6.3f per pending request", $3, $4, $5, $6, $7, $8}')"
        say "$("$CUSTOM_PREFIX/bin/mpiexec" -n $np "$BIN/custom/bench_romio_polls" "$dir" get_status_some |
            awk '{printf "   custom %-32s %d: %6d calls %8d polls %7.1f per call %6.3f per pending request", $3 " + MPI_Waitall", $4, $5, $6, $7, $8}')"
        say "$("$STOCK_PREFIX/bin/mpiexec" -n $np "$BIN/stock/bench_romio_polls" "$dir" testsome |
            awk '{printf "   stock  %-32s %d: %6d calls %8d polls %7.1f per call %6.3f per pending request", $3, $4, $5, $6, $7, $8}')"
    done
}
