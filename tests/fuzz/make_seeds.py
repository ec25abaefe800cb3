"""Seed inputs for the fuzz targets (deploy/fuzz.sh), so that each starts from the paths
that matter:  make_seeds.py TARGET DIR
  offload: well-formed frames of every kind with each offload request (8 bytes of
           metadata, then the frame);
  options: port specs, command lines and config files of the README and the tests;
  vxlan: frames on a VXLAN uplink, some wrapped in outer headers (tests/fuzz/vxlan_fuzz.cc).
  forwarder: port set-ups (VLANs, MTUs, limits, port security, offloads, mirror sessions,
           group tables, ip_learn=1) with bursts of unicast, broadcast, tagged and offload
           frames, and the captured IGMP, MLD, DHCP, ARP and neighbour discovery frames
           (layout: tests/fuzz/forwarder_fuzz.cc);
  ip_guard: bindings and the L3 part of IPv4, DHCP, ARP, IPv6, ND and MLD frames
           (layout: tests/fuzz/ip_guard_fuzz.cc);
  snoop: a mode byte and a whole frame (tests/fuzz/snoop_fuzz.cc): the IGMP, MLD, DHCP,
           ARP and neighbour discovery frames captured from Linux and BusyBox
           (tests/snoop_captures.h), each also behind an 802.1Q tag, and IGMP of every
           version and record type."""
import os
import re
import struct
import sys


def frame(ipv6, tcp, tagged, payload):
    l4 = (struct.pack("!HHIIBBHHH", 3000, 2000, 1, 0, 0x50, 0x18, 65535, 0, 0) if tcp
          else struct.pack("!HHHH", 3000, 2000, 8 + payload, 0))
    body = l4 + bytes((i * 7) & 0xff for i in range(payload))
    proto = 6 if tcp else 17
    if ipv6:
        l3 = struct.pack("!IHBB", 6 << 28, len(body), proto, 64) + bytes(range(32))
        ethertype = 0x86dd
    else:
        l3 = struct.pack("!BBHHHBBH", 0x45, 0, 20 + len(body), 1, 0, 64, proto, 0) + bytes(8)
        ethertype = 0x0800
    eth = bytes(range(1, 13))
    if tagged:
        eth += struct.pack("!HH", 0x8100, 100)
    return eth + struct.pack("!H", ethertype) + l3 + body


def offload_seeds(out):
    n = 0
    for ipv6 in (False, True):
        for tcp in (False, True):
            for tagged in (False, True):
                for flags, payload in ((1, 200), (3, 20000), (0x13, 200), (0x73, 20000),
                                       (3, 3000), (4, 100), (8, 100)):
                    meta = struct.pack("<BHHHB", flags, 1448, 1500 - 68, 1000, 0)
                    with open(os.path.join(out, f"seed{n:03d}"), "wb") as f:
                        f.write(meta + frame(ipv6, tcp, tagged, payload))
                    n += 1


PORTS = [
    "vm1,type=vhost-user,path=/run/hvswitch/vm1.sock",
    "vm2,type=vhost-user,path=/var/lib/qemu/vm2.sock,client=1,queues=4",
    "mem1,type=memif,path=/run/hvswitch/memif.sock,id=7",
    "m2,type=memif,path=/run/m2.sock,client=1,zero_copy=1,quota=4096",
    "uplink,type=dpdk,queues=2,devargs=net_tap0,iface=hvs0",
    "bond0,type=bond,mode=802.3ad,hash=l34,queues=2,members=0000:03:00.0;net_af_packet_b,iface=e1",
    "bond1,type=bond,members=net_null_a;net_null_b",
    "t,type=memif,path=/t,trunk=10,20-22,native=5,lock=1,mtu=9000",
    "a,type=vhost-user,path=/a,vlan=10,learn_limit=16,mac=02:00:00:00:00:01,02:00:00:00:00:02",
    "slow,type=vhost-user,path=/run/slow.sock,tx_retries=32",
    "g,type=vhost-user,path=/g,police_pps=10k,police_pps_burst=100,police_bps=100M,"
    "storm_broadcast=1000,storm_multicast=2k,storm_unknown=500,bpdu_guard=1",
    "ip,type=memif,path=/ip,mac=02:00:00:00:00:03,ip=10.0.0.5,192.168.0.0/24,fd00::5,"
    "fe80::/64,ip_learn=1",
    "r,type=vhost-user,path=/r,mrouter=1,trunk=1-3",
]
ARGS = [
    ["--port=" + PORTS[0], "--port", PORTS[2], "--lcores=1-2", "--metrics_address=none",
     "--eal=--no-huge -m 1024"],
    ["--port=none", "--ctl_socket=none", "--fdb_static=vm1,02:00:00:00:00:01,vlan=7"],
    ["--port=" + PORTS[5], "--port=" + PORTS[6], "--fdb_capacity=1024", "--fdb_aging=0",
     "--burst=64", "--rx_descriptors=512", "--tx_descriptors=2048", "--mbufs=9000",
     "--tx_flush_us=50", "--runtime_dir=/tmp/r", "--ctl_group=kvm",
     "--save_config=/var/lib/h.conf"],
    ["--port=" + PORTS[0], "--port=" + PORTS[8], "--port=" + PORTS[10],
     "--mirror=span,from=vm1,g,to=r,direction=rx,vlan=7", "--mirror=s2,from=g,to=vm1",
     "--mcast_snooping=1", "--mcast_aging=125"],
    ["--help"],
]


