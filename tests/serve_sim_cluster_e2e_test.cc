// What the real-cluster runner needs from serve-sim, rehearsed on loopback:
// SGLang's full launch command (flags serve-sim does not model are kept),
// GPU memory registered in --gpu-state-dir and read back by `ppsearch
// smi-sim` as nvidia-smi's answers, a fault plan that kills one node of a
// four-node deployment mid-run, start failures, SIGTERM handling and leaked
// GPU memory. Every wait is bounded.

#include <filesystem>

#include "nvidia_smi/snapshot_testing.h"
#include "serve_sim_fixture.h"

namespace ppsearch::testing {
namespace {

// Qwen3-235B TP8 on the default GPU (85,651 MiB): pools this large leave
// about 600 MiB before any batch, room for a short prompt's activations but
// not for a full 8,192-token chunk's (about 1,300 MiB).
constexpr const char* kOutgrownFraction = "0.92";

class ServeSimClusterE2e : public ServeSimE2e {
 protected:
  // `ppsearch smi-sim --state-dir DIR <query>`'s GPU lines, parsed as nvidia-smi's.
  std::vector<nvidia_smi::GpuMemory> Smi(const std::filesystem::path& dir) {
    nvidia_smi::ShellRunner shell;
    auto gpus = nvidia_smi::TakeSnapshot(shell, bin_ + " smi-sim --state-dir " + dir.string() +
                                                    " --query-gpu=index,uuid,name,memory.used,"
                                                    "memory.total --format=csv,noheader,nounits");
    EXPECT_TRUE(gpus.ok()) << gpus.error().message;
    return gpus.ok() ? *gpus : std::vector<nvidia_smi::GpuMemory>{};
  }
  double UsedMib(const std::filesystem::path& dir) {
    double used = 0;
    for (const auto& g : Smi(dir)) used += g.used_mib.value_or(0);
    return used;
  }
  bool WaitUsed(const std::filesystem::path& dir, bool want_used, double timeout_s) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (Clock::now() < deadline) {
      if ((UsedMib(dir) > 0) == want_used) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
};

TEST_F(ServeSimClusterE2e, RunnersFourNodeCommandAndAFaultPlanKillingNodeTwo) {
  const int dist = FreePort();
  const std::string plan = (dir_ / "faults.txt").string();
  {
    std::ofstream f(plan);
    f << "# one fault, node 2 of this sample\n"
         "pp2-tp16-ep4_c8_r1/n2 --fault-die-after-s 3\n"
         "pp2-tp16-ep4_c8_r2/n0 --fault-never-ready\n";
  }
  std::vector<int> ports;
  std::vector<pid_t> pids;
  for (int n = 0; n < 4; ++n) {
    ports.push_back(FreePort());
    const std::string nd = "n" + std::to_string(n);
    std::filesystem::create_directories(dir_ / nd);
    // The runner's command: [engine] command + SGLang's launch flags (ports are free ones).
    pids.push_back(Start(
        "--time-scale 100 --gpu-state-dir " + (dir_ / nd).string() + " --fault-plan " + plan +
            " --fault-key pp2-tp16-ep4_c8_r1/" + nd +
            " --model-path /models/kimi-k3 --model-config data/models/kimi-k3"
            " --tp-size 16 --pp-size 2 --ep-size 4 --nnodes 4 --node-rank " +
            std::to_string(n) + " --dist-init-addr 127.0.0.1:" + std::to_string(dist) +
            " --host 127.0.0." + std::to_string(n + 1) + " --port " + std::to_string(ports[n]) +
            " --moe-runner-backend flashinfer_mxfp4 --moe-a2a-backend none"
            " --chunked-prefill-size 8192 --disable-radix-cache --trust-remote-code"
            " --watchdog-timeout 3600",
        nd));
  }
  ASSERT_TRUE(WaitHealthy(ports[0], 30)) << Log("n0") << Log("n2");
  const auto ready = Clock::now();
  EXPECT_NE(Log("n0").find("moe_a2a_backend='none', nnodes=4, node_rank=0"), std::string::npos);
  EXPECT_NE(Log("n0").find("moe_runner_backend='flashinfer_mxfp4', disable_radix_cache=True, "
                           "trust_remote_code=True, watchdog_timeout=3600)"),
            std::string::npos)
      << Log("n0");
  httplib::Client c("127.0.0.1", ports[0]);
  auto info = c.Get("/server_info");
  ASSERT_TRUE(info);
  json ij = json::parse(info->body);
  EXPECT_EQ(ij["moe_runner_backend"], "flashinfer_mxfp4");
  EXPECT_EQ(ij["watchdog_timeout"], 3600);
  EXPECT_EQ(ij["tp_size"], 16);

  // Each node's GPUs hold the memory model's per-rank peak, as /gpu_memory says.
  for (int n = 0; n < 4; ++n) {
    const auto gpus = Smi(dir_ / ("n" + std::to_string(n)));
    ASSERT_EQ(gpus.size(), 8u);
    EXPECT_GT(*gpus[0].used_mib, 10000) << n;
  }
  nvidia_smi::ShellRunner shell;
  auto served = nvidia_smi::TakeSnapshot(
      shell, "curl -s http://127.0.0.1:" + std::to_string(ports[0]) + "/gpu_memory");
  ASSERT_TRUE(served.ok());
  EXPECT_NEAR(*(*served)[0].used_mib, *Smi(dir_ / "n0")[0].used_mib, 1.0);

  // Node 2 dies 3 s after it joined; node 0 sees the lost peer and exits 1.
  std::optional<int> code2 = WaitExit(pids[2], 20);
  ASSERT_TRUE(code2.has_value()) << Log("n2");
  EXPECT_EQ(*code2, 1);
  EXPECT_GE(std::chrono::duration<double>(Clock::now() - ready).count(), 1.5);
  std::optional<int> code0 = WaitExit(pids[0], 10);
  ASSERT_TRUE(code0.has_value()) << Log("n0");
  EXPECT_EQ(*code0, 1);
  EXPECT_NE(Log("n0").find("Node 2 lost"), std::string::npos) << Log("n0");
  EXPECT_EQ(UsedMib(dir_ / "n2"), 0) << "a dead node's GPUs are free";
  EXPECT_EQ(UsedMib(dir_ / "n0"), 0);
  for (int n : {1, 3}) {
    ::kill(pids[n], SIGTERM);
    EXPECT_TRUE(WaitExit(pids[n], 10).has_value());
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir_ / "n1"));
}

// A GPU holds the activations of the largest batch its server has run
// (the caching allocator keeps their blocks): before any request only the
// pools; after a long prompt more, on node 1 too, which node 0 tells.
TEST_F(ServeSimClusterE2e, EveryNodesGpusHoldTheLargestBatchSoFar) {
  const int dist = FreePort();
  std::vector<int> ports;
  for (int n = 0; n < 2; ++n) {
    ports.push_back(FreePort());
    const std::string nd = "n" + std::to_string(n);
    std::filesystem::create_directories(dir_ / nd);
    Start(std::string("--model-path ") + kModel +
              " --tp-size 4 --pp-size 2 --nnodes 2 --node-rank " + std::to_string(n) +
              " --dist-init-addr 127.0.0.1:" + std::to_string(dist) + " --host 127.0.0.1 --port " +
              std::to_string(ports[n]) + " --time-scale 100 --gpu-state-dir " +
              (dir_ / nd).string(),
          nd);
  }
  ASSERT_TRUE(WaitHealthy(ports[0], 30)) << Log("n0") << Log("n1");
  const double idle0 = UsedMib(dir_ / "n0"), idle1 = UsedMib(dir_ / "n1");
  ASSERT_GT(idle0, 0);
  ASSERT_GT(idle1, 0);
  auto answer = Post(
      ports[0], "/generate",
      {{"input_ids", std::vector<int>(6000, 7)}, {"sampling_params", {{"max_new_tokens", 1}}}}, 30);
  ASSERT_TRUE(answer) << Log("n0");
  ASSERT_EQ(answer->status, 200) << answer->body;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline && UsedMib(dir_ / "n1") <= idle1)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GT(UsedMib(dir_ / "n0"), idle0) << Log("n0");
  EXPECT_GT(UsedMib(dir_ / "n1"), idle1) << Log("n1");
  nvidia_smi::ShellRunner shell;
  auto served = nvidia_smi::TakeSnapshot(
      shell, "curl -s http://127.0.0.1:" + std::to_string(ports[0]) + "/gpu_memory");
  ASSERT_TRUE(served.ok());
  EXPECT_NEAR(*(*served)[0].used_mib, *Smi(dir_ / "n0")[0].used_mib, 1.0);
}

// A server whose pools leave a full chunk no room runs out of memory on it,
// as SGLang's does: the error in its log, its client's connection gone,
// exit 1, its GPUs released.
TEST_F(ServeSimClusterE2e, AStageItsBatchesOutgrowRunsOutOfMemory) {
  const int port = FreePort();
  std::filesystem::create_directories(dir_ / "gpus");
  pid_t pid = Start(Common(port) + " --mem-fraction-static " + kOutgrownFraction +
                    " --gpu-state-dir " + (dir_ / "gpus").string());
  ASSERT_TRUE(WaitHealthy(port, 20)) << Log();
  for (const auto& g : Smi(dir_ / "gpus")) EXPECT_LT(*g.used_mib, *g.total_mib);
  auto fits = Post(
      port, "/generate",
      {{"input_ids", std::vector<int>(100, 7)}, {"sampling_params", {{"max_new_tokens", 1}}}}, 10);
  ASSERT_TRUE(fits) << Log();
  EXPECT_EQ(fits->status, 200) << fits->body;
  for (const auto& g : Smi(dir_ / "gpus")) EXPECT_LT(*g.used_mib, *g.total_mib);
  auto answer = Post(
      port, "/generate",
      {{"input_ids", std::vector<int>(9000, 7)}, {"sampling_params", {{"max_new_tokens", 1}}}}, 10);
  EXPECT_FALSE(answer && answer->status == 200);
  std::optional<int> code = WaitExit(pid, 10);
  ASSERT_TRUE(code.has_value()) << Log();
  EXPECT_EQ(*code, 1);
  EXPECT_NE(Log().find("torch.OutOfMemoryError: CUDA out of memory."), std::string::npos) << Log();
  const std::string said = ReadText(dir_ / "server.out");
  EXPECT_NE(said.find("ran out of GPU memory: stage 0 needs"), std::string::npos) << said;
  EXPECT_TRUE(std::filesystem::is_empty(dir_ / "gpus"));
}

TEST_F(ServeSimClusterE2e, ExitDuringStartPrintsATracebackAndNeverBecomesReady) {
  const int port = FreePort();
  std::filesystem::create_directories(dir_ / "gpus");
  pid_t pid = Start(Common(port) + " --gpu-state-dir " + (dir_ / "gpus").string() +
                    " --fault-exit-during-start");
  std::optional<int> code = WaitExit(pid, 20);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 1);
  const std::string log = Log();
  EXPECT_NE(log.find("Traceback (most recent call last):"), std::string::npos) << log;
  EXPECT_NE(log.find("RuntimeError: Error(s) in loading state_dict for Qwen3MoeForCausalLM"),
            std::string::npos);
  EXPECT_NE(log.find("Received sigquit from a child process"), std::string::npos);
  EXPECT_EQ(log.find("fired up"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(dir_ / "gpus"));
}

TEST_F(ServeSimClusterE2e, SigtermStopsWithinASecondEvenWithAHungRequest) {
  const int port = FreePort();
  std::filesystem::create_directories(dir_ / "gpus");
  pid_t pid =
      Start(Common(port) + " --fault-hang-after 0 --gpu-state-dir " + (dir_ / "gpus").string());
  ASSERT_TRUE(WaitHealthy(port, 20)) << Log();
  EXPECT_GT(UsedMib(dir_ / "gpus"), 0);
  std::thread client([&] {
    Post(port, "/generate", {{"input_ids", {1}}, {"sampling_params", {{"max_new_tokens", 1}}}}, 5);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t0 = Clock::now();
  ::kill(pid, SIGTERM);
  std::optional<int> code = WaitExit(pid, 5);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 1.5);
  client.join();
  EXPECT_TRUE(std::filesystem::is_empty(dir_ / "gpus"));
}

TEST_F(ServeSimClusterE2e, IgnoredSigtermNeedsSigkillAndADeadPidFreesItsGpus) {
  const int port = FreePort();
  std::filesystem::create_directories(dir_ / "gpus");
  pid_t pid =
      Start(Common(port) + " --fault-ignore-sigterm --gpu-state-dir " + (dir_ / "gpus").string());
  ASSERT_TRUE(WaitHealthy(port, 20)) << Log();
  ::kill(pid, SIGTERM);
  EXPECT_FALSE(WaitExit(pid, 1.5).has_value()) << "SIGTERM was not ignored";
  EXPECT_NE(Log().find("Received SIGTERM; ignoring it (--fault-ignore-sigterm)."),
            std::string::npos);
  EXPECT_EQ(Status(port, "/health"), 200);
  ::kill(pid, SIGKILL);
  ASSERT_TRUE(WaitExit(pid, 5).has_value());
  EXPECT_FALSE(std::filesystem::is_empty(dir_ / "gpus")) << "SIGKILL leaves the file";
  EXPECT_EQ(UsedMib(dir_ / "gpus"), 0) << "but its pid is dead";
}

TEST_F(ServeSimClusterE2e, LeakedGpuMemoryIsReleasedLate) {
  const int port = FreePort();
  std::filesystem::create_directories(dir_ / "gpus");
  pid_t pid =
      Start(Common(port) + " --fault-leak-gpu-s 2 --gpu-state-dir " + (dir_ / "gpus").string());
  ASSERT_TRUE(WaitHealthy(port, 20)) << Log();
  ::kill(pid, SIGTERM);
  ASSERT_TRUE(WaitExit(pid, 5).has_value());
  const auto exited = Clock::now();
  EXPECT_GT(UsedMib(dir_ / "gpus"), 0) << "held after exit";
  ASSERT_TRUE(WaitUsed(dir_ / "gpus", false, 5));
  EXPECT_GE(std::chrono::duration<double>(Clock::now() - exited).count(), 1.0);
}

TEST_F(ServeSimClusterE2e, FaultPlanErrorsPointAtTheFile) {
  CommandResult missing =
      Run("serve-sim " + Common(FreePort()) + " --fault-plan /nonexistent/f.txt --fault-key k");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/f.txt:0: cannot read the fault plan"), std::string::npos)
      << missing.err;
  const std::string plan = (dir_ / "bad.txt").string();
  {
    std::ofstream f(plan);
    f << "a --fault-never-ready\nk --tp-size 4\n";
  }
  CommandResult bad =
      Run("serve-sim " + Common(FreePort()) + " --fault-plan " + plan + " --fault-key k");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(plan + ":2: only --fault-* flags may appear in a fault plan"),
            std::string::npos)
      << bad.err;
  {
    std::ofstream f(plan);
    f << "k --fault-hang-after x\n";
  }
  CommandResult value =
      Run("serve-sim " + Common(FreePort()) + " --fault-plan " + plan + " --fault-key k");
  EXPECT_EQ(value.exit_code, 2);
  EXPECT_NE(value.err.find(plan + ":1: "), std::string::npos) << value.err;
}

TEST_F(ServeSimClusterE2e, SmiSimWithoutRegistrationsAndUnsupportedQueries) {
  std::filesystem::create_directories(dir_ / "empty");
  const auto gpus = Smi(dir_ / "empty");
  ASSERT_EQ(gpus.size(), 8u);
  EXPECT_EQ(gpus[7].name, "NVIDIA RTX 6000D");
  EXPECT_EQ(*gpus[7].total_mib, 85651);
  EXPECT_EQ(*gpus[7].used_mib, 0);
  CommandResult apps = Run("smi-sim --state-dir " + (dir_ / "empty").string() +
                           " --query-compute-apps=pid,process_name,used_memory"
                           " --format=csv,noheader,nounits");
  EXPECT_EQ(apps.exit_code, 0);
  EXPECT_EQ(apps.out, "");
  CommandResult bad = Run("smi-sim --state-dir " + (dir_ / "empty").string() +
                          " --gpus 2 --query-gpu=index,power.draw --format=csv");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("Field \"power.draw\" is not a valid field to query."), std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace ppsearch::testing
