#!/usr/bin/env bash
# Installs hvswitch as a systemd service on this host with `meson install` (deploy/meson.build
# says what goes where): hvswitch and hvswitchctl under /usr/local, the unit
# (/usr/local/lib/systemd/system), its host set-up script, the man pages, bash completion,
# the hvswitch group (hvswitchctl users: /usr/lib/sysusers.d/hvswitch.conf),
# /etc/default/hvswitch and an example /etc/hvswitch/hvswitch.conf (both kept if present).
# Then: edit /etc/hvswitch/hvswitch.conf, `systemctl enable --now hvswitch`.
# A Debian package instead: deploy/package.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "install-service.sh: run as root" >&2
  exit 1
fi
deploy/build.sh
# The configuration in /etc, not /usr/local/etc; the sysusers entry where systemd reads it.
meson configure build -Dsysconfdir=/etc -Dsysusersdir=/usr/lib/sysusers.d
ninja -C build >/dev/null
# Staged first, so that an operator's /etc files are not replaced (meson install would).
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
meson install -C build --quiet --destdir "$stage"
while IFS= read -r -d '' file; do
  if [ -e "/${file#"$stage"/}" ]; then
    echo "install-service.sh: keeping /${file#"$stage"/}"
    rm -f "$file"
  fi
done < <(find "$stage/etc" -type f -print0)
# Existing directories keep their owners and modes.
tar -C "$stage" -cf - . | tar -C / -xf - --no-overwrite-dir --no-same-owner
if command -v systemd-sysusers >/dev/null; then
  systemd-sysusers /usr/lib/sysusers.d/hvswitch.conf
else
  getent group hvswitch >/dev/null || groupadd --system hvswitch
fi
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload
fi
echo "installed: edit /etc/hvswitch/hvswitch.conf, then systemctl enable --now hvswitch"
