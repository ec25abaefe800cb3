#!/usr/bin/env bash
# Installs what hvswitch needs to build, run and test on Debian 12. Idempotent: packages
# already present are not fetched again.
#
# Hugepages: with HUGEPAGES=N (2 MiB pages) this reserves N pages and mounts hugetlbfs on
# /dev/hugepages. Without it nothing is reserved and hvswitch falls back to ordinary
# memory by itself (EAL --no-huge -m 512), which is enough for vhost-user and memif.
set -euo pipefail

# The DPDK drivers hvswitch loads as plugins are named: with --no-install-recommends
# the `dpdk` package alone would not bring them all.
packages=(g++ meson ninja-build pkg-config python3 curl iproute2 procps coreutils
          dpdk dpdk-dev libdpdk-dev libabsl-dev prometheus-cpp-dev nlohmann-json3-dev
          libgtest-dev libgmock-dev libbenchmark-dev
          # VXLAN tunnels: the underlay's routes and neighbours, and EVPN's FDB entries,
          # over rtnetlink
          libmnl-dev
          librte-mempool-ring23 librte-net-vhost23 librte-net-memif23 librte-net-virtio23
          librte-net-ring23 librte-net-tap23 librte-net-af-packet23 librte-net-null23
          librte-net-pcap23 librte-net-bond23
          # the libFuzzer targets (deploy/fuzz.sh) and the sanitizer builds
          # (deploy/sanitize.sh: clang's ASan/UBSan/TSan runtimes; llvm-symbolizer for
          # readable stacks in their reports)
          clang libclang-rt-14-dev llvm-14
          # real guests (tests/e2e/test_qemu_guests.py; the kernel is unpacked from
          # Debian's linux-image package by tests/qemu/build_guest.sh, not installed)
          qemu-system-x86 busybox-static iperf3 ethtool cpio iputils-ping
          # operating it (tests/e2e/test_operate.py, test_deploy.py): reading captures,
          # a Prometheus server and promtool, YAML manifests
          tshark prometheus python3-yaml
          # the switch users compare against (tests/perf/ovs.py: loopback.py --against
          # ovs and its perf-smoke test, latency.py, ovs_compare.py): Open vSwitch with
          # DPDK, run as a private instance, never as the system's service
          openvswitch-switch-dpdk
          # multi-host tests (tests/e2e/test_vxlan.py): FRR's bgpd/zebra for EVPN, the
          # kernel's VXLAN as a peer (iproute2), Open vSwitch's userspace tunnels
          frr
          # life on a real host (tests/e2e/test_libvirt.py): libvirt starting the guests
          libvirt-daemon-system libvirt-clients
          # installing it (deploy/meson.build, deploy/package.sh, tests/deploy/): man pages
          # from --help, the Debian package and its test on a fresh Debian 12 root
          help2man dpkg-dev debhelper fakeroot lintian debootstrap
          # the CNI plugin's chain test (tests/e2e/test_cni.py): the reference plugins
          containernetworking-plugins)

if [ "$(id -u)" -ne 0 ]; then
  echo "install.sh: run as root (apt-get, hugepages)" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install.sh: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ -n "${HUGEPAGES:-}" ]; then
  echo "$HUGEPAGES" > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
  mountpoint -q /dev/hugepages || mount -t hugetlbfs nodev /dev/hugepages
  echo "install.sh: $(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages) hugepages of 2 MiB reserved"
fi
