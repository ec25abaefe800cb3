// IGMP/MLD snooping through the Forwarder over net_ring ports, the test playing the
// control thread: the copies the workers queue read by McastSnooping, its table published
// after each burst. Real IGMP and MLD messages (tests/snoop_frames.h): unknown groups flood
// until joined, reports go to router ports only, queries flood and make routers,
// link-local groups and ff02::1 always flood, memberships per VLAN, groups sharing a MAC,
// leaves, ageing, ports going, mrouter=1, a full queue; and random bursts of joins, leaves,
// queries and data held against the reference model.
#include <rte_mbuf.h>

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <vector>

#include "switch/control/mcast_snooping.h"
#include "switch/datapath/mac_key.h"
#include "switch/datapath/snoop_queue.h"
#include "tests/integration/forwarder_fixture.h"
#include "tests/snoop_frames.h"

namespace hvswitch {
namespace {

using testing::Bytes;
using testing::IgmpFrame;
using testing::IgmpMessage;
using testing::Igmpv3Report;
using testing::MldFrame;
using testing::Mldv2Report;
using testing::Record;

// Group MACs (FDB key layout) of the groups the tests use.
uint64_t Mac(std::initializer_list<uint8_t> bytes) {
  uint8_t mac[6];
  std::copy(bytes.begin(), bytes.end(), mac);
  return MacKey(0, mac);
}
const uint64_t kG1 = Mac({0x01, 0x00, 0x5e, 0x01, 0x01, 0x01});   // 239.1.1.1, 239.129.1.1
const uint64_t kG2 = Mac({0x01, 0x00, 0x5e, 0x01, 0x01, 0x02});   // 239.1.1.2
const uint64_t kMdns = Mac({0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb});  // 224.0.0.251
const uint64_t kV3Reports = Mac({0x01, 0x00, 0x5e, 0x00, 0x00, 0x16});  // 224.0.0.22
const uint64_t kAllHosts = Mac({0x01, 0x00, 0x5e, 0x00, 0x00, 0x01});   // 224.0.0.1
const uint64_t kG6 = Mac({0x33, 0x33, 0x00, 0x01, 0x00, 0x03});   // ff05::1:3
const uint64_t kAllNodes = Mac({0x33, 0x33, 0x00, 0x00, 0x00, 0x01});  // ff02::1
const uint64_t kMldReports = Mac({0x33, 0x33, 0x00, 0x00, 0x00, 0x16});  // ff02::16

constexpr uint8_t kModeIsExclude = 2, kChangeToInclude = 3;

Bytes Join(const char* group) { return IgmpFrame(Igmpv3Report({{kModeIsExclude, group}})); }
Bytes Leave(const char* group) { return IgmpFrame(Igmpv3Report({{kChangeToInclude, group}})); }
Bytes Query(const char* source = "10.0.0.1") {
  return IgmpFrame(IgmpMessage(0x11, 100, "0.0.0.0"), source, "224.0.0.1");
}

class McastTest : public ForwarderTest {
 protected:
  void SetUp() override {
    ForwarderTest::SetUp();
    snoop_ = *SnoopQueue::Create(name_ + "snoop", 64);
    datapath_.snoop = snoop_.get();
    snooping_ = std::make_unique<McastSnooping>(kDefaultMcastAging);
    Publish();
  }
  void TearDown() override {
    datapath_.mcast.store(nullptr);
    snoop_.reset();
    ForwarderTest::TearDown();
  }

  // What the control thread does: the queued copies read, the table published.
  void Snoop(uint32_t now = 0) {
    rte_mbuf* copies[64];
    for (unsigned n; (n = snoop_->Drain(copies, 64)) != 0;) {
      for (unsigned i = 0; i < n; ++i) {
        Bytes bytes(copies[i]->pkt_len);
        const auto* frame = static_cast<const uint8_t*>(
            rte_pktmbuf_read(copies[i], 0, copies[i]->pkt_len, bytes.data()));
        snooping_->Apply(frame, copies[i]->pkt_len, SnoopedPort(copies[i]),
                         SnoopedVlan(copies[i]), now);
        rte_pktmbuf_free(copies[i]);
      }
    }
    Publish();
  }
  void Publish() {
    std::unique_ptr<McastTable> next = snooping_->Table();
    datapath_.mcast.store(next.get());
    table_in_use_ = std::move(next);  // the test's worker is between bursts
  }

