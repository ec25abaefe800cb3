#!/usr/bin/env bash
# Builds what the QEMU VM of tests/e2e/test_nic_vm.py boots: Debian's kernel (as
# tests/qemu/build_guest.sh gets it) and an initramfs that runs hvswitch itself inside the
# VM on emulated NICs driven by DPDK's PCI poll-mode drivers (net_e1000_em for e1000e,
# net_virtio for virtio-net-pci), into OUT (default build/qemu-nic-guest):
#   - busybox, iperf3, ethtool;
#   - hvswitch, hvswitchctl and hvs_guest (from BUILD, default build/; stripped copies),
#     every shared library they load, and the DPDK plugins they need (the PCI and vdev
#     buses, mempool drivers, net_e1000, net_virtio, net_memif, net_ring, net_null) in
#     Debian's plugin directory, where the EAL looks for them;
#   - the modules uio, uio_pci_generic (the Debian kernel has no VFIO no-IOMMU mode) and
#     tun (hvswitch's type=host port);
#   - an init that mounts hugetlbfs with HVS_HUGEPAGES 2 MB pages (default 160: with
#     uio_pci_generic DPDK needs physical addresses, which --no-huge memory has not),
#     binds every network-class PCI device to uio_pci_generic (driver_override), prints
#     "HVS_NIC BDF VENDOR:DEVICE" for each and hands the serial console to a shell.
# Idempotent: built again when this script or the binaries change.
#   tests/qemu/build_nic_guest.sh [OUT]     BUILD=DIR: where the project was built
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(realpath -m "${1:-build/qemu-nic-guest}")
build=$(realpath "${BUILD:-build}")
bins=("$build/switch/hvswitch" "$build/switch/hvswitchctl" "$build/tests/hvs_guest")
pmddir=/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0
plugins=(librte_bus_pci librte_bus_vdev librte_mempool_ring librte_mempool_stack
         librte_mempool_bucket librte_net_e1000 librte_net_virtio librte_net_memif
         librte_net_ring librte_net_null)
stamp=$( (cat tests/qemu/build_nic_guest.sh tests/qemu/debian_kernel.sh; sha256sum "${bins[@]}") | sha256sum | cut -d' ' -f1)
[ -f "$out/vmlinuz" ] && [ -f "$out/initrd.gz" ] && [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ] && exit 0
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The kernel: the package linux-image-amd64 points at.
. tests/qemu/debian_kernel.sh
unpack_debian_kernel "$work"

root="$work/root"
# Merged /usr as on Debian: the DPDK libraries hvswitch links (/lib/x86_64-linux-gnu/...)
# are symbolic links into the plugin directory, and the EAL must find the very same files
# there (a second copy of librte_bus_pci would register its tailq twice: EAL panics).
mkdir -p "$root"/{bin,sbin,usr/lib,lib64,proc,sys,dev,tmp,etc,root,run,var/run,mnt}
ln -s usr/lib "$root/lib"
mkdir -p "$root/lib/modules"
cp /bin/busybox "$root/bin/busybox"
for m in drivers/uio/uio drivers/uio/uio_pci_generic drivers/net/tun; do
  cp "$modules/$m.ko" "$root/lib/modules/"
done
echo "uio uio_pci_generic tun" > "$root/lib/modules/order"
echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
echo "root:x:0:" > "$root/etc/group"

# Programs and plugins with the shared libraries they load, symbolic links kept.
copy_path() {
  local p=$1 dst t
  while :; do
    dst="$root$p"
    mkdir -p "$(dirname "$dst")"
    if [ -L "$p" ]; then
      [ -e "$dst" ] || [ -L "$dst" ] || cp -P "$p" "$dst"
      t=$(readlink "$p")
      case $t in /*) p=$t ;; *) p=$(dirname "$p")/$t ;; esac
    else
      [ -e "$dst" ] || cp "$p" "$dst"
      return
    fi
  done
}
copy_libs() {
  for lib in $(ldd "$1" | awk '/=>/ {print $3} /ld-linux/ {print $1}'); do
    copy_path "$lib"
  done
}
for prog in "${bins[@]}"; do
  strip -o "$root/bin/$(basename "$prog")" "$prog"
  copy_libs "$prog"
done
for prog in /usr/bin/iperf3 /usr/sbin/ethtool; do
  cp "$prog" "$root/bin/"
  copy_libs "$prog"
done
for p in "${plugins[@]}"; do
  copy_path "$pmddir/$p.so"
  copy_libs "$pmddir/$p.so"
done

cat > "$root/init" <<'EOF'
#!/bin/busybox sh
# PID 1 of the NIC VM (tests/qemu/build_nic_guest.sh).
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/hugepages /dev/shm
mount -t hugetlbfs nodev /dev/hugepages
mount -t tmpfs tmpfs /dev/shm
pages=160
for arg in $(cat /proc/cmdline); do
  case $arg in hvs_hugepages=*) pages=${arg#hvs_hugepages=} ;; esac
done
echo "$pages" > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
for m in $(cat /lib/modules/order); do insmod /lib/modules/$m.ko; done
ip link set lo up
for dev in /sys/bus/pci/devices/*; do
  [ "$(cat $dev/class)" = 0x020000 ] || continue
  bdf=${dev##*/}
  echo uio_pci_generic > $dev/driver_override
  echo "$bdf" > /sys/bus/pci/drivers_probe
  echo "HVS_NIC $bdf $(cat $dev/vendor):$(cat $dev/device) $(readlink $dev/driver)"
done
echo "HVS_HUGEPAGES $(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages)"
export PS1=''
echo HVS_GUEST_READY
exec /bin/sh
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initrd.gz.tmp"
cp "$work/kernel/boot/vmlinuz-$version" "$out/vmlinuz"
mv "$out/initrd.gz.tmp" "$out/initrd.gz"
echo "$stamp" > "$out/stamp"
echo "build_nic_guest.sh: $out: kernel $version, initramfs $(du -h "$out/initrd.gz" | cut -f1)"
