# shellcheck shell=bash
# The engines of ROMIO's nonblocking I/O: bandwidth, wake-ups, instructions per operation.
# Sourced by bench/run-bench, which defines build, say, median and the prefixes.

# The engines of ROMIO's nonblocking I/O (issue 28), builds taking turns ENGINE_ROUNDS times:
# Debian's package, stock 4.0.2 built as ours, this build with MPIR_CVAR_ROMIO_NBIO_ENGINE=posix
# and =io_uring. Medians over the rounds; thread counts are the most seen.
ENGINE_SIZES=${ENGINE_SIZES:-16 64 256 1024}
ENGINE_SMALL=${ENGINE_SMALL:-4:256 4:4096 16:1024 64:256 64:4096}
# the engines tables' awk helpers: the median of a space-separated list, the larger of two
ENGINE_AWK_FUNCS='function med(list,   v, n, i, j, t) {
            n = split(list, v, " ")
            for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > t + 0; j--) v[j + 1] = v[j]; v[j + 1] = t }
            return v[int((n + 1) / 2)] }
        function max(a, b) { return (a + 0 > b + 0) ? a : b }'
run_engines() {
    local dir=${AIO_DIR:-$OUT/aio} round build np builds="stock posix io_uring"
    # the small operations on tmpfs too, where it has room for 2 x 256 MiB (and some)
    local memdir=${ENGINE_MEM_DIR:-/dev/shm}/bench-aio-$$ memfree
    memfree=$(df -Pk "${ENGINE_MEM_DIR:-/dev/shm}" 2>/dev/null | awk 'NR == 2 {print $4}') || memfree=0
    if [ "${memfree:-0}" -lt $((600 * 1024)) ]; then
        echo "run-bench engines: ${ENGINE_MEM_DIR:-/dev/shm} has less than 600 MiB free: no tmpfs runs" >&2
        memdir=
    else
        mkdir -p "$memdir"
        trap "rm -rf -- $(printf %q "$memdir")" EXIT
    fi
    mkdir -p "$dir" "$OUT/debian"
    if [ -x "$DEBIAN_MPICXX" ] || maint/install-deps debian-mpich; then
        build debian/bench_aio
        builds="debian $builds"
    fi
    : > "$OUT/engines.runs"
    for round in $(seq "${ENGINE_ROUNDS:-2}"); do
        for build in $builds; do
            local run=("$CUSTOM_PREFIX/bin/mpiexec") bin=$BIN/custom/bench_aio
            case $build in
                debian) run=("$DEBIAN_MPIEXEC"); bin=$BIN/debian/bench_aio ;;
                stock) run=("$STOCK_PREFIX/bin/mpiexec"); bin=$BIN/stock/bench_aio ;;
                *) run=(env MPIR_CVAR_ROMIO_NBIO_ENGINE=$build "$CUSTOM_PREFIX/bin/mpiexec") ;;
            esac
            {
                for np in 1 2; do
                    # shellcheck disable=SC2086
                    "${run[@]}" -n $np "$bin" "$dir" wait $ENGINE_SIZES
                done
                # shellcheck disable=SC2086
                "${run[@]}" -n 2 "$bin" "$dir" phase $ENGINE_SIZES
                for np in 1 2; do
                    # shellcheck disable=SC2086
                    "${run[@]}" -n $np "$bin" "$dir" small $ENGINE_SMALL
                    # shellcheck disable=SC2086
                    [ -z "$memdir" ] ||
                        "${run[@]}" -n $np "$bin" "$memdir" small $ENGINE_SMALL | sed 's/^small /smallmem /'
                done
            } | awk -v b=$build '{$2 = b; print}' >> "$OUT/engines.runs"
        done
    done
    say "== ROMIO's engines, seed 003 in phase: MPI_File_iread_at + 0.1 s compute + MPI_Wait, page cache"
    say "   dropped; median of ${ENGINE_ROUNDS:-2} rounds. Per build: effective MiB/s, waiting thread's CPU as % of"
    say "   the wait, most threads the I/O brought besides those MPI_Init left (user threads + io_uring workers)"
    for np in 1 2; do
        say "   -- $np process(es)"
        say "$(printf '   %6s |' MiB; for b in $builds; do printf ' %-26s |' "$b"; done; echo ' io_uring/stock io_uring/posix')"
        say "$(awk -v np=$np -v builds="$builds" "$ENGINE_AWK_FUNCS"'
            $1 == "aio" && $3 == "wait" && $4 == np {
                k = $2 SUBSEP $5; if (!($5 in seen)) { seen[$5] = 1; order[++n] = $5 }
                bw[k] = bw[k] " " $6; cpu[k] = cpu[k] " " (($7 >= 0.02) ? 100 * $8 / $7 : -1)
                ut[k] = max(ut[k], $10); io[k] = max(io[k], $11)
            }
            END {
                nb = split(builds, b, " ")
                for (i = 1; i <= n; i++) {
                    line = sprintf("   %6s |", order[i])
                    for (j = 1; j <= nb; j++) { k = b[j] SUBSEP order[i]; c = med(cpu[k])
                        line = line sprintf(" %7.1f %6s cpu %2d+%-2d thr |", med(bw[k]), (c < 0) ? "-" : sprintf("%5.1f%%", c), ut[k], io[k]) }
                    s = med(bw["stock" SUBSEP order[i]]); p = med(bw["posix" SUBSEP order[i]]); u = med(bw["io_uring" SUBSEP order[i]])
                    printf "%s %14.2f %14.2f\n", line, (s > 0) ? u / s : 0, (p > 0) ? u / p : 0
                }
            }' "$OUT/engines.runs")"
    done
    engines_phase_table "$builds"
    engines_small_table small "on a 256 MiB file in the page cache of the disk's file system ($dir)"
    [ -z "$memdir" ] || engines_small_table smallmem "on a 256 MiB file in tmpfs ($memdir): the engines' own cost"
    [ -z "$memdir" ] || rm -rf "$memdir"
}

