// The sections the real-cluster engine reads: hosts as names or tables and
// their validation, [cluster.ssh] options, [cluster.slurm], the engine's
// command, container and secrets, and [lifecycle].

#include <gtest/gtest.h>

#include <string>

#include "spec/spec_parser.h"

namespace ppsearch::spec {
namespace {

std::string ClusterSpecText(const std::string& cluster, const std::string& engine = "",
                            const std::string& extra = "") {
  return "[experiment]\nname = \"t\"\n"      // 1-2
         "[cluster]\ngpus_per_node = 4\n" +  // 3-4
         cluster +                           // 5...
         "\n[engine]\nmodel_config = \"m.json\"\n" +
         engine +
         "\n[sweep]\npp = [1]\nconcurrency = [8]\n[workload]\ninput_tokens = 100\nrequests = 4\n" +
         extra;
}

std::string ClusterErrorOf(const std::string& text) {
  Result<ppsearch::spec::Spec> s = ParseSpec(text, "/s/spec.toml", {});
  return s.ok() ? "" : s.error().message;
}

ppsearch::spec::Spec ClusterMustParse(const std::string& text) {
  Result<ppsearch::spec::Spec> s = ParseSpec(text, "/s/spec.toml", {});
  EXPECT_TRUE(s.ok()) << s.error().message;
  return s.ok() ? *s : ppsearch::spec::Spec{};
}

TEST(SpecCluster, HostsMayBeTablesWithAddressAndPort) {
  auto s = ClusterMustParse(ClusterSpecText(
      "hosts = [\"a\", {name = \"b\", address = \"127.0.0.2\", server_port = 31001}]\n"
      "server_port = 31000\ndist_init_port = 31500"));
  ASSERT_EQ(s.cluster.hosts.size(), 2u);
  EXPECT_EQ(s.cluster.Address(0), "a");
  EXPECT_EQ(s.cluster.ServerPort(0), 31000);
  EXPECT_EQ(s.cluster.Address(1), "127.0.0.2");
  EXPECT_EQ(s.cluster.ServerPort(1), 31001);
  EXPECT_EQ(s.cluster.dist_init_port, 31500);
  EXPECT_EQ(s.cluster.nvidia_smi, std::vector<std::string>{"nvidia-smi"});
}

TEST(SpecCluster, HostNamesThatCouldLeaveTheRunDirectoryOrReachAShellAreRejected) {
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"../../../../escaped\", \"nb\"]")),
            "/s/spec.toml:5:10: key 'cluster.hosts[0]': expected a host name: letters, digits, "
            "'.', '_' or '-', starting with a letter or digit, at most 128 characters, got "
            "'../../../../escaped'");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"node-a; touch /tmp/x\"]")),
            "/s/spec.toml:5:10: key 'cluster.hosts[0]': expected a host name: letters, digits, "
            "'.', '_' or '-', starting with a letter or digit, at most 128 characters, got "
            "'node-a; touch /tmp/x'");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [{name = \"a\", address = \"10.0.0.1;id\"}]")),
            "/s/spec.toml:5:33: key 'cluster.hosts[0].address': expected a host name, an IPv4 "
            "address or an IPv6 address, got '10.0.0.1;id'");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [{name = \"a\", address = \"999.1.1.1\"}]")),
            "/s/spec.toml:5:33: key 'cluster.hosts[0].address': expected a host name, an IPv4 "
            "address or an IPv6 address, got '999.1.1.1'");
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]\n[cluster.ssh.a]\naddress = \"$(id)\"")),
      "/s/spec.toml:7:11: key 'cluster.ssh.a.address': expected a host name, an IPv4 "
      "address or an IPv6 address, got '$(id)'");
  EXPECT_EQ(ClusterErrorOf(
                ClusterSpecText("hosts = [\"a\"]\n[cluster.ssh]\nuser = \"-oProxyCommand=x\"")),
            "/s/spec.toml:7:8: key 'cluster.ssh.user': expected a login name (letters, digits, "
            "'.', '_', '-'), got '-oProxyCommand=x'");
  // A host name becomes a file name with suffixes: a long DNS name is an address.
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"" + std::string(200, 'h') + "\"]")),
            "/s/spec.toml:5:10: key 'cluster.hosts[0]': expected a host name: letters, digits, "
            "'.', '_' or '-', starting with a letter or digit, at most 128 characters, got '" +
                std::string(80, 'h') + "... (200 bytes)'");
  // IPv6 and a bare number (an ssh alias such as the team's "601") are fine.
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"601\", {name = \"b\", address = \"::1\"}]")),
            "");
}

