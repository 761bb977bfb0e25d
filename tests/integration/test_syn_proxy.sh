#!/usr/bin/env bash
# The SYN proxy with real connections (docs/host-protection.md): the WAN zone
# has `screen: { syn-proxy: always }`. IPv4 and IPv6, directly and through a
# port forward: the server sees the real client, 4 MiB arrive intact, a
# closed port resets the connection (the server's RST reaches the client in
# the numbering it knows); spoofed SYNs get cookies and leave no session; the
# counters agree with each other.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/nat_lib.sh"
it_init syn_proxy sp
it_need_root_and_bpf
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scapy' 2>/dev/null || it_skip_bpf "python3-scapy is not installed"
it_topology_up
nat_write_config "$IT_TMP/fw.yaml" <<'NAT'
nat:
  destination:
    - { name: web-in, from: untrust, destination: 198.18.100.1, protocol: tcp, port: 8080,
        translate-to: { address: 198.18.1.10, port: 80 } }
    - { name: web-in6, from: untrust, destination: "2001:2:0:100::1", protocol: tcp, port: 8080,
        translate-to: { address: "2001:2:0:1::10", port: 80 } }
NAT
sed -i 's/^  untrust: {}$/  untrust: { screen: { syn-proxy: always } }/' "$IT_TMP/fw.yaml"
grep -q 'syn-proxy: always' "$IT_TMP/fw.yaml" || it_fail "config has the SYN proxy on untrust"
it_sluice_start "$IT_TMP/fw.yaml"

BYTES=$((4 * 1024 * 1024))
for fam in 4 6; do
    if [ $fam = 4 ]; then pub=198.18.100.1 inside=$LAN4 client=$WAN4; else pub=2001:2:0:100::1 inside=$LAN6 client=$WAN6; fi
    it_server lan peer-server "$inside" 8081
    it_expect_eq "IPv$fam: WAN -> LAN:8081 through the proxy, the server sees the client" \
        "$client" "$(ask_addr wan "$inside" 8081)"
    it_server lan peer-server "$inside" 80
    it_expect_eq "IPv$fam: WAN -> [$pub]:8080 (port forward) through the proxy, the server sees the client" \
        "$client" "$(ask_addr wan "$pub" 8080)"
    result="$IT_TMP/sink$fam.result"
    it_server lan sink "$inside" 8082 --result "$result"
    sent=$(chat wan source --host "$inside" --port 8082 --bytes "$BYTES" --seed $fam 2>"$IT_TMP/source$fam.err")
    it_wait_for "sink result" 100 test -f "$result"
    it_expect_eq "IPv$fam: $BYTES bytes through a proxied connection arrive intact (count and sha256)" \
        "$sent" "$(cat "$result" 2>/dev/null)"
    # The proxy completed the client's handshake itself: the client learns
    # of the closed port from the server's RST, renumbered, as a reset.
    it_expect_eq "IPv$fam: a closed port behind the proxy resets the connection (the server's RST, renumbered)" \
        "error ECONNRESET" "$(chat wan ask --host "$inside" --port 8089 --timeout 3)"
done

it_log "checking: spoofed SYNs get cookies and leave nothing behind"
sessions_before=$(sluice_fw show sessions --json | "$IT_PY" -c 'import json,sys; print(len(json.load(sys.stdin)["sessions"]))')
cookies_before=$(stat_value syn-proxy-cookie-sent)
wan "$IT_PY" - <<'PY'
from scapy.all import Ether, IP, TCP, sendp, conf, get_if_hwaddr
import random
conf.verb = 0
rng = random.Random(7)
src_mac = get_if_hwaddr("eth0")
frames = []
for i in range(50):
    src = "198.18.%d.%d" % (rng.randint(120, 199), rng.randint(1, 254))
    frames.append(Ether(src=src_mac) / IP(src=src, dst="198.18.1.10") /
                  TCP(sport=rng.randint(1024, 65535), dport=8081, flags="S", seq=rng.getrandbits(32)))
sendp(frames, iface="eth0")
PY
sleep 1
cookies_after=$(stat_value syn-proxy-cookie-sent)
sessions_after=$(sluice_fw show sessions --json | "$IT_PY" -c 'import json,sys; print(len(json.load(sys.stdin)["sessions"]))')
it_expect_eq "50 spoofed SYNs got 50 cookies" $((cookies_before + 50)) "$cookies_after"
it_expect_eq "... and created no session" "$sessions_before" "$sessions_after"

it_log "checking: the counters agree"
valid=$(stat_value syn-proxy-cookie-valid)
created=$(stat_value session-created)
established=$(stat_value syn-proxy-established)
it_expect_eq "every session was created by a returned cookie" "$valid" "$created"
it_expect_ge "handshakes completed towards the servers" "$established" 6
it_expect_eq "no cookie was refused" 0 "$(stat_value drop-syn-proxy-bad-cookie)"
screens=$(sluice_fw show screens --json)
it_expect_eq "show screens counts the untrust zone's cookies as show stats does" "$cookies_after" \
    "$(echo "$screens" | "$IT_PY" -c 'import json,sys
for z in json.load(sys.stdin)["zones"]:
    if z["zone"] == "untrust": print(z["counters"]["syn_proxy_cookies_sent"])')"
it_log "checking: a flow refused after its cookie returned is reset, not left hanging"
sed -i 's/syn-proxy: always }/syn-proxy: always, source-limit: { new-sessions: 10 } }/' "$IT_TMP/fw.yaml"
grep -q 'new-sessions: 10' "$IT_TMP/fw.yaml" || it_fail "config has the source limit"
sluice_fw reload >/dev/null || it_fail "reload with source-limit"
refused_before=$(stat_value drop-screen-source-rate)
outcome=$(wan "$IT_PY" - "$LAN4" <<'PY'
import socket, sys, threading
results = []
def one():
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect((sys.argv[1], 8081))
        data = s.recv(100)
        results.append("ok" if data else "closed")
    except ConnectionResetError:
        results.append("reset")
    except socket.timeout:
        results.append("timeout")
    except OSError as e:
        results.append("error")
    finally:
        s.close()
threads = [threading.Thread(target=one) for _ in range(30)]
for t in threads: t.start()
for t in threads: t.join()
print(results.count("ok"), results.count("reset"), results.count("timeout"), len(results) - results.count("ok") - results.count("reset") - results.count("timeout"))
PY
)
read -r ok reset timeout other <<<"$outcome"
refused=$(( $(stat_value drop-screen-source-rate) - refused_before ))
it_log "30 parallel connections from one source over a limit of 10/s: $ok answered, $reset reset, $timeout timed out, $other other"
it_expect_eq "none is left hanging (timed out)" 0 "$timeout"
it_check "some were answered and some reset ($ok, $reset)" test "$ok" -ge 1 -a "$reset" -ge 1
it_expect_eq "every reset is a refusal counted under drop-screen-source-rate" "$reset" "$refused"
it_expect_eq "... and under the zone's syn_proxy_refused" "$reset" "$(sluice_fw show screens --json | "$IT_PY" -c 'import json,sys
for z in json.load(sys.stdin)["zones"]:
    if z["zone"] == "untrust": print(z["counters"]["syn_proxy_refused"])')"
sluice_fw show screens
it_finish