def options_seeds(out):
    seeds = [b"\0" + p.encode() for p in PORTS]
    seeds += [b"\1" + b"\0".join(a.encode() for a in args) for args in ARGS]
    conf = os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "systemd",
                        "hvswitch.conf")
    with open(conf, "rb") as f:
        seeds.append(b"\2" + f.read())
    seeds.append(b"\2# saved\n" + b"".join(b"port=" + p.encode() + b"\n" for p in PORTS) +
                 b"fdb_static=vm1,02:00:00:00:00:09,vlan=3\nlcores=1,3\n"
                 b"metrics_address=127.0.0.1:9999\nruntime_dir=/run/x\n")
    for n, seed in enumerate(seeds):
        with open(os.path.join(out, f"seed{n:03d}"), "wb") as f:
            f.write(seed)


def forwarder_global(ports, statics=0, sessions=0, groups=False, loop=False, waits=False):
    return bytes([(ports - 2) | (0x80 if waits else 0),
                  statics | sessions << 2 | (16 if groups else 0) | (32 if loop else 0)])


# A mirror session: rx and tx port masks, the analyser, the tag pushed (a port VLAN's
# index + 1; 0: none).
def forwarder_mirror(rx, tx, to, vlan=0):
    return bytes([rx, tx, to | vlan << 4])


# A group table: groups (group MAC index, VLAN index, members) and router VLANs (VLAN
# index, ports).
def forwarder_groups(groups=(), routers=()):
    return bytes([len(groups) | len(routers) << 3]) + \
        b"".join(bytes([mac | vlan << 4, members]) for mac, vlan, members in groups) + \
        b"".join(bytes([vlan, ports]) for vlan, ports in routers)


def forwarder_port(mode=0, trunk=0, mtu=3, flags=1, limits=0, capture=0, ip_learn=False,
                   mrouter=False):
    trunk |= (64 if ip_learn else 0) | (128 if mrouter else 0)
    return bytes([mode, trunk, mtu, flags, limits, capture])


def forwarder_frame(flags=1, dst=0, src=1, vlans=0, piece=0, payload=b"\x08\x00" + bytes(46),
                    segsz=0):
    return struct.pack("<BBBBHH", flags, dst | (src << 4), vlans, piece, len(payload),
                       segsz) + payload


# A whole frame as it is, no table header.
def forwarder_raw(frame, piece=0):
    return forwarder_frame(flags=0, piece=piece, payload=frame)


# Control bits: 1 toggle the link of `port`, 2 flush its MACs, 4 a second passes, 8 age.
def forwarder_burst(port, frames, control=0):
    return bytes([port, len(frames) - 1, control]) + b"".join(frames)


def tagged(frame, vlan):
    return frame[:12] + struct.pack("!HH", 0x8100, vlan) + frame[12:]


