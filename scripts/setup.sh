#!/usr/bin/env bash
# Installs every Debian package that sluice's build, tests and main job need.
# Idempotent: safe to run on every CI run and on a fresh Debian 12 machine (as root).
set -euo pipefail

packages=(
  # build
  build-essential cmake pkg-config clang llvm
  libbpf-dev bpftool libxdp-dev libelf-dev zlib1g-dev linux-libc-dev
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libnl-3-dev libnl-route-3-dev libhyperscan-dev libldns-dev libssl-dev
  # observability: the /metrics HTTP server, the drop capture's pcap writer
  libcpp-httplib-dev libpcap-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  # the Debian package: cpack's DEB generator runs dpkg-shlibdeps and file
  dpkg-dev file
  # run time, tests and the main job
  iproute2 iputils-ping iputils-tracepath iperf3 ethtool nftables tcpdump socat netcat-openbsd
  linux-perf procps python3 python3-scapy
  # egress tests: a local authoritative DNS server (the binary only, no host service), TLS servers and clients
  dnsmasq-base ldnsutils openssl curl
  # metrics tests: promtool (from the prometheus package; its server is never
  # started) checks the exposition format, the Python client parses values
  prometheus python3-prometheus-client
  # benchmarks: trafgen and conntrack (sluice bench synflood); the Linux HA
  # pair sluice bench ha compares with (keepalived VRRP + conntrackd sync)
  netsniff-ng conntrack keepalived conntrackd
)
# Daemons the benchmarks start themselves, inside the lab's namespaces, with
# configs of their own: never as host services (conntrackd's default config
# would sync the host's conntrack table over a real interface).
lab_only_services=(keepalived conntrackd prometheus)

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: run as root (it installs Debian packages)" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # The lab-only daemons must not start while they install (Debian's
  # invoke-rc.d asks policy-rc.d; 101 = not allowed). Ours only if none exists.
  policy=/usr/sbin/policy-rc.d
  own_policy=
  if [ ! -e "$policy" ]; then
    own_policy=1
    printf '#!/bin/sh\ncase "$1" in %s) exit 101;; esac\nexit 0\n' "$(IFS='|'; echo "${lab_only_services[*]}")" >"$policy"
    chmod 755 "$policy"
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" || { [ -n "$own_policy" ] && rm -f "$policy"; exit 1; }
  [ -n "$own_policy" ] && rm -f "$policy"
fi

if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  for svc in "${lab_only_services[@]}"; do
    if systemctl list-unit-files "$svc.service" >/dev/null 2>&1 &&
       [ "$(systemctl is-enabled "$svc.service" 2>/dev/null)" != masked ]; then
      systemctl disable --now "$svc.service" >/dev/null 2>&1 || true
      systemctl mask "$svc.service" >/dev/null 2>&1 || true
    fi
  done
fi

# bpffs: sluice pins its programs and maps here.
if ! mountpoint -q /sys/fs/bpf; then
  mount -t bpf bpf /sys/fs/bpf
fi
echo "setup.sh: all packages present"
