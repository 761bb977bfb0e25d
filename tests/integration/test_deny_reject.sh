#!/usr/bin/env bash
# A denied port times out (silently dropped); a rejected port is refused at
# once (TCP RST -> ECONNREFUSED; UDP -> ICMP admin-prohibited); a port no
# policy matches falls to default-action deny. IPv4 and IPv6. A listener is
# open on every port on the WAN host, so only the firewall can stop them.
source "$(dirname "$0")/lib.sh"
it_init deny_reject dr
it_need_root_and_bpf
it_topology_up
it_write_config "$IT_TMP/fw.yaml"
it_sluice_start "$IT_TMP/fw.yaml"

for dst in "$WAN4" "$WAN6"; do
    for port in 8080 7000 7001 7002; do it_server wan accept-server "$dst" $port; done
done

for fam in 4 6; do
    if [ $fam = 4 ]; then dst=$WAN4; else dst=$WAN6; fi
    it_log "checking IPv$fam towards $dst"
    # Independent probes, side by side (lib.sh it_par_*): the timeouts are waited for once.
    it_par_eq "IPv$fam tcp/8080 (permit) connects" connected probe lan "$dst" 8080
    it_par_eq "IPv$fam tcp/7000 (policy deny) times out, no answer" timeout probe lan "$dst" 7000 3
    it_par_eq "IPv$fam tcp/7002 (no policy, default deny) times out" timeout probe lan "$dst" 7002 3
    it_par_eq "IPv$fam tcp/7001 (policy reject) is refused by a RST" refused probe lan "$dst" 7001 3
    it_par_wait
    # nc as a second, independent client: exit status 1 and "Connection refused".
    nc_err=$(lan timeout 5 nc -z -v -w 3 "$dst" 7001 2>&1; echo "rc=$?")
    if echo "$nc_err" | grep -q "rc=1" && echo "$nc_err" | grep -qi "refused"; then
        it_pass "IPv$fam nc -z to tcp/7001 reports Connection refused"
    else
        it_fail "IPv$fam nc -z to tcp/7001 reports Connection refused" "nc said: $(echo "$nc_err" | tr '\n' ' ')"
    fi
    if [ $fam = 4 ]; then want="icmp EHOSTUNREACH"; else want="icmp EACCES"; fi
    it_expect_eq "IPv$fam udp/7001 (policy reject) answered by ICMP admin-prohibited" "$want" "$(udp_probe lan "$dst" 7001 3)"
done
it_finish