  // `frame` from port `in` with its MACs set (and a tag of `tag`, -1: none), then learning
  // and snooping; the ports it left by.
  std::vector<model::Copy> SendBytes(uint16_t in, Bytes frame, uint64_t src, uint64_t dst,
                                     int tag = -1, uint32_t now = 0) {
    return BurstOfBytes(in, {{frame, src, dst, tag}}, now)[0];
  }
  std::vector<std::vector<model::Copy>> BurstOfBytes(uint16_t in,
                                                     const std::vector<RawFrame>& raws,
                                                     uint32_t now = 0) {
    InjectRaw(in, raws, now);
    Snoop(now);
    return Collect(raws.size());
  }
  // A data frame (not IP: never a message) from `in` to a group MAC.
  std::vector<model::Copy> Data(uint16_t in, uint64_t src, uint64_t group, int tag = -1) {
    return Send(in, {src, group, tag});
  }

  std::unique_ptr<SnoopQueue> snoop_;
  std::unique_ptr<McastSnooping> snooping_;
  std::unique_ptr<McastTable> table_in_use_;
};

TEST_F(McastTest, UnknownGroupsFloodUntilJoinedThenOnlyMembersGetThem) {
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1, 2, 3}));
  // A report with no router port goes nowhere (the switch has read it).
  EXPECT_EQ(SendBytes(1, Join("239.1.1.1"), kB, kV3Reports), Copies{});
  EXPECT_EQ(RxDrops(1, RxDrop::kNoDestination), 1u);
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1}));
  EXPECT_EQ(Data(0, kA, kG2), Untagged({1, 2, 3})) << "another group: unknown, flooded";
  EXPECT_EQ(Data(1, kB, kG1), Copies{}) << "its only member is the sender";
  EXPECT_EQ(RxDrops(1, RxDrop::kNoDestination), 2u);
  EXPECT_EQ(SendBytes(2, Join("239.1.1.1"), kC, kV3Reports), Copies{});
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1, 2}));
}

TEST_F(McastTest, QueriesFloodAndMakeRoutersThatGetReportsAndEveryGroup) {
  EXPECT_EQ(SendBytes(3, Query(), kC, kAllHosts), Untagged({0, 1, 2}));
  EXPECT_EQ(SendBytes(1, Join("239.1.1.1"), kB, kV3Reports), Untagged({3}))
      << "a report goes to the router only: the other listeners must not hear it";
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1, 3}));
  EXPECT_EQ(Data(3, kC, kG1), Untagged({1}));
  // A querier at 0.0.0.0 (a snooping switch's) is no router.
  EXPECT_EQ(SendBytes(2, Query("0.0.0.0"), kB, kAllHosts), Untagged({0, 1, 3}));
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1, 3}));
  const McastSnapshot snap = snooping_->Snapshot(0);
  EXPECT_EQ(snap.queries, 2u);
  EXPECT_EQ(snap.reports, 1u);
  ASSERT_EQ(snap.routers.size(), 1u);
  EXPECT_EQ(snap.routers[0].port, 3);
}

TEST_F(McastTest, ALeaveEndsTheMembershipAtOnce) {
  SendBytes(1, Join("239.1.1.1"), kB, kV3Reports);
  SendBytes(2, Join("239.1.1.1"), kC, kV3Reports);
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1, 2}));
  SendBytes(1, Leave("239.1.1.1"), kB, kV3Reports);
  EXPECT_EQ(Data(0, kA, kG1), Untagged({2}));
  // IGMPv2's leave, to 224.0.0.2.
  SendBytes(2, IgmpFrame(IgmpMessage(0x17, 0, "239.1.1.1"), "10.0.0.7", "224.0.0.2"), kC,
            Mac({0x01, 0x00, 0x5e, 0x00, 0x00, 0x02}));
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1, 2, 3})) << "no member left: unknown again";
}

