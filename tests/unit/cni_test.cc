// hvswitch-cni without a daemon (switch/cni/): the runtime's environment and configuration
// parsed with every error the spec names, the error object, the results per version and
// with prevResult, and port names and specs that hvswitch's own parser accepts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "ports/port_spec.h"
#include "switch/cni/cni_error.h"
#include "switch/cni/cni_request.h"
#include "switch/cni/cni_result.h"
#include "switch/cni/port_naming.h"

namespace hvswitch::cni {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr char kId[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

json BaseConf() {
  return {{"cniVersion", "1.0.0"}, {"name", "hvs-net"}, {"type", "hvswitch-cni"},
          {"portType", "vhost-user"}};
}

std::map<std::string, std::string> BaseEnv(const char* command = "ADD") {
  return {{"CNI_COMMAND", command}, {"CNI_CONTAINERID", kId},
          {"CNI_NETNS", "/var/run/netns/pod"}, {"CNI_IFNAME", "net1"},
          {"CNI_PATH", "/usr/lib/cni"}};
}

Environment EnvOf(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

// The CNI code of a failed parse; 0 when it succeeded.
int CodeOfConf(const json& conf) {
  absl::StatusOr<NetConf> parsed = ParseNetConf(conf.dump());
  return parsed.ok() ? 0 : CodeOf(parsed.status());
}

int CodeOfRequest(const std::map<std::string, std::string>& env, const json& conf = BaseConf()) {
  absl::StatusOr<Request> parsed = ParseRequest(EnvOf(env), conf.dump());
  return parsed.ok() ? 0 : CodeOf(parsed.status());
}

json With(json conf, const std::string& key, json value) {
  conf[key] = std::move(value);
  return conf;
}

TEST(CniCommand, FromEnvironment) {
  EXPECT_EQ(*ParseCommand(EnvOf({{"CNI_COMMAND", "ADD"}})), Command::kAdd);
  EXPECT_EQ(*ParseCommand(EnvOf({{"CNI_COMMAND", "DEL"}})), Command::kDel);
  EXPECT_EQ(*ParseCommand(EnvOf({{"CNI_COMMAND", "CHECK"}})), Command::kCheck);
  EXPECT_EQ(*ParseCommand(EnvOf({{"CNI_COMMAND", "VERSION"}})), Command::kVersion);
  for (const auto& env : {std::map<std::string, std::string>{},
                          std::map<std::string, std::string>{{"CNI_COMMAND", ""}},
                          std::map<std::string, std::string>{{"CNI_COMMAND", "add"}},
                          std::map<std::string, std::string>{{"CNI_COMMAND", "GC"}}}) {
    absl::StatusOr<Command> command = ParseCommand(EnvOf(env));
    ASSERT_FALSE(command.ok());
    EXPECT_EQ(CodeOf(command.status()), kInvalidEnvironment);
  }
}

TEST(CniConf, EveryKey) {
  json conf = BaseConf();
  conf["portType"] = "memif";
  conf["socketDir"] = "/run/pods/";
  conf["controlSocket"] = "/run/hvs/hvswitch.ctl";
  conf["vlan"] = 10;
  conf["mtu"] = 9000;
  conf["mac"] = "02:AB:00:00:00:01";
  conf["portKeys"] = {{"lock", true}, {"client", false}, {"quota", 4096},
                      {"police_pps", "10k"}, {"ip", "10.0.0.0/24"}};
  conf["prevResult"] = {{"cniVersion", "1.0.0"}, {"interfaces", json::array()}};
  conf["someOtherPluginsKey"] = {1, 2, 3};  // ignored, as the spec lets plugins do
  absl::StatusOr<NetConf> parsed = ParseNetConf(conf.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->cni_version, "1.0.0");
  EXPECT_EQ(parsed->name, "hvs-net");
  EXPECT_EQ(parsed->port_type, "memif");
  EXPECT_EQ(parsed->socket_dir, "/run/pods");  // the trailing slash dropped
  EXPECT_EQ(parsed->control_socket, "/run/hvs/hvswitch.ctl");
  EXPECT_EQ(parsed->vlan, 10);
  EXPECT_EQ(parsed->mtu, 9000);
  EXPECT_EQ(parsed->mac, "02:ab:00:00:00:01");
  // nlohmann's objects iterate in key order.
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"client", "0"}, {"ip", "10.0.0.0/24"}, {"lock", "1"}, {"police_pps", "10k"},
      {"quota", "4096"}};
  EXPECT_EQ(parsed->port_keys, keys);
  ASSERT_TRUE(parsed->prev_result.has_value());
  EXPECT_EQ((*parsed->prev_result)["cniVersion"], "1.0.0");
}

TEST(CniConf, Defaults) {
  absl::StatusOr<NetConf> parsed = ParseNetConf(BaseConf().dump());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->socket_dir, "/run/hvswitch/cni");
  EXPECT_EQ(parsed->control_socket, "");  // the client's default: /run/hvswitch/hvswitch.ctl
  EXPECT_EQ(parsed->vlan, 0);
  EXPECT_FALSE(parsed->mtu.has_value());
  EXPECT_EQ(parsed->mac, "");
  EXPECT_TRUE(parsed->port_keys.empty());
  EXPECT_FALSE(parsed->prev_result.has_value());
  // null and {} ipam mean none.
  EXPECT_EQ(CodeOfConf(With(BaseConf(), "ipam", nullptr)), 0);
  EXPECT_EQ(CodeOfConf(With(BaseConf(), "ipam", json::object())), 0);
  EXPECT_EQ(CodeOfConf(With(BaseConf(), "prevResult", nullptr)), 0);
}