TEST(SpecCluster, SshOptionsAndSlurmSettings) {
  auto s = ClusterMustParse(ClusterSpecText(
      "hosts = [\"a\"]\nlauncher = \"ssh\"\n[cluster.ssh]\nkey = \"keys/id\"\n"
      "options = [\"StrictHostKeyChecking=yes\"]\n[cluster.slurm]\npartition = \"gpu\"\n"
      "srun_args = [\"--mpi=none\"]"));
  EXPECT_EQ(s.cluster.ssh_options, std::vector<std::string>{"StrictHostKeyChecking=yes"});
  EXPECT_EQ(s.cluster.hosts[0].ssh_key, "/s/keys/id");
  EXPECT_EQ(s.cluster.slurm.partition, "gpu");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText(
                "hosts = [\"a\"]\n[cluster.ssh]\noptions = [\"-oProxyCommand=x\"]")),
            "/s/spec.toml:7:11: key 'cluster.ssh.options': expected ssh options as Name=value "
            "(e.g. \"StrictHostKeyChecking=yes\"), got '-oProxyCommand=x'");
}

TEST(SpecCluster, SudoStepsAndPasswordFile) {
  auto s = ClusterMustParse(
      ClusterSpecText("hosts = [\"a\"]\n[cluster.sudo]\nsteps = [\"container\", \"stop\"]\n"
                      "password_file = \"secrets/pw\""));
  EXPECT_EQ(s.cluster.sudo.steps, (std::vector<std::string>{"container", "stop"}));
  EXPECT_TRUE(s.cluster.sudo.Runs("stop"));
  EXPECT_EQ(s.cluster.sudo.password_file, "/s/secrets/pw");
  EXPECT_TRUE(ClusterMustParse(ClusterSpecText("hosts = [\"a\"]")).cluster.sudo.steps.empty());
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]\n[cluster.sudo]\nsteps = [\"containers\"]")),
      "/s/spec.toml:7:9: key 'cluster.sudo.steps': expected step names out of "
      "\"container\", \"stop\", got 'containers'");
  EXPECT_EQ(ClusterErrorOf(
                ClusterSpecText("hosts = [\"a\"]\n[cluster.sudo]\nsteps = [\"stop\", \"stop\"]")),
            "/s/spec.toml:7:9: key 'cluster.sudo.steps': step 'stop' is listed twice");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]\n[cluster.sudo]\npassword = \"x\"")),
            "/s/spec.toml:7:1: unknown key 'cluster.sudo.password'");
}

TEST(SpecEngine, CommandContainerSecretsAndPlaceholders) {
  auto s = ClusterMustParse(
      ClusterSpecText("hosts = [\"a\"]",
                      "command = [\"{ppsearch}\", \"serve-sim\", \"--log\", \"/x/{host}\"]\n"
                      "container = \"apptainer\"\nsecret_env = [\"MY_CREDS\"]\n"
                      "version = \"v0.5.14.post1\""));
  EXPECT_EQ(s.engine.command.size(), 4u);
  EXPECT_EQ(s.engine.container, "apptainer");
  EXPECT_EQ(s.engine.secret_env, std::vector<std::string>{"MY_CREDS"});
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "command = [\"x\", \"{hots}\"]")),
            "/s/spec.toml:8:11: key 'engine.command': unknown placeholder '{hots}' (known: "
            "{host}, {node_rank}, {sample}, {port}, {spec_dir}, {ppsearch})");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "version = \"latest\"")),
            "/s/spec.toml:8:11: key 'engine.version': expected an SGLang version such as "
            "\"0.5.18\", got 'latest'");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "container = \"lxc\"")),
            "/s/spec.toml:8:13: key 'engine.container': expected one of 'docker', 'podman', "
            "'apptainer', 'enroot', got 'lxc'");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "[engine.env]\n\"A B\" = \"1\"")),
            "/s/spec.toml:9:9: 'engine.env.A B' is not an environment variable name (letters, "
            "digits and '_', not starting with a digit)");
}