TEST_F(McastTest, LinkLocalGroupsAndAllNodesAlwaysFlood) {
  SendBytes(1, Join("224.0.0.251"), kB, kV3Reports);
  EXPECT_EQ(Data(0, kA, kMdns), Untagged({1, 2, 3}));
  // 239.0.0.251 shares mDNS's MAC: not snooped, or mDNS would reach its members only.
  SendBytes(1, Join("239.0.0.251"), kB, kV3Reports);
  EXPECT_EQ(Data(0, kA, kMdns), Untagged({1, 2, 3}));
  SendBytes(1, MldFrame(Mldv2Report({{kModeIsExclude, "ff15::1"}})), kB, kMldReports);
  SendBytes(1, MldFrame(Mldv2Report({{kModeIsExclude, "ff02::1"}})), kB, kMldReports);
  EXPECT_EQ(Data(0, kA, kAllNodes), Untagged({1, 2, 3}));
  EXPECT_TRUE(snooping_->Snapshot(0).groups.empty());
}

TEST_F(McastTest, SolicitedNodeGroupsAlwaysFlood) {
  const uint64_t solicited = Mac({0x33, 0x33, 0xff, 0x00, 0x00, 0x05});  // ff02::1:ff00:5
  SendBytes(1, MldFrame(Mldv2Report({{kModeIsExclude, "ff02::1:ff00:5"}})), kB, kMldReports);
  EXPECT_EQ(Data(0, kA, solicited), Untagged({1, 2, 3}))
      << "neighbour solicitations reach every port, reported or not";
  EXPECT_TRUE(snooping_->Snapshot(0).groups.empty());
}

TEST_F(McastTest, AGuestPortsQueriesMakeItNoRouter) {
  SendBytes(3, Query(), kC, kAllHosts);
  EXPECT_EQ(SendBytes(1, Join("239.1.1.1"), kB, kV3Reports), Untagged({3}));
  // Port 3 turns out a guest's (the bridge tells so when ports come and go): what it
  // learned as a router goes, and its queries make it none.
  EXPECT_TRUE(snooping_->SetGuestPorts(uint64_t{1} << 3));
  EXPECT_FALSE(snooping_->SetGuestPorts(uint64_t{1} << 3));
  Publish();
  EXPECT_EQ(SendBytes(3, Query(), kC, kAllHosts), Untagged({0, 1, 2})) << "still flooded";
  EXPECT_EQ(SendBytes(1, Join("239.1.1.1"), kB, kV3Reports), Copies{});
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1})) << "not drawn to the querying guest";
  EXPECT_EQ(snooping_->Snapshot(0).guest_querier, 1u);
  // mrouter=1 makes a router of it all the same.
  EXPECT_TRUE(snooping_->SetStaticRouters(uint64_t{1} << 3));
  Publish();
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1, 3}));
}

// What changes the workers' table, and only that, is reported: a refreshed membership or
// router is not.
TEST_F(McastTest, ApplySaysWhetherMembersOrRoutersChanged) {
  const Bytes join = Join("239.1.1.1"), leave = Leave("239.1.1.1"), query = Query();
  auto apply = [&](const Bytes& frame, uint16_t port) {
    return snooping_->Apply(frame.data(), static_cast<uint32_t>(frame.size()), port, 0, 0);
  };
  EXPECT_TRUE(apply(join, 1));
  EXPECT_FALSE(apply(join, 1));
  EXPECT_TRUE(apply(join, 2));
  EXPECT_TRUE(apply(leave, 1));
  EXPECT_FALSE(apply(leave, 1));
  EXPECT_TRUE(apply(query, 3));
  EXPECT_FALSE(apply(query, 3));
  EXPECT_FALSE(apply(Bytes(30, 0), 3)) << "no message";
}