TEST(CniConf, EveryVersionItSpeaks) {
  for (const char* version : {"0.3.0", "0.3.1", "0.4.0", "1.0.0"}) {
    EXPECT_EQ(CodeOfConf(With(BaseConf(), "cniVersion", version)), 0) << version;
  }
  for (json version : {json("0.1.0"), json("0.2.0"), json("1.1.0"), json("2.0.0"), json(""),
                       json(1)}) {
    EXPECT_EQ(CodeOfConf(With(BaseConf(), "cniVersion", version)), kIncompatibleVersion)
        << version;
  }
  json none = BaseConf();
  none.erase("cniVersion");
  absl::StatusOr<NetConf> parsed = ParseNetConf(none.dump());
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(CodeOf(parsed.status()), kIncompatibleVersion);
  EXPECT_THAT(DetailsOf(parsed.status()), HasSubstr("1.0.0"));
}

TEST(CniConf, DecodingFailures) {
  for (const char* text : {"", "{", "[]", "\"text\"", "42", "{\"cniVersion\": }"}) {
    absl::StatusOr<NetConf> parsed = ParseNetConf(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(CodeOf(parsed.status()), kDecodingFailure) << text;
  }
}

TEST(CniConf, InvalidConfigurations) {
  json no_type = BaseConf();
  no_type.erase("portType");
  json no_name = BaseConf();
  no_name.erase("name");
  const std::vector<json> bad = {
      no_type, no_name,
      With(BaseConf(), "name", 7),
      With(BaseConf(), "portType", "tap"),
      With(BaseConf(), "portType", "VHOST-USER"),
      With(BaseConf(), "vlan", 4095),
      With(BaseConf(), "vlan", -1),
      With(BaseConf(), "vlan", "10"),
      With(BaseConf(), "vlan", 10.5),
      With(BaseConf(), "mtu", 67),
      With(BaseConf(), "mtu", 9001),
      With(BaseConf(), "mac", "ff:ff:ff:ff:ff:ff"),
      With(BaseConf(), "mac", "01:00:5e:00:00:01"),
      With(BaseConf(), "mac", "00:00:00:00:00:00"),
      With(BaseConf(), "mac", "02:00:00:00:00"),
      With(BaseConf(), "mac", "02-00-00-00-00-01"),
      With(BaseConf(), "socketDir", "run/x"),
      With(BaseConf(), "socketDir", "/"),
      With(BaseConf(), "socketDir", "/run/../etc"),
      With(BaseConf(), "socketDir", "/run/./x"),
      With(BaseConf(), "socketDir", "/run//x"),
      With(BaseConf(), "socketDir", "/run/my dir"),
      With(BaseConf(), "socketDir", "/run/a,b"),
      With(BaseConf(), "controlSocket", "hvswitch.ctl"),
      With(BaseConf(), "portKeys", json::array({"lock"})),
      With(BaseConf(), "portKeys", {{"path", "/etc/passwd"}}),
      With(BaseConf(), "portKeys", {{"type", "dpdk"}}),
      With(BaseConf(), "portKeys", {{"name", "other"}}),
      With(BaseConf(), "portKeys", {{"zero_copy", true}}),
      With(BaseConf(), "portKeys", {{"vlan", 3}}),
      With(BaseConf(), "portKeys", {{"lock", "1,path=/etc/x"}}),
      With(BaseConf(), "portKeys", {{"lock", "1 path=/etc/x"}}),
      With(BaseConf(), "portKeys", {{"quota", "a=b"}}),
      With(BaseConf(), "portKeys", {{"quota", ""}}),
      With(BaseConf(), "portKeys", {{"quota", 1.5}}),
      With(BaseConf(), "portKeys", {{"quota", nullptr}}),
      With(BaseConf(), "portKeys", {{"Lock", 1}}),
      With(BaseConf(), "portKeys", {{"lo ck", 1}}),
      With(BaseConf(), "prevResult", "not an object"),
      With(BaseConf(), "runtimeConfig", {{"mac", "ff:ff:ff:ff:ff:ff"}}),
  };
  for (const json& conf : bad) {
    EXPECT_EQ(CodeOfConf(conf), kInvalidNetworkConfig) << conf.dump();
  }
}

TEST(CniConf, IpamIsAnUnsupportedField) {
  absl::StatusOr<NetConf> parsed =
      ParseNetConf(With(BaseConf(), "ipam", {{"type", "host-local"}}).dump());
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(CodeOf(parsed.status()), kUnsupportedField);
}

TEST(CniRequest, Environment) {
  absl::StatusOr<Request> request =
      ParseRequest(EnvOf(BaseEnv()), With(BaseConf(), "vlan", 7).dump());
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->command, Command::kAdd);
  EXPECT_EQ(request->container_id, kId);
  EXPECT_EQ(request->netns, "/var/run/netns/pod");
  EXPECT_EQ(request->ifname, "net1");
  EXPECT_EQ(request->conf.vlan, 7);
  EXPECT_TRUE(request->args.empty());

  auto without = [](const char* command, const char* var) {
    std::map<std::string, std::string> env = BaseEnv(command);
    env.erase(var);
    return env;
  };
  auto with = [](const char* var, const char* value) {
    std::map<std::string, std::string> env = BaseEnv();
    env[var] = value;
    return env;
  };
  for (const char* command : {"ADD", "DEL", "CHECK"}) {
    EXPECT_EQ(CodeOfRequest(without(command, "CNI_CONTAINERID")), kInvalidEnvironment);
    EXPECT_EQ(CodeOfRequest(without(command, "CNI_IFNAME")), kInvalidEnvironment);
    // CNI_PATH is only for plugins that call others.
    EXPECT_EQ(CodeOfRequest(without(command, "CNI_PATH")), 0) << command;
  }
  EXPECT_EQ(CodeOfRequest(without("ADD", "CNI_NETNS")), kInvalidEnvironment);
  EXPECT_EQ(CodeOfRequest(without("CHECK", "CNI_NETNS")), kInvalidEnvironment);
  EXPECT_EQ(CodeOfRequest(without("DEL", "CNI_NETNS")), 0);
  for (const char* id : {"", "../x", "-leading", ".hidden", "a/b", "a b", "a;b"}) {
    EXPECT_EQ(CodeOfRequest(with("CNI_CONTAINERID", id)), kInvalidEnvironment) << id;
  }
  for (const char* ifname : {"", ".", "..", "a/b", "a:b", "a b", "sixteen-chars-xx"}) {
    EXPECT_EQ(CodeOfRequest(with("CNI_IFNAME", ifname)), kInvalidEnvironment) << ifname;
  }
  EXPECT_EQ(CodeOfRequest(with("CNI_ARGS", "IgnoreUnknown=1;NOVALUE")), kInvalidEnvironment);
  EXPECT_EQ(CodeOfRequest(with("CNI_ARGS", "=x")), kInvalidEnvironment);
  EXPECT_EQ(CodeOfRequest(with("CNI_ARGS", "MAC=ff:ff:ff:ff:ff:ff")), kInvalidEnvironment);
  EXPECT_EQ(CodeOfRequest(with("CNI_COMMAND", "STATUS")), kInvalidEnvironment);
  // The configuration's errors keep their codes in a whole request.
  EXPECT_EQ(CodeOfRequest(BaseEnv(), With(BaseConf(), "cniVersion", "0.2.0")),
            kIncompatibleVersion);
  EXPECT_EQ(CodeOfRequest(BaseEnv(), With(BaseConf(), "vlan", 5000)), kInvalidNetworkConfig);
}