TEST(SpecEngine, PatchesResolveAgainstTheSpecAndAreNamedOnce) {
  auto s = ClusterMustParse(
      ClusterSpecText("hosts = [\"a\"]", "patches = [\"p/pp.patch\", \"/opt/extra.py\"]"));
  EXPECT_EQ(s.engine.patches, (std::vector<std::string>{"/s/p/pp.patch", "/opt/extra.py"}));
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "patches = [\"a.patch\", \"\"]")),
            "/s/spec.toml:8:23: key 'engine.patches[1]': expected the path of a patch or extra "
            "file, got \"\"");
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "patches = [\"a.patch\", \"./a.patch\"]")),
      "/s/spec.toml:8:23: key 'engine.patches[1]': './a.patch' is named twice");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "patches = [3]")),
            "/s/spec.toml:8:12: key 'engine.patches[0]': expected a string, got an integer");
}

// Two listeners on one port of one host: the second server cannot bind, and
// nothing says so until a sample starts.
TEST(SpecCluster, PortsOneHostListensOnMustDiffer) {
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]\nserver_port = 5000")),
            "/s/spec.toml:6:15: key 'cluster.server_port': port 5000 is the HTTP port of host 'a' "
            "and also node 0's --dist-init-addr port (cluster.dist_init_port, by default), both "
            "on a; the ports one host listens on must differ");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText(
                "hosts = [\"a\", \"b\"]\nserver_port = 31000\ndist_init_port = 31000")),
            "/s/spec.toml:7:18: key 'cluster.dist_init_port': port 31000 is node 0's "
            "--dist-init-addr port and also the HTTP port of host 'a' (/s/spec.toml:6:15: key "
            "'cluster.server_port'), both on a; the ports one host listens on must differ");
  // Several nodes on one machine (a rehearsal) need a port each.
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText(
                "hosts = [{name = \"a\", address = \"127.0.0.1\"}, {name = \"b\", address "
                "= \"127.0.0.1\", server_port = 30000}]")),
            "/s/spec.toml:5:97: key 'cluster.hosts[1].server_port': port 30000 is the HTTP port "
            "of host 'b' and also the HTTP port of host 'a' (cluster.server_port, by default), "
            "both on 127.0.0.1; the ports one host listens on must differ");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText(
                "hosts = [{name = \"a\", address = \"127.0.0.1\"}, {name = \"b\", address "
                "= \"127.0.0.1\", server_port = 30001}]")),
            "");
  // sshd listens on the host too, when the launcher is ssh.
  const std::string ssh_on_http =
      "hosts = [\"a\"]\nlauncher = \"ssh\"\n[cluster.ssh]\nport = 30000";
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText(ssh_on_http)),
            "/s/spec.toml:8:8: key 'cluster.ssh.port': port 30000 is the ssh port of host 'a' and "
            "also the HTTP port of host 'a' (cluster.server_port, by default), both on a; the "
            "ports one host listens on must differ");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]\n[cluster.ssh]\nport = 30000")), "");
  // The same ports on different hosts are the usual multi-node case.
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\", \"b\"]\nlauncher = \"ssh\"")), "");
}

// mem-fraction-static is the share of each GPU SGLang takes; nan or inf
// anywhere in the engine's values would reach the planner's arithmetic and
// the server's command line.
TEST(SpecEngine, NumbersOutsideTheirMeaningAreRefused) {
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {mem-fraction-static = 2.0}")),
      "/s/spec.toml:8:31: key 'engine.args.mem-fraction-static': expected a number in (0, "
      "1) (the share of each GPU's memory SGLang takes for weights and the KV cache), got 2");
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {mem-fraction-static = \"0\"}")),
      "/s/spec.toml:8:31: key 'engine.args.mem-fraction-static': expected a number in (0, "
      "1) (the share of each GPU's memory SGLang takes for weights and the KV cache), got 0");
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {mem-fraction-static = nan}")),
      "/s/spec.toml:8:31: key 'engine.args.mem-fraction-static': expected a finite number, "
      "got nan");
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {mem-fraction-static = \"nan\"}")),
      "/s/spec.toml:8:31: key 'engine.args.mem-fraction-static': expected a number in (0, "
      "1) (the share of each GPU's memory SGLang takes for weights and the KV cache), got "
      "nan");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {watchdog-timeout = inf}")),
            "/s/spec.toml:8:28: key 'engine.args.watchdog-timeout': expected a finite number, got "
            "inf");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "env = {NCCL_TIMEOUT = -inf}")),
            "/s/spec.toml:8:23: key 'engine.env.NCCL_TIMEOUT': expected a finite number, got "
            "-inf");
  auto s = ClusterMustParse(
      ClusterSpecText("hosts = [\"a\"]", "args = {mem-fraction-static = \"0.85\"}"));
  EXPECT_EQ(s.engine.ArgString("mem-fraction-static"), "0.85");
}

