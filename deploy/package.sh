#!/usr/bin/env bash
# Builds the Debian package hvswitch_VERSION_amd64.deb with Debian's own tooling: the
# debian/ directory kept in deploy/debian/ is copied into a temporary copy of the source
# tree, where dpkg-buildpackage -b runs (dh with meson: `meson install` places every file,
# dh_installsystemd and dh_installsysusers write the maintainer scripts), then lintian.
#   deploy/package.sh [OUTDIR]     (default: this checkout's build/deb/)
# Installs its build dependencies first (deploy/install.sh has them).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$src/build/deb}" && cd "${1:-$src/build/deb}" && pwd)

version=$(sed -n "s/^ *version : '\([^']*\)'.*/\1/p" "$src/meson.build" | head -1)
changelog=$(sed -n '1s/^hvswitch (\([^)]*\)).*/\1/p' "$src/deploy/debian/changelog")
if [ "$version" != "$changelog" ]; then
  echo "package.sh: meson.build says $version, deploy/debian/changelog $changelog:" \
       "add a changelog entry" >&2
  exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
  missing=()
  for p in dpkg-dev debhelper fakeroot lintian help2man; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
  fi
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The source as committed plus what is changed in the working tree (not build dirs).
tree="$work/hvswitch-$version"
mkdir "$tree"
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
   while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
   tar --null -T - -cf -) | tar -C "$tree" -xf -
cp -r "$src/deploy/debian" "$tree/debian"

# Missing build dependencies stop here, named (dpkg-checkbuilddeps).
(cd "$tree" && dpkg-buildpackage -b -us -uc -j"$(nproc)") > "$work/build.log" 2>&1 || {
  tail -40 "$work/build.log" >&2
  echo "package.sh: dpkg-buildpackage failed (log above)" >&2
  exit 1
}
deb="hvswitch_${version}_amd64.deb"
cp "$work/$deb" "$out/"
echo "package.sh: $out/$deb"
if command -v lintian >/dev/null; then
  # Tags left are explained in deploy/debian/hvswitch.lintian-overrides.
  lintian --info --display-info "$out/$deb" || true
fi
