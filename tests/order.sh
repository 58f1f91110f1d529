#!/bin/bash
# MPI's non-overtaking rule, message by message through every receive form (order/
# message_order.cpp; maint/run-two-hosts repeats it across hosts), through shared memory and
# through the netmod (MPIR_CVAR_NOLOCAL=1, as between hosts); probe_after_recv: a probe right
# after a receive that took an unexpected message finds nothing.
. "$(dirname "$0")/lib.sh"
order=$TESTS_BUILDDIR/order/message_order probe=$TESTS_BUILDDIR/order/probe_after_recv
# its own check first: swapped messages must be reported (exit 1; hydra may end the job on
# MPI_Abort before it forwards the report)
MESSAGE_ORDER_SWAP=1 timeout 120 "$MPIEXEC" -n 2 "$order" 200 1 60 > "$OUT/swap.log" 2>&1
check "message_order reports messages sent out of order (exit $?)" test $? = 1
for nolocal in 0 1; do
    for np in 2 4; do
        for seed in 1 2; do
            check_log "message_order -n $np, seed $seed, MPIR_CVAR_NOLOCAL=$nolocal" "$OUT/n$np-$seed-$nolocal.log" \
                env MPIR_CVAR_NOLOCAL=$nolocal timeout 300 "$MPIEXEC" -n $np "$order" 1000 $seed 240
        done
    done
done
if [ "$MPICH_DEVICE" = ch4:ofi ]; then
    # the libfabric provider between processes without shared memory must not be sockets, whose
    # probes reorder
    MPIR_CVAR_NOLOCAL=1 MPIR_CVAR_DEBUG_SUMMARY=1 timeout 120 "$MPIEXEC" -n 2 "$order" 10 1 60 \
        > "$OUT/provider.log" 2>&1
    provider=$(sed -n 's/^libfabric provider: \([^ ]*\).*/\1/p' "$OUT/provider.log" | head -n 1)
    case $provider in
        "" | sockets) not_ok "the libfabric provider without shared memory: '${provider}'" ;;
        *) ok "the libfabric provider without shared memory is $provider" ;;
    esac
fi
for nolocal in 0 1; do
    check_log "probe_after_recv, MPIR_CVAR_NOLOCAL=$nolocal" "$OUT/probe-$nolocal.log" \
        env MPIR_CVAR_NOLOCAL=$nolocal timeout 60 "$MPIEXEC" -n 2 "$probe"
done
if [ "$MPICH_DEVICE" = ch4:ofi ]; then
    # its own check: forced onto sockets it must fail
    FI_PROVIDER=sockets MPIR_CVAR_NOLOCAL=1 timeout 60 "$MPIEXEC" -n 2 "$probe" > "$OUT/probe-sockets.log" 2>&1
    rc=$?
    check "probe_after_recv shows libfabric sockets' probe defect" \
        sh -c "[ $rc != 0 ] && grep -q \"found the receive's message\" '$OUT/probe-sockets.log'"
fi