TEST(CniRequest, CheckNeedsVersionZeroFour) {
  EXPECT_EQ(CodeOfRequest(BaseEnv("CHECK"), With(BaseConf(), "cniVersion", "0.3.1")),
            kIncompatibleVersion);
  EXPECT_EQ(CodeOfRequest(BaseEnv("CHECK"), With(BaseConf(), "cniVersion", "0.4.0")), 0);
  EXPECT_EQ(CodeOfRequest(BaseEnv("ADD"), With(BaseConf(), "cniVersion", "0.3.1")), 0);
}

TEST(CniRequest, Args) {
  absl::StatusOr<std::map<std::string, std::string>> args =
      ParseCniArgs("IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_UID=abc-1;;EMPTY=");
  ASSERT_TRUE(args.ok()) << args.status();
  const std::map<std::string, std::string> expected = {
      {"IgnoreUnknown", "1"}, {"K8S_POD_NAMESPACE", "default"}, {"K8S_POD_UID", "abc-1"},
      {"EMPTY", ""}};
  EXPECT_EQ(*args, expected);
  EXPECT_TRUE(ParseCniArgs("").ok());
}

TEST(CniRequest, MacPrecedence) {
  std::map<std::string, std::string> env = BaseEnv();
  env["CNI_ARGS"] = "MAC=02:00:00:00:00:AA";
  // CNI_ARGS over the configuration...
  absl::StatusOr<Request> request =
      ParseRequest(EnvOf(env), With(BaseConf(), "mac", "02:00:00:00:00:01").dump());
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->conf.mac, "02:00:00:00:00:aa");
  // ...and the runtime's capability over both.
  request = ParseRequest(
      EnvOf(env), With(BaseConf(), "runtimeConfig", {{"mac", "02:00:00:00:00:BB"}}).dump());
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->conf.mac, "02:00:00:00:00:bb");
}