# The out-of-phase table of run_engines, for the builds $1
engines_phase_table() {
    local builds=$1
    say "== ROMIO's engines, seed 003 out of phase: 2 processes on 2 cores, one computes while the other"
    say "   waits, then the other way; per build: effective MiB/s of the slower, the computation's time"
    say "   (0.1 s on an idle core), CPU of threads besides main, most threads the I/O brought (user + io_uring)"
    say "$(printf '   %6s |' MiB; for b in $builds; do printf ' %-40s |' "$b"; done; echo ' io_uring/stock io_uring/posix')"
    say "$(awk -v builds="$builds" "$ENGINE_AWK_FUNCS"'
        $1 == "phase" {
            k = $2 SUBSEP $4; if (!($4 in seen)) { seen[$4] = 1; order[++n] = $4 }
            bw[k] = bw[k] " " $5; comp[k] = comp[k] " " $8; helper[k] = helper[k] " " $9
            ut[k] = max(ut[k], $11); io[k] = max(io[k], $12)
        }
        END {
            nb = split(builds, b, " ")
            for (i = 1; i <= n; i++) {
                line = sprintf("   %6s |", order[i])
                for (j = 1; j <= nb; j++) { k = b[j] SUBSEP order[i]
                    line = line sprintf(" %7.1f comp %.3f s other %.3f s %2d+%-2d thr |", med(bw[k]), med(comp[k]), med(helper[k]), ut[k], io[k]) }
                s = med(bw["stock" SUBSEP order[i]]); p = med(bw["posix" SUBSEP order[i]]); u = med(bw["io_uring" SUBSEP order[i]])
                printf "%s %14.2f %14.2f\n", line, (s > 0) ? u / s : 0, (p > 0) ? u / p : 0
            }
        }' "$OUT/engines.runs")"
}