def forwarder_seeds(out):
    plain = [forwarder_port() for _ in range(3)]
    unicast = [forwarder_frame(dst=d, src=s) for s, d in ((0, 1), (1, 0), (2, 0))]
    bcast = forwarder_frame(dst=10, src=0)
    cap = captures()
    data = [forwarder_frame(dst=d, src=0) for d in (11, 12)]  # to the captured groups
    seeds = [
        # three plain ports: learning, then unicast and a broadcast
        forwarder_global(3) + b"".join(plain) + forwarder_burst(0, unicast) +
        forwarder_burst(1, [bcast, forwarder_frame(dst=0, src=1)]),
        # access 10 (index 2), trunk {10,20} with native 1, plain; tagged and untagged
        forwarder_global(3) + forwarder_port(mode=1 | (2 << 2)) +
        forwarder_port(mode=3, trunk=0b1100) + forwarder_port() +
        forwarder_burst(1, [forwarder_frame(flags=3, vlans=3), forwarder_frame(flags=1),
                            forwarder_frame(flags=7, vlans=3 | (4 << 4))]) +
        forwarder_burst(0, [bcast]),
        # MTUs 68 and 9000, a jumbo frame in chains of 500 bytes, a static MAC
        forwarder_global(3, statics=1) + bytes([1, 1]) + forwarder_port(mtu=0) +
        forwarder_port(mtu=6) + forwarder_port() +
        forwarder_burst(2, [forwarder_frame(dst=1, piece=250, payload=bytes(9000)), bcast]),
        # port security: mac= on port 0, lock=1 on port 1, learn limit 1 on port 2; links
        forwarder_global(3) + forwarder_port(flags=1 | 128, limits=0b11000) +
        forwarder_port(flags=1 | 64) + forwarder_port(limits=1) +
        forwarder_burst(1, [forwarder_frame(dst=0, src=s) for s in (3, 4, 5, 6)]) +
        forwarder_burst(0, [forwarder_frame(dst=1, src=s) for s in (0, 5)], control=0x11) +
        forwarder_burst(2, [forwarder_frame(dst=0, src=s) for s in (2, 3, 4)], control=0x22),
        # guest offloads: partial checksums and super-frames to ports with and without
        forwarder_global(3, waits=True) + forwarder_port(flags=1 | 2) +
        forwarder_port(flags=1 | 4 | 8) + forwarder_port(capture=3) +
        forwarder_burst(0, [
            forwarder_frame(flags=1 | 16, payload=frame(False, True, False, 200)[12:]),
            forwarder_frame(flags=1 | 16 | 32, dst=10, segsz=1448,
                            payload=frame(False, True, False, 20000)[12:])]),
        # a mirror of what ports 0 and 1 receive and port 1 is sent, to port 3 (MTU 68)
        # with VLAN 100 pushed: unicast, a flood, jumbo and runt frames; the analyser's own
        # frames; it going down and up again; more than port 1's ring and the analyser's
        # take (odd ports' rings hold 7 frames)
        forwarder_global(4, sessions=1) + forwarder_mirror(0b011, 0b010, 3, vlan=5) +
        b"".join(plain) + forwarder_port(mtu=0) +
        forwarder_burst(0, unicast[:1] + [bcast, forwarder_frame(payload=b"")]) +
        forwarder_burst(1, unicast[1:2] + [forwarder_raw(bytes(5)),
                                           forwarder_frame(dst=0, src=1, payload=bytes(200))]) +
        forwarder_burst(3, [forwarder_frame(dst=0, src=3), bcast]) +
        forwarder_burst(0, unicast[:1], control=0x31) +
        forwarder_burst(1, unicast[1:2], control=0x31) + forwarder_burst(0, [bcast] * 12),
        # two sessions, frames waiting for fuller bursts: port 0's received to port 2 as
        # they are, what trunk port 0 and port 1 are sent to port 3 with VLAN 2 pushed
        forwarder_global(4, sessions=2, waits=True) + forwarder_mirror(0b001, 0, 2) +
        forwarder_mirror(0, 0b011, 3, vlan=2) + forwarder_port(mode=3, trunk=0b1100) +
        forwarder_port(mode=1 | (2 << 2)) + forwarder_port(mtu=6) + forwarder_port(mtu=2) +
        forwarder_burst(0, [forwarder_frame(flags=3, vlans=3, dst=1, src=0),
                            forwarder_frame(flags=1, dst=10, src=0, payload=bytes(1400))]) +
        forwarder_burst(1, [forwarder_frame(dst=0, src=1, piece=30, payload=bytes(600))] * 3),
        # a group table: 239.1.2.3 joined by port 1, ff05::1:3 by port 2, port 3 a router
        # in VLAN 0; data to both, a query, reports and leaves
        forwarder_global(4, groups=True) +
        forwarder_groups([(0, 0, 0b0010), (1, 0, 0b0100)], [(0, 0b1000)]) +
        b"".join(forwarder_port() for _ in range(4)) +
        forwarder_burst(0, data + [forwarder_raw(cap["kIgmpv3GeneralQuery"]),
                                   forwarder_raw(cap["kIgmpv2Report"]),
                                   forwarder_raw(cap["kMldv1Report"]),
                                   forwarder_raw(cap["kIgmpv3GroupQuery"])]) +
        forwarder_burst(1, [forwarder_raw(cap["kIgmpv2Leave"]),
                            forwarder_raw(cap["kMldv1Done"]),
                            forwarder_frame(dst=11, src=1, piece=20)]),
        # snooping learned: port 1 joins 239.1.2.3, port 2 ff05::1:3 (MLDv2 from fe80::),
        # a querier on port 3, mrouter=1 on port 4; data to the groups; seconds pass
        # until the memberships age; a leave; a member's link going down
        forwarder_global(5, groups=True, loop=True) + forwarder_groups() +
        b"".join(forwarder_port() for _ in range(4)) + forwarder_port(mrouter=True) +
        forwarder_burst(1, [forwarder_raw(cap["kIgmpv3Join"])]) +
        forwarder_burst(2, [forwarder_raw(cap["kMldv2Join"])]) +
        forwarder_burst(3, [forwarder_raw(cap["kMldv2GeneralQuery"])]) +
        forwarder_burst(0, data) +
        forwarder_burst(0, data, control=0x04) +
        forwarder_burst(1, [forwarder_raw(cap["kIgmpv3Leave"])]) +
        forwarder_burst(0, data, control=0x21) +
        forwarder_burst(0, data, control=0x04) + forwarder_burst(0, data, control=0x04) +
        forwarder_burst(0, data, control=0x04),
        # snooping in VLAN 10 on trunks: a tagged join from port 1, tagged data from port
        # 0, untagged from the access port 2
        forwarder_global(3, groups=True, loop=True) + forwarder_groups() +
        forwarder_port(mode=2, trunk=0b0110) + forwarder_port(mode=3, trunk=0b0100) +
        forwarder_port(mode=1 | (2 << 2)) +
        forwarder_burst(1, [forwarder_raw(tagged(cap["kIgmpv3Join"], 10)),
                            forwarder_raw(tagged(cap["kMldv2Join"], 10))]) +
        forwarder_burst(0, [forwarder_frame(flags=3, vlans=3, dst=d, src=0) for d in (11, 12)]) +
        forwarder_burst(2, [forwarder_frame(dst=11, src=2), forwarder_frame(dst=12, src=2)]),
        # ip_learn=1 by DHCP: the client on port 1 (lock=1), the server on port 0: its
        # offer and ack flooded, the renewal's ack unicast; the bound address, another
        forwarder_global(3, loop=True) + forwarder_port() + forwarder_port(ip_learn=True) +
        forwarder_port() +
        forwarder_burst(1, [forwarder_raw(cap["kDhcpDiscover"])]) +
        forwarder_burst(0, [forwarder_raw(cap["kDhcpOffer"])]) +
        forwarder_burst(1, [forwarder_raw(cap["kDhcpRequest"])]) +
        forwarder_burst(0, [forwarder_raw(cap["kDhcpAck"])]) +
        forwarder_burst(1, [forwarder_raw(cap["kDhcpRenew"])]) +
        forwarder_burst(0, [forwarder_raw(cap["kDhcpRenewAck"])]) +
        forwarder_burst(1, [forwarder_raw(cap["kDhcpRelease"])]),
        # ip_learn=1 by claims: ARP and neighbour discovery from port 1 (lock=1), and from
        # port 2 (ip= too), which cannot have what port 1 took
        forwarder_global(3, loop=True) + forwarder_port() + forwarder_port(ip_learn=True) +
        forwarder_port(ip_learn=True, capture=128) +
        forwarder_burst(1, [forwarder_raw(cap[k]) for k in (
            "kArpProbe", "kArpRequest", "kNdDad", "kNdUnsolicitedNa", "kNdSolicitation")]) +
        forwarder_burst(1, [forwarder_raw(cap["kArpRequest"])] * 2) +
        forwarder_burst(2, [forwarder_raw(cap[k])
                            for k in ("kArpRequest", "kNdSolicitation")]) +
        forwarder_burst(0, [forwarder_raw(cap["kArpReply"])], control=0x11) +
        forwarder_burst(1, [forwarder_raw(cap["kArpRequest"])]),
        # all at once, frames waiting: port 4 the analyser of ports 0-2 both ways, a group
        # table learned, ip_learn=1 on port 1; a full burst, whose copies overfill the
        # analyser's transmit buffer
        forwarder_global(5, sessions=1, groups=True, loop=True, waits=True) +
        forwarder_mirror(0b111, 0b111, 4, vlan=3) + forwarder_groups([(0, 0, 0b100)]) +
        forwarder_port() + forwarder_port(ip_learn=True) + forwarder_port() +
        forwarder_port(mrouter=True) + forwarder_port() +
        forwarder_burst(1, [forwarder_raw(cap[k]) for k in (
            "kDhcpDiscover", "kIgmpv3Join", "kArpRequest")]) +
        forwarder_burst(0, [forwarder_raw(cap["kDhcpAck"])] + data) +
        forwarder_burst(2, [forwarder_raw(cap["kIgmpv2GeneralQuery"]),
                            forwarder_raw(cap["kMldv2Join"])] + unicast[2:]) +
        forwarder_burst(0, [forwarder_frame(dst=10, src=0, payload=b"\x08\x00")] * 64),
    ]
    for n, seed in enumerate(seeds):
        with open(os.path.join(out, f"seed{n:03d}"), "wb") as f:
            f.write(seed)


