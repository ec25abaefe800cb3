// LinkEvents: a device's link change reaches the workers' up mask at once, from the
// thread DPDK reports it on.
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <vector>
#include <string>

#include "switch/control/link_events.h"
#include "switch/control/wakeup.h"
#include "switch/datapath/datapath.h"

namespace hvswitch {
namespace {

TEST(LinkEventsTest, UpSetsThePortsBitDownClearsItWithItsOffloads) {
  Datapath datapath;
  LinkEvents events(datapath);
  events.Map(5, 3);
  constexpr uint64_t kBit = uint64_t{1} << 3;
  datapath.up_mask.store(0b1);
  events.OnLinkChange(5, true);
  EXPECT_EQ(datapath.up_mask.load(), 0b1 | kBit);
  EXPECT_TRUE(events.TakePending());
  EXPECT_FALSE(events.TakePending());
  // What the control thread had found the guest to take.
  datapath.csum_capable_mask.store(kBit | 0b1);
  datapath.tso4_capable_mask.store(kBit);
  datapath.tso6_capable_mask.store(kBit);
  events.OnLinkChange(5, false);
  EXPECT_EQ(datapath.up_mask.load(), 0b1u);
  EXPECT_EQ(datapath.csum_capable_mask.load(), 0b1u);
  EXPECT_EQ(datapath.tso4_capable_mask.load(), 0u);
  EXPECT_EQ(datapath.tso6_capable_mask.load(), 0u);
  EXPECT_TRUE(events.TakePending());
  // An ethdev that is no bridge port (any more): nothing but a look by the control thread.
  events.Map(5, -1);
  events.OnLinkChange(5, true);
  events.OnLinkChange(7, true);
  EXPECT_EQ(datapath.up_mask.load(), 0b1u);
  EXPECT_TRUE(events.TakePending());
}

// Every event wakes the control thread, which follows the links in full at once.
TEST(LinkEventsTest, EveryEventRingsTheControlThreadsWakeup) {
  Datapath datapath;
  std::unique_ptr<Wakeup> wakeup = *Wakeup::Create();
  LinkEvents events(datapath, wakeup->fd());
  events.Map(2, 1);
  std::vector<pollfd> none;
  EXPECT_FALSE(wakeup->Wait(none, ControlClock::now()));
  events.OnLinkChange(2, true);
  EXPECT_TRUE(wakeup->Wait(none, ControlClock::time_point::max()));
  EXPECT_TRUE(events.TakePending());
  events.OnLinkChange(9, false);  // no bridge port: still a look
  EXPECT_TRUE(wakeup->Wait(none, ControlClock::time_point::max()));
  EXPECT_FALSE(wakeup->Wait(none, ControlClock::now()));
}

// A real device: a vhost-user port (started with link-state interrupts, as ports are)
// whose guest, a virtio-user device in this process, connects and goes away. The vhost
// library reports both on its own thread; the bit follows without anyone polling.
TEST(LinkEventsTest, AVhostUserGuestComingAndGoingMovesTheBit) {
  Datapath datapath;
  LinkEvents events(datapath);
  char dir[] = "/tmp/hvs-link-events-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string sock = std::string(dir) + "/vhost.sock";
  rte_mempool* pool = rte_pktmbuf_pool_create("link_events_pool", 1023, 0, 0,
                                              RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  ASSERT_NE(pool, nullptr);
  auto start = [&](const std::string& devargs, const char* name, bool lsc) {
    EXPECT_EQ(rte_dev_probe(devargs.c_str()), 0) << devargs;
    uint16_t id = 0;
    EXPECT_EQ(rte_eth_dev_get_port_by_name(name, &id), 0) << name;
    rte_eth_conf conf{};
    conf.intr_conf.lsc = lsc;
    EXPECT_EQ(rte_eth_dev_configure(id, 1, 1, &conf), 0);
    EXPECT_EQ(rte_eth_rx_queue_setup(id, 0, 256, 0, nullptr, pool), 0);
    EXPECT_EQ(rte_eth_tx_queue_setup(id, 0, 256, 0, nullptr), 0);
    EXPECT_EQ(rte_eth_dev_start(id), 0);
    return id;
  };
  auto remove = [](uint16_t id) {
    rte_eth_dev_info info{};
    ASSERT_EQ(rte_eth_dev_info_get(id, &info), 0);
    rte_eth_dev_stop(id);
    rte_eth_dev_close(id);
    rte_dev_remove(info.device);
  };
  auto wait_for = [](auto&& done) {
    const uint64_t deadline = rte_get_timer_cycles() + 10 * rte_get_timer_hz();
    while (!done() && rte_get_timer_cycles() < deadline) rte_delay_ms(1);
    return done();
  };
  const uint16_t vhost = start("net_vhost_le,iface=" + sock, "net_vhost_le", true);
  events.Map(vhost, 9);
  constexpr uint64_t kBit = uint64_t{1} << 9;
  EXPECT_EQ(datapath.up_mask.load() & kBit, 0u);
  const uint16_t guest =
      start("net_virtio_user_le,path=" + sock, "net_virtio_user_le", false);
  EXPECT_TRUE(wait_for([&] { return (datapath.up_mask.load() & kBit) != 0; }))
      << "no link-up event from the vhost port";
  EXPECT_TRUE(events.TakePending());
  remove(guest);
  EXPECT_TRUE(wait_for([&] { return (datapath.up_mask.load() & kBit) == 0; }))
      << "no link-down event from the vhost port";
  events.Map(vhost, -1);
  remove(vhost);

  // memif (DPDK 22.11) reports no link events ("does not support lsc"): the bridge looks
  // at its link every control poll instead.
  rte_mempool_free(pool);
  unlink(sock.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace hvswitch
