// ip_learn=1 through the Forwarder over net_ring ports, the test playing the control
// thread: the copies the workers queue (claims, DHCP replies) read by IpLearning, the
// bindings written into the table after each burst. Frames built byte by byte
// (tests/snoop_frames.h): a DHCP lease binds its address to the learning port's MAC for
// the lease; a learning port's first ARP / neighbour discovery claims an address (first
// come, first served) unless another port sharing a VLAN has it; what is not the port's
// to take (another MAC's lease, a learning port's DHCP replies, an ARP pointing at another
// MAC, more than the limit) is refused and counted; a lease moves an address; a port that
// goes loses what it learned; claims are offered at a bounded rate.
#include <rte_mbuf.h>

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <set>
#include <vector>

#include "switch/control/ip_learning.h"
#include "switch/datapath/mac_key.h"
#include "switch/datapath/snoop_queue.h"
#include "tests/integration/forwarder_fixture.h"
#include "tests/snoop_frames.h"

namespace hvswitch {
namespace {

using testing::ArpFrame;
using testing::Bootp;
using testing::Bytes;
using testing::kGuestKey;
using testing::kOtherKey;
using testing::LinkLayerOption;
using testing::NdFrame;
using testing::NdMessage;
using testing::Option;
using testing::UdpFrame;

constexpr uint16_t kLearner = 0, kServer = 1, kOtherLearner = 2;
const uint64_t kServerMac = 0x0b0000000102;

// A server's DHCPACK leasing `yiaddr` for `lease` seconds to kGuestMac.
Bytes DhcpAck(const char* yiaddr, uint32_t lease = 3600) {
  const Bytes options =
      testing::Concat({Option(53, {5}), Option(54, {10, 0, 0, 1}),
                       Option(51, {static_cast<uint8_t>(lease >> 24),
                                   static_cast<uint8_t>(lease >> 16),
                                   static_cast<uint8_t>(lease >> 8), static_cast<uint8_t>(lease)}),
                       {255}});
  return UdpFrame("10.0.0.1", yiaddr, 67, 68, Bootp(2, "0.0.0.0", yiaddr, options));
}

// IPv4 from `src`: a datagram the learner sends once it has an address.
Bytes Datagram(const char* src) { return UdpFrame(src, "10.0.0.99", 5000, 5001, Bytes(20)); }

class IpLearnTest : public ForwarderTest {
 protected:
  void SetUp() override {
    ForwarderTest::SetUp();
    snoop_ = *SnoopQueue::Create(name_ + "snoop", 256);
    datapath_.snoop = snoop_.get();
    std::vector<PortSpec> specs(kPorts);
    specs[kLearner].allowed_macs = {kGuestKey};
    specs[kLearner].guards.ip_learn = true;
    specs[kOtherLearner].allowed_macs = {kOtherKey};
    specs[kOtherLearner].guards.ip_learn = true;
    Configure(specs);
  }
  void TearDown() override {
    snoop_.reset();
    ForwarderTest::TearDown();
  }

  // What the control thread does after a burst: the copies read, the table rebuilt with
  // the bindings if they changed (a new table for the forwarder, as a publication is).
  void Snoop(uint32_t now) {
    const std::vector<const PortSpec*> specs = SpecSlots(specs_);
    const LearningPorts ports{specs, table_, datapath_};
    bool changed = false;
    rte_mbuf* copies[64];
    for (unsigned n; (n = snoop_->Drain(copies, 64)) != 0;) {
      for (unsigned i = 0; i < n; ++i) {
        rte_mbuf* m = copies[i];
        Bytes bytes(m->pkt_len);
        const auto* frame =
            static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, m->pkt_len, bytes.data()));
        ++offered_;
        if (SnoopedKind(m) == SnoopKind::kDhcp) {
          changed |= learning_.ApplyDhcp(frame, m->pkt_len, SnoopedPort(m),
                                         SnoopedFromEthdev(m), now, ports);
        } else if (SnoopedKind(m) == SnoopKind::kClaim) {
          changed |= learning_.ApplyClaim(frame, m->pkt_len, SnoopedPort(m), now, ports);
        }
        rte_pktmbuf_free(m);
      }
    }
    if (changed) Republish();
  }
  void Republish() {
    table_.Configure(specs_);
    learning_.WriteTo(table_);
    table_.Seal();
    // A new table for the forwarder: what it remembered of the old one's bindings goes.
    forwarder_ = std::make_unique<Forwarder>(datapath_, ForwarderOptions{}, counters_, *learn_);
  }
  // One frame from `in` (from `src`, to `dst`); whether it left the switch anywhere.
  bool Passes(uint16_t in, const Bytes& frame, uint64_t src, uint64_t dst = kBcast,
              uint32_t now = 0) {
    InjectRaw(in, {{frame, src, dst}}, now);
    Snoop(now);
    return !Collect(1)[0].empty();
  }
  uint64_t Events(LearnEvent e) { return learning_.Read().events[static_cast<size_t>(e)]; }
  std::vector<LearnedBinding> Bound(uint16_t port) { return learning_.Read().bindings[port]; }

