#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "launch/launchers.h"
#include "launch/process.h"
#include "launch/ssh_failure.h"
#include "spec/spec_parser.h"

namespace ppsearch::launch {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path Scratch(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("ppsearch_launch_" + std::to_string(::getpid()) + name);
  fs::create_directories(p);
  return p;
}

TEST(ShellQuote, SafeWordsStayAndTheRestIsSingleQuoted) {
  EXPECT_EQ(ShellQuote("--tp-size"), "--tp-size");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellJoin({"echo", "$(id)", "x;y"}), "echo '$(id)' 'x;y'");
}

TEST(RunCaptured, InputReachesStdinThenEndOfFile) {
  Result<Captured> c = RunCaptured({"/bin/sh", "-c", "cat; echo end"}, 10, {}, "one line\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->out, "one line\nend\n");
  // Without input, stdin is /dev/null: the read ends at once.
  c = RunCaptured({"/bin/sh", "-c", "cat; echo end"}, 10);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->out, "end\n");
  // A command that never reads its input still finishes.
  c = RunCaptured({"true"}, 10, {}, std::string(kMaxInputBytes, 'x'));
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->exit.ok());
  EXPECT_FALSE(RunCaptured({"true"}, 10, {}, std::string(kMaxInputBytes + 1, 'x')).ok());
}

TEST(Spawn, InputReachesAServersStdin) {
  const fs::path dir = Scratch("spawn_input");
  SpawnSpec s;
  s.argv = {"/bin/sh", "-c", "read line; echo \"got $line\""};
  s.output_path = (dir / "log").string();
  s.input = "secret\n";
  Result<pid_t> pid = Spawn(s);
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  ASSERT_TRUE(WaitExit(*pid, 10).has_value());
  EXPECT_EQ(ReadAll(s.output_path), "got secret\n");
  fs::remove_all(dir);
}

spec::SudoSpec SudoSteps(std::vector<std::string> steps, std::string file) {
  spec::SudoSpec s;
  s.steps = std::move(steps);
  s.password_file = std::move(file);
  return s;
}

TEST(Sudo, ThePasswordFileIsReadOnceAndOnlyItsLineIsSudosInput) {
  const fs::path dir = Scratch("sudo");
  const std::string file = (dir / "pw").string();
  std::ofstream(file) << "pa ss\n";
  Result<Sudo> sudo = Sudo::FromSpec(SudoSteps({"container", "stop"}, file));
  ASSERT_TRUE(sudo.ok()) << sudo.error().message;
  EXPECT_TRUE(sudo->Runs(SudoStep::kContainer));
  EXPECT_TRUE(sudo->Runs(SudoStep::kStop));
  EXPECT_FALSE(sudo->Runs(SudoStep::kNone));
  EXPECT_EQ(sudo->input(), "pa ss\n");
  EXPECT_EQ(ShellJoin(sudo->Wrap({"docker", "rm", "-f", "x"})),
            "sudo -k -S -p '' -- docker rm -f x");
  // Read here, once: a later change of the file does not matter.
  std::ofstream(file) << "other\n";
  EXPECT_EQ(sudo->input(), "pa ss\n");

  std::ofstream(file) << "two\nlines\n";
  EXPECT_EQ(Sudo::FromSpec(SudoSteps({"stop"}, file)).error().message,
            "the sudo password file " + file +
                " (cluster.sudo.password_file) holds more than one line; it must hold the "
                "password alone");
  std::ofstream(file) << "\n";
  EXPECT_EQ(Sudo::FromSpec(SudoSteps({"stop"}, file)).error().message,
            "the sudo password file " + file + " (cluster.sudo.password_file) holds no password");
  std::ofstream(file) << std::string(kSudoPasswordFileMaxBytes + 1, 'x');
  EXPECT_THAT(Sudo::FromSpec(SudoSteps({"stop"}, file)).error().message,
              ::testing::StartsWith("cannot read the sudo password file "
                                    "(cluster.sudo.password_file): "));
  fs::remove(file);
  const std::string missing = Sudo::FromSpec(SudoSteps({"stop"}, file)).error().message;
  EXPECT_THAT(missing, ::testing::StartsWith(
                           "cannot read the sudo password file (cluster.sudo.password_file): "));
  EXPECT_THAT(missing, ::testing::HasSubstr(file));
  // No step through sudo: the file is not read.
  EXPECT_TRUE(Sudo::FromSpec(SudoSteps({}, file)).ok());

  // The variable names the file when the spec does not.
  std::ofstream(file) << "from env";
  ::setenv(kSudoPasswordFileEnv, file.c_str(), 1);
  sudo = Sudo::FromSpec(SudoSteps({"stop"}, ""));
  ::unsetenv(kSudoPasswordFileEnv);
  ASSERT_TRUE(sudo.ok()) << sudo.error().message;
  EXPECT_EQ(sudo->input(), "from env\n");
  EXPECT_EQ(sudo->password_file(), file);
  fs::remove_all(dir);
}

