"""What a network namespace's kernel counted: its /proc/net/snmp and snmp6, read inside it.

The kernel checks a TCP or UDP checksum before it looks for a socket, so these tell what
arrived whole (Udp NoPorts, Tcp InSegs) and what did not (InCsumErrors), whether or not
anything listens: send_udp sends to a port nobody listens on."""
from harness import in_netns

_UDP_SENDER = """
import socket, sys
family = socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET
s = socket.socket(family, socket.SOCK_DGRAM)
for i in range(int(sys.argv[2])):
    s.sendto(bytes([i % 251]) * int(sys.argv[3]), (sys.argv[1], 9))
"""


def send_udp(netns, address, count, size):
    """`count` datagrams of `size` bytes from the namespace to port 9 of `address`."""
    in_netns(netns, "python3", "-c", _UDP_SENDER, address, str(count), str(size))


def snmp(netns):
    """{"Udp": {...}, "Tcp": {...}, ..., "Udp6": {...}} of the namespace."""
    lines = in_netns(netns, "cat", "/proc/net/snmp").splitlines()
    out = {}
    for names, values in zip(lines[::2], lines[1::2]):
        proto = names.split(":")[0]
        out[proto] = dict(zip(names.split()[1:], map(int, values.split()[1:])))
    out["Udp6"] = {}
    for line in in_netns(netns, "cat", "/proc/net/snmp6").splitlines():
        name, value = line.split()
        if name.startswith("Udp6"):
            out["Udp6"][name[4:]] = int(value)
    return out


def csum_errors(netns):
    """The namespace's TCP, UDP and UDP/IPv6 checksum errors."""
    s = snmp(netns)
    return {"tcp": s["Tcp"]["InCsumErrors"], "udp": s["Udp"]["InCsumErrors"],
            "udp6": s["Udp6"]["InCsumErrors"]}
