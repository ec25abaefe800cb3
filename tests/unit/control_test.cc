// The control plane against hostile local callers: the control socket (descriptors,
// bytes, slow readers, hoarded connections), the policy of what a --ctl_group member may
// do, the commands' answers for any bytes, and files written whole.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "switch/control/command_handlers.h"
#include "switch/control/control_policy.h"
#include "switch/control/control_socket.h"
#include "switch/control/wakeup.h"
#include "switch/datapath/mac_key.h"
#include "switch/protocol/atomic_file.h"
#include "tests/stub_bridge.h"

namespace hvswitch {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

class TempDir {
 public:
  TempDir() {
    std::string path = "/tmp/hvs-control-XXXXXX";
    dir_ = mkdtemp(path.data());
  }
  ~TempDir() { std::filesystem::remove_all(dir_); }
  std::string operator/(const std::string& name) const { return dir_ + "/" + name; }
  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
};

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

size_t OpenFds() {
  size_t n = 0;
  for ([[maybe_unused]] auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// --- WriteFileAtomically ---------------------------------------------------------------

TEST(AtomicFileTest, WritesAndKeepsTheTargetsMode) {
  TempDir dir;
  const std::string path = dir / "conf";
  ASSERT_TRUE(WriteFileAtomically(path, "one\n").ok());
  EXPECT_EQ(Read(path), "one\n");
  struct stat st{};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  // A root-only file stays root-only (it used to come back 0644).
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "two\n").ok());
  EXPECT_EQ(Read(path), "two\n");
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // No temporary file is left beside it.
  size_t entries = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST(AtomicFileTest, PlantedTmpSymlinkIsNotFollowed) {
  TempDir dir;
  const std::string victim = dir / "victim";
  { std::ofstream(victim) << "secret\n"; }
  // The old writer wrote FILE.tmp, following a symlink someone planted there.
  ASSERT_EQ(symlink(victim.c_str(), (dir / "conf.tmp").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(dir / "conf", "config\n").ok());
  EXPECT_EQ(Read(victim), "secret\n");
  EXPECT_EQ(Read(dir / "conf"), "config\n");
}

TEST(AtomicFileTest, SymlinkAtThePathIsReplacedNotItsTarget) {
  TempDir dir;
  const std::string victim = dir / "victim";
  { std::ofstream(victim) << "secret\n"; }
  ASSERT_EQ(symlink(victim.c_str(), (dir / "conf").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(dir / "conf", "config\n").ok());
  EXPECT_EQ(Read(victim), "secret\n");
  struct stat st{};
  ASSERT_EQ(lstat((dir / "conf").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

TEST(AtomicFileTest, FifoAtThePathDoesNotBlock) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "conf").c_str(), 0600), 0);
  // Opening the FIFO for writing would wait for a reader for ever.
  ASSERT_TRUE(WriteFileAtomically(dir / "conf", "config\n").ok());
  EXPECT_EQ(Read(dir / "conf"), "config\n");
}

TEST(AtomicFileTest, MissingDirectoryIsAnError) {
  absl::Status status = WriteFileAtomically("/nonexistent-dir/conf", "x");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("/nonexistent-dir/conf"));
}

// --- ControlPolicy ---------------------------------------------------------------------

PortSpec Guest(const std::string& path, absl::string_view type = "vhost-user") {
  PortSpec spec;
  spec.name = std::string("g");  // not = "g": GCC 12 -O3 false -Wrestrict (PR 105329)
  spec.driver = FindPortDriver(type);
  spec.driver_keys.Set("path", path);
  return spec;
}

TEST(ControlPolicyTest, DirectlyInside) {
  TempDir dir;
  ASSERT_EQ(mkdir((dir / "run").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((dir / "other").c_str(), 0755), 0);
  ASSERT_EQ(symlink((dir / "other").c_str(), (dir / "run/link").c_str()), 0);
  const std::string run = dir / "run";
  EXPECT_TRUE(IsDirectlyInside(run + "/vm.sock", run));
  EXPECT_TRUE(IsDirectlyInside(run + "/./vm.sock", run));
  EXPECT_FALSE(IsDirectlyInside(run + "/../other/vm.sock", run));
  EXPECT_FALSE(IsDirectlyInside(run + "/link/vm.sock", run));  // a symlinked directory
  EXPECT_FALSE(IsDirectlyInside(run + "/sub/vm.sock", run));
  EXPECT_FALSE(IsDirectlyInside(run + "/..", run));
  EXPECT_FALSE(IsDirectlyInside(run + "/", run));
  EXPECT_FALSE(IsDirectlyInside("vm.sock", run));
  EXPECT_FALSE(IsDirectlyInside(dir / "other/vm.sock", run));
}

TEST(ControlPolicyTest, GroupMembersManageGuestPortsInTheRuntimeDirectoryOnly) {
  TempDir dir;
  const ControlPolicy policy{dir.path(), dir / "hvswitch.ctl"};
  const ControlRole root = ControlRole::kRoot, member = ControlRole::kGroupMember;

  EXPECT_TRUE(policy.MayManagePort(member, Guest(dir / "vm.sock")).ok());
  EXPECT_TRUE(policy.MayManagePort(member, Guest(dir / "m.sock", "memif")).ok());
  // Outside the runtime directory, a device, a zero-copy peer: root only.
  for (PortSpec spec : {Guest("/etc/vm.sock"), Guest(dir / "../vm.sock")}) {
    EXPECT_EQ(policy.MayManagePort(member, spec).code(), absl::StatusCode::kPermissionDenied)
        << spec.driver_keys.Text("path");
    EXPECT_TRUE(policy.MayManagePort(root, spec).ok()) << spec.driver_keys.Text("path");
  }
  PortSpec device;
  device.name = "p";
  device.driver = FindPortDriver("dpdk");
  device.driver_keys.Set("devargs", "net_pcap0,tx_pcap=/etc/shadow");
  EXPECT_EQ(policy.MayManagePort(member, device).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(policy.MayManagePort(root, device).ok());
  PortSpec zero_copy = Guest(dir / "z.sock", "memif");
  zero_copy.driver_keys.Set("client", "1");
  zero_copy.driver_keys.Set("zero_copy", "1");
  EXPECT_EQ(policy.MayManagePort(member, zero_copy).code(), absl::StatusCode::kPermissionDenied);

  // A symlink in the runtime directory counts where it leads.
  const std::string elsewhere = dir / "elsewhere";
  ASSERT_EQ(mkdir(elsewhere.c_str(), 0755), 0);
  { std::ofstream(elsewhere + "/qemu.sock") << ""; }
  ASSERT_EQ(symlink((elsewhere + "/qemu.sock").c_str(), (dir / "q.sock").c_str()), 0);
  PortSpec client = Guest(dir / "q.sock");
  client.driver_keys.Set("client", "1");
  EXPECT_EQ(policy.MayManagePort(member, client).code(), absl::StatusCode::kPermissionDenied);
}

TEST(ControlPolicyTest, NoPortOnTheControlSocketNotEvenRoots) {
  TempDir dir;
  const std::string ctl = dir / "hvswitch.ctl";
  { std::ofstream(ctl) << ""; }
  const ControlPolicy policy{dir.path(), ctl};
  PortSpec spec = Guest(ctl);
  spec.driver_keys.Set("client", "1");
  EXPECT_EQ(policy.MayManagePort(ControlRole::kRoot, spec).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_EQ(symlink(ctl.c_str(), (dir / "x.sock").c_str()), 0);
  spec.driver_keys.Set("path", dir / "x.sock");
  EXPECT_FALSE(policy.MayManagePort(ControlRole::kRoot, spec).ok());
  spec.driver_keys.Set("path", dir / "./hvswitch.ctl");
  EXPECT_FALSE(policy.MayManagePort(ControlRole::kRoot, spec).ok());
}

TEST(ControlPolicyTest, NamedFilesAreRootsOnly) {
  const ControlPolicy policy{"/run/hvswitch", "/run/hvswitch/hvswitch.ctl"};
  EXPECT_TRUE(policy.MayWriteFile(ControlRole::kRoot).ok());
  EXPECT_EQ(policy.MayWriteFile(ControlRole::kGroupMember).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(RoleOf({1, 0, 0}), ControlRole::kRoot);
  if (geteuid() == 0) {
    EXPECT_EQ(RoleOf({1, 65534, 65534}), ControlRole::kGroupMember);
  }
}

// --- ExecuteControlCommand against a stub bridge ---------------------------------------

class CommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.runtime_dir = dir_.path();
    options_.ctl_socket = dir_ / "hvswitch.ctl";
    PortSpec vm = Guest(dir_ / "vm.sock");
    vm.name = "vm";
    ASSERT_TRUE(bridge_.AddPort(vm).ok());
  }
  json Run(const std::string& line, uid_t uid = 0, int file = -1) {
    ControlRequest request;
    request.line = line;
    request.file = file;
    request.peer.uid = uid;
    ControlAnswer answer = ExecuteControlCommand(bridge_, options_, request);
    EXPECT_FALSE(answer.connection_taken);
    return json::parse(answer.line);
  }

  TempDir dir_;
  DaemonOptions options_;
  StubBridge bridge_;
};

TEST_F(CommandsTest, NonUtf8NamesAndPathsAnswerJson) {
  // Root may give any bytes on the command line; every answer stays valid JSON.
  PortSpec odd = Guest(std::string("/tmp/\xff\xfe.sock"));
  odd.name = "odd";
  ASSERT_TRUE(bridge_.AddPort(odd).ok());
  for (const char* line : {"stats", "port list", "port show odd", "config show"}) {
    json answer = Run(line);
    EXPECT_TRUE(answer["ok"].get<bool>()) << line;
  }
}

TEST_F(CommandsTest, GroupMembersAreRefusedWhatNeedsRoot) {
  const uid_t member = 65534;
  const std::string outside = "/tmp/hvs-unit-pcap-" + std::to_string(getpid());
  json answer = Run("port add p,type=dpdk,devargs=net_pcap0,tx_pcap=" + outside, member);
  EXPECT_FALSE(answer["ok"].get<bool>());
  EXPECT_TRUE(answer.value("denied", false));
  EXPECT_THAT(answer["error"].get<std::string>(), HasSubstr("permission denied"));
  answer = Run("port add x vhost-user path=/etc/x.sock", member);
  EXPECT_TRUE(answer.value("denied", false));
  answer = Run("config save " + (dir_ / "named.conf"), member);
  EXPECT_TRUE(answer.value("denied", false));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "named.conf"));
  // What they may do.
  EXPECT_TRUE(Run("port add x vhost-user path=" + (dir_ / "x.sock"), member)["ok"].get<bool>());
  EXPECT_TRUE(Run("port del x", member)["ok"].get<bool>());
  EXPECT_TRUE(Run("fdb add vm 02:00:00:00:00:09", member)["ok"].get<bool>());
  EXPECT_TRUE(Run("config save", member)["ok"].get<bool>());  // the daemon's own file
  EXPECT_TRUE(Run("config show", member)["ok"].get<bool>());
  // A root port elsewhere is root's to remove.
  PortSpec elsewhere = Guest("/var/tmp/e.sock");
  elsewhere.name = "e";
  ASSERT_TRUE(bridge_.AddPort(elsewhere).ok());
  // Making it an analyser (or one no more) is managing it too; mirroring to their own
  // port is theirs.
  EXPECT_TRUE(Run("mirror add m --from vm --to e", member).value("denied", false));
  EXPECT_TRUE(Run("mirror add m --from vm --to e", 0)["ok"].get<bool>());
  EXPECT_TRUE(Run("mirror del m", member).value("denied", false));
  EXPECT_TRUE(Run("mirror del m", 0)["ok"].get<bool>());
  EXPECT_TRUE(Run("port add y vhost-user path=" + (dir_ / "y.sock"), member)["ok"].get<bool>());
  EXPECT_TRUE(Run("mirror add n --from vm,e --to y", member)["ok"].get<bool>());
  EXPECT_TRUE(Run("mirror del n", member)["ok"].get<bool>());
  EXPECT_TRUE(Run("port del e", member).value("denied", false));
  EXPECT_TRUE(Run("port del e", 0)["ok"].get<bool>());
}

TEST_F(CommandsTest, OnlyACaptureTakesADescriptor) {
  const size_t before = OpenFds();
  for (const char* line : {"stats", "port list", "nonsense", "", "capture status"}) {
    Run(line, 0, open("/dev/null", O_RDONLY | O_CLOEXEC));
  }
  EXPECT_EQ(OpenFds(), before);
}

// --- ControlSocket ---------------------------------------------------------------------

int ConnectTo(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << strerror(errno);
  return fd;
}

// Sends `line` with the given descriptors attached, in one message.
void SendWithFds(int sock, const std::string& line, const std::vector<int>& fds) {
  iovec iov{const_cast<char*>(line.data()), line.size()};
  std::vector<char> control(CMSG_SPACE(fds.size() * sizeof(int)));
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds.data(), fds.size() * sizeof(int));
  }
  ASSERT_EQ(sendmsg(sock, &msg, MSG_NOSIGNAL), static_cast<ssize_t>(line.size()));
}

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1;
}

