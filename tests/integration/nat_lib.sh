# Shared start of the NAT integration tests: source it after lib.sh.
#
#   nat_write_config FILE <<'NAT'
#   nat:
#     source: [...]
#   NAT
#
# writes a config whose policies let the NAT under test decide: trust →
# untrust permits anything, trust → trust (hairpin) too, untrust → trust
# permits web (tcp 80, 8080-8089) and ping to the LAN network — after
# destination translation, which is what policies see. The `nat:` section
# comes from stdin.

nat_write_config() {
    local file=$1
    it_write_topology_config "$file"
    cat >>"$file" <<EOF2
applications:
  web: { protocol: tcp, destination-port: [80, 8080-8089] }
  ping: { protocol: icmp }
policies:
  - { name: lan-out, from: trust, to: untrust, action: permit }
  - { name: lan-hairpin, from: trust, to: trust, action: permit }
  - { name: published, from: untrust, to: trust, destination: [lan-net], application: [web, ping], action: permit }
default-action: deny
EOF2
    cat >>"$file"
}

# ask NS ADDR PORT [--udp]: what a peer-server at ADDR:PORT saw as our address
# ("ADDR PORT"); prints the address only.
ask_addr() {
    local ns=$1 addr=$2 port=$3
    shift 3
    chat "$ns" ask --host "$addr" --port "$port" "$@" | awk '{print $1}'
}

# stat_value NAME: the firewall's counter NAME (sluice show stats --json).
stat_value() {
    sluice_fw show stats --json | "$IT_PY" -c 'import json, sys; print(json.load(sys.stdin)["counters"][sys.argv[1]])' "$1"
}