TEST(CniRequest, Names) {
  EXPECT_TRUE(IsValidContainerId(kId));
  EXPECT_TRUE(IsValidContainerId("pod_1.a-b"));
  EXPECT_FALSE(IsValidContainerId("_x"));
  EXPECT_TRUE(IsValidInterfaceName("net1"));
  EXPECT_TRUE(IsValidInterfaceName("fifteen-chars-x"));
  EXPECT_FALSE(IsValidInterfaceName("a\tb"));
  EXPECT_EQ(NormalizeUnicastMac("02:AB:cd:00:00:01"), "02:ab:cd:00:00:01");
  EXPECT_EQ(NormalizeUnicastMac("03:00:00:00:00:01"), std::nullopt);
  EXPECT_EQ(NormalizeUnicastMac("02:00:00:00:00:0g"), std::nullopt);
  EXPECT_EQ(NormalizeUnicastMac("002:00:00:00:00:01"), std::nullopt);
}

TEST(CniVersion, OfInput) {
  EXPECT_EQ(VersionOf(R"({"cniVersion": "0.4.0"})"), "0.4.0");
  EXPECT_EQ(VersionOf(R"({"cniVersion": 4})"), "");
  EXPECT_EQ(VersionOf("garbage"), "");
  EXPECT_EQ(VersionOf(""), "");
}