// The linear-attention state pool's flags (memory/state_pool.h): a ratio
// that is not positive, a pool of no slot, an unknown strategy and both
// spellings of the strategy at once are refused where they are written.
TEST(SpecEngine, AContextOfNoTokenIsRefused) {
  for (const char* value : {"0", "-5"})
    EXPECT_EQ(ClusterErrorOf(ClusterSpecText(
                  "hosts = [\"a\"]", std::string("args = {context-length = ") + value + "}")),
              std::string("/s/spec.toml:8:26: key 'engine.args.context-length': expected a whole "
                          "number of tokens of at least 1 (the longest request SGLang admits), "
                          "got ") +
                  value);
}

TEST(SpecEngine, StatePoolFlagsMeanWhatSglangTakes) {
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {mamba-full-memory-ratio = 0}")),
      "/s/spec.toml:8:35: key 'engine.args.mamba-full-memory-ratio': expected a positive number "
      "(the linear-attention state pool's budget over the KV pool's), got 0");
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {max-mamba-cache-size = 0.5}")),
      "/s/spec.toml:8:32: key 'engine.args.max-mamba-cache-size': expected a whole number of at "
      "least 1 (linear-attention request states the server keeps), got 0.5");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]",
                                           "args = {mamba-radix-cache-strategy = \"extra\"}")),
            "/s/spec.toml:8:38: key 'engine.args.mamba-radix-cache-strategy': \"extra\" is not an "
            "SGLang mamba-radix-cache-strategy (auto, no_buffer, extra_buffer, "
            "extra_buffer_lazy)");
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText(
                "hosts = [\"a\"]",
                "args = {mamba-radix-cache-strategy = \"auto\", mamba-scheduler-strategy = "
                "\"no_buffer\"}")),
            "/s/spec.toml:8:73: key 'engine.args.mamba-scheduler-strategy': "
            "mamba-scheduler-strategy is SGLang's older name of mamba-radix-cache-strategy; give "
            "one of them");
  // SGLang's argparse reads these with type=int: 64.0 and "1e3" are not
  // whole numbers to it (and were ignored by the planner).
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {max-mamba-cache-size = 64.0}")),
      "/s/spec.toml:8:32: key 'engine.args.max-mamba-cache-size': expected a whole number of at "
      "least 1 (linear-attention request states the server keeps), got 64 (written as a "
      "float)");
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {max-running-requests = \"1e3\"}")),
      "/s/spec.toml:8:32: key 'engine.args.max-running-requests': expected a whole number "
      "in [1, 65536] (requests a scheduler runs at once), got 1e3");
  const auto s = ClusterMustParse(
      ClusterSpecText("hosts = [\"a\"]",
                      "args = {mamba-scheduler-strategy = \"no_buffer\", "
                      "mamba-full-memory-ratio = 0.5, max-mamba-cache-size = 64}"));
  EXPECT_EQ(s.engine.ArgString("mamba-scheduler-strategy"), "no_buffer");
}

// A cap of 0 (or -1, or 2^31) running requests once passed and predicted a
// server that never runs one; a backend SGLang does not have passed validate.
TEST(SpecEngine, MaxRunningRequestsAndTheAllToAllBackendMeanWhatSglangTakes) {
  const std::string expected =
      "/s/spec.toml:8:32: key 'engine.args.max-running-requests': expected a whole number in "
      "[1, 65536] (requests a scheduler runs at once), got ";
  EXPECT_EQ(ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {max-running-requests = 0}")),
            expected + "0");
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {max-running-requests = -1}")),
      expected + "-1");
  EXPECT_EQ(ClusterErrorOf(
                ClusterSpecText("hosts = [\"a\"]", "args = {max-running-requests = 2147483648}")),
            expected + "2147483648");
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {max-running-requests = 64}")), "");
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {moe-a2a-backend = \"evil\"}")),
      "/s/spec.toml:8:27: key 'engine.args.moe-a2a-backend': \"evil\" is not an SGLang "
      "moe-a2a-backend (none, deepep, mooncake, nixl, mori, ascend_fuseep, flashinfer, "
      "megamoe, pplx, ascend_tp, deepep_v2)");
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {moe-a2a-backend = \"deepep\"}")),
      "");
  EXPECT_EQ(ClusterErrorOf(
                ClusterSpecText("hosts = [\"a\"]", "args = {moe-a2a-backend = \"deepep_v2\"}")),
            "");
}