// A port joins at most kMaxMcastPortMemberships groups, the switch snoops at most
// kMaxMcastGroups: joins beyond are counted and change nothing; a leave makes room.
TEST_F(McastTest, MembershipsAndGroupsAreBounded) {
  // Reports of 64 records each, group 239.X.Y.Z counting up.
  auto groups = [](uint32_t first) {
    static std::vector<std::string> names;
    names.clear();
    for (uint32_t g = first; g < first + 64; ++g) {
      names.push_back("239." + std::to_string(g >> 16 & 0xff) + "." +
                      std::to_string(g >> 8 & 0xff) + "." + std::to_string(g & 0xff));
    }
    std::vector<testing::Record> records;
    for (const std::string& name : names) records.push_back({kModeIsExclude, name.c_str()});
    return IgmpFrame(Igmpv3Report(records));
  };
  auto apply = [&](const Bytes& frame, uint16_t port) {
    return snooping_->Apply(frame.data(), static_cast<uint32_t>(frame.size()), port, 0, 0);
  };
  for (uint32_t first = 0; first < kMaxMcastPortMemberships; first += 64) {
    EXPECT_TRUE(apply(groups(0x10000 + first), 1));
  }
  EXPECT_FALSE(apply(groups(0x10000 + kMaxMcastPortMemberships), 1));
  EXPECT_EQ(snooping_->Snapshot(0).port_limit, 64u);
  EXPECT_TRUE(apply(Leave("239.1.0.0"), 1));
  EXPECT_TRUE(apply(Join("239.1.1.0"), 1)) << "room again";
  // Other ports, each as full, fill the table.
  for (uint16_t port = 2; snooping_->Snapshot(0).groups.size() < kMaxMcastGroups; ++port) {
    for (uint32_t n = 0; n < kMaxMcastPortMemberships; n += 64) {
      apply(groups(0x20000 + port * kMaxMcastPortMemberships + n), port);
    }
  }
  const McastSnapshot full = snooping_->Snapshot(0);
  EXPECT_EQ(full.groups.size(), kMaxMcastGroups);
  EXPECT_EQ(full.table_full, 0u);
  EXPECT_FALSE(apply(Join("239.200.0.1"), 40));
  EXPECT_EQ(snooping_->Snapshot(0).table_full, 1u);
  EXPECT_TRUE(apply(Join("239.1.0.1"), 41)) << "a group snooped already takes members";
  EXPECT_TRUE(snooping_->PortGone(1));
  EXPECT_TRUE(apply(Join("239.200.0.1"), 40)) << "its groups gone, there is room";
}

TEST_F(McastTest, MldJoinsAndLeavesAsIgmpDoes) {
  EXPECT_EQ(SendBytes(2, MldFrame(Mldv2Report({{kModeIsExclude, "ff05::1:3"}})), kC,
                      kMldReports),
            Copies{});
  EXPECT_EQ(Data(0, kA, kG6), Untagged({2}));
  // MLDv1's done.
  SendBytes(2, MldFrame(testing::Mldv1(132, "ff05::1:3"), "fe80::5", "ff02::2"), kC,
            Mac({0x33, 0x33, 0x00, 0x00, 0x00, 0x02}));
  EXPECT_EQ(Data(0, kA, kG6), Untagged({1, 2, 3}));
}

TEST_F(McastTest, MembershipsAreThoseOfTheirVlan) {
  std::vector<PortSpec> specs(kPorts);
  specs[0].trunk_vlans = {5, 6};
  specs[1].access_vlan = 5;
  specs[2].access_vlan = 5;
  specs[3].access_vlan = 6;
  Configure(specs);
  SendBytes(1, Join("239.1.1.1"), kB, kV3Reports);  // in VLAN 5
  EXPECT_EQ(Data(0, kA, kG1, 5), Untagged({1}));
  EXPECT_EQ(Data(0, kA, kG1, 6), Untagged({3})) << "VLAN 6: unknown there, flooded";
  // A tagged report from the trunk joins in its tag's VLAN.
  SendBytes(0, Join("239.1.1.2"), kA, kV3Reports, 6);
  EXPECT_EQ(Data(3, kC, kG2), (Copies{{0, 6}}));
  EXPECT_EQ(Data(2, kC, kG2), (Copies{{0, 5}, {1, -1}})) << "VLAN 5: unknown, flooded";
}

TEST_F(McastTest, GroupsSharingAMacShareTheirMembers) {
  SendBytes(1, Join("239.1.1.1"), kB, kV3Reports);
  SendBytes(2, Join("239.129.1.1"), kC, kV3Reports);  // the same MAC, 01:00:5e:01:01:01
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1, 2}));
  SendBytes(2, Leave("239.129.1.1"), kC, kV3Reports);
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1}));
  EXPECT_EQ(snooping_->Snapshot(0).groups.size(), 1u);
}