TEST(CniError, Json) {
  absl::Status status = Error(kInvalidNetworkConfig, "bad vlan", "1-4094");
  EXPECT_EQ(CodeOf(status), 7);
  EXPECT_EQ(ErrorJson(status, "0.4.0"),
            json({{"cniVersion", "0.4.0"}, {"code", 7}, {"msg", "bad vlan"},
                  {"details", "1-4094"}}));
  // No details: no key.
  EXPECT_EQ(ErrorJson(Error(kTryAgainLater, "later"), "1.0.0"),
            json({{"cniVersion", "1.0.0"}, {"code", 11}, {"msg", "later"}}));
  // A status made without a CNI code is the plugin's generic failure.
  EXPECT_EQ(CodeOf(absl::InternalError("x")), kInternal);
  EXPECT_EQ(ErrorJson(absl::InternalError("x"), "1.0.0")["code"], 999);
  // The spec's well-known codes keep their numbers.
  EXPECT_EQ(kIncompatibleVersion, 1);
  EXPECT_EQ(kUnsupportedField, 2);
  EXPECT_EQ(kUnknownContainer, 3);
  EXPECT_EQ(kInvalidEnvironment, 4);
  EXPECT_EQ(kIoFailure, 5);
  EXPECT_EQ(kDecodingFailure, 6);
  EXPECT_EQ(kInvalidNetworkConfig, 7);
  EXPECT_EQ(kTryAgainLater, 11);
  for (int code : {kPortMissing, kPortDiffers, kSwitchRefused}) EXPECT_GE(code, 100);
}

TEST(CniNaming, PortNameIsFixedAndValid) {
  // Written down: a name that changed between builds would lose every pod's port at DEL.
  // (tests/e2e/test_cni.py computes it again from the definition.)
  EXPECT_EQ(PortName(kId, "net1"), "cni-0123456789ab-e3b4ffd9");
  std::set<std::string> names;
  for (int pod = 0; pod < 200; ++pod) {
    // Ids sharing their first 12 characters, as test runtimes' ids do.
    const std::string id = absl::StrCat("0123456789ab-pod-", pod);
    for (const char* ifname : {"net1", "net2", "eth0", "fifteen-chars-x", "a.b_c-d"}) {
      const std::string name = PortName(id, ifname);
      EXPECT_TRUE(IsValidPortName(name)) << name;
      EXPECT_EQ(name.size(), 25u);
      names.insert(name);
    }
  }
  EXPECT_EQ(names.size(), 1000u);
  // Short ids too; the separator keeps (ab, c) and (a, bc) apart.
  EXPECT_TRUE(IsValidPortName(PortName("a", "n")));
  EXPECT_NE(PortName("ab", "c"), PortName("a", "bc"));
}

Request RequestFor(const std::map<std::string, std::string>& args = {}) {
  Request request;
  request.container_id = kId;
  request.ifname = "net1";
  request.netns = "/var/run/netns/pod";
  request.args = args;
  request.conf = *ParseNetConf(BaseConf().dump());
  return request;
}

TEST(CniNaming, Folders) {
  EXPECT_EQ(PodDir(RequestFor()), absl::StrCat("/run/hvswitch/cni/", kId));
  EXPECT_EQ(*SocketPath(RequestFor()), absl::StrCat("/run/hvswitch/cni/", kId, "/net1.sock"));
  const char* uid = "0c9bd1f4-57a5-4d53-9a5d-3b0c0c4c1e29";
  EXPECT_EQ(PodDir(RequestFor({{"K8S_POD_UID", uid}})), absl::StrCat("/run/hvswitch/cni/", uid));
  // A UID that could leave the folder is not used.
  EXPECT_EQ(PodDir(RequestFor({{"K8S_POD_UID", "../../etc"}})),
            absl::StrCat("/run/hvswitch/cni/", kId));
  EXPECT_EQ(PodDir(RequestFor({{"K8S_POD_UID", ""}})), absl::StrCat("/run/hvswitch/cni/", kId));
  // The longest default path still fits a UNIX socket; a long socketDir does not.
  Request longest = RequestFor();
  longest.ifname = "fifteen-chars-x";
  EXPECT_TRUE(SocketPath(longest).ok());
  longest.conf.socket_dir = "/run/hvswitch/a-much-longer-folder-for-the-cni-sockets";
  absl::StatusOr<std::string> path = SocketPath(longest);
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(CodeOf(path.status()), kInvalidNetworkConfig);
}

