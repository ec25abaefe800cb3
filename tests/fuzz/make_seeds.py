"""Seed inputs for offload_fuzz: well-formed frames of every kind with each offload request,
so the fuzzer starts from the paths that matter (8 bytes of metadata, then the frame)."""
import os
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


def main(out):
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


if __name__ == "__main__":
    main(sys.argv[1])