TEST_F(McastTest, MembershipsAndRoutersAgeAndGoWithTheirPort) {
  SendBytes(3, Query(), kC, kAllHosts, -1, 100);
  SendBytes(1, Join("239.1.1.1"), kB, kV3Reports, -1, 100);
  SendBytes(2, Join("239.1.1.2"), kA, kV3Reports, -1, 200);
  EXPECT_FALSE(snooping_->Age(100 + kDefaultMcastAging - 1));
  EXPECT_TRUE(snooping_->Age(100 + kDefaultMcastAging));  // 1's and the router
  Publish();
  EXPECT_EQ(Data(0, kC, kG1), Untagged({1, 2, 3}));
  EXPECT_EQ(Data(0, kC, kG2), Untagged({2}));
  EXPECT_TRUE(snooping_->PortGone(2));
  Publish();
  EXPECT_EQ(Data(0, kC, kG2), Untagged({1, 2, 3}));
  EXPECT_FALSE(snooping_->PortGone(2));
}

TEST_F(McastTest, StaticRouterPortsGetEveryGroupAndTheReports) {
  EXPECT_TRUE(snooping_->SetStaticRouters(uint64_t{1} << 3));
  Publish();
  EXPECT_EQ(SendBytes(1, Join("239.1.1.1"), kB, kV3Reports), Untagged({3}));
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1, 3}));
  EXPECT_FALSE(snooping_->SetStaticRouters(uint64_t{1} << 3));
}

TEST_F(McastTest, APortBeyondItsBudgetIsCountedAndStillForwarded) {
  std::vector<RawFrame> reports(64, RawFrame{Join("239.1.1.1"), kB, kV3Reports, -1});
  SendBytes(3, Query(), kC, kAllHosts);
  for (const auto& out : BurstOfBytes(1, reports)) EXPECT_EQ(out, Untagged({3}));
  const uint64_t limited = counters_.ports[1][PortCounter::kSnoopLimited].Read();
  // Its burst read, and what the bucket earned meanwhile (one a millisecond).
  EXPECT_LE(limited, 64 - kSnoopBurst);
  EXPECT_GE(limited, 64 - kSnoopBurst - 4);
  EXPECT_EQ(snooping_->Snapshot(0).reports, 64 - limited);
  EXPECT_EQ(counters_[CoreCounter::kSnoopQueueDrops].Read(), 0u);
  EXPECT_EQ(counters_.ports[3][PortCounter::kSnoopLimited].Read(), 0u) << "the querier's own";
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1, 3}));
}

TEST_F(McastTest, MessagesTheQueueCannotTakeAreCountedAndStillForwarded) {
  // 64 in the ring (63 usable), two ports' budgets' worth offered before it is drained.
  std::vector<RawFrame> reports(kSnoopBurst,
                                RawFrame{Join("239.1.1.1"), kB, kV3Reports, -1});
  SendBytes(3, Query(), kC, kAllHosts);
  InjectRaw(1, reports);
  for (const auto& out : Collect(reports.size())) EXPECT_EQ(out, Untagged({3}));
  for (RawFrame& r : reports) r = {Join("239.1.1.2"), kA, kV3Reports, -1};
  InjectRaw(2, reports);
  for (const auto& out : Collect(reports.size())) EXPECT_EQ(out, Untagged({3}));
  Snoop();
  EXPECT_EQ(counters_[CoreCounter::kSnoopQueueDrops].Read(), 1u);
  EXPECT_EQ(snooping_->Snapshot(0).reports, 2 * kSnoopBurst - 1);
  EXPECT_EQ(Data(0, kA, kG1), Untagged({1, 3}));
}

