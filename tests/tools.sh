#!/bin/bash
# The tool libraries (tool/): the same applications (tool/tool_scenarios.cpp) run plain and under
# each stack of tools must print the same completions, statuses and return classes; each
# reqstatus tool's log (PMPI, QMPI) must list exactly them, and the request_events tool must
# write its summary on every rank. One TAP line per stack and process count.
. "$(dirname "$0")/lib.sh"
lib=$MPICH_PREFIX/lib/libmpi_reqstatus_tool.so
qlib=$MPICH_PREFIX/lib/libqmpi_reqstatus_tool.so
elib=$MPICH_PREFIX/lib/libqmpi_request_events.so
plain=$TESTS_BUILDDIR/tool/tool_scenarios pmpi=$TESTS_BUILDDIR/tool/tool_scenarios_pmpi
SCENARIOS=("pt2pt 24" "persistent 24" "cancelled 8" "grequests 8")   # name, completions
CALLS=(MPI_Testany MPI_Waitany MPI_Testsome MPI_Waitsome MPI_Testall MPI_Waitall)
# a mode: the PMPI tool (linked) or not, then the QMPI tool list (in order; - for none)
MODES=("pmpi -" "plain reqstatus" "pmpi reqstatus" "plain request_events"
       "plain reqstatus:request_events" "plain request_events:reqstatus"
       "pmpi reqstatus:request_events")
# a completion as the tools log it, without the call and the index: sorted, one per line
log_fields() { grep -v '^ ' | sed -E 's/^[A-Za-z_]+ index [0-9]+ //' | sort; }

for f in "$lib" "$qlib" "$elib"; do
    check "$f is installed" test -f "$f"
done
check "tool_scenarios_pmpi loads the PMPI tool" sh -c "ldd '$pmpi' | grep libmpi_reqstatus_tool > /dev/null"
total=0
for entry in "${SCENARIOS[@]}"; do
    read -r scenario expected <<< "$entry"
    total=$((total + expected * ${#CALLS[@]}))
done
# every scenario/call pair in one process per stack (a " pair" line before each)
for np in 2 4; do
    base=$OUT/all.n$np
    rm -f "$base".*
    if ! timeout 300 "$MPIEXEC" -n $np "$plain" all all > "$base.plain" 2> "$base.err"; then
        not_ok "-n $np: the plain run"; diag "$base.err"; continue
    fi
    counts=$(awk '/^ pair / { key = $2 " " $3; n[key] = 0; next }
                  /^MPI_[A-Za-z]+ index / { n[key]++ }
                  END { for (k in n) print k, n[k] }' "$base.plain")
    why=
    for entry in "${SCENARIOS[@]}"; do
        read -r scenario expected <<< "$entry"
        for call in "${CALLS[@]}"; do
            seen=$(awk -v k="$scenario $call" '$1 " " $2 == k { print $3 }' <<< "$counts")
            [ -n "$why" ] || [ "$seen" = "$expected" ] ||
                why="$scenario $call reported ${seen:-no} completions, not $expected"
        done
    done
    if [ -n "$why" ]; then not_ok "-n $np: the plain run: $why"; continue; fi
    ok "-n $np: the plain run reports $total completions"
    for mode in "${MODES[@]}"; do
        read -r binary list <<< "$mode"
        m=$base.$binary.${list//:/+} preload="" why=""
        case :$list: in *:reqstatus:*) preload=$qlib ;; esac
        case :$list: in *:request_events:*) preload=${preload:+$preload:}$elib ;; esac
        qmpi_args=()
        if [ "$list" != - ]; then
            # -genv: the tools are loaded into the MPI processes, not into mpiexec
            qmpi_args=(-genv LD_PRELOAD "$preload" -genv MPIR_CVAR_QMPI_TOOL_LIST "$list"
                       -genv MPI_REQSTATUS_QMPI_LOG "$m.qlog" -genv MPI_REQUEST_EVENTS_SUMMARY "$m.summary")
        fi
        exe=$plain
        [ "$binary" = pmpi ] && exe=$pmpi
        if ! MPI_REQSTATUS_TOOL_LOG=$m.log timeout 300 "$MPIEXEC" "${qmpi_args[@]}" -n $np "$exe" all all \
                > "$m.out" 2>> "$base.err"; then
            why="the run failed"
        elif ! cmp -s "$base.plain" "$m.out"; then
            why="the application saw something else: $(diff "$base.plain" "$m.out" | head -n 4 | tr '\n' ' ')"
        elif [ "$binary" = pmpi ] && ! diff -q <(grep -v '^ ' "$m.out") "$m.log.0" > /dev/null 2>&1; then
            why="the PMPI tool's log differs from what the application saw"
        elif [ "$preload" != "${preload#*reqstatus}" ] && [ "$binary" = plain ] &&
                ! diff -q <(grep -v '^ ' "$m.out") "$m.qlog.0" > /dev/null 2>&1; then
            why="the QMPI reqstatus tool's log differs from what the application saw"
        elif [ "$preload" != "${preload#*reqstatus}" ] && [ "$binary" = pmpi ] &&
                [ -n "$(comm -13 <(log_fields < "$m.out") <(cat "$m.qlog.0" 2>/dev/null | log_fields))" ]; then
            # under the PMPI tool the QMPI tool sees the PMPI tool's calls (its Waitall over the
            # compacted reported requests): each completion it logs must be one the application saw
            why="the QMPI reqstatus tool logged a completion the application did not see"
        elif [ "$preload" != "${preload#*request_events}" ] &&
                [ "$(cat "$m".summary.* 2>/dev/null | grep -c "completions reported")" != "$np" ]; then
            why="the request_events tool did not write a summary on every rank"
        elif [ "$preload" != "${preload#*request_events}" ] &&
                ! grep -q "^request_events: rank 0, $total completions reported" "$m.summary.0"; then
            why="request_events counted $(head -n 1 "$m.summary.0"), not $total"
        fi
        if [ -z "$why" ]; then ok "-n $np: tools '$mode' as the plain run"; else not_ok "-n $np: tools '$mode': $why ($m.*)"; fi
    done
done