  std::unique_ptr<SnoopQueue> snoop_;
  IpLearning learning_;
  uint64_t offered_ = 0;
};

TEST_F(IpLearnTest, ADhcpLeaseBindsItsAddressForTheLease) {
  EXPECT_FALSE(Passes(kLearner, Datagram("10.0.0.5"), kGuestKey)) << "nothing bound yet";
  EXPECT_TRUE(Passes(kLearner, UdpFrame("0.0.0.0", "255.255.255.255", 68, 67, Bytes(300)),
                     kGuestKey))
      << "a DHCP client may ask";
  EXPECT_TRUE(Passes(kServer, DhcpAck("10.0.0.5", 600), kServerMac, kGuestKey, 100));
  ASSERT_EQ(Bound(kLearner).size(), 1u);
  EXPECT_EQ(Bound(kLearner)[0].source, BindingSource::kDhcp);
  EXPECT_EQ(Bound(kLearner)[0].expires, 700u);
  EXPECT_TRUE(Passes(kLearner, Datagram("10.0.0.5"), kGuestKey));
  EXPECT_FALSE(Passes(kLearner, Datagram("10.0.0.6"), kGuestKey));
  // Renewed before its end, it lasts on; not renewed, it ends.
  EXPECT_TRUE(Passes(kServer, DhcpAck("10.0.0.5", 600), kServerMac, kGuestKey, 500));
  EXPECT_FALSE(learning_.Age(1099));
  EXPECT_TRUE(learning_.Age(1100));
  Republish();
  EXPECT_FALSE(Passes(kLearner, Datagram("10.0.0.5"), kGuestKey));
  EXPECT_EQ(Events(LearnEvent::kBound), 2u);
  // A lease running past the clock's range lasts until the port goes (not wrapped to an
  // end that has passed).
  EXPECT_TRUE(Passes(kServer, DhcpAck("10.0.0.9", 0xfffffff0u), kServerMac, kGuestKey, 2000));
  ASSERT_EQ(Bound(kLearner).size(), 1u);
  EXPECT_EQ(Bound(kLearner)[0].expires, 0u);
  EXPECT_FALSE(learning_.Age(0xfffffff0u));
}

TEST_F(IpLearnTest, LeasesOfOtherMacsAndALearnersOwnRepliesBindNothing) {
  // Both learners' MACs known (frames that are no IP), so that replies to them are unicast.
  Send(kLearner, {kGuestKey, kBcast});
  Send(kOtherLearner, {kOtherKey, kBcast});
  // Leased to kGuestMac, but sent to the other learner (whose MAC is kOtherKey).
  EXPECT_TRUE(Passes(kServer, DhcpAck("10.0.0.5"), kServerMac, kOtherKey));
  EXPECT_TRUE(Bound(kOtherLearner).empty());
  EXPECT_EQ(Events(LearnEvent::kForeignMac), 1u);
  // A learning port is no DHCP server: its reply is dropped where it came in.
  EXPECT_FALSE(Passes(kOtherLearner, DhcpAck("10.0.0.5"), kOtherKey, kGuestKey));
  EXPECT_EQ(RxDrops(kOtherLearner, RxDrop::kSpoofedIp), 1u);
  EXPECT_TRUE(Bound(kLearner).empty());
  // An ACK without a lease time binds nothing.
  const Bytes no_lease = UdpFrame(
      "10.0.0.1", "10.0.0.5", 67, 68,
      Bootp(2, "0.0.0.0", "10.0.0.5",
            testing::Concat({Option(53, {5}), Option(54, {10, 0, 0, 1}), {255}})));
  EXPECT_TRUE(Passes(kServer, no_lease, kServerMac, kGuestKey));
  EXPECT_EQ(Events(LearnEvent::kNoLease), 1u);
  EXPECT_TRUE(Bound(kLearner).empty());
}

