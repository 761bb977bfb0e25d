#!/usr/bin/env bash
# The cluster on a real Incus daemon (docs/cluster.md), end to end:
#   cluster up --env incus (container firewalls, the sluice .deb installed
#   and run as the systemd unit) -> the lab is contained -> the unit
#   reloads (a bad file is refused, the old config stays) -> perf-test
#   compare --quick --baseline kernel proves sluice in the path -> with
#   sluice stopped on fw0 perf-test refuses to print a sluice number ->
#   cluster down leaves no instance or network of the cluster.
# Starts incusd (scripts/incus-setup.sh) when Incus is installed but not
# running, and stops it again; builds the node image when it is missing
# (scripts/incus-image.sh, ~3 min once, cached). Skips when Incus is not
# installed, or when the cluster is up already (it is not the test's).
set -u
source "$(dirname "$0")/lib.sh"
it_init incus_cluster ic
it_need_root_and_bpf
command -v incus >/dev/null || it_skip "Incus is not installed (scripts/incus-setup.sh installs it)"
ENVS=(--env incus)
STARTED_DAEMON=0
UP=0
FOREIGN=0
incus_cleanup() {
    if [ "$FOREIGN" = 1 ]; then incus delete --force sluice-wan-host >/dev/null 2>&1; fi
    if [ "$UP" = 1 ]; then "$SLUICE" cluster down "${ENVS[@]}" >>"$IT_TMP/cluster.log" 2>&1 || cat "$IT_TMP/cluster.log"; fi
    if [ "$STARTED_DAEMON" = 1 ]; then bash "$IT_SRC/scripts/incus-setup.sh" stop >>"$IT_TMP/setup.log" 2>&1; fi
}
# it_cleanup reads the exit status first: keep it across incus_cleanup.
trap 'rc=$?; incus_cleanup; (exit $rc); it_cleanup' EXIT

if ! incus admin waitready --timeout 1 >/dev/null 2>&1; then
    it_log "starting incusd (scripts/incus-setup.sh)"
    bash "$IT_SRC/scripts/incus-setup.sh" up >"$IT_TMP/setup.log" 2>&1 || { cat "$IT_TMP/setup.log"; it_fail "incus-setup.sh up"; it_finish; }
    STARTED_DAEMON=1
fi
for name in sluice-lan-host sluice-fw0 sluice-fw1 sluice-wan-host; do
    incus info "$name" >/dev/null 2>&1 && it_skip "instance $name exists: the incus cluster is up already (not this test's)"
done
if ! incus image info sluice/node >/dev/null 2>&1; then
    it_log "building the node image (scripts/incus-image.sh)"
    bash "$IT_SRC/scripts/incus-image.sh" >"$IT_TMP/image.log" 2>&1 || { cat "$IT_TMP/image.log"; it_fail "incus-image.sh"; it_finish; }
fi
bash "$IT_SRC/scripts/incus-setup.sh" status >"$IT_TMP/status.log" 2>&1
it_check "the host guard is in place (nft table inet sluice_lab_guard)" nft list table inet sluice_lab_guard

UP=1
it_log "cluster up --env incus"
if ! "$SLUICE" cluster up "${ENVS[@]}" >"$IT_TMP/cluster.log" 2>&1; then
    cat "$IT_TMP/cluster.log"
    it_fail "cluster up --env incus" "see above"
    it_finish
fi
it_check "cluster status --env incus: healthy" "$SLUICE" cluster status "${ENVS[@]}"
"$SLUICE" cluster status "${ENVS[@]}" --json >"$IT_TMP/status.json"
it_check "status: both firewalls run sluice attached on lan0 and wan0" "$IT_PY" -c '
import json, sys
items = [i for i in json.load(open(sys.argv[1]))["items"] if i["role"] in ("fw0", "fw1")]
sys.exit(0 if len(items) == 2 and all("lan0" in i["detail"] and "wan0" in i["detail"] for i in items) else 1)' "$IT_TMP/status.json"

it_log "checking: the lab is contained"
for n in sluice-lan-host sluice-fw0 sluice-wan-host; do
    it_check "$n: no default route (only benchmarking-range routes)" \
        sh -c "! incus exec $n -- ip route show default | grep -q . && ! incus exec $n -- ip -6 route show default | grep -q ."
    it_check "$n: no resolver configured" sh -c "! incus exec $n -- grep -q nameserver /etc/resolv.conf"
    it_check "$n: no NTP client" sh -c "! incus exec $n -- systemctl is-active -q systemd-timesyncd"
    it_check "$n: every NIC is on a sluice-* network" sh -c "! incus config show $n --expanded | grep 'network:' | grep -vq 'network: sluice-'"
done
for net in sluice-lan sluice-wan sluice-fab; do
    it_check "network $net has no address, so no NAT, DHCP or DNS" sh -c \
        "incus network get $net ipv4.address | grep -qx none && incus network get $net ipv6.address | grep -qx none"
done

