// libFuzzer target: IP anti-spoofing's parsers (switch/datapath/ip_guard.h: IPv4 and its
// DHCP client exception, ARP, IPv6 with extension headers, ICMPv6 neighbour discovery
// and MLD) over any bytes, under ASan and UBSan (deploy/fuzz.sh ip_guard).
// Input: [nb_v4 (low nibble) | nb_v6 (high nibble)] then 5 bytes per IPv4 prefix (address,
// length) and 17 per IPv6 prefix, then [EtherType selector] and the L3 bytes.
// Besides not crashing or reading past the bytes given (ASan sees the copy's end), the
// verdicts keep two promises:
//   - more bindings never refuse what fewer allowed (a binding only ever allows);
//   - with every address bound (0.0.0.0/0 and ::/0), a frame of a checked family is
//     refused only for what no binding can fix: too short, a malformed ARP, a
//     neighbour advertisement cut short, or from :: without DAD or MLD.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "switch/datapath/ip_guard.h"

using hvswitch::IpBindings;
using hvswitch::IpPrefix;

namespace {

[[noreturn]] void Broken(const char* what) {
  std::fprintf(stderr, "ip_guard_fuzz: broken promise: %s\n", what);
  std::abort();
}

constexpr uint16_t kEtherTypes[] = {hvswitch::kEtherIpv4, hvswitch::kEtherArp,
                                    hvswitch::kEtherIpv6, 0x0081, 0xb588};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t nb_v4 = data[0] & 0xf, nb_v6 = data[0] >> 4;
  size_t at = 1;
  IpBindings bindings, all;
  for (size_t i = 0; i < nb_v4 + nb_v6; ++i) {
    const bool v6 = i >= nb_v4;
    const size_t n = v6 ? 16 : 4;
    if (at + n + 1 > size) return 0;
    IpPrefix p;
    p.v6 = v6;
    std::memcpy(p.addr.data(), data + at, n);
    p.length = static_cast<uint8_t>(data[at + n] % (v6 ? 129 : 33));
    at += n + 1;
    bindings.Add(p);
    all.Add(p);
  }
  if (at >= size) return 0;
  const uint16_t ether_type = kEtherTypes[data[at++] % std::size(kEtherTypes)];
  // The L3 bytes in a buffer of their own size: a read past them is ASan's to see.
  std::vector<uint8_t> l3(data + at, data + size);
  const uint32_t len = static_cast<uint32_t>(l3.size());
  const bool allowed = hvswitch::IpAllowed(bindings, ether_type, l3.data(), len);

  IpPrefix any4, any6;
  any4.length = 0;
  any6.v6 = true;
  any6.length = 0;
  all.Add(any4);
  all.Add(any6);
  const bool allowed_all = hvswitch::IpAllowed(all, ether_type, l3.data(), len);
  if (allowed && !allowed_all) Broken("a binding more refused a frame");
  if (!allowed_all) {
    bool explained = false;
    switch (ether_type) {
      case hvswitch::kEtherIpv4:
        // From 0.0.0.0 without DHCP is allowed by 0.0.0.0/0: only shortness refuses.
        explained = len < 20;
        break;
      case hvswitch::kEtherArp:
        explained = len < 28 || l3[0] != 0 || l3[1] != 1 || l3[2] != 8 || l3[3] != 0 ||
                    l3[4] != 6 || l3[5] != 4;
        break;
      case hvswitch::kEtherIpv6: {
        bool unspecified = len >= 40;
        for (uint32_t i = 8; i < 24 && i < len; ++i) unspecified = unspecified && l3[i] == 0;
        // A neighbour advertisement shorter than its target, or anything from :: but
        // DAD and MLD, refused by the parser's own walk: trusted here to be one of those.
        explained = len < 40 || unspecified || l3[6] == 58 || l3[6] == 0 || l3[6] == 43 ||
                    l3[6] == 60;
        break;
      }
      default:
        explained = ether_type == 0x0081;  // a stacked tag
        break;
    }
    if (!explained) Broken("a frame refused with every address bound");
  }
  return 0;
}