TEST_F(IpLearnTest, TheFirstArpClaimsAnAddressNobodyHas) {
  // The first ARP is refused (nothing bound) and claims its sender; the next passes.
  EXPECT_FALSE(Passes(kLearner, ArpFrame(1, "10.0.0.7", "10.0.0.1"), kGuestKey));
  ASSERT_EQ(Bound(kLearner).size(), 1u);
  EXPECT_EQ(Bound(kLearner)[0].source, BindingSource::kArp);
  EXPECT_EQ(Bound(kLearner)[0].expires, 0u) << "until the port goes";
  EXPECT_TRUE(Passes(kLearner, ArpFrame(1, "10.0.0.7", "10.0.0.1"), kGuestKey));
  EXPECT_TRUE(Passes(kLearner, Datagram("10.0.0.7"), kGuestKey));
  // Another learner claiming it: taken, and its frames refused.
  Bytes other = ArpFrame(2, "10.0.0.7", "10.0.0.1");
  std::memcpy(other.data() + 22, testing::kOtherMac, 6);  // its sender hardware address
  EXPECT_FALSE(Passes(kOtherLearner, other, kOtherKey));
  EXPECT_EQ(Events(LearnEvent::kTaken), 1u);
  EXPECT_TRUE(Bound(kOtherLearner).empty());
  // A probe (from 0.0.0.0) passes, and claims what it probes.
  EXPECT_TRUE(Passes(kOtherLearner, [] {
    Bytes probe = ArpFrame(1, "0.0.0.0", "10.0.0.8");
    std::memcpy(probe.data() + 22, testing::kOtherMac, 6);
    return probe;
  }(), kOtherKey));
  ASSERT_EQ(Bound(kOtherLearner).size(), 1u);
  EXPECT_TRUE(Passes(kOtherLearner, Datagram("10.0.0.8"), kOtherKey));
}

TEST_F(IpLearnTest, AClaimForAnotherMacOrFromOneIsRefused) {
  // ARP from the port's MAC pointing the address at another MAC.
  Bytes pointing = ArpFrame(2, "10.0.0.7", "10.0.0.1");
  std::memcpy(pointing.data() + 22, testing::kOtherMac, 6);
  EXPECT_FALSE(Passes(kLearner, pointing, kGuestKey));
  EXPECT_EQ(Events(LearnEvent::kForeignMac), 1u);
  EXPECT_TRUE(Bound(kLearner).empty());
  // A static address elsewhere (ip= on a port sharing the VLAN) is taken too; a prefix
  // there (what that port may send from: a router's subnet) takes none of its addresses.
  specs_[3].guards.ips = {testing::Prefix("10.0.0.6"), testing::Prefix("10.0.1.0", 24)};
  Configure(specs_);
  EXPECT_FALSE(Passes(kLearner, ArpFrame(1, "10.0.0.6", "10.0.0.1"), kGuestKey));
  EXPECT_EQ(Events(LearnEvent::kTaken), 1u);
  EXPECT_TRUE(Bound(kLearner).empty());
  Passes(kLearner, ArpFrame(1, "10.0.1.9", "10.0.0.1"), kGuestKey);
  ASSERT_EQ(Bound(kLearner).size(), 1u);
}