# control_fuzz: requests one per line, each behind a byte that picks the caller (bit 0: a
# --ctl_group member) and whether a descriptor goes along (bit 1).
CONTROL = [
    b"\0port list", b"\0port show odd", b"\0stats", b"\0stats odd", b"\0pmd",
    b"\1port add x vhost-user path=RUN/x.sock vlan=7",
    b"\1port add y,type=memif,path=RUN/y.sock,client=1,quota=512",
    b"\1port add p,type=dpdk,devargs=net_pcap0,tx_pcap=/tmp/p", b"\0port del x",
    b"\1port del odd", b"\0fdb show --port odd --vlan 0", b"\1fdb flush --port odd",
    b"\0fdb add odd 02:00:00:00:00:01 --vlan 5", b"\1fdb del 02:00:00:00:00:01 --vlan 5",
    b"\2capture start odd 10 rx 5", b"\0capture status", b"\1capture stop",
    b"\0config show", b"\1config save", b"\1config save /tmp/x.conf",
]


def control_seeds(out):
    for n, line in enumerate(CONTROL):
        with open(os.path.join(out, f"seed{n:03d}"), "wb") as f:
            f.write(line + b"\n")
    with open(os.path.join(out, "all"), "wb") as f:
        f.write(b"\n".join(CONTROL) + b"\n")