TEST(Sudo, WithoutAPasswordSudoMustNotPromptAndRefusalsAreNamed) {
  Result<Sudo> sudo = Sudo::FromSpec(SudoSteps({"container"}, ""));
  ASSERT_TRUE(sudo.ok());
  EXPECT_EQ(sudo->input(), "");
  EXPECT_EQ(ShellJoin(sudo->Wrap({"docker", "run"})), "sudo -n -- docker run");
  EXPECT_EQ(*sudo->Refusal("sudo: a password is required\n"),
            "sudo needs a password: give [cluster.sudo] password_file or "
            "PPSEARCH_SUDO_PASSWORD_FILE, or a NOPASSWD sudoers rule");
  EXPECT_FALSE(sudo->Refusal("Error response from daemon: No such container: x\n"));
}

// The stop step through sudo: the kill runs as `sudo ... kill -SIG -- -PGID`.
// Here sudo itself is a stand-in first on PATH that records its words and
// its standard input, then runs the command.
TEST(LocalLauncher, TheStopStepSignalsThroughSudoWithThePasswordOnStdin) {
  const fs::path dir = Scratch("local_sudo");
  fs::create_directories(dir / "bin");
  {
    std::ofstream f(dir / "bin" / "sudo");
    f << "#!/bin/sh\necho \"$*\" >> " << (dir / "words").string() << "\nIFS= read -r pw\n"
      << "printf '%s\\n' \"$pw\" >> " << (dir / "stdin").string()
      << "\nwhile [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n";
  }
  fs::permissions(dir / "bin" / "sudo", fs::perms::owner_all);
  const std::string path = (dir / "bin").string() + ":" + std::getenv("PATH");
  const std::string old_path = std::getenv("PATH");
  ::setenv("PATH", path.c_str(), 1);
  std::ofstream(dir / "pw") << "pw 1\n";
  spec::Spec spec;
  spec.cluster.hosts.resize(1);
  spec.cluster.hosts[0].name = "n0";
  std::unique_ptr<Launcher> launcher = MakeLocalLauncher(spec);
  launcher->set_sudo(*Sudo::FromSpec(SudoSteps({"stop"}, (dir / "pw").string())));
  ServerLaunch l;
  l.argv = {"sleep", "30"};
  l.log_path = (dir / "log").string();
  Result<std::unique_ptr<ServerProcess>> p = launcher->StartServer(l);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const int64_t pid = (*p)->Record().pid;
  // Its own process group exists once the child has called setsid().
  for (int i = 0; i < 500 && ::getpgid(static_cast<pid_t>(pid)) != pid; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_TRUE((*p)->Signal(SIGTERM).ok());
  ::setenv("PATH", old_path.c_str(), 1);
  auto exit = WaitExit(static_cast<pid_t>(pid), 10);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->Describe(), "was killed by signal 15 (SIGTERM)");
  EXPECT_EQ(ReadAll((dir / "words").string()),
            "-k -S -p  -- kill -15 -- -" + std::to_string(pid) + "\n");
  EXPECT_EQ(ReadAll((dir / "stdin").string()), "pw 1\n");
  fs::remove_all(dir);
}