// Random bursts on ports of random VLANs (plain, access, trunk), up and down, of data,
// queries (from routers and from 0.0.0.0), joins and leaves of four groups (two sharing a
// MAC, one link-local) and broadcasts: every frame leaves as the model says, and what
// snooping learned is what the model did.
TEST_F(McastTest, MatchesReferenceModelOnRandomBursts) {
  std::mt19937_64 rng(11);
  const std::map<int, uint64_t> group_macs = {{0, kG1}, {1, kG1}, {2, kG2}};
  const char* const group_ips[] = {"239.1.1.1", "239.129.1.1", "239.1.1.2", "224.0.0.251"};
  const uint64_t dsts[] = {kG1, kG2, kMdns, kAllHosts, kBcast};
  const uint64_t srcs[] = {0x0a0000000102, 0x0b0000000102, 0x0c0000000102, 0x0d0000000102};
  for (int config = 0; config < 6; ++config) {
    std::vector<PortSpec> specs(kPorts);
    for (PortSpec& s : specs) {
      switch (rng() % 3) {
        case 0: break;
        case 1: s.access_vlan = static_cast<uint16_t>(1 + rng() % 2); break;
        case 2: s.trunk_vlans = {1, 2}; break;
      }
    }
    counters_.~WorkerCounters();
    new (&counters_) WorkerCounters();
    Configure(specs, Unmetered());
    snooping_ = std::make_unique<McastSnooping>(kDefaultMcastAging);
    Publish();
    std::vector<model::PortConfig> configs;
    for (const PortSpec& s : specs) configs.push_back(ModelConfig(s));
    model::BridgeModel model(configs);
    model.SetSnooping(group_macs);
    uint64_t up = 0xf;
    for (int round = 0; round < 300; ++round) {
      if (rng() % 20 == 0) {  // ports go down (their memberships and routers with them)
        up = rng() & 0xf;
        datapath_.up_mask.store(up);
        for (uint16_t p = 0; p < kPorts; ++p) {
          if (!((up >> p) & 1)) {
            snooping_->PortGone(p);
            model.PortGone(p);
          }
        }
        Publish();
      }
      const uint16_t in = static_cast<uint16_t>(rng() % kPorts);
      const model::PortConfig& pc = configs[in];
      std::vector<RawFrame> raws;
      std::vector<model::Frame> frames;
      for (size_t i = 1 + rng() % 8; i > 0; --i) {
        model::Frame f{srcs[in], dsts[rng() % std::size(dsts)]};
        f.tag = pc.access != 0 ? -1 : pc.trunk.empty() ? -1 : static_cast<int>(1 + rng() % 2);
        Bytes bytes;
        switch (rng() % 4) {
          case 0: {
            f.mcast = model::McastKind::kQuery;
            f.router = rng() % 3 != 0;
            bytes = Query(f.router ? "10.0.0.1" : "0.0.0.0");
            break;
          }
          case 1:
          case 2: {
            f.group = static_cast<int>(rng() % 4);
            const bool join = rng() % 3 != 0;
            f.mcast = join ? model::McastKind::kJoin : model::McastKind::kLeave;
            bytes = join ? Join(group_ips[f.group]) : Leave(group_ips[f.group]);
            break;
          }
          default:
            bytes = Bytes(60, 0);  // data: EtherType 0, nothing snooping reads
            break;
        }
        if (f.dst == kBcast) f.mcast = model::McastKind::kData;  // broadcasts are not read
        frames.push_back(f);
        raws.push_back({bytes, f.src, f.dst, f.tag});
      }
      std::vector<model::Result> expected = model.ForwardBurst(in, frames, up);
      std::vector<std::vector<model::Copy>> got = BurstOfBytes(in, raws);
      for (size_t i = 0; i < frames.size(); ++i) {
        ASSERT_EQ(got[i], expected[i].copies)
            << "config " << config << " round " << round << " frame " << i << " from " << in
            << " kind " << static_cast<int>(frames[i].mcast) << " group " << frames[i].group
            << " dst " << std::hex << frames[i].dst << std::dec << " up " << up;
      }
    }
    // What snooping knows, as the model does.
    for (int vlan = 0; vlan <= 2; ++vlan) {
      for (uint64_t mac : {kG1, kG2}) {
        uint64_t members = 0;
        std::set<uint16_t> want = model.Members(vlan, mac);
        const bool known = table_in_use_->Find(uint64_t{static_cast<uint16_t>(vlan)} << 48 | mac,
                                               members);
        EXPECT_EQ(known, !want.empty()) << "config " << config << " vlan " << vlan;
        for (uint16_t p : want) EXPECT_TRUE((members >> p) & 1) << "port " << p;
        EXPECT_EQ(static_cast<size_t>(__builtin_popcountll(members)), want.size());
      }
    }
    datapath_.up_mask.store(0xf);
  }
}

}  // namespace
}  // namespace hvswitch