# One table of the small operations: tag (small, smallmem), where the file was
engines_small_table() {
    local tag=$1 where=$2 builds="stock posix io_uring"
    [ -x "$DEBIAN_MPICXX" ] && builds="debian $builds"
    say "== ROMIO's engines, many small operations in flight (MPI_Waitsome replaces each completed one)"
    say "   $where, 1 s each: operations per second (all processes), mean"
    say "   and 99th-percentile latency in us (slowest process), most threads the I/O brought (user + io_uring)"
    say "$(printf '   %-5s %3s %4s %2s |' op KiB depth np; for b in $builds; do printf ' %-30s |' "$b"; done; echo ' io_uring/stock io_uring/posix')"
    say "$(awk -v builds="$builds" -v tag="$tag" "$ENGINE_AWK_FUNCS"'
        $1 == tag {
            key = $4 " " $5 " " $6 " " $3; k = $2 SUBSEP key; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
            rate[k] = rate[k] " " $7; mean[k] = mean[k] " " $8; p99[k] = p99[k] " " $9
            ut[k] = max(ut[k], $10); io[k] = max(io[k], $11)
        }
        END {
            nb = split(builds, b, " ")
            for (i = 1; i <= n; i++) {
                split(order[i], f, " ")
                line = sprintf("   %-5s %3s %4s %2s |", f[1], f[2], f[3], f[4])
                for (j = 1; j <= nb; j++) { k = b[j] SUBSEP order[i]
                    line = line sprintf(" %8.0f/s %7.0f %7.0f %2d+%-2d |", med(rate[k]), med(mean[k]), med(p99[k]), ut[k], io[k]) }
                s = med(rate["stock" SUBSEP order[i]]); p = med(rate["posix" SUBSEP order[i]]); u = med(rate["io_uring" SUBSEP order[i]])
                printf "%s %14.2f %14.2f\n", line, (s > 0) ? u / s : 0, (p > 0) ? u / p : 0
            }
        }' "$OUT/engines.runs")"
}

# Completions per I/O operation on io_uring with threads: the wake-up no-ops the engine posts
# (perf counts the tracepoint in the process; tracefs is mounted if it is not).
run_wakeups() {
    local dir=$OUT/wakeups threads line ops cqes
    mkdir -p "$dir"
    if [ ! -d /sys/kernel/tracing/events/io_uring ]; then
        mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
    fi
    say "== io_uring completions per I/O operation, MPI_THREAD_MULTIPLE: one thread in MPI_Wait, the others polling (10 s)"
    say "threads  operations  waited  polled  io_uring completions  per operation"
    for threads in 2 4; do
        if ! perf stat -x, -o "$dir/perf.$threads" -e io_uring:io_uring_complete \
            "$CUSTOM_PREFIX/bin/mpiexec" -n 1 "$BIN/custom/bench_uring_wakeups" "$dir" "$threads" 10 \
            > "$dir/out.$threads"; then
            say "(perf cannot count io_uring:io_uring_complete here: no figures)"
            return 0
        fi
        line=$(grep '^wakeups ' "$dir/out.$threads")
        ops=$(awk '{print $5}' <<< "$line")
        cqes=$(awk -F, '/io_uring_complete/ {print $1}' "$dir/perf.$threads")
        say "$(awk -v t="$threads" -v c="$cqes" '{printf "%7d %11d %7d %7d %21d %14.2f", t, $5, $6, $7, c, ($5 > 0) ? c / $5 : 0}' <<< "$line")"
    done
}