std::string ReadAll(int sock) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(sock, buf, sizeof(buf))) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

class SocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_ / "ctl";
    absl::StatusOr<std::unique_ptr<ControlSocket>> socket = ControlSocket::Listen(path_, "");
    ASSERT_TRUE(socket.ok()) << socket.status();
    socket_ = *std::move(socket);
  }
  // Polls until `done` or two seconds passed; each Poll must return at once.
  template <typename Done>
  void PollUntil(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      const auto start = std::chrono::steady_clock::now();
      socket_->Poll(handler_);
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<ControlSocket> socket_;
  std::vector<std::string> lines_;
  std::vector<int> files_;
  std::string big_answer_;
  std::function<ControlAnswer(const ControlRequest&)> handler_ =
      [this](const ControlRequest& r) {
        lines_.emplace_back(r.line);
        files_.push_back(r.file);
        if (r.file >= 0) close(r.file);
        return ControlAnswer{r.line == "big" ? big_answer_ : "{\"ok\":true}", false};
      };
};

TEST_F(SocketTest, OwnerModeAndNoUmaskChange) {
  struct stat st{};
  ASSERT_EQ(lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  const mode_t mask = umask(022);
  umask(mask);
  EXPECT_EQ(mask, 022u);
  // Only the socket is left in its directory (no private directory of the binding).
  size_t entries = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(dir_.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST_F(SocketTest, RefusesAPathThatIsNotASocket) {
  const std::string file = dir_ / "precious";
  { std::ofstream(file) << "data\n"; }
  EXPECT_FALSE(ControlSocket::Listen(file, "").ok());
  EXPECT_EQ(Read(file), "data\n");  // it used to be unlinked
  ASSERT_EQ(symlink(file.c_str(), (dir_ / "link").c_str()), 0);
  EXPECT_FALSE(ControlSocket::Listen(dir_ / "link", "").ok());
  EXPECT_EQ(Read(file), "data\n");
}

TEST_F(SocketTest, EveryReceivedDescriptorIsClosed) {
  const size_t before = OpenFds();
  for (int i = 0; i < 50; ++i) {
    int sock = ConnectTo(path_);
    const int a = open("/dev/null", O_RDONLY | O_CLOEXEC), b = open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int c = open("/dev/null", O_RDONLY | O_CLOEXEC);
    SendWithFds(sock, "stats\n", {a, b, c});
    close(a);
    close(b);
    close(c);
    PollUntil([&] { return Readable(sock); });
    const std::string answer = ReadAll(sock);
    EXPECT_THAT(answer, HasSubstr("one file descriptor at most"));
    close(sock);
    if (HasFailure()) break;
  }
  EXPECT_TRUE(lines_.empty());  // none of them reached the handler
  EXPECT_EQ(OpenFds(), before);
}

TEST_F(SocketTest, OneDescriptorReachesTheHandler) {
  int sock = ConnectTo(path_);
  const int file = open("/dev/null", O_RDONLY | O_CLOEXEC);
  SendWithFds(sock, "capture\n", {file});
  close(file);
  PollUntil([&] { return !lines_.empty(); });
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_GE(files_[0], 0);
  close(sock);
}

TEST_F(SocketTest, NonAsciiBytesAreRefusedBeforeTheHandler) {
  int sock = ConnectTo(path_);
  SendWithFds(sock, "stats \xff\xfe\x01\n", {});
  PollUntil([&] { return Readable(sock); });
  EXPECT_THAT(ReadAll(sock), HasSubstr("printable ASCII"));
  EXPECT_TRUE(lines_.empty());
  close(sock);
}

TEST_F(SocketTest, ASlowReaderNeverHoldsThePoll) {
  big_answer_ = std::string(8 << 20, 'x');
  int slow = ConnectTo(path_);
  SendWithFds(slow, "big\n", {});
  // The slow reader takes a little now and then; Poll must return at once every time,
  // and give up on it after the answer's deadline.
  std::atomic<bool> stop{false};
  std::thread reader([slow, &stop] {
    char buf[512];
    while (!stop.load() && read(slow, buf, sizeof(buf)) > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  int quick = ConnectTo(path_);
  SendWithFds(quick, "port list\n", {});
  PollUntil([&] { return lines_.size() == 2; });
  PollUntil([&] { return false; });  // past the slow answer's deadline
  EXPECT_THAT(ReadAll(quick), HasSubstr("ok"));
  stop.store(true);
  reader.join();
  close(slow);
  close(quick);
}

TEST_F(SocketTest, ClientsThatSayNothingAreDroppedAndTheRestWait) {
  std::vector<int> idle;
  for (size_t i = 0; i < ControlSocket::kMaxClients + 4; ++i) {
    idle.push_back(ConnectTo(path_));
    socket_->Poll(handler_);
  }
  // One more, with a request: it waits in the backlog behind the idle ones, which hold
  // their places for a second at most.
  int quick = ConnectTo(path_);
  SendWithFds(quick, "stats\n", {});
  socket_->Poll(handler_);
  EXPECT_TRUE(lines_.empty());
  PollUntil([&] { return !lines_.empty(); });
  EXPECT_EQ(lines_.size(), 1u);
  PollUntil([&] { return Readable(quick); });
  EXPECT_THAT(ReadAll(quick), HasSubstr("ok"));
  for (int fd : idle) close(fd);
  close(quick);
}

// The control thread sleeps on what AddPollFds gives (Wakeup::Wait) until NextDeadline:
// a connection, a request and a held client's timeout each end the sleep.
TEST_F(SocketTest, WhatToWaitOnFollowsTheClients) {
  std::unique_ptr<Wakeup> wakeup = *Wakeup::Create();
  std::vector<pollfd> fds;
  socket_->AddPollFds(fds);
  ASSERT_EQ(fds.size(), 1u);  // the listening socket
  EXPECT_EQ(socket_->NextDeadline(), std::chrono::steady_clock::time_point::max());
  EXPECT_FALSE(wakeup->Wait(fds, std::chrono::steady_clock::now()));

  int client = ConnectTo(path_);
  const auto far = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  ASSERT_TRUE(wakeup->Wait(fds, far));
  EXPECT_TRUE(fds[0].revents & POLLIN);
  const auto before = std::chrono::steady_clock::now();
  socket_->Poll(handler_);
  const auto after = std::chrono::steady_clock::now();
  fds.clear();
  socket_->AddPollFds(fds);
  ASSERT_EQ(fds.size(), 2u);  // and the client's connection, for its request
  EXPECT_EQ(fds[1].events, POLLIN);
  // A second to send the request, from the accept (NowMs: whole milliseconds).
  EXPECT_GE(socket_->NextDeadline(), before + std::chrono::milliseconds(999));
  EXPECT_LE(socket_->NextDeadline(), after + std::chrono::seconds(1));
  EXPECT_FALSE(wakeup->Wait(fds, std::chrono::steady_clock::now()));

  SendWithFds(client, "stats\n", {});
  ASSERT_TRUE(wakeup->Wait(fds, far));
  EXPECT_TRUE(fds[1].revents & POLLIN);
  socket_->Poll(handler_);
  EXPECT_EQ(lines_.size(), 1u);
  EXPECT_THAT(ReadAll(client), HasSubstr("ok"));
  fds.clear();
  socket_->AddPollFds(fds);
  EXPECT_EQ(fds.size(), 1u);  // answered in full: the client is gone
  EXPECT_EQ(socket_->NextDeadline(), std::chrono::steady_clock::time_point::max());
  close(client);
}

// With kMaxClients held, new connections wait in the backlog: the listening socket is
// not waited on (it would wake the thread for nothing until one of them goes).
TEST_F(SocketTest, AFullHouseIsNotWokenByTheBacklog) {
  std::vector<int> held;
  for (size_t i = 0; i < ControlSocket::kMaxClients; ++i) {
    held.push_back(ConnectTo(path_));
    socket_->Poll(handler_);
  }
  std::vector<pollfd> fds;
  socket_->AddPollFds(fds);
  EXPECT_EQ(fds.size(), ControlSocket::kMaxClients);
  for (const pollfd& p : fds) EXPECT_EQ(p.events, POLLIN);
  for (int fd : held) close(fd);
}

}  // namespace
}  // namespace hvswitch