TEST_F(IpLearnTest, NeighbourDiscoveryClaimsIpv6Addresses) {
  const Bytes dad = NdFrame(NdMessage(135, "fe80::a"), "::", "ff02::1:ff00:a");
  EXPECT_TRUE(Passes(kLearner, dad, kGuestKey)) << "duplicate address detection passes";
  ASSERT_EQ(Bound(kLearner).size(), 1u);
  EXPECT_EQ(Bound(kLearner)[0].source, BindingSource::kNd);
  const Bytes na = NdFrame(
      NdMessage(136, "fe80::a", LinkLayerOption(2, testing::kGuestMac), 0x20), "fe80::a");
  EXPECT_TRUE(Passes(kLearner, na, kGuestKey));
  // A neighbour solicitation from an address nobody has claims it.
  const Bytes ns =
      NdFrame(NdMessage(135, "2001:db8::1", LinkLayerOption(1, testing::kGuestMac)),
              "2001:db8::a", "ff02::1:ff00:1");
  EXPECT_FALSE(Passes(kLearner, ns, kGuestKey));
  EXPECT_EQ(Bound(kLearner).size(), 2u);
  EXPECT_TRUE(Passes(kLearner, ns, kGuestKey));
}

TEST_F(IpLearnTest, ALearningPortSendsNoDhcpServerMessagesEvenFromItsOwnAddress) {
  Passes(kLearner, ArpFrame(1, "10.0.0.7", "10.0.0.1"), kGuestKey);
  ASSERT_EQ(Bound(kLearner).size(), 1u);
  // From its bound address: a datagram passes, a DHCP server's message does not, also
  // in a run of alike frames (the four-frame path) and after a datagram set the cache.
  EXPECT_TRUE(Passes(kLearner, Datagram("10.0.0.7"), kGuestKey));
  const Bytes offer = UdpFrame("10.0.0.7", "255.255.255.255", 67, 68, Bytes(300));
  std::vector<RawFrame> burst = {{Datagram("10.0.0.7"), kGuestKey, kBcast}};
  for (int i = 0; i < 9; ++i) burst.push_back({offer, kGuestKey, kBcast});
  InjectRaw(kLearner, burst);
  Snoop(0);
  const auto out = Collect(burst.size());
  EXPECT_FALSE(out[0].empty());
  for (size_t i = 1; i < out.size(); ++i) EXPECT_TRUE(out[i].empty()) << "offer " << i;
  EXPECT_EQ(RxDrops(kLearner, RxDrop::kSpoofedIp), 1u + 9);  // the first ARP, the offers
  // Nor a relay's (from port 67 to 67), nor a reply to a client's port from any other.
  EXPECT_FALSE(Passes(kLearner, UdpFrame("10.0.0.7", "10.0.0.1", 67, 67, Bytes(300)), kGuestKey));
  EXPECT_FALSE(Passes(kLearner, UdpFrame("10.0.0.7", "10.0.0.9", 4000, 68, Bytes(300)), kGuestKey));
  EXPECT_TRUE(Passes(kLearner, UdpFrame("10.0.0.7", "10.0.0.1", 68, 67, Bytes(300)), kGuestKey))
      << "a client's request from its own address (a renewal)";
}

TEST_F(IpLearnTest, ALockedPortsFirstClaimTakesItsLock) {
  specs_[kLearner].allowed_macs.clear();
  specs_[kLearner].lock_mac = true;
  Configure(specs_);
  EXPECT_FALSE(Passes(kLearner, ArpFrame(1, "10.0.0.7", "10.0.0.1"), kGuestKey))
      << "refused: nothing bound yet";
  ASSERT_EQ(Bound(kLearner).size(), 1u) << "claimed for the MAC it locked the port to";
  EXPECT_EQ(Events(LearnEvent::kForeignMac), 0u);
  EXPECT_TRUE(Passes(kLearner, Datagram("10.0.0.7"), kGuestKey));
  // Another MAC on the locked port claims nothing.
  Bytes other = ArpFrame(1, "10.0.0.8", "10.0.0.1");
  std::memcpy(other.data() + 6, testing::kOtherMac, 6);
  std::memcpy(other.data() + 22, testing::kOtherMac, 6);
  EXPECT_FALSE(Passes(kLearner, other, kOtherKey));
  EXPECT_EQ(Bound(kLearner).size(), 1u);
}

