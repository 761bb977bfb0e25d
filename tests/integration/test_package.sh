#!/usr/bin/env bash
# The Debian package (docs/packaging.md), built by CPack from this build:
# it holds the binary in /usr/sbin, the systemd unit, the example config as a
# conffile and the docs; it depends on the shared libraries the binary uses;
# its maintainer scripts never start the firewall without
# /etc/sluice/sluice.yaml; the packaged binary runs and accepts the packaged
# example config. (Installing it on a fresh Debian 12 instance and running
# the unit under systemd is the Incus test's part.) Needs no root.
source "$(dirname "$0")/lib.sh"
it_init package pk
BUILD=${SLUICE_BUILD_DIR:-$IT_SRC/build}
[ -f "$BUILD/CPackConfig.cmake" ] || it_skip "no CPackConfig.cmake in $BUILD (configure the build first)"
command -v cpack >/dev/null || it_skip "cpack is not installed"
command -v dpkg-deb >/dev/null || it_skip "dpkg-deb is not installed"

( cd "$IT_TMP" && cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$IT_TMP/out" ) >"$IT_TMP/cpack.log" 2>&1 ||
    { cat "$IT_TMP/cpack.log"; it_fail "cpack -G DEB" "see above"; it_finish; }
deb=$(ls "$IT_TMP"/out/sluice_*_amd64.deb 2>/dev/null | head -n 1)
it_check "cpack made sluice_<version>_amd64.deb" test -f "$deb"

dpkg-deb -c "$deb" | awk '{print $6}' >"$IT_TMP/files"
for f in ./usr/sbin/sluice ./usr/lib/systemd/system/sluice.service ./etc/sluice/sluice.yaml.example \
         ./usr/share/doc/sluice/README.md ./usr/share/doc/sluice/host-protection.md ./usr/share/doc/sluice/packaging.md; do
    it_check "the package holds $f" grep -qx -- "$f" "$IT_TMP/files"
done
it_check "no /etc/sluice/sluice.yaml of its own (the operator's file)" sh -c "! grep -qx ./etc/sluice/sluice.yaml '$IT_TMP/files'"

depends=$(dpkg-deb -f "$deb" Depends)
for lib in libbpf1 libxdp1 libhyperscan5 libyaml-cpp0.7 libnl-3-200 libnl-route-3-200 iproute2; do
    it_check "Depends names $lib" grep -q "\\b$lib\\b" <<<"$depends"
done
mkdir -p "$IT_TMP/control"
dpkg-deb -e "$deb" "$IT_TMP/control"
it_check "the example config is a conffile" grep -qx /etc/sluice/sluice.yaml.example "$IT_TMP/control/conffiles"
it_check "postinst enables/restarts only when /etc/sluice/sluice.yaml exists" \
    grep -q 'if \[ -f /etc/sluice/sluice.yaml \]' "$IT_TMP/control/postinst"
it_check "postinst never starts the service unconditionally" sh -c "! grep -Eq 'systemctl (start|enable --now)' '$IT_TMP/control/postinst'"

dpkg-deb -x "$deb" "$IT_TMP/root"
unit="$IT_TMP/root/usr/lib/systemd/system/sluice.service"
it_check "the unit starts nothing without /etc/sluice/sluice.yaml" grep -qx 'ConditionPathExists=/etc/sluice/sluice.yaml' "$unit"
it_check "the unit checks the config first" grep -qx 'ExecStartPre=/usr/sbin/sluice check -c /etc/sluice/sluice.yaml' "$unit"
it_check "the unit reloads with sluice reload" grep -qx 'ExecReload=/usr/sbin/sluice reload' "$unit"
it_check "the packaged binary runs (sluice --help)" sh -c "'$IT_TMP/root/usr/sbin/sluice' --help >/dev/null"
it_check "the packaged binary accepts the packaged example config" \
    "$IT_TMP/root/usr/sbin/sluice" check -c "$IT_TMP/root/etc/sluice/sluice.yaml.example"
it_finish