TEST(CniNaming, SpecsParseInHvswitch) {
  json conf = BaseConf();
  conf["vlan"] = 10;
  conf["mtu"] = 9000;
  conf["mac"] = "02:00:00:00:00:01";
  conf["portKeys"] = {{"quota", 4096}, {"police_pps", "10k"}, {"tx_retries", 0}};
  for (const char* type : {"vhost-user", "memif"}) {
    conf["portType"] = type;
    const NetConf parsed = *ParseNetConf(conf.dump());
    const std::string name = PortName(kId, "net1");
    const std::string text = PortSpecText(parsed, name, "/run/hvswitch/cni/x/net1.sock");
    EXPECT_EQ(text, absl::StrCat(name, ",type=", type, ",path=/run/hvswitch/cni/x/net1.sock,"
                                 "vlan=10,mtu=9000,mac=02:00:00:00:00:01,police_pps=10k,"
                                 "quota=4096,tx_retries=0"));
    absl::StatusOr<PortSpec> spec = ParsePortSpec(text);
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(spec->name, name);
    EXPECT_EQ(spec->type_name(), type);
    EXPECT_EQ(spec->access_vlan, 10);
    EXPECT_EQ(spec->mtu, 9000);
    EXPECT_EQ(spec->quota, 4096u);
    EXPECT_EQ(spec->allowed_macs.size(), 1u);
  }
  // Without the optional keys: name, type and path alone.
  EXPECT_EQ(PortSpecText(*ParseNetConf(BaseConf().dump()), "p", "/s"), "p,type=vhost-user,path=/s");
}

TEST(CniResult, Version) {
  const json version = VersionJson();
  EXPECT_EQ(version["cniVersion"], "1.0.0");
  EXPECT_EQ(version["supportedVersions"], json({"0.3.0", "0.3.1", "0.4.0", "1.0.0"}));
}

TEST(CniResult, AloneAndChained) {
  Request request = RequestFor();
  request.conf.mac = "02:00:00:00:00:01";
  const json alone = AddResult(request, "/run/hvswitch/cni/x/net1.sock");
  EXPECT_EQ(alone, json({{"cniVersion", "1.0.0"},
                         {"interfaces", {{{"name", "net1"},
                                          {"mac", "02:00:00:00:00:01"},
                                          {"sandbox", "/var/run/netns/pod"},
                                          {"socketPath", "/run/hvswitch/cni/x/net1.sock"}}}}}));
  // After another plugin: its interfaces, IPs (their indexes), routes and DNS stay; ours
  // comes last.
  request.conf.prev_result = json::parse(R"({
      "cniVersion": "1.0.0",
      "interfaces": [{"name": "eth0", "sandbox": "/var/run/netns/pod"}],
      "ips": [{"address": "10.1.0.5/24", "gateway": "10.1.0.1", "interface": 0}],
      "routes": [{"dst": "0.0.0.0/0"}],
      "dns": {"nameservers": ["10.1.0.1"]}})");
  json chained = AddResult(request, "/s");
  ASSERT_EQ(chained["interfaces"].size(), 2u);
  EXPECT_EQ(chained["interfaces"][0]["name"], "eth0");
  EXPECT_EQ(chained["interfaces"][1]["socketPath"], "/s");
  EXPECT_EQ(chained["ips"], (*request.conf.prev_result)["ips"]);
  EXPECT_EQ(chained["routes"], (*request.conf.prev_result)["routes"]);
  EXPECT_EQ(chained["dns"], (*request.conf.prev_result)["dns"]);
  EXPECT_TRUE(FindInterface(chained, "net1", "/var/run/netns/pod").has_value());
  EXPECT_FALSE(FindInterface(chained, "net1", "/var/run/netns/other").has_value());
  EXPECT_FALSE(FindInterface(json::object(), "net1", "/var/run/netns/pod").has_value());
  EXPECT_FALSE(FindInterface(json({{"interfaces", "x"}}), "net1", "").has_value());
}

TEST(CniResult, IpVersionsPerSpecVersion) {
  const json ips = json::parse(R"({"ips": [{"address": "10.1.0.5/24"},
                                           {"address": "fd00::5/64", "version": "6"},
                                           "garbage"]})");
  const json old = ConvertResult(ips, "0.4.0");
  EXPECT_EQ(old["cniVersion"], "0.4.0");
  EXPECT_EQ(old["ips"][0]["version"], "4");
  EXPECT_EQ(old["ips"][1]["version"], "6");
  const json now = ConvertResult(old, "1.0.0");
  EXPECT_FALSE(now["ips"][0].contains("version"));
  EXPECT_FALSE(now["ips"][1].contains("version"));
  EXPECT_EQ(now["ips"][2], "garbage");
}

}  // namespace
}  // namespace hvswitch::cni