# vxlan_fuzz: frames on the uplink, [segment size] [length LE] bytes; 0xfe 0xfe HOW
# INNER: INNER wrapped in outer headers (tests/fuzz/vxlan_fuzz.cc).
def vxlan_frame(body, piece=0):
    return bytes([piece]) + struct.pack("<H", len(body)) + body


def vxlan_seeds(out):
    unicast = bytes.fromhex("02aa00000001" "02bb00000002" "0800") + bytes(46)
    bcast = bytes.fromhex("ffffffffffff" "02bb00000003" "0806") + bytes(28)
    seeds = {
        "decap": vxlan_frame(b"\xfe\xfe\x00" + unicast),
        "both_vnis": vxlan_frame(b"\xfe\xfe\x00" + bcast) + vxlan_frame(b"\xfe\xfe\x03" + bcast),
        "split": vxlan_frame(b"\xfe\xfe\x01" + unicast, piece=20),
        "bridge": vxlan_frame(unicast) + vxlan_frame(b"\xfe\xfe\x02" + frame(False, True, False, 300)),
        "jumbo": vxlan_frame(b"\xfe\xfe\x00" + unicast[:12] + b"\x08\x00" + bytes(3000), piece=200),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


# ip_guard_fuzz: [nb_v4 | nb_v6 << 4] prefixes (address, length) [EtherType index] L3.
def ip_guard_seeds(out):
    v4 = bytes([10, 0, 0, 5, 32, 192, 168, 0, 0, 16])
    v6 = bytes.fromhex("20010db8000000000000000000000005") + bytes([128]) + \
        bytes.fromhex("fe800000000000000000000000000000") + bytes([64])
    bindings = bytes([2 | 2 << 4]) + v4 + v6
    ipv4 = struct.pack("!BBHHHBBH", 0x45, 0, 28, 1, 0, 64, 17, 0) + bytes([10, 0, 0, 5]) + \
        bytes([10, 0, 0, 1]) + struct.pack("!HHHH", 68, 67, 8, 0)
    dhcp = ipv4[:12] + bytes(4) + ipv4[16:]
    arp = struct.pack("!HHBBH", 1, 0x0800, 6, 4, 2) + bytes(6) + bytes([10, 0, 0, 1]) + bytes(10)
    def icmpv6(src, icmp, next_header=58, extensions=b""):
        return struct.pack("!IHBB", 6 << 28, len(extensions) + len(icmp), next_header, 255) + \
            src + bytes.fromhex("ff020000000000000000000000000001") + extensions + icmp
    na = bytes([136, 0, 0, 0, 0x60, 0, 0, 0]) + bytes.fromhex("20010db8000000000000000000000001")
    ns = bytes([135]) + bytes(7) + bytes.fromhex("20010db8000000000000000000000099")
    mld = bytes([143]) + bytes(7)
    link_local = bytes.fromhex("fe800000000000000000000000000001")
    seeds = {
        "ipv4": bindings + bytes([0]) + ipv4,
        "dhcp": bindings + bytes([0]) + dhcp,
        "arp": bindings + bytes([1]) + arp,
        "na": bindings + bytes([2]) + icmpv6(link_local, na),
        "dad": bindings + bytes([2]) + icmpv6(bytes(16), ns),
        "mld_hbh": bindings + bytes([2]) + icmpv6(bytes(16), mld, 0, bytes([58, 0]) + bytes(6)),
        "na_ext": bindings + bytes([2]) + icmpv6(link_local, na, 60,
                                                 bytes([43, 0]) + bytes(6) + bytes([58, 0]) +
                                                 bytes(6)),
        "tagged": bindings + bytes([3]) + ipv4,
        "none": bytes([0, 0]) + ipv4,
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


# snoop_fuzz: [mode (bit 0: fix the checksums)] a whole Ethernet frame.
def captures():
    path = os.path.join(os.path.dirname(__file__), "..", "snoop_captures.h")
    with open(path) as f:
        text = f.read()
    found = re.findall(r'const char (k\w+)\[\] =\s*((?:"[0-9a-f]*"\s*)+);', text)
    return {name: bytes.fromhex("".join(re.findall(r'"([0-9a-f]*)"', hex_lines)))
            for name, hex_lines in found}


# Checksums left zero: the seeds' mode byte has the target make them right.
def igmp_frame(message):
    ip = struct.pack("!BBHHHBBH", 0x46, 0xc0, 24 + len(message), 0, 0x4000, 1, 2, 0) + \
        bytes([10, 0, 0, 5, 224, 0, 0, 22]) + bytes([0x94, 4, 0, 0])
    return bytes.fromhex("01005e000016" "02000000000a" "0800") + ip + message


def snoop_seeds(out):
    seeds = captures()
    for name, frame in list(seeds.items()):
        seeds[name + "_tagged"] = frame[:12] + bytes([0x81, 0, 0, 100]) + frame[12:]
    group = bytes([239, 1, 2, 3])
    records = b"".join(struct.pack("!BBH", kind, 1, 1) + bytes([239, 0, 0, kind]) +
                       bytes([10, 0, 0, 7]) + bytes(4) for kind in range(1, 8))
    seeds.update({
        "igmpv1_report": igmp_frame(bytes([0x12, 0, 0, 0]) + group),
        "igmpv1_query": igmp_frame(bytes([0x11, 0, 0, 0, 0, 0, 0, 0])),
        "igmpv3_records": igmp_frame(struct.pack("!BBHHH", 0x22, 0, 0, 0, 7) + records),
        "igmpv3_query": igmp_frame(bytes([0x11, 100, 0, 0]) + group + bytes([2, 125, 0, 1]) +
                                   bytes([10, 0, 0, 7])),
    })
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(b"\1" + data)


if __name__ == "__main__":
    {"offload": offload_seeds, "options": options_seeds, "forwarder": forwarder_seeds,
     "control": control_seeds, "vxlan": vxlan_seeds,
     "ip_guard": ip_guard_seeds, "snoop": snoop_seeds}[sys.argv[1]](sys.argv[2])
