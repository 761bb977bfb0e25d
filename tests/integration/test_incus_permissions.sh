#!/usr/bin/env bash
# The `sg incus-admin` retry against the real Incus daemon (its message is
# "You don't have the needed permissions to talk to the incus daemon"):
#   - a user outside incus-admin: `sluice cluster status --env incus` fails
#     with incus's message and what to do (join the group), not UNKNOWN, and
#     without the first-run notice incus prints to a new user;
#   - a member whose session lacks the group (it joined after logging in:
#     simulated with setpriv --clear-groups): the retry through
#     `sg incus-admin -c` works and status reads the daemon.
# Creates a throwaway user (home under /tmp), deleted at the end. Skips when
# Incus is not installed or its daemon is not running.
set -u
source "$(dirname "$0")/lib.sh"
it_init incus_permissions ip
[ "$(id -u)" -eq 0 ] || it_skip "needs root (creates a user)"
command -v incus >/dev/null || it_skip "Incus is not installed (scripts/incus-setup.sh installs it)"
incus admin waitready --timeout 1 >/dev/null 2>&1 || it_skip "incusd is not running (scripts/incus-setup.sh starts it)"
command -v setpriv >/dev/null || it_skip "setpriv (util-linux) is missing"
U="slit$$"
U=${U:0:16}
HOMEDIR="$IT_TMP/home"
useradd -m -d "$HOMEDIR" -s /bin/sh "$U" || it_skip "cannot create a user"
trap 'rc=$?; userdel -r "$U" >/dev/null 2>&1; (exit $rc); it_cleanup' EXIT
chmod 755 "$IT_TMP"
# The binary and the environments file must be readable by the user.
as_user() { setpriv --reuid "$U" --regid "$U" --clear-groups env HOME="$HOMEDIR" "$@"; }

as_user "$SLUICE" cluster status --env incus --environments "$IT_SRC/cluster/environments.yaml" >"$IT_TMP/out" 2>"$IT_TMP/err"
rc=$?
it_check "outside incus-admin: status fails (exit $rc)" test "$rc" -ne 0
it_check "... with incus's own permission message" grep -q "You don't have the needed permissions to talk to the incus daemon" "$IT_TMP/err"
it_check "... after retrying through sg incus-admin" grep -q "retried as \`sg incus-admin -c\`" "$IT_TMP/err"
it_check "... and says what to do" grep -q "Add this user to the incus-admin group" "$IT_TMP/err"
# A new user's first incus call also prints incus's first-run notice
# ("If this is your first time running Incus ... incus admin init"): not
# sluice's to pass on.
it_check "... without incus's first-run notice" sh -c "! grep -q -e 'first time running Incus' -e 'incus launch' '$IT_TMP/err'"

usermod -aG incus-admin "$U"
as_user "$SLUICE" cluster status --env incus --environments "$IT_SRC/cluster/environments.yaml" >"$IT_TMP/out" 2>"$IT_TMP/err"
it_check "a member whose session lacks the group: no permission error (sg retry worked)" \
    sh -c "! grep -q 'needed permissions' '$IT_TMP/err'"
it_check "... and status read the daemon (the cluster's networks listed)" grep -q "network sluice-lan" "$IT_TMP/out"
it_finish
