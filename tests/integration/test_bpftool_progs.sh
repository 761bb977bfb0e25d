#!/usr/bin/env bash
# After `sluice run`, bpftool shows the fast-path programs by name, and the
# ones attached to the firewall's interfaces are sluice's: the pipeline as
# the TC ingress filter tc_main_prog on lan0 (xdp-mode auto on veth: the tc
# mode) and as the XDP program xdp_main_prog on wan0 (xdp-mode generic), TC
# egress tc_egress_prog on both.
source "$(dirname "$0")/lib.sh"
it_init bpftool_progs bp
it_need_root_and_bpf
it_topology_up
it_write_config "$IT_TMP/fw.yaml"
sed -i 's/^  wan0: { zone: untrust }/  wan0: { zone: untrust, xdp-mode: generic }/' "$IT_TMP/fw.yaml"
it_sluice_start "$IT_TMP/fw.yaml"

# Names as bpftool prints them: the kernel keeps 15 characters of a program
# name (BPF_OBJ_NAME_LEN 16); bpftool 7 prints the full name from BTF.
name_ok() {  # name_ok PRINTED WANTED
    [ "$1" = "$2" ] || [ "$1" = "${2:0:15}" ]
}
fw bpftool -j prog show >"$IT_TMP/progs.json"
for want in xdp_main_prog xdp_zone_prog xdp_policy_prog xdp_nat_prog xdp_splice_prog xdp_forward_prog tc_egress_prog \
        tc_main_prog tc_zone_prog tc_policy_prog tc_nat_prog tc_forward_prog tc_punt_prog; do
    found=$("$IT_PY" -c '
import json,sys
want=sys.argv[2]
names=[p.get("name","") for p in json.load(open(sys.argv[1]))]
hits=[n for n in names if n == want or n == want[:15]]
print(hits[0] if hits else "")' "$IT_TMP/progs.json" "$want")
    if [ -n "$found" ]; then it_pass "bpftool prog show lists $want (printed as \"$found\")"
    else it_fail "bpftool prog show lists $want"; fi
done

it_log "checking: the programs attached in $P-fw are sluice's"
fw bpftool -j net show >"$IT_TMP/net.json"
# The pipeline: lan0's at TC ingress (tc mode, ahead of tc_punt_prog), wan0's at XDP.
ingress_names=""
for id in $("$IT_PY" -c '
import json,sys
for blk in json.load(open(sys.argv[1])):
    for x in blk.get("tc", []):
        if x.get("devname") == "lan0" and x.get("kind") == "clsact/ingress":
            print(x.get("id", ""))' "$IT_TMP/net.json"); do
    ingress_names+=" $(bpftool -j prog show id "$id" 2>/dev/null | "$IT_PY" -c 'import json,sys; print(json.load(sys.stdin).get("name",""))' 2>/dev/null)"
done
case " $ingress_names " in
    *" tc_main_prog "*) it_pass "TC ingress pipeline on lan0 is tc_main_prog (ingress:$ingress_names)" ;;
    *) it_fail "TC ingress pipeline on lan0 is tc_main_prog" "bpftool net show, clsact/ingress on lan0:${ingress_names:- none}" ;;
esac
it_check "no XDP program on lan0 (the tc mode)" sh -c "! ip -n '$P-fw' link show lan0 | grep -q xdp"
for dev in lan0 wan0; do
  if [ $dev = wan0 ]; then
    xdp_id=$("$IT_PY" -c '
import json,sys
for blk in json.load(open(sys.argv[1])):
    for x in blk.get("xdp", []):
        if x.get("devname") == sys.argv[2]:
            print(x.get("id", "")); sys.exit()' "$IT_TMP/net.json" $dev)
    name=$(bpftool -j prog show id "${xdp_id:-0}" 2>/dev/null | "$IT_PY" -c 'import json,sys; print(json.load(sys.stdin).get("name",""))' 2>/dev/null)
    if name_ok "$name" xdp_main_prog; then it_pass "XDP program on $dev is xdp_main_prog (id $xdp_id)"
    else it_fail "XDP program on $dev is xdp_main_prog" "bpftool net show: id '${xdp_id:-none}' name '$name'"; fi
  fi
    tc_name=$("$IT_PY" -c '
import json,sys
for blk in json.load(open(sys.argv[1])):
    for x in blk.get("tc", []):
        if x.get("devname") == sys.argv[2] and x.get("kind") == "clsact/egress":
            # bpftool prints the filter as "NAME:[ID]" and, in JSON, the id too
            print(x.get("id", ""), x.get("name", "").split(":[")[0]); sys.exit()' "$IT_TMP/net.json" $dev)
    read -r tc_id tc_name <<<"$tc_name"
    if [ -n "$tc_id" ]; then
        tc_name=$(bpftool -j prog show id "$tc_id" 2>/dev/null | "$IT_PY" -c 'import json,sys; print(json.load(sys.stdin).get("name",""))' 2>/dev/null)
    fi
    if name_ok "$tc_name" tc_egress_prog; then it_pass "TC egress program on $dev is tc_egress_prog (id ${tc_id:-?})"
    else it_fail "TC egress program on $dev is tc_egress_prog" "bpftool net show printed '$tc_name'"; fi
done

it_log "checking: the tail-call targets are pinned under this instance's pin dir"
pin_dir="/sys/fs/bpf/sluice/netns/$P-fw/default"
it_check "pin dir $pin_dir exists" test -d "$pin_dir"
for want in xdp_zone_prog xdp_policy_prog xdp_forward_prog tc_zone_prog tc_policy_prog tc_forward_prog; do
    hit=""
    while IFS= read -r pin; do
        n=$(bpftool -j prog show pinned "$pin" 2>/dev/null | "$IT_PY" -c 'import json,sys; print(json.load(sys.stdin).get("name",""))' 2>/dev/null)
        if name_ok "$n" "$want"; then hit=$pin; break; fi
    done < <(find "$pin_dir" -type f 2>/dev/null)
    if [ -n "$hit" ]; then it_pass "$want pinned at ${hit#"$pin_dir"/}"
    else it_fail "$want pinned under $pin_dir" "pins: $(find "$pin_dir" -type f 2>/dev/null | tr '\n' ' ')"; fi
done
it_finish
