#!/usr/bin/env bash
# `sluice down` stops the daemon, removes the XDP and TC attachments and the
# pin dir; also after the daemon was killed with SIGKILL (nothing detached).
# lan0 runs the pipeline in the tc mode (auto on veth), wan0 as generic XDP.
source "$(dirname "$0")/lib.sh"
it_init down dn
it_need_root_and_bpf
it_topology_up
it_write_config "$IT_TMP/fw.yaml"
sed -i 's/^  wan0: { zone: untrust }/  wan0: { zone: untrust, xdp-mode: generic }/' "$IT_TMP/fw.yaml"
grep -q "xdp-mode: generic" "$IT_TMP/fw.yaml" || { echo "FAIL: down: cannot set wan0's xdp-mode"; exit 1; }
pin_dir="/sys/fs/bpf/sluice/netns/$P-fw/default"

has_xdp() { ip -n "$P-fw" link show "$1" | grep -q xdp; }
has_tc_egress() { [ -n "$(tc -n "$P-fw" filter show dev "$1" egress 2>/dev/null)" ]; }
has_tc_ingress() { [ -n "$(tc -n "$P-fw" filter show dev "$1" ingress 2>/dev/null)" ]; }

check_down() {  # check_down WHEN
    local dev
    for dev in lan0 wan0; do
        if has_xdp $dev; then it_fail "$1: no xdp on $dev" "$(ip -n "$P-fw" link show $dev | head -n 3 | tr '\n' ' ')"
        else it_pass "$1: ip link show $dev shows no xdp"; fi
        if has_tc_egress $dev; then it_fail "$1: no TC egress filter on $dev" "$(tc -n "$P-fw" filter show dev $dev egress | tr '\n' ' ')"
        else it_pass "$1: no TC egress filter on $dev"; fi
        if has_tc_ingress $dev; then it_fail "$1: no TC ingress filter on $dev" "$(tc -n "$P-fw" filter show dev $dev ingress | tr '\n' ' ')"
        else it_pass "$1: no TC ingress filter on $dev"; fi
    done
    if [ -e "$pin_dir" ]; then it_fail "$1: pin dir $pin_dir removed" "still there: $(ls "$pin_dir" | tr '\n' ' ')"
    else it_pass "$1: pin dir removed"; fi
    it_check "$1: LAN -> WAN ping still forwarded by the kernel" ping_ok lan "$WAN4"
}

for how in TERM KILL; do
    it_log "round: sluice run, then$([ $how = KILL ] && echo " kill -9 and") sluice down"
    it_sluice_start "$IT_TMP/fw.yaml"
    it_check "while running: the TC pipeline on lan0 (auto on veth)" it_pipeline_on "$P-fw" lan0
    it_check "while running: no XDP on lan0" sh -c "! ip -n '$P-fw' link show lan0 | grep -q xdp"
    it_check "while running: xdp on wan0 (xdp-mode: generic)" has_xdp wan0
    it_check "while running: TC egress filter on wan0" has_tc_egress wan0
    it_check "while running: pin dir exists" test -d "$pin_dir"
    pid=$SLUICE_PID
    if [ $how = KILL ]; then
        kill -KILL "$pid"; { wait "$pid"; } 2>/dev/null; it_forget_pid "$pid"
        when="down after SIGKILL"
    else
        when="down"
    fi
    if sluice_fw down >"$IT_TMP/down.out" 2>&1; then it_pass "$when: sluice down exits 0 ($(cat "$IT_TMP/down.out"))"
    else it_fail "$when: sluice down exits 0" "$(cat "$IT_TMP/down.out")"; fi
    if [ $how = TERM ]; then
        if kill -0 "$pid" 2>/dev/null; then it_fail "$when: the daemon has exited"
        else wait "$pid"; it_expect_eq "$when: the daemon has exited, status" 0 "$?"; fi
        it_forget_pid "$pid"
    fi
    check_down "$when"
done
it_finish
