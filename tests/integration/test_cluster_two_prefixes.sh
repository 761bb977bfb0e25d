#!/usr/bin/env bash
# Two netns clusters with different prefixes at once: both up, both forward
# LAN -> WAN through their own fw0 (IPv4 and IPv6, sessions in their own
# sluice), taking one down leaves the other working; then both are gone.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cluster_lib.sh"

it_init cluster-two-prefixes c2
it_need_root_and_bpf
cl_init
cl_prefix a
A=$CL_LAST
cl_prefix b
B=$CL_LAST

for p in "$A" "$B"; do
    if ! "$SLUICE" cluster up --prefix "$p" >"$IT_TMP/up-$p.log" 2>&1; then
        cat "$IT_TMP/up-$p.log"
        it_fail "cluster up --prefix $p"
        it_finish
    fi
    it_pass "cluster up --prefix $p"
done
pids_a=$(cl_pids "$A")
pids_b=$(cl_pids "$B")
for p in "$A" "$B"; do
    it_check "$p: healthy" cl_healthy "$p"
    it_check "$p: IPv4 ping LAN host -> WAN host through $p-fw0" cl_ping "$p" 198.18.100.200
    it_check "$p: IPv6 ping LAN host -> WAN host through $p-fw0" cl_ping "$p" 2001:2:0:100::200
    it_expect_ge "$p: $p-fw0's sluice has the LAN host's sessions" "$(cl_sessions "$p")" 2
done
it_check "the two clusters' sluice instances have separate pins" test -d "/sys/fs/bpf/sluice/netns/$A-fw0" -a -d "/sys/fs/bpf/sluice/netns/$B-fw0"

it_check "cluster down --prefix $A" "$SLUICE" cluster down --prefix "$A"
# shellcheck disable=SC2086
cl_check_gone "$A" $pids_a
it_check "$B: still healthy after $A went down" cl_healthy "$B"
it_check "$B: IPv4 still forwarded" cl_ping "$B" 198.18.100.200
it_check "$B: IPv6 still forwarded" cl_ping "$B" 2001:2:0:100::200
it_check "cluster down --prefix $B" "$SLUICE" cluster down --prefix "$B"
# shellcheck disable=SC2086
cl_check_gone "$B" $pids_b
it_finish