TEST(Spawn, OutputGoesToTheFileAndTheExitIsReported) {
  const fs::path dir = Scratch("spawn");
  SpawnSpec s;
  s.argv = {"/bin/sh", "-c", "echo out; echo err >&2; echo \"$PPS_X\"; exit 3"};
  s.env = {{"PPS_X", "a b;c"}};
  s.output_path = (dir / "log").string();
  Result<pid_t> pid = Spawn(s);
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  auto exit = WaitExit(*pid, 10);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->Describe(), "exited with status 3");
  EXPECT_EQ(ReadAll(s.output_path), "out\nerr\na b;c\n");
  s.argv = {"/nonexistent/program"};
  pid = Spawn(s);
  ASSERT_TRUE(pid.ok());
  EXPECT_EQ(WaitExit(*pid, 10)->code, 127);
  EXPECT_NE(ReadAll(s.output_path).find("cannot execute /nonexistent/program"), std::string::npos);
  fs::remove_all(dir);
}

// A server's output holds its key: the log is its owner's alone, an older
// one made so, and what the filter takes out never reaches it, although the
// server ends before the filter has written everything.
TEST(Spawn, TheOutputIsPrivateAndPassesThroughTheFilter) {
  const fs::path dir = Scratch("filter");
  const std::string log = (dir / "n0.log").string();
  { std::ofstream(log) << "earlier\n"; }
  fs::permissions(log, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                           fs::perms::others_read);
  SpawnSpec s;
  s.argv = {"/bin/sh", "-c", "echo \"api_key='$PPS_K'\"; echo done >&2"};
  s.env = {{"PPS_K", "sk-live-1"}};
  s.output_path = log;
  s.output_filter = {"/bin/sh", "-c", "sed -u \"s/$PPS_SECRET/<redacted>/g\""};
  s.filter_env = {{"PPS_SECRET", "sk-live-1"}};
  Result<pid_t> pid = Spawn(s);
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  ASSERT_TRUE(WaitExit(*pid, 10).has_value());
  for (int i = 0; i < 500 && ReadAll(log).find("done") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(ReadAll(log), "earlier\napi_key='<redacted>'\ndone\n");
  EXPECT_EQ(fs::status(log).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  fs::remove_all(dir);
}

TEST(Spawn, AServersOutputNeverGoesThroughALinkPlantedInTheRunDirectory) {
  const fs::path dir = Scratch("spawnlink");
  std::ofstream(dir / "victim.txt") << "untouched\n";
  fs::create_directories(dir / "elsewhere");
  fs::create_directories(dir / "run/live/s1");
  fs::create_symlink(dir / "victim.txt", dir / "run/live/s1/n0.log");
  fs::create_symlink(dir / "elsewhere", dir / "run/live/s2");
  SpawnSpec s;
  s.argv = {"/bin/sh", "-c", "echo server output"};
  s.output_root = (dir / "run").string();
  s.output_path = (dir / "run/live/s1/n0.log").string();
  Result<pid_t> through_file = Spawn(s);
  ASSERT_FALSE(through_file.ok());
  EXPECT_EQ(through_file.error().message,
            "cannot open " + s.output_path +
                ": is a symbolic link, expected a regular file; refusing to follow it");
  s.output_path = (dir / "run/live/s2/n0.log").string();
  Result<pid_t> through_dir = Spawn(s);
  ASSERT_FALSE(through_dir.ok());
  EXPECT_NE(through_dir.error().message.find("live/s2 is a symbolic link or not a directory"),
            std::string::npos)
      << through_dir.error().message;
  EXPECT_EQ(ReadAll((dir / "victim.txt").string()), "untouched\n");
  EXPECT_TRUE(fs::is_empty(dir / "elsewhere"));
  // Without a root the file itself is still never a link.
  s.output_root.clear();
  s.output_path = (dir / "run/live/s1/n0.log").string();
  EXPECT_FALSE(Spawn(s).ok());
  fs::remove_all(dir);
}

TEST(RunCaptured, KillsTheWholeGroupAtTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  Result<Captured> c = RunCaptured({"/bin/sh", "-c", "echo hi; sleep 30 & sleep 30"}, 0.3);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->timed_out);
  EXPECT_EQ(c->out, "hi\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5))
      << "the background sleep holding the pipe was killed too";
}

spec::Spec LocalSpec() {
  Result<spec::Spec> s = spec::ParseSpec(
      "[experiment]\nname = \"t\"\n[cluster]\nhosts = [\"n0\"]\n[engine]\nmodel_config = "
      "\"m.json\"\n[sweep]\npp = [1]\nconcurrency = [1]\n[workload]\ninput_tokens = 1\nrequests "
      "= 1\n",
      "/s/spec.toml", {});
  EXPECT_TRUE(s.ok());
  return *s;
}

TEST(LocalLauncher, ASignalReachesTheWholeTreeAndARecordedServerIsStopped) {
  const fs::path dir = Scratch("local");
  const spec::Spec spec = LocalSpec();
  auto launcher = MakeLocalLauncher(spec);
  ServerLaunch l;
  l.argv = {"/bin/sh", "-c", "sleep 60 & echo child $!; wait"};
  l.log_path = (dir / "log").string();
  l.tag = "t";
  auto p = launcher->StartServer(l);
  ASSERT_TRUE(p.ok()) << p.error().message;
  pid_t child = 0;
  for (int i = 0; i < 200 && child == 0; ++i) {
    std::istringstream in(ReadAll(l.log_path));
    std::string word;
    in >> word >> child;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(child, 0);
  ServerRecord r = (*p)->Record();
  EXPECT_EQ(r.launcher, "local");
  EXPECT_GT(r.start_ticks, 0u);
  // A second process stops it from the record alone, child included.
  ASSERT_TRUE(launcher->StopRecorded(r, 5).ok());
  for (int i = 0; i < 200 && ProcessExists(child); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  (*p)->Poll();
  EXPECT_FALSE(ProcessExists(child));
  // A record whose pid now belongs to another process (different start time) is left alone.
  ServerRecord stale = r;
  stale.pid = ::getpid();
  stale.start_ticks = 1;
  EXPECT_TRUE(launcher->StopRecorded(stale, 1).ok());
  EXPECT_TRUE(ProcessExists(::getpid()));
  fs::remove_all(dir);
}

// ssh's own failures, by kind, from what OpenSSH prints.
TEST(SshFailure, EachKindIsNamedWithTheLineThatSaysSo) {
  EXPECT_EQ(DescribeSshFailure("ssh: connect to host 601 port 22: Connection timed out\n"),
            "unreachable: ssh: connect to host 601 port 22: Connection timed out");
  EXPECT_EQ(DescribeSshFailure("ssh: connect to host 10.0.6.1 port 22: No route to host\n"),
            "unreachable: ssh: connect to host 10.0.6.1 port 22: No route to host");
  EXPECT_EQ(DescribeSshFailure("ssh: connect to host n1 port 2222: Connection refused\n"),
            "connection refused: ssh: connect to host n1 port 2222: Connection refused");
  EXPECT_EQ(DescribeSshFailure("ssh: Could not resolve hostname 605: Name or service not known\n"),
            "unknown host name: ssh: Could not resolve hostname 605: Name or service not known");
  EXPECT_EQ(DescribeSshFailure("root@n2: Permission denied (publickey).\n"),
            "authentication failed: root@n2: Permission denied (publickey).");
  // A changed host key: the first lines are a banner of '@', and the key
  // problem wins over the refusal that follows it.
  EXPECT_EQ(DescribeSshFailure("@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n"
                               "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n"
                               "Host key verification failed.\n"),
            "host key not accepted: WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!");
  EXPECT_EQ(DescribeSshFailure("No ED25519 host key is known for n3 and you have requested "
                               "strict checking.\nHost key verification failed.\n"),
            "host key not accepted: Host key verification failed.");
  EXPECT_EQ(DescribeSshFailure("kex_exchange_identification: Connection closed by remote host\n"),
            "connection closed by the host: kex_exchange_identification: Connection closed by "
            "remote host");
  EXPECT_EQ(DescribeSshFailure("Warning: Permanently added 'n0' (ED25519) to the list of known "
                               "hosts.\nsomething else\n"),
            "ssh failed: something else");
  EXPECT_EQ(DescribeSshFailure(""), "ssh failed without a message");
}

}  // namespace
}  // namespace ppsearch::launch
