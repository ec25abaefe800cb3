#!/usr/bin/env bash
# Builds what the QEMU guests of tests/e2e/test_qemu_guests.py boot: Debian's kernel and a
# tiny initramfs (busybox, the virtio-net driver modules, iperf3, ethtool, ping) into OUT
# (default build/qemu-guest). The kernel comes from Debian's linux-image package, unpacked
# without installing it (no initramfs-tools run, nothing in /boot). Idempotent.
#   tests/qemu/build_guest.sh [OUT]
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../../build/qemu-guest}")
cd "$(dirname "$0")/../.."
# Built again when this script or the guest's init change.
stamp=$(cat tests/qemu/build_guest.sh tests/qemu/debian_kernel.sh tests/qemu/init | sha256sum | cut -d' ' -f1)
[ -f "$out/vmlinuz" ] && [ -f "$out/initrd.gz" ] && [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ] && exit 0
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The kernel: the package linux-image-amd64 points at.
. tests/qemu/debian_kernel.sh
unpack_debian_kernel "$work"

root="$work/root"
mkdir -p "$root"/{bin,sbin,lib/modules,lib64,proc,sys,dev,tmp,etc,root}
cp /bin/busybox "$root/bin/busybox"
# In dependency order (modinfo -F depends).
for m in drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_modern_dev \
         drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci net/core/failover \
         drivers/net/net_failover drivers/net/virtio_net; do
  cp "$modules/$m.ko" "$root/lib/modules/"
done
echo "virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci failover net_failover virtio_net" \
  > "$root/lib/modules/order"
# Programs with the shared libraries they load.
for prog in /usr/bin/iperf3 /usr/sbin/ethtool; do
  cp "$prog" "$root/bin/"
  for lib in $(ldd "$prog" | awk '/=>/ {print $3} /ld-linux/ {print $1}'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
done
cp tests/qemu/init "$root/init"
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initrd.gz.tmp"
cp "$work/kernel/boot/vmlinuz-$version" "$out/vmlinuz"
mv "$out/initrd.gz.tmp" "$out/initrd.gz"
echo "$stamp" > "$out/stamp"
echo "build_guest.sh: $out: kernel $version, initramfs $(du -h "$out/initrd.gz" | cut -f1)"