TEST_F(IpLearnTest, ClaimsStopAtTheLimitLeasesDoNot) {
  const char* addresses[] = {"10.0.0.11", "10.0.0.12", "10.0.0.13", "10.0.0.14", "10.0.0.15"};
  for (const char* a : addresses) Passes(kLearner, ArpFrame(1, a, "10.0.0.1"), kGuestKey);
  EXPECT_EQ(Bound(kLearner).size(), kMaxLearnedIps);
  EXPECT_EQ(Events(LearnEvent::kLimit), 1u);
  EXPECT_FALSE(Passes(kLearner, Datagram("10.0.0.15"), kGuestKey));
  EXPECT_TRUE(Passes(kServer, DhcpAck("10.0.0.15"), kServerMac, kGuestKey));
  EXPECT_TRUE(Passes(kLearner, Datagram("10.0.0.15"), kGuestKey)) << "a lease is on top";
}

TEST_F(IpLearnTest, ALeaseMovesAnAddressAPortThatGoesForgetsItsOwn) {
  Bytes claim = ArpFrame(1, "10.0.0.5", "10.0.0.1");
  std::memcpy(claim.data() + 22, testing::kOtherMac, 6);
  Passes(kOtherLearner, claim, kOtherKey);
  ASSERT_EQ(Bound(kOtherLearner).size(), 1u);
  // The server leases 10.0.0.5 to the learner: the other port's claim is over.
  EXPECT_TRUE(Passes(kServer, DhcpAck("10.0.0.5"), kServerMac, kGuestKey));
  EXPECT_TRUE(Bound(kOtherLearner).empty());
  EXPECT_TRUE(Passes(kLearner, Datagram("10.0.0.5"), kGuestKey));
  EXPECT_FALSE(Passes(kOtherLearner, [] {
    Bytes b = Datagram("10.0.0.5");
    return b;
  }(), kOtherKey));
  EXPECT_TRUE(learning_.PortGone(kLearner));
  Republish();
  EXPECT_FALSE(Passes(kLearner, Datagram("10.0.0.5"), kGuestKey));
  EXPECT_FALSE(learning_.PortGone(kLearner));
}

TEST_F(IpLearnTest, AGuestSprayingClaimsGetsAFewAMillisecond) {
  std::vector<RawFrame> spray;
  for (int i = 0; i < 64; ++i) {
    const std::string a = "10.1.0." + std::to_string(i + 1);
    spray.push_back({ArpFrame(1, a.c_str(), "10.0.0.1"), kGuestKey, kBcast});
  }
  InjectRaw(kLearner, spray);
  Snoop(0);
  Collect(spray.size());
  EXPECT_LE(offered_, kSnoopBurst + 4) << "its burst, and one more a millisecond";
  EXPECT_EQ(counters_.ports[kLearner][PortCounter::kSnoopLimited].Read(), 64 - offered_);
  EXPECT_EQ(RxDrops(kLearner, RxDrop::kSpoofedIp), 64u) << "bound after their burst";
  EXPECT_EQ(Bound(kLearner).size(), kMaxLearnedIps);
}

