# Sourced by tests/qemu/build_guest.sh and build_nic_guest.sh: unpacks the kernel package
# linux-image-amd64 points at into $1/kernel (without installing it: no initramfs-tools
# run, nothing in /boot) and sets `version` and `modules` (its modules' kernel/ folder).
unpack_debian_kernel() {
  local work=$1 image
  image=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  if [ -z "$image" ]; then
    apt-get update -qq
    image=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  fi
  (cd "$work" && apt-get download -qq "$image" >/dev/null 2>&1 ||
     { apt-get update -qq && apt-get download -qq "$image" >/dev/null; })
  dpkg-deb -x "$work"/"$image"_*.deb "$work/kernel"
  version=${image#linux-image-}
  modules="$work/kernel/lib/modules/$version/kernel"
}