it_log "checking: the systemd unit of the package"
fw=sluice-fw0
it_check "sluice.service is active on $fw" incus exec $fw -- systemctl is-active -q sluice
it_check "systemctl reload sluice applies the file" incus exec $fw -- systemctl reload sluice
incus exec $fw -- cp /etc/sluice/sluice.yaml /root/good.yaml
incus exec $fw -- sh -c 'echo "policies: [ { name: x, from: nowhere, to: untrust, action: permit } ]" >> /etc/sluice/sluice.yaml'
it_check "systemctl reload with a bad file fails" sh -c "! incus exec $fw -- systemctl reload sluice"
it_check "... and sluice keeps running" incus exec $fw -- systemctl is-active -q sluice
incus exec $fw -- cp /root/good.yaml /etc/sluice/sluice.yaml
it_check "systemctl stop sluice stops the daemon" sh -c "incus exec $fw -- systemctl stop sluice && ! incus exec $fw -- systemctl is-active -q sluice"
it_check "systemctl start sluice starts it again" incus exec $fw -- systemctl start sluice
it_check "sluice attached again on $fw" it_wait_for "sluice's pipeline on $fw's lan0" 150 \
    sh -c "incus exec $fw -- sh -c 'ip -j link show lan0 | grep -q xdp_main_prog || tc -j filter show dev lan0 ingress | grep -q tc_main_prog'"

it_log "perf-test compare --quick --baseline kernel --env incus"
"$SLUICE" perf-test compare --quick --baseline kernel "${ENVS[@]}" --history "$IT_TMP/history.csv" >"$IT_TMP/pt.out" 2>"$IT_TMP/pt.err"
rc=$?
cat "$IT_TMP/pt.out"
it_expect_eq "perf-test exits 0" 0 "$rc"
it_expect_eq "both sluice numbers proven in the path" 2 "$(grep -c '^in path: sluice attached on sluice-fw0' "$IT_TMP/pt.err")"
it_check "the table has sluice and kernel rows" grep -q '| IPv4 .*Gbps.*Gbps' "$IT_TMP/pt.out"

it_log "sluice stopped and detached on fw0: perf-test refuses"
incus exec $fw -- systemctl stop sluice
incus exec $fw -- sluice down >/dev/null 2>&1
"$SLUICE" perf-test compare --quick "${ENVS[@]}" --no-history >"$IT_TMP/pt.out" 2>"$IT_TMP/pt.err"
rc=$?
it_expect_eq "perf-test exits 1" 1 "$rc"
grep -q "was not measured through sluice on sluice-fw0: before the run, sluice's pipeline (xdp_main_prog at XDP or tc_main_prog at TC ingress) is attached on no interface" "$IT_TMP/pt.err" ||
    { echo "--- perf-test said:"; cat "$IT_TMP/pt.err"; }
it_check "it says sluice is attached on no interface of sluice-fw0" \
    grep -q "was not measured through sluice on sluice-fw0: before the run, sluice's pipeline (xdp_main_prog at XDP or tc_main_prog at TC ingress) is attached on no interface" "$IT_TMP/pt.err"
it_check "no throughput is printed" sh -c "! grep -q Gbps '$IT_TMP/pt.out'"

it_log "cluster down --env incus"
"$SLUICE" cluster down "${ENVS[@]}" >"$IT_TMP/down.log" 2>&1
it_expect_eq "cluster down exits 0" 0 "$?"
UP=0
for name in sluice-lan-host sluice-fw0 sluice-fw1 sluice-wan-host; do
    it_check "instance $name is gone" sh -c "! incus info $name >/dev/null 2>&1"
done
for net in sluice-lan sluice-wan sluice-fab; do
    it_check "network $net is gone" sh -c "! incus network show $net >/dev/null 2>&1"
done

it_log "an instance with a cluster node's name that sluice did not make is never adopted nor deleted"
incus init sluice/node sluice-wan-host >/dev/null 2>&1 || it_fail "incus init of a foreign sluice-wan-host"
FOREIGN=1
UP=1
"$SLUICE" cluster up "${ENVS[@]}" >"$IT_TMP/up2.log" 2>&1
rc=$?
UP=0
it_check "cluster up refuses (exit $rc)" test "$rc" -ne 0
it_check "... naming the instance it did not make" grep -q "instance sluice-wan-host exists and was not made by" "$IT_TMP/up2.log"
it_check "... and removes what it had created" sh -c "! incus info sluice-fw0 >/dev/null 2>&1 && ! incus network show sluice-lan >/dev/null 2>&1"
"$SLUICE" cluster down "${ENVS[@]}" >"$IT_TMP/down2.log" 2>&1
it_check "cluster down leaves the foreign instance alone" incus info sluice-wan-host
it_check "... and says so" grep -q "sluice-wan-host (not made by sluice cluster up; left alone)" "$IT_TMP/down2.log"
incus delete --force sluice-wan-host >/dev/null 2>&1 && FOREIGN=0
it_finish
