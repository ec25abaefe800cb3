#!/usr/bin/env bash
# Installs hvswitch as a systemd service on this host: the binaries (meson install into
# /usr/local), the unit, its host set-up script, the hvswitch group (hvswitchctl users),
# /etc/default/hvswitch and an example /etc/hvswitch/hvswitch.conf (kept if present).
# Then: edit /etc/hvswitch/hvswitch.conf, `systemctl enable --now hvswitch`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "install-service.sh: run as root" >&2
  exit 1
fi
deploy/build.sh
meson install -C build --quiet
install -D -m 0755 deploy/systemd/hvswitch-host-setup /usr/local/lib/hvswitch/hvswitch-host-setup
install -D -m 0644 deploy/systemd/hvswitch.service /etc/systemd/system/hvswitch.service
install -D -m 0644 deploy/systemd/hvswitch.sysusers /usr/lib/sysusers.d/hvswitch.conf
install -D -m 0644 README.md /usr/local/share/doc/hvswitch/README.md
[ -f /etc/default/hvswitch ] || install -D -m 0644 deploy/systemd/hvswitch.default /etc/default/hvswitch
[ -f /etc/hvswitch/hvswitch.conf ] || install -D -m 0644 deploy/systemd/hvswitch.conf /etc/hvswitch/hvswitch.conf
if command -v systemd-sysusers >/dev/null; then
  systemd-sysusers /usr/lib/sysusers.d/hvswitch.conf
else
  getent group hvswitch >/dev/null || groupadd --system hvswitch
fi
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload
fi
echo "installed: edit /etc/hvswitch/hvswitch.conf, then systemctl enable --now hvswitch"