# Instructions of ROMIO's nonblocking writes (issue 42), per thread, in the settled modes of
# bench_aio_instructions: each wait finds its writes ended, so every count is the same from run
# to run (a wait that polls writes in flight polls as often as the schedule lets it).
aio_call_costs() {  # callgrind file of the main thread -> "issue complete poll_per_call ops"
    awk '
        function id_and_name(line,   rest, close_at) {
            rest = substr(line, index(line, "(") + 1); close_at = index(rest, ")")
            id = substr(rest, 1, close_at - 1)
            if (length(rest) > close_at + 1) name[id] = substr(rest, close_at + 2)
            return id
        }
        /^fn=\(/ { id_and_name($0); next }
        /^cfn=\(/ { callee = id_and_name($0); next }
        /^calls=/ { split(substr($0, 7), c, " "); pending = c[1]; next }
        pending != "" { calls[callee] += pending; cost[callee] += $2; pending = ""; next }
        END {
            for (k in calls) {
                if (name[k] == "PMPI_File_iwrite_at") { issue = cost[k]; ops = calls[k] }
                if (name[k] == "PMPI_Wait" || name[k] == "PMPI_Waitall") complete += cost[k]
                if (name[k] == "ADIOI_GEN_aio_poll_fn") poll = cost[k] / calls[k]
            }
            printf "%d %d %s %d\n", issue / ops, complete / ops, (poll > 0) ? sprintf("%d", poll) : "-", ops
        }' "$1"
}

syscalls_of() {  # engine program mode depth rounds -> system calls of every thread (strace -f)
    local log
    log=$(mktemp)
    MPIR_CVAR_ROMIO_NBIO_ENGINE=$1 strace -f -qq -o "$log" "$2" "$3" "$4" "$5" "$dir/file" > /dev/null 2>&1
    grep -vc 'resumed>' "$log"
    rm -f "$log"
}

run_aio_instructions() {
    [ -x "$DEBIAN_MPICXX" ] || maint/install-deps debian-mpich
    command -v valgrind > /dev/null || { echo "bench aio-instructions: valgrind is needed" >&2; return 1; }
    command -v strace > /dev/null || { echo "bench aio-instructions: strace is needed" >&2; return 1; }
    local dir=$OUT/aio-instructions sides=() side engine mode depth rounds f t prog costs ops helpers calls
    mkdir -p "$dir/debian" "$dir/before"
    sides+=("custom:posix" "custom:io_uring")
    if [ -n "${AIO_BEFORE_PREFIX:-}" ]; then
        build before/bench_aio_instructions
        sides+=("before:posix" "before:io_uring")
    fi
    if [ -x "$STOCK_PREFIX/bin/mpicxx" ]; then
        build stock/bench_aio_instructions
        sides+=("stock:posix")
    fi
    build debian/bench_aio_instructions
    sides+=("debian:posix")
    say "== ROMIO nonblocking writes of 4 KiB, per operation (callgrind, each wait finding its writes ended):"
    say "   the calling thread's instructions in MPI_File_iwrite_at, in MPI_Wait/MPI_Waitall and per"
    say "   poll_fn call; the other threads' instructions (glibc's AIO helpers); system calls (strace -f)"
    say "$(printf '   %-16s %-5s | %7s %8s %6s | %7s %7s | %8s' build:engine depth issue complete poll calling helpers syscalls)"
    for mode in single-settled depth-settled; do
        depth=1 rounds=512
        [ $mode = depth-settled ] && depth=64 rounds=16
        for side in "${sides[@]}"; do
            engine=${side#*:}
            prog=$BIN/${side%%:*}/bench_aio_instructions
            f=$dir/cg.${side%%:*}.$engine.$mode
            rm -f "$f"*
            MPIR_CVAR_ROMIO_NBIO_ENGINE=$engine valgrind --tool=callgrind --separate-threads=yes \
                --callgrind-out-file="$f" "$prog" $mode $depth $rounds "$dir/file" > "$f.out" 2>&1 ||
                { say "   $side $mode: failed (see $f.out)"; continue; }
            costs=$(aio_call_costs "$f-01")
            ops=${costs##* }
            helpers=$(for t in "$f"-[0-9]*; do [ "$t" = "$f-01" ] || cat "$t"; done |
                awk -v ops="$ops" '/^summary:/ {s += $2} END {printf "%d", s / ops}')
            # system calls per operation: a run's less those of a run of one round
            calls=$(awk -v a="$(syscalls_of "$engine" "$prog" $mode $depth $rounds)" \
                -v b="$(syscalls_of "$engine" "$prog" $mode $depth 1)" -v ops=$(( depth * (rounds - 1) )) \
                'BEGIN {printf "%.2f", (a - b) / ops}')
            set -- ${costs% *}
            say "$(printf '   %-16s %-5s | %7s %8s %6s | %7s %7s | %8s' "$side" $depth $1 $2 $3 $(( $1 + $2 )) "$helpers" "$calls")"
        done
    done
}