// The planner read "abc", 2.5 and 1e300 as the default chunk, and a
// micro-batch of 0 as SGLang's default, where SGLang refuses them at launch:
// validate passed a spec that fails on the GPUs.
TEST(SpecEngine, TheSchedulersTokenFlagsMeanWhatSglangTakes) {
  auto error = [](const std::string& args) {
    return ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "args = {" + args + "}"));
  };
  const std::string chunk =
      "/s/spec.toml:8:32: key 'engine.args.chunked-prefill-size': expected a whole number of "
      "tokens from 1 to 16777216, or -1 to prefill each request whole (the scheduler's prefill "
      "chunk), got ";
  EXPECT_EQ(error("chunked-prefill-size = \"abc\""), chunk + "abc");
  EXPECT_EQ(error("chunked-prefill-size = 2.5"), chunk + "2.5");
  EXPECT_EQ(error("chunked-prefill-size = 1e300"), chunk + "1e+300");
  EXPECT_EQ(error("chunked-prefill-size = -2"), chunk + "-2");
  EXPECT_EQ(error("chunked-prefill-size = 0"), chunk + "0");
  EXPECT_EQ(error("chunked-prefill-size = -1"), "");
  EXPECT_EQ(error("chunked-prefill-size = \"8192\""), "");
  const std::string micro =
      "/s/spec.toml:8:35: key 'engine.args.pp-max-micro-batch-size': expected a whole number in "
      "[1, 65536] (requests in one pipeline micro-batch), got ";
  EXPECT_EQ(error("pp-max-micro-batch-size = 0"), micro + "0");
  EXPECT_EQ(error("pp-max-micro-batch-size = \"abc\""), micro + "abc");
  EXPECT_EQ(error("pp-max-micro-batch-size = 1"), "");
  EXPECT_NE(error("max-prefill-tokens = 0").find("expected a whole number of tokens in [1, "),
            std::string::npos);
  EXPECT_NE(error("max-total-tokens = -5").find("expected a whole number of tokens of at least 1"),
            std::string::npos);
}

TEST(SpecLifecycle, DefaultsAndBounds) {
  auto d = ClusterMustParse(ClusterSpecText("hosts = [\"a\"]"));
  EXPECT_EQ(d.lifecycle.start_timeout_s, 1800);
  EXPECT_EQ(d.lifecycle.stop_grace_s, 30);
  EXPECT_FALSE(d.lifecycle.reuse_server);
  auto s =
      ClusterMustParse(ClusterSpecText("hosts = [\"a\"]", "",
                                       "[lifecycle]\nstart_timeout_s = 60\nreuse_server = true\n"
                                       "memory_release_mib = 512"));
  EXPECT_EQ(s.lifecycle.start_timeout_s, 60);
  EXPECT_TRUE(s.lifecycle.reuse_server);
  EXPECT_EQ(s.lifecycle.memory_release_mib, 512);
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "", "[lifecycle]\nstart_timout_s = 60")),
      "/s/spec.toml:16:1: unknown key 'lifecycle.start_timout_s' (did you mean "
      "'start_timeout_s'?)");
  EXPECT_EQ(
      ClusterErrorOf(ClusterSpecText("hosts = [\"a\"]", "", "[lifecycle]\nstop_grace_s = -1")),
      "/s/spec.toml:16:16: key 'lifecycle.stop_grace_s': expected a number in [0, 3600], "
      "got -1");
}

TEST(SpecVersion, ParsesReleaseTags) {
  EXPECT_EQ(*ParseVersion("0.5.18"), (std::vector<int>{0, 5, 18}));
  EXPECT_EQ(*ParseVersion("v0.5.14.post1"), (std::vector<int>{0, 5, 14}));
  EXPECT_EQ(*ParseVersion("0.5.9rc2"), (std::vector<int>{0, 5, 9}));
  EXPECT_FALSE(ParseVersion("main").has_value());
}

}  // namespace
}  // namespace ppsearch::spec
