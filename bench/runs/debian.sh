# shellcheck shell=bash
# Against Debian's package: times of every form and instructions per request.
# Sourced by bench/run-bench, which defines build, say, median and the prefixes.

# Against what a Debian user already has: Debian's own mpich package (installed from bookworm if
# missing: maint/install-deps debian-mpich), beside stock 4.0.2 built the same way as ours, on
# the device this checkout is configured with. Every Test, Wait and get_status form at n = 1, 8,
# 64, 512, 4096 (bench_forms), FORMS_RUNS runs taking turns; then the message rate (bench_tool_rate
# plain, 2 ranks) of the three, RATE_RUNS runs taking turns.
DEBIAN_MPICXX=/usr/bin/mpicxx.mpich
DEBIAN_MPIEXEC=/usr/bin/mpiexec.mpich
run_debian() {
    [ -x "$DEBIAN_MPICXX" ] || maint/install-deps debian-mpich
    local version
    version=$(dpkg-query -W -f '${Version}' libmpich12)
    case $version in
        *reqengine*) echo "libmpich12 $version is this project's package, not Debian's: compare on a machine with Debian's" >&2; return 1 ;;
    esac
    mkdir -p "$OUT/debian"
    build custom/bench_forms
    build custom/bench_tool_rate
    build stock/bench_forms
    build stock/bench_tool_rate
    build debian/bench_forms
    build debian/bench_tool_rate
    local i side
    : > "$OUT/forms.runs"
    for ((i = 0; i < ${FORMS_RUNS:-3}; i++)); do
        for side in custom stock debian; do
            if [ $side = debian ]; then
                "$DEBIAN_MPIEXEC" -n 1 "$BIN/debian/bench_forms" 3
            else
                "$(side_prefix $side)/bin/mpiexec" -n 1 "$BIN/$side/bench_forms" 3
            fi
        done >> "$OUT/forms.runs"
    done
    say "== every completion form against Debian's mpich $version ($(debian_device)), ns per request," \
        "median of ${FORMS_RUNS:-3} runs taking turns; one process, receives from itself"
    say "   pending: the form called on n receives nothing matches (Test and Request_get_status: a loop over the n)"
    say "   complete: n complete receives completed by the form (Wait, Test: one at a time; *any, *some: until done)"
    say "$(awk '
        { key = $3 " " $4 " " $5; if (!(key in seen)) { seen[key] = 1; order[++k] = key }
          v[key, $2] = v[key, $2] " " $6 }
        function med(list,   x, m, i, j, t) {
            if (list == "") return "-"
            m = split(list, x, " ")
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
            return x[int((m + 1) / 2)]
        }
        END {
            printf "   %-5s %-9s %-19s | %9s %9s %9s | %s\n", "n", "state", "form", "custom", "stock", "debian", "custom/debian"
            for (i = 1; i <= k; i++) {
                split(order[i], f, " ")
                c = med(v[order[i], "custom"]); s = med(v[order[i], "stock"]); d = med(v[order[i], "debian"])
                printf "   %-5s %-9s %-19s | %9s %9s %9s | %s\n", f[1], f[2], f[3], c, s, d,
                    (d == "-" || d + 0 == 0) ? "-" : sprintf("%.2f", c / d)
            }
        }' "$OUT/forms.runs")"
    : > "$OUT/rate.debian"
    local w
    for w in 1 64 1024; do
        for ((i = 0; i < RATE_RUNS; i++)); do
            "$CUSTOM_PREFIX/bin/mpiexec" -n 2 "$BIN/custom/bench_tool_rate" $w "$RATE_MESSAGES" plain |
                awk -v w=$w '{print w, "custom", $7}'
            "$STOCK_PREFIX/bin/mpiexec" -n 2 "$BIN/stock/bench_tool_rate" $w "$RATE_MESSAGES" plain |
                awk -v w=$w '{print w, "stock", $7}'
            "$DEBIAN_MPIEXEC" -n 2 "$BIN/debian/bench_tool_rate" $w "$RATE_MESSAGES" plain |
                awk -v w=$w '{print w, "debian", $7}'
        done >> "$OUT/rate.debian"
    done
    say "== MPI_Testsome message rate against Debian's mpich, 2 ranks, 8-byte messages (messages/s:" \
        "median [min-max] of $RATE_RUNS runs of $RATE_MESSAGES taking turns)"
    say "$(awk '
        { key = $1 " " $2; n[key]++; r[key, n[key]] = $3; ws[$1] = 1 }
        function stats(key,    m, i, j, t) {
            m = n[key]
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (r[key, j] < r[key, i]) { t = r[key, i]; r[key, i] = r[key, j]; r[key, j] = t }
            med[key] = r[key, int((m + 1) / 2)]
            return sprintf("%.0f [%.0f-%.0f]", med[key], r[key, 1], r[key, m])
        }
        END {
            for (w in ws) printf "   %5d in flight: custom %s  stock %s  debian %s  custom/debian %.3f\n", w,
                stats(w " custom"), stats(w " stock"), stats(w " debian"), med[w " custom"] / med[w " debian"]
        }' "$OUT/rate.debian" | sort -n -k1)"
}

# Instructions per request of each completion form (valgrind's callgrind, counting only inside
# the form's MPI_/PMPI_ symbols): deterministic where times on this shared 2-core machine are not,
# for custom, stock built the same way and Debian's package, n = 1, 8, 64, 512.
run_instructions() {
    [ -x "$DEBIAN_MPICXX" ] || maint/install-deps debian-mpich
    command -v valgrind > /dev/null || { echo "bench instructions: valgrind is needed" >&2; return 1; }
    mkdir -p "$OUT/debian" "$OUT/callgrind"
    build custom/bench_instructions
    build stock/bench_instructions
    build debian/bench_instructions
    local state form n side reps total
    say "== instructions per request (callgrind, only inside the form's calls), custom / stock / debian"
    say "$(printf '   %-9s %-24s %5s | %8s %8s %8s | %s' state form n custom stock debian custom/debian)"
    for state in pending complete; do
        local forms="Test Request_get_status Testany Testsome Testall Request_get_status_any Request_get_status_some Request_get_status_all"
        [ $state = complete ] && forms="Wait Test Waitany Testany Waitsome Testsome Waitall Testall"
        for form in $forms; do
            for n in ${BENCH_INSTR_SIZES:-1 8 64 512}; do
                local row=() c=
                for side in custom stock debian; do
                    case $form in Request_get_status_*) [ $side = custom ] || { row+=(-); continue; } ;; esac
                    if [ $state = complete ]; then reps=$(( (2048 + n - 1) / n )); else reps=$(( 4096 / n > 20 ? 4096 / n : 20 )); fi
                    valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind/$side.$state.$form.$n" \
                        --toggle-collect="MPI_$form" --toggle-collect="PMPI_$form" \
                        "$BIN/$side/bench_instructions" $state $form $n $reps > /dev/null 2>&1 || { row+=(err); continue; }
                    total=$(callgrind_annotate "$OUT/callgrind/$side.$state.$form.$n" 2>/dev/null |
                        sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
                    row+=("$(( total / (n * reps) ))")
                done
                c=-; [ "${row[2]}" != - ] && [ "${row[0]}" != err ] && c=$(awk -v a="${row[0]}" -v b="${row[2]}" 'BEGIN{printf "%.2f", a / b}')
                say "$(printf '   %-9s %-24s %5s | %8s %8s %8s | %s' $state $form $n "${row[0]}" "${row[1]}" "${row[2]}" "$c")"
            done
        done
    done
}
