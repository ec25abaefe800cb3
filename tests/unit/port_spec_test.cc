#include "ports/port_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ports/port.h"

namespace hvswitch {
namespace {

using ::testing::HasSubstr;

TEST(PortSpecTest, VhostUserWithEveryKey) {
  absl::StatusOr<PortSpec> spec =
      ParsePortSpec("vm1,type=vhost-user,path=/run/x/vm1.sock,client=1,queues=4");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "vm1");
  EXPECT_EQ(spec->type, PortType::kVhostUser);
  EXPECT_EQ(spec->path, "/run/x/vm1.sock");
  EXPECT_TRUE(spec->client);
  EXPECT_EQ(spec->queues, 4);
  EXPECT_FALSE(spec->OwnsSocket());  // QEMU owns a client-mode socket
}

TEST(PortSpecTest, VhostUserDefaultsToServerWithOneQueue) {
  absl::StatusOr<PortSpec> spec = ParsePortSpec("vm1,type=vhost-user,path=/s");
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->client);
  EXPECT_EQ(spec->queues, 1);
  EXPECT_TRUE(spec->OwnsSocket());
}

TEST(PortSpecTest, Memif) {
  absl::StatusOr<PortSpec> spec = ParsePortSpec("m0,type=memif,path=/run/m.sock,id=7");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->type, PortType::kMemif);
  EXPECT_EQ(spec->memif_id, 7u);
  EXPECT_TRUE(spec->OwnsSocket());
}

TEST(PortSpecTest, DpdkDevargsTakenVerbatimWithCommas) {
  absl::StatusOr<PortSpec> spec =
      ParsePortSpec("up0,type=dpdk,devargs=net_af_packet0,iface=eth1,qpairs=2");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->devargs, "net_af_packet0,iface=eth1,qpairs=2");
  EXPECT_FALSE(spec->OwnsSocket());
}

TEST(PortSpecTest, RoundTripsThroughToString) {
  for (const char* text : {"vm1,type=vhost-user,path=/a,client=1,queues=2",
                           "m,type=memif,path=/b,id=3", "n,type=dpdk,devargs=net_tap0,iface=x"}) {
    absl::StatusOr<PortSpec> spec = ParsePortSpec(text);
    ASSERT_TRUE(spec.ok());
    EXPECT_EQ(spec->ToString(), text);
  }
}

struct BadSpec {
  const char* text;
  const char* message;
};

class BadPortSpecTest : public ::testing::TestWithParam<BadSpec> {};

TEST_P(BadPortSpecTest, RejectedWithOneLineNamingPortAndProblem) {
  absl::StatusOr<PortSpec> spec = ParsePortSpec(GetParam().text);
  ASSERT_FALSE(spec.ok());
  std::string message(spec.status().message());
  EXPECT_THAT(message, HasSubstr(GetParam().message));
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadPortSpecTest,
    ::testing::Values(
        BadSpec{"p1,type=foo,path=/s", "port 'p1': unknown type 'foo'"},
        BadSpec{"p1,type=memif,path=/s,colour=red", "port 'p1': unknown key 'colour'"},
        BadSpec{"p1,type=vhost-user", "port 'p1': missing path="},
        BadSpec{"p1,type=memif", "port 'p1': missing path="},
        BadSpec{"p1,type=vhost-user,path=", "port 'p1': empty path"},
        BadSpec{"p1,path=/s", "port 'p1': missing type="},
        BadSpec{"p1,type=dpdk", "port 'p1': missing devargs="},
        BadSpec{"p1,type=dpdk,devargs=", "port 'p1': missing devargs="},
        BadSpec{"p1,type=vhost-user,path=/s,queues=0", "queues must be"},
        BadSpec{"p1,type=vhost-user,path=/s,queues=99", "queues must be"},
        BadSpec{"p1,type=vhost-user,path=/s,client=yes", "client must be 0 or 1"},
        BadSpec{"p1,type=vhost-user,path=/s,path=/t", "key 'path' given twice"},
        BadSpec{"p1,type=memif,path=/s,client=1", "'client' does not apply to type memif"},
        BadSpec{"p1,type=vhost-user,path=/s,id=2", "'id' does not apply"},
        BadSpec{"p1,type=dpdk,path=/s,devargs=net_null0", "'path' does not apply"},
        BadSpec{"p1,type=memif,path=/s,id=x", "id must be"},
        BadSpec{",type=memif,path=/s", "name must be"},
        BadSpec{"bad name,type=memif,path=/s", "name must be"}));

TEST(PortDevargsTest, EachTypeMapsToItsPmd) {
  PortSpec vhost = *ParsePortSpec("vm1,type=vhost-user,path=/r/vm1.sock,client=1");
  EXPECT_EQ(PortDevargs(vhost, 3, 1),
            "net_vhost3,iface=/r/vm1.sock,queues=1,client=1,legacy-ol-flags=0");
  PortSpec memif = *ParsePortSpec("m,type=memif,path=/r/m.sock,id=2");
  EXPECT_EQ(PortDevargs(memif, 0, 1),
            "net_memif0,role=server,socket=/r/m.sock,socket-abstract=no,id=2");
  PortSpec dpdk = *ParsePortSpec("n,type=dpdk,devargs=net_tap0,iface=hvs0");
  EXPECT_EQ(PortDevargs(dpdk, 0, 1), "net_tap0,iface=hvs0");
}

TEST(PortDevargsTest, RecognisesPciAddresses) {
  EXPECT_TRUE(IsPciDevargs("0000:03:00.0"));
  EXPECT_TRUE(IsPciDevargs("03:00.1"));
  EXPECT_TRUE(IsPciDevargs("0000:af:00.0,rxq_cqe_comp_en=0"));
  EXPECT_FALSE(IsPciDevargs("net_tap0,iface=x"));
  EXPECT_FALSE(IsPciDevargs("net_af_packet0,iface=eth1"));
}

}  // namespace
}  // namespace hvswitch