// Random bursts on ports of random VLANs, some with ip=, some learning (mac= their own
// MAC), links going down: IPv4 and ARP from bound, unbound and others' addresses, now and
// then from a MAC the port may not use, beside frames of other EtherTypes; every frame
// leaves where the reference model says, and the learned addresses are the model's.
TEST_F(IpLearnTest, MatchesReferenceModelOnRandomBursts) {
  std::mt19937_64 rng(23);
  const uint32_t ips[] = {0x0100000a, 0x0200000a, 0x0300000a, 0x0400000a};  // 10.0.0.1-4
  std::array<uint64_t, kPorts> macs;
  for (uint16_t p = 0; p < kPorts; ++p) macs[p] = 0x0000000002 | uint64_t(0x10 + p) << 40;
  for (int config = 0; config < 8; ++config) {
    std::vector<PortSpec> specs(kPorts);
    for (uint16_t p = 0; p < kPorts; ++p) {
      PortSpec& spec = specs[p];
      if (rng() % 2) spec.access_vlan = static_cast<uint16_t>(1 + rng() % 2);
      switch (rng() % 3) {
        case 0: break;
        case 1: {
          IpPrefix prefix;
          const uint32_t addr = ips[rng() % std::size(ips)];
          std::memcpy(prefix.addr.data(), &addr, 4);
          spec.guards.ips.push_back(prefix);
          break;
        }
        case 2:
          spec.guards.ip_learn = true;
          spec.allowed_macs = {macs[p]};
          break;
      }
    }
    counters_.~WorkerCounters();
    new (&counters_) WorkerCounters();
    fdb_ = *Fdb::Create(name_ + "fdb" + std::to_string(config), 1 << 12);
    datapath_.fdb = fdb_.get();
    Configure(specs, Unmetered());
    for (uint16_t p = 0; p < kPorts; ++p) learning_.PortGone(p);
    std::vector<model::PortConfig> configs;
    for (const PortSpec& spec : specs) configs.push_back(ModelConfig(spec));
    model::BridgeModel model(configs);
    uint64_t up = 0xf;
    datapath_.up_mask.store(up);
    for (int round = 0; round < 200; ++round) {
      if (rng() % 25 == 0) {  // a port goes down: its MACs, and what it learned, go
        const uint16_t p = static_cast<uint16_t>(rng() % kPorts);
        up &= ~(uint64_t{1} << p);
        datapath_.up_mask.store(up);
        learner_->PortDown(p);
        model.Flush(p);
        if (learning_.PortGone(p)) Republish();
        learner_->Poll(0);
      } else if (rng() % 25 == 0) {
        up = 0xf;
        datapath_.up_mask.store(up);
      }
      const uint16_t in = static_cast<uint16_t>(rng() % kPorts);
      std::vector<TestFrame> frames(1 + rng() % 12);
      std::vector<model::Frame> model_frames;
      for (TestFrame& f : frames) {
        f = {};
        f.src = rng() % 8 == 0 ? macs[(in + 1) % kPorts] : macs[in];
        f.dst = rng() % 3 == 0 ? kBcast : macs[rng() % kPorts];
        f.tag = specs[in].access_vlan != 0 ? -1 : static_cast<int>(rng() % 3) - 1;
        switch (rng() % 3) {
          case 0: break;  // EtherType 0x88b5: nothing ip= looks at
          case 1: f.ipv4_src = ips[rng() % std::size(ips)]; break;
          case 2:
            f.ipv4_src = ips[rng() % std::size(ips)];
            f.arp = true;
            break;
        }
        model::Frame mf{f.src, f.dst, f.tag, f.payload};
        mf.ip4 = f.ipv4_src;
        mf.arp = f.arp;
        model_frames.push_back(mf);
      }
      const std::vector<model::Result> expected = model.ForwardBurst(in, model_frames, up);
      const std::vector<std::vector<model::Copy>> got = RunBurst(in, frames);
      Snoop(0);
      for (size_t i = 0; i < frames.size(); ++i) {
        ASSERT_EQ(got[i], expected[i].copies)
            << "config " << config << " round " << round << " frame " << i << " from " << in
            << " " << specs[in].ToString() << " ip " << std::hex << frames[i].ipv4_src
            << " arp " << frames[i].arp << " src " << frames[i].src << std::dec << " up "
            << up;
      }
    }
    for (uint16_t p = 0; p < kPorts; ++p) {
      std::set<uint32_t> bound;
      for (const LearnedBinding& b : Bound(p)) {
        uint32_t addr;
        std::memcpy(&addr, b.address.addr.data(), 4);
        bound.insert(addr);
      }
      EXPECT_EQ(bound, model.LearnedIps(p)) << "config " << config << " port " << p;
    }
  }
}

}  // namespace
}  // namespace hvswitch
