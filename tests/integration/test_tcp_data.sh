#!/usr/bin/env bash
# TCP to a permitted port carries data intact through sluice: 8 MiB of
# pseudo-random bytes, SHA-256 compared at the receiver, IPv4 and IPv6.
source "$(dirname "$0")/lib.sh"
it_init tcp_data td
it_need_root_and_bpf
it_topology_up
it_write_config "$IT_TMP/fw.yaml"
it_sluice_start "$IT_TMP/fw.yaml"

BYTES=$((8 * 1024 * 1024))
for fam in 4 6; do
    if [ $fam = 4 ]; then dst=$WAN4; else dst=$WAN6; fi
    result="$IT_TMP/sink$fam.result"
    it_log "checking: IPv$fam $BYTES bytes LAN -> [$dst]:8080 arrive with the same SHA-256"
    it_server wan sink "$dst" 8080 --result "$result"
    sink_pid=$IT_LAST_PID
    sent=$(chat lan source --host "$dst" --port 8080 --bytes "$BYTES" --seed $fam 2>"$IT_TMP/source$fam.err")
    it_wait_for "sink result" 100 test -f "$result"
    got=$(cat "$result" 2>/dev/null)
    [ -n "$sent" ] || sent="(sender failed: $(tail -n 1 "$IT_TMP/source$fam.err"))"
    it_expect_eq "IPv$fam receiver got the bytes the sender sent (count and sha256)" "$sent" "$got"
    it_stop "$sink_pid"
    it_forget_pid "$sink_pid"
done
it_finish
