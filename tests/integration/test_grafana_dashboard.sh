#!/usr/bin/env bash
# docs/grafana-dashboard.json (docs/operations.md "Metrics") against the real
# thing:
#   - it is well-formed JSON and importable: schemaVersion, the
#     ${DS_PROMETHEUS} input on every panel, target and variable, unique ids,
#     no overlapping panels;
#   - every family its PromQL names is in the docs' Metrics table, and every
#     expression parses (`promtool check rules`);
#   - the lab's /metrics (curl from the LAN, host-inbound `metrics` on the
#     trust zone) has every family the dashboard uses (the HA families exist
#     only with an ha: pair: those are checked against the docs), with every
#     label the expressions match or group by;
#   - a real Prometheus (in the LAN namespace, scraping the firewall every
#     second) evaluates every expression without an error, and the main
#     panels return data after known traffic.
source "$(dirname "$0")/lib.sh"
it_init grafana gd
command -v promtool >/dev/null || it_skip "promtool is not installed (scripts/setup.sh installs the prometheus package)"
command -v prometheus >/dev/null || it_skip "prometheus is not installed (scripts/setup.sh installs the prometheus package)"
"$IT_PY" -c 'import prometheus_client' 2>/dev/null ||
    it_skip "python3-prometheus-client is not installed (scripts/setup.sh installs it)"
command -v curl >/dev/null || it_skip "curl is not installed (scripts/setup.sh installs it)"

DASH="$IT_SRC/docs/grafana-dashboard.json"
OPS="$IT_SRC/docs/operations.md"
CHECK="$IT_DIR/grafana_dashboard_check.py"
check() { "$IT_PY" "$CHECK" "$@"; }

# --- without a lab ------------------------------------------------------------
it_check "the dashboard is well-formed JSON (python3 -m json.tool)" sh -c "'$IT_PY' -m json.tool '$DASH' >/dev/null"
it_check "it is importable: schemaVersion, \${DS_PROMETHEUS} everywhere, unique ids, a 24-column grid" \
    check structure "$DASH"
it_log "families used: $(check names "$DASH" | tr '\n' ' ')"
it_check "every family it uses is in docs/operations.md's Metrics table" check docs "$DASH" "$OPS"
check rules "$DASH" "$IT_TMP/rules.yml"
it_check "every PromQL expression parses (promtool check rules)" \
    sh -c "promtool check rules '$IT_TMP/rules.yml' >'$IT_TMP/promtool.txt' 2>&1 || { cat '$IT_TMP/promtool.txt'; false; }"

# --- the lab's /metrics ---------------------------------------------------------
it_need_root_and_bpf
it_topology_up
FW_LAN4=198.18.1.1
PORT=9109
cat >"$IT_TMP/fw.yaml" <<EOF
interfaces:
  lan0: { zone: trust, filter: lan-in }
  wan0: { zone: untrust }
zones:
  trust: { host-inbound: [metrics, ping] }
  untrust: {}
address-book:
  lan-net: [198.18.1.0/24, "2001:2:0:1::/64"]
applications:
  open-udp: { protocol: udp, destination-port: 5000 }
  closed-udp: { protocol: udp, destination-port: 6000 }
policies:
  - { name: lan-out, from: trust, to: untrust, source: [lan-net], application: [open-udp], action: permit }
  - { name: lan-deny, from: trust, to: untrust, application: [closed-udp], action: deny }
default-action: deny
filters:
  lan-in:
    - { name: no-9999, protocol: udp, destination-port: 9999, action: drop }
metrics:
  listen: $FW_LAN4:$PORT
EOF
it_sluice_start "$IT_TMP/fw.yaml"

scrape() { lan curl -sS --max-time 5 -o "$1" -w '%{http_code}' "http://$FW_LAN4:$PORT/metrics"; }
it_expect_eq "curl from the LAN gets /metrics (HTTP 200)" 200 "$(scrape "$IT_TMP/metrics.txt")"
it_check "every family the dashboard uses is in the scrape, with the labels its expressions use (HA: docs only)" \
    check scrape "$DASH" "$IT_TMP/metrics.txt" "$OPS" --absent-ok sluice_ha_

# --- a real Prometheus evaluates the dashboard ------------------------------------
# traffic: new permitted flows, denied datagrams, a filter drop, and from the
# WAN a scrape that host-inbound drops (untrust does not list metrics).
traffic() {
    lan "$IT_PY" -c '
import socket, sys
for port, n in ((5000, 20), (6000, 20), (9999, 5)):
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)   # a new flow each
        s.sendto(b"x" * 100, (sys.argv[1], port))
        s.close()
' "$WAN4"
    wan curl -s --max-time 1 -o /dev/null "http://$FW_LAN4:$PORT/metrics"
    return 0
}
# Once before Prometheus' first scrape: series that appear only when they
# have counted something (host-inbound pairs) exist from the start, so that
# the second round is an increase rate() sees.
traffic
ip -n "$P-lan" link set lo up
PROM_URL=http://127.0.0.1:19090
cat >"$IT_TMP/prometheus.yml" <<EOF
global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: sluice
    static_configs: [ { targets: ["$FW_LAN4:$PORT"] } ]
EOF
it_bg prometheus ip netns exec "$P-lan" prometheus --config.file="$IT_TMP/prometheus.yml" \
    --storage.tsdb.path="$IT_TMP/prometheus-data" --web.listen-address=127.0.0.1:19090
prom_ready() { lan curl -sf -o /dev/null "$PROM_URL/-/ready"; }
it_wait_for "prometheus ready" 150 prom_ready || { tail -n 20 "$IT_TMP/prometheus.log"; }
scrapes() {   # how many scrapes of sluice Prometheus holds
    lan "$IT_PY" -c '
import json, sys, urllib.parse, urllib.request
q = urllib.parse.urlencode({"query": "count_over_time(sluice_build_info[10m])"})
r = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/query?" + q, timeout=5))["data"]["result"]
print(int(r[0]["value"][1]) if r else 0)
' "$PROM_URL" 2>/dev/null || echo 0
}
has_scrapes() { [ "$(scrapes)" -ge "$1" ]; }
it_check "Prometheus scrapes sluice" it_wait_for "a first scrape" 150 has_scrapes 1
traffic
# Two more scrapes: the later one is after all the traffic, so every rate()
# and increase() over the window sees it.
n=$(scrapes)
it_check "Prometheus scrapes again after the traffic" it_wait_for "two more scrapes" 150 has_scrapes $((n + 2))
it_check "every expression evaluates without an error; the main panels have data" \
    lan "$IT_PY" "$CHECK" evaluate "$DASH" "$PROM_URL" \
    --require "Build" --require "Config generation" --require "Reloads in range" \
    --require "Forwarded packets/s" --require "Forwarded bits/s" --require "Drops by reason" \
    --require "Dropped bits/s by reason" --require "Top drop reasons (packets in range)" \
    --require "Policy packets/s" --require "Sessions opened/s by policy" --require "Policy bits/s" \
    --require "Top filter rules (packets in range)" --require "Filter rule bits/s" \
    --require "Sessions by state" --require "Session table fill" --require "Session table entries" \
    --require "Host-inbound drops by zone / service" --require "Host-inbound accepted by zone / service" \
    --require "Flow-log events written vs dropped"
it_finish
