#!/usr/bin/env bash
# The Debian package installs, works and goes on a clean Debian 12: builds the .deb
# (deploy/package.sh; or takes DEB=FILE), makes a minimal bookworm root with debootstrap
# from this machine's Debian mirror, installs the .deb there with its dependencies
# (apt-get install ./hvswitch_*.deb), then checks: hvswitch and hvswitchctl run (--help,
# --version), the man pages, bash completion, unit, host set-up and CNI plugin are where
# Debian expects them, the hvswitch group exists (sysusers ran), systemd-analyze verify
# accepts the installed unit, /etc files are conffiles, and dpkg --purge removes it all.
#   tests/deploy/package.sh SOURCE_DIR WORK_DIR
# WORK_DIR (in the build directory) holds the .deb and the root while the test runs; the
# root and its mounts are removed at the end whatever happens. Needs root and the mirror.
set -euo pipefail
src=$1
work=$2
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: needs root (debootstrap, chroot)"
  exit 77
fi
mkdir -p "$work"
root="$work/root"

cleanup() {
  for m in "$root/proc" "$root/sys" "$root/dev"; do
    if mountpoint -q "$m"; then umount -l "$m"; fi
  done
  rm -rf "$root"
}
trap cleanup EXIT
cleanup  # a run killed before its trap

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $* ($SECONDS s)"; }

if ! command -v debootstrap >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

step "package"
if [ -n "${DEB:-}" ]; then
  deb=$DEB
else
  HVSWITCH_WERROR=1 "$src/deploy/package.sh" "$work/deb"
  deb=$(ls "$work"/deb/hvswitch_*_amd64.deb)
fi
[ -f "$deb" ] || fail "no package $deb"

# The mirror apt uses here (deb822 sources or a one-line sources.list).
mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\/*\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
if [ -z "$mirror" ]; then
  mirror=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
fi
mirror=${mirror:-http://deb.debian.org/debian}

step "debootstrap --variant=minbase bookworm from $mirror"
debootstrap --variant=minbase bookworm "$root" "$mirror" > "$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log"; fail "debootstrap"; }
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
# No service starts inside the chroot.
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"; }

step "apt-get install ./$(basename "$deb")"
cp "$deb" "$root/tmp/"
in_root sh -c "echo 'deb $mirror bookworm main' > /etc/apt/sources.list"
in_root apt-get update -qq > "$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get update"; }
# systemd: the unit's verification and the sysusers run (the host has it; a minimal root
# does not, and hvswitch needs it only as a service).
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  "/tmp/$(basename "$deb")" systemd man-db > "$work/apt.log" 2>&1 ||
  { tail -30 "$work/apt.log"; fail "apt-get install"; }

step "checks"
for bin in /usr/sbin/hvswitch /usr/bin/hvswitchctl; do
  in_root "$bin" --help > "$work/help.txt" || fail "$bin --help"
  grep -q '^Usage:' "$work/help.txt" || fail "$bin --help prints no usage"
  in_root "$bin" --version | grep -qx "$(basename "$bin") [0-9][0-9.]*" || fail "$bin --version"
done
for f in /lib/systemd/system/hvswitch.service /usr/lib/hvswitch/hvswitch-host-setup \
         /usr/lib/sysusers.d/hvswitch.conf /etc/default/hvswitch /etc/hvswitch/hvswitch.conf \
         /usr/share/man/man8/hvswitch.8.gz /usr/share/man/man8/hvswitchctl.8.gz \
         /usr/share/bash-completion/completions/hvswitchctl \
         /usr/share/doc/hvswitch/README.md.gz /usr/share/doc/hvswitch/copyright; do
  [ -e "$root$f" ] || fail "$f not installed"
done
[ -x "$root/usr/lib/hvswitch/hvswitch-host-setup" ] || fail "hvswitch-host-setup not executable"
# The CNI plugin, when this tree builds one.
if grep -q "hvswitch-cni" "$src/switch/meson.build"; then
  [ -x "$root/usr/lib/cni/hvswitch-cni" ] || fail "/usr/lib/cni/hvswitch-cni not installed"
fi
# Nothing of the tests or benchmarks.
if in_root dpkg -L hvswitch | grep -E '_test$|_bench$|hvs_guest|_fuzz$'; then
  fail "tests or benchmarks installed"
fi
in_root getent group hvswitch > /dev/null || fail "no hvswitch group (sysusers did not run)"
for f in /etc/default/hvswitch /etc/hvswitch/hvswitch.conf; do
  grep -qx "$f" "$root/var/lib/dpkg/info/hvswitch.conffiles" || fail "$f is not a conffile"
done
grep -q "ExecStart=.*/usr/sbin/hvswitch " "$root/lib/systemd/system/hvswitch.service" ||
  fail "the unit does not start /usr/sbin/hvswitch"
in_root systemd-analyze verify /lib/systemd/system/hvswitch.service > "$work/verify.txt" 2>&1 ||
  { cat "$work/verify.txt"; fail "systemd-analyze verify"; }
if grep hvswitch "$work/verify.txt"; then fail "systemd-analyze verify warns about the unit"; fi
# Enabled for boot by the postinst (like openvswitch-switch), not started in a chroot.
[ -L "$root/etc/systemd/system/multi-user.target.wants/hvswitch.service" ] ||
  fail "hvswitch.service not enabled"
in_root env MANWIDTH=80 man --warnings -l /usr/share/man/man8/hvswitchctl.8.gz > /dev/null \
  2> "$work/man.txt" || fail "man hvswitchctl"
[ ! -s "$work/man.txt" ] || { cat "$work/man.txt"; fail "man warns"; }
# The completion completes in the installed bash.
in_root bash --norc -c 'source /usr/share/bash-completion/completions/hvswitchctl &&
  COMP_WORDS=(hvswitchctl po) COMP_CWORD=1 && _hvswitchctl && [ "${COMPREPLY[*]}" = port ]' ||
  fail "completion"

step "dpkg --purge"
in_root dpkg --purge hvswitch > "$work/purge.txt" 2>&1 || { cat "$work/purge.txt"; fail "purge"; }
for f in /usr/sbin/hvswitch /usr/bin/hvswitchctl /lib/systemd/system/hvswitch.service \
         /etc/hvswitch/hvswitch.conf /etc/default/hvswitch /usr/lib/hvswitch \
         /usr/share/man/man8/hvswitch.8.gz /etc/systemd/system/multi-user.target.wants/hvswitch.service; do
  [ ! -e "$root$f" ] && [ ! -L "$root$f" ] || fail "$f left after purge"
done
if in_root dpkg -s hvswitch > /dev/null 2>&1; then fail "hvswitch still known to dpkg"; fi
step "passed"
