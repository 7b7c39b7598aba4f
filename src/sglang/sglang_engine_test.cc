// The SGLang engine's lifecycle through the fake launcher (no processes):
// the order in which a sample checks the hosts, starts every node, probes,
// benchmarks, snapshots, stops and waits for the GPUs, and the verdict each
// failure gets. Node 0 "serves" through a loopback HTTP stand-in that answers as
// SGLang does while its fake server runs; node 1's address has nothing on it.

#include "sglang/sglang_engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "analysis/log_scan.h"
#include "evidence/verdict.h"
#include "launch/fake_launcher_testing.h"
#include "loadgen/scripted_server_testing.h"
#include "sglang/commands.h"
#include "sglang/server_group.h"
#include "spec/spec_parser.h"
#include "testkit/free_port.h"
#include "util/files.h"

namespace ppsearch::sglang {
namespace {

namespace fs = std::filesystem;
using launch::FakeCall;
using launch::FakeLauncher;
using launch::FakeOutput;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr const char* kIdleGpuCsv =
    "0, GPU-0, NVIDIA H200, 1, 143771, 570.86\n1, GPU-1, NVIDIA H200, 1, 143771, 570.86\n";
constexpr const char* kBusyGpus =
    "0, GPU-0, NVIDIA H200, 120000, 143771, 570.86\n"
    "1, GPU-1, NVIDIA H200, 120000, 143771, 570.86\n";

// What the engine asks of node 0, answered as SGLang does: health, version,
// cache flush, and /generate streamed: the first token, then the rest of
// the max_new_tokens asked in one chunk (ignore_eos).
loadgen::ScriptedResponse AsSglang(const loadgen::ScriptedRequest& req) {
  loadgen::ScriptedResponse r;
  r.content_type = "application/json";
  if (req.path == "/health_generate" || req.path == "/flush_cache") return r;
  if (req.path == "/server_info") {
    r.pieces = {{0, R"({"version": "0.5.9"})", false}};
    return r;
  }
  if (req.path != "/generate") {
    r.status = 404;
    return r;
  }
  const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
  const int64_t prompt =
      body.contains("input_ids") ? static_cast<int64_t>(body["input_ids"].size()) : 0;
  int64_t asked = 2;
  if (body.is_object() && body.contains("sampling_params") &&
      body["sampling_params"].contains("max_new_tokens"))
    asked = body["sampling_params"]["max_new_tokens"].get<int64_t>();
  r.content_type = "text/event-stream";
  r.pieces = {{0, loadgen::NativeChunk(prompt, 1, asked == 1), true}};
  if (asked > 1) r.pieces.push_back({0, loadgen::NativeChunk(prompt, asked, true), false});
  r.pieces.back().bytes += "data: [DONE]\n\n";
  return r;
}

// The verdict as the manifest names it.
std::string VerdictOf(const run::SampleOutput& out) { return evidence::VerdictName(out.verdict); }

class SglangEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ppsearch_sglang_engine_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    paths_.root = dir_.string();
    const std::vector<int> ports = ppsearch::testing::FreePorts(2);
    port_ = ports[0];
    dist_port_ = ports[1];
    sample_.layout.pp = 2;
    sample_.layout.tp = 2;
    sample_.layout.ep = 1;
    sample_.concurrency = 2;
    // Node 0 serves HTTP while its server runs, as SGLang's HTTP server does.
    launch::FakeServerScript node0;
    node0.log = "The server is fired up and ready to roll!\n";
    node0.on_start = [this] {
      auto served = loadgen::ScriptedServer::Start(
          [this](const loadgen::ScriptedRequest& req) {
            loadgen::ScriptedResponse hang;
            hang.end = loadgen::ScriptedResponse::End::kHang;
            // Ctrl-C while the server holds the readiness probe open, as a
            // server still loading its weights can.
            if (req.path == "/health_generate" && stop_at_health_) {
              stop_ = true;
              if (health_hangs_) return hang;
              loadgen::ScriptedResponse loading;
              loading.status = 503;
              return loading;
            }
            if (req.path != "/generate") return AsSglang(req);
            const int n = ++generate_requests_;
            // Ctrl-C while the benchmark's requests are in flight, unanswered.
            if (stop_at_generate_ > 0 && n >= stop_at_generate_) {
              stop_ = true;
              return hang;
            }
            if (n == die_at_generate_) launcher_.ExitServer(1, 1);
            if (n == peer_lost_at_generate_) {
              // Node 0 notices first, as SGLang's rank 0 does when NCCL loses
              // a peer; node 1's exit is seen half a second later.
              std::ofstream log(paths_.live_log(sample_, "n0"), std::ios::app);
              log << "[2026-01-01 00:00:00] Node 1 lost (NCCL error: remote process exited or "
                     "there was a network error)\n";
              exit_later_ = std::thread([this] {
                std::this_thread::sleep_for(std::chrono::milliseconds(500));
                launcher_.ExitServer(1, 1);
              });
            }
            if (peer_lost_at_generate_ > 0 && n >= peer_lost_at_generate_) return hang;
            if (fatal_at_generate_ < 0 || n < fatal_at_generate_) return AsSglang(req);
            // Node 1 prints a fatal line and stays up; node 0 answers nothing more.
            if (n == fatal_at_generate_) {
              std::ofstream log(paths_.live_log(sample_, "n1"), std::ios::app);
              log << "[2026-01-01 00:00:00 PP1 TP0] Load batch\nFatal Python error: "
                     "Segmentation fault\n";
            }
            return hang;
          },
          port_);
      ASSERT_TRUE(served.ok()) << served.error().message;
      http_ = std::move(served).value();
    };
    node0.on_exit = [this] {
      http_.reset();
      // Node 1 notices at once, as SGLang's nodes do when node 0 goes away.
      if (peer_logs_node0_exit_)
        std::ofstream(paths_.live_log(sample_, "n1"), std::ios::app)
            << "[2026-01-01 00:00:00 PP1 TP0] Lost the connection to node 0 at --dist-init-addr "
               "(NCCL error: remote process exited or there was a network error)\n";
    };
    launcher_.ScriptServer(0, node0);
    launcher_.ScriptCommand(FakeLauncher::kAnyNode, "--query-compute-apps", {FakeOutput("")});
    launcher_.ScriptCommand(FakeLauncher::kAnyNode, "--query-gpu", {FakeOutput(kIdleGpuCsv)});
  }

  void TearDown() override {
    if (exit_later_.joinable()) exit_later_.join();
    engine_.reset();
    http_.reset();
    fs::remove_all(dir_);
  }

  spec::Spec MakeSpec(const std::string& lifecycle_extra = "",
                      const std::string& engine_extra = "") {
    const std::string text =
        "[experiment]\nname = \"t\"\n[cluster]\nhosts = [{name = \"n0\", address = "
        "\"127.0.0.1\"}, {name = \"n1\", address = \"127.0.0.2\"}]\ngpus_per_node = 2\n"
        "server_port = " +
        std::to_string(port_) + "\ndist_init_port = " + std::to_string(dist_port_) +
        "\n[engine]\nmodel_config = \"m.json\"\nmodel_path = \"/models/k3\"\n" + engine_extra +
        "\n[sweep]\npp = [2]\nconcurrency = [2]\n[workload]\ninput_tokens = 16\n"
        "output_tokens = 2\nrequests = 4\n[lifecycle]\nstart_timeout_s = 10\n"
        "poll_interval_s = " +
        poll_interval_s_ +
        "\nrequest_timeout_s = 10\nstop_grace_s = 0.2\n"
        "memory_release_timeout_s = " +
        std::to_string(release_timeout_s_) + "\n" + lifecycle_extra;
    Result<spec::Spec> s = spec::ParseSpec(text, (dir_ / "spec.toml").string(), {});
    EXPECT_TRUE(s.ok()) << s.error().message;
    return s.ok() ? *s : spec::Spec{};
  }

  run::SampleOutput RunSample(const spec::Spec& spec, bool next_same_layout = false) {
    if (!engine_) engine_ = std::make_unique<SglangSampleEngine>(spec, launcher_);
    run::SampleContext ctx;
    ctx.id = sample_;
    ctx.paths = &paths_;
    ctx.run_id = "t";
    ctx.next_same_layout = next_same_layout;
    ctx.stop = &stop_;
    Result<run::SampleOutput> out = engine_->Run(ctx);
    EXPECT_TRUE(out.ok()) << out.error().message;
    return out.ok() ? *out : run::SampleOutput{};
  }

  // The launcher's calls in short: "apps 0" and "gpus 0" (nvidia-smi's
  // process and memory queries), "start 1", "SIGTERM 0", "run 1 <command>".
  std::vector<std::string> Steps() const {
    std::vector<std::string> out;
    for (const FakeCall& c : launcher_.calls()) {
      const std::string node = std::to_string(c.node);
      std::string command;
      for (const auto& w : c.argv) command += (command.empty() ? "" : " ") + w;
      switch (c.kind) {
        case FakeCall::Kind::kStart:
          out.push_back("start " + node);
          break;
        case FakeCall::Kind::kSignal:
          out.push_back(launch::SignalName(c.signal) + " " + node);
          break;
        case FakeCall::Kind::kRunOnHost:
          if (command.find("--query-compute-apps") != std::string::npos) {
            out.push_back("apps " + node);
          } else if (command.find("--query-gpu") != std::string::npos) {
            out.push_back("gpus " + node);
          } else {
            out.push_back("run " + node + " " + command);
          }
          break;
        case FakeCall::Kind::kStopRecorded:
          out.push_back("stop-recorded " + node);
          break;
      }
    }
    return out;
  }

  bool NoServerStateLeft() const {
    std::error_code ec;
    return !fs::exists(paths_.server_state_dir(), ec) || fs::is_empty(paths_.server_state_dir());
  }

  fs::path dir_;
  evidence::RunPaths paths_;
  evidence::SampleId sample_;
  int port_ = 0;
  int dist_port_ = 0;
  std::atomic<int> generate_requests_{0};
  int die_at_generate_ = -1;  // the /generate request during which node 1 exits
  int release_timeout_s_ = 5;
  // The /generate request from which node 1's log holds a fatal line and no
  // request is answered.
  int fatal_at_generate_ = -1;
  // The /generate request at which node 0 logs that node 1 is lost; node 1
  // exits half a second later (exit_later_) and nothing more is answered.
  int peer_lost_at_generate_ = -1;
  std::thread exit_later_;
  bool peer_logs_node0_exit_ = false;  // node 1 logs node 0's exit when it comes
  std::atomic<bool> stop_{false};      // the run's stop flag (SIGINT/SIGTERM)
  bool stop_at_health_ = false;        // set it when the readiness probe arrives
  bool health_hangs_ = true;           // ... and never answer it; else answer 503 (loading)
  std::string poll_interval_s_ = "0.01";
  int stop_at_generate_ = -1;  // set it at this /generate request; answer none from it
  FakeLauncher launcher_{{"n0", "n1"}};
  std::unique_ptr<loadgen::ScriptedServer> http_;
  std::unique_ptr<SglangSampleEngine> engine_;
};

TEST_F(SglangEngineTest, ASampleStartsEveryNodeThenStopsThemAndWaitsForTheGpus) {
  // Node 0's GPUs: idle at preflight, held by the server at the snapshot and
  // at the first poll after the stop, released at the second.
  launcher_.ScriptCommand(0, "--query-gpu",
                          {FakeOutput(kIdleGpuCsv), FakeOutput(kBusyGpus), FakeOutput(kBusyGpus),
                           FakeOutput(kIdleGpuCsv)});
  const spec::Spec spec = MakeSpec();
  const run::SampleOutput out = RunSample(spec);
  EXPECT_EQ(VerdictOf(out), "ok") << out.detail;
  EXPECT_EQ(out.records.size(), 4u);
  ASSERT_TRUE(out.bench.ready);
  EXPECT_EQ(out.bench.ready->server_version, "0.5.9");
  EXPECT_THAT(Steps(), ElementsAre(
                           // preflight: nobody else holds GPU memory
                           "apps 0", "gpus 0", "apps 1", "gpus 1",
                           // every node's server
                           "start 0", "start 1",
                           // after the benchmark: the memory snapshot
                           "gpus 0", "gpus 1",
                           // stop, then poll until every GPU is released
                           "SIGTERM 0", "SIGTERM 1", "gpus 0", "gpus 1", "gpus 0", "gpus 1"));
  ASSERT_EQ(out.nodes.size(), 2u);
  EXPECT_EQ(out.nodes[0].gpu_csv, kBusyGpus);
  EXPECT_EQ(out.nodes[1].gpu_csv, kIdleGpuCsv);
  EXPECT_THAT(out.nodes[0].log, HasSubstr("ready to roll"));
  EXPECT_THAT(out.nodes[0].log, HasSubstr("[ppsearch] stopping the server"));
  // Each node is launched with its own rank, its output streamed to live/.
  const std::vector<FakeCall> calls = launcher_.calls();
  EXPECT_THAT(calls[5].argv, ::testing::Contains("--node-rank"));
  EXPECT_EQ(calls[5].log_path, paths_.live_log(sample_, "n1"));
  EXPECT_TRUE(NoServerStateLeft());
  engine_->Finish();
  EXPECT_EQ(launcher_.calls().size(), calls.size()) << "nothing is left to stop";
}

// Stopping node 0 makes its peers log a lost connection before their own
// SIGTERM arrives: every log's stop marker is written before any node is
// signalled, so those lines fall after it and are no finding of the sample.
// Whoever can write the results directory while a run goes on must not make
// it append to, or copy out, another file: a log planted as a link, or a
// sample's live/ directory planted as a link to another directory.
TEST_F(SglangEngineTest, ALogPlantedAsALinkIsNeitherWrittenNorCopiedIntoTheEvidence) {
  const fs::path victim = dir_ / "victim.txt";
  std::ofstream(victim) << "another file's secret\n";
  const fs::path live = fs::path(paths_.live_log(sample_, "n1")).parent_path();
  fs::create_directories(live);
  fs::create_symlink(victim, live / "n1.log");
  const run::SampleOutput out = RunSample(MakeSpec());
  EXPECT_EQ(VerdictOf(out), "engine_failed_to_start");
  EXPECT_THAT(out.detail, HasSubstr("cannot start the server on node 1 (n1): cannot open " +
                                    paths_.live_log(sample_, "n1") +
                                    ": is a symbolic link, expected a regular file"));
  for (const auto& node : out.nodes) EXPECT_THAT(node.log, Not(HasSubstr("secret"))) << node.host;
  EXPECT_EQ(*ReadFile(victim.string()), "another file's secret\n");
  EXPECT_TRUE(NoServerStateLeft());
}

TEST_F(SglangEngineTest, ASampleDirectoryPlantedAsALinkIsNotWrittenThrough) {
  const fs::path elsewhere = dir_ / "elsewhere";
  fs::create_directories(elsewhere);
  const fs::path live = fs::path(paths_.live_log(sample_, "n0")).parent_path();
  fs::create_directories(live.parent_path());
  fs::create_symlink(elsewhere, live);
  const run::SampleOutput out = RunSample(MakeSpec());
  EXPECT_EQ(VerdictOf(out), "engine_failed_to_start");
  EXPECT_THAT(out.detail, HasSubstr("is a symbolic link or not a directory; refusing to write "
                                    "through it"));
  EXPECT_TRUE(fs::is_empty(elsewhere));
}

// A run directory deleted while its servers run is not recreated by the
// stop marker: a stray live/ would block the run id.
TEST_F(SglangEngineTest, StoppingAfterTheRunDirectoryWasDeletedRecreatesNothing) {
  const spec::Spec spec = MakeSpec();
  ServerGroup group(spec, launcher_, paths_);
  ASSERT_TRUE(group.Start(sample_, "t").ok());
  fs::remove_all(dir_);
  group.Stop();
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(SglangEngineTest, APeerLoggingTheStopOfNodeZeroIsNoFinding) {
  peer_logs_node0_exit_ = true;
  const run::SampleOutput out = RunSample(MakeSpec());
  EXPECT_EQ(VerdictOf(out), "ok") << out.detail;
  ASSERT_EQ(out.nodes.size(), 2u);
  const std::string& log = out.nodes[1].log;
  const size_t marker = log.find("[ppsearch] stopping the server");
  ASSERT_NE(marker, std::string::npos) << log;
  EXPECT_GT(log.find("Lost the connection to node 0"), marker) << log;
  EXPECT_TRUE(analysis::ScanLog(log, "n1.log").empty()) << log;
}

// GPU memory that was not released in time after one sample: the next one
// waits for it again before its preflight, so memory that is only slow to
// go does not fail a second sample.
TEST_F(SglangEngineTest, AfterAReleaseTimeoutTheNextSampleWaitsForTheGpusBeforeItsPreflight) {
  release_timeout_s_ = 0;  // every wait polls exactly once
  // Node 0: idle at the first preflight; held at the snapshot, at the
  // release poll and at the next sample's wait; released at its preflight.
  launcher_.ScriptCommand(0, "--query-gpu",
                          {FakeOutput(kIdleGpuCsv), FakeOutput(kBusyGpus), FakeOutput(kBusyGpus),
                           FakeOutput(kBusyGpus), FakeOutput(kIdleGpuCsv)});
  const spec::Spec spec = MakeSpec();
  const run::SampleOutput first = RunSample(spec);
  EXPECT_EQ(VerdictOf(first), "timeout");
  EXPECT_THAT(first.detail, HasSubstr("GPU memory not released within 0 s"));
  const size_t first_calls = Steps().size();
  const run::SampleOutput second = RunSample(spec);
  EXPECT_EQ(VerdictOf(second), "ok") << second.detail;
  const std::vector<std::string> steps = Steps();
  ASSERT_GT(steps.size(), first_calls + 6);
  EXPECT_THAT(
      std::vector<std::string>(steps.begin() + first_calls, steps.begin() + first_calls + 6),
      ElementsAre("gpus 0", "gpus 1", "apps 0", "gpus 0", "apps 1", "gpus 1"));
  EXPECT_THAT(second.bench.release_wait, HasSubstr("n0 GPU 0 holds"));
}

TEST_F(SglangEngineTest, AServerThatExitsDuringStartFailsTheSampleNamingItsNode) {
  launch::FakeServerScript crash;
  crash.exit_code_at_start = 1;
  crash.log = "Traceback (most recent call last):\nRuntimeError: CUDA error: out of memory\n";
  launcher_.ScriptServer(1, crash);
  const run::SampleOutput out = RunSample(MakeSpec());
  EXPECT_EQ(VerdictOf(out), "engine_failed_to_start");
  EXPECT_THAT(out.detail,
              StartsWith("node 1 (n1) exited with status 1 before the server was ready; the last "
                         "lines of its log (" +
                         paths_.service(sample_, "n1") + "):\n"));
  EXPECT_THAT(out.detail, HasSubstr("    RuntimeError: CUDA error: out of memory\n"));
  // The node that did start is stopped; the one that exited is not signalled.
  EXPECT_THAT(Steps(), ElementsAre("apps 0", "gpus 0", "apps 1", "gpus 1", "start 0", "start 1",
                                   "gpus 0", "gpus 1", "SIGTERM 0"));
  EXPECT_THAT(out.nodes[1].log, HasSubstr("Traceback"));
  EXPECT_TRUE(NoServerStateLeft());
}

TEST_F(SglangEngineTest, AServerThatIgnoresSigtermIsKilledAfterTheGraceAndCleanedUp) {
  launch::FakeServerScript stubborn;
  stubborn.ignores_sigterm = true;
  launcher_.ScriptServer(1, stubborn);
  launcher_.ScriptCommand(1, "docker rm", {FakeOutput("")});
  // In a container, so what outlives the killed client is removed.
  const spec::Spec spec = MakeSpec("", "image = \"lmsysorg/sglang:v0.5.9\"");
  const run::SampleOutput out = RunSample(spec);
  EXPECT_EQ(VerdictOf(out), "ok") << out.detail;
  EXPECT_THAT(Steps(), ElementsAre("apps 0", "gpus 0", "apps 1", "gpus 1", "start 0", "start 1",
                                   "gpus 0", "gpus 1", "SIGTERM 0", "SIGTERM 1", "SIGKILL 1",
                                   "run 1 docker rm -f ppsearch-" + sample_.str() + "-n1", "gpus 0",
                                   "gpus 1"));
  EXPECT_THAT(out.bench.stop_notes,
              ElementsAre("node 1 (n1) ignored SIGTERM for 0.2 s and was killed"));
  EXPECT_TRUE(NoServerStateLeft());
}

TEST_F(SglangEngineTest, PrivilegedStepsRunThroughSudoWithThePasswordOnStdinOnly) {
  launch::FakeServerScript stubborn;
  stubborn.ignores_sigterm = true;
  launcher_.ScriptServer(1, stubborn);
  launcher_.ScriptCommand(1, "docker rm", {FakeOutput("")});
  const std::string password = "s3cret pw'$(id)";
  std::ofstream(dir_ / "pw") << password << "\n";
  const spec::Spec spec = MakeSpec("",
                                   "image = \"lmsysorg/sglang:v0.5.9\"\n[engine.env]\n"
                                   "PPS_V = \"x\"\n[cluster.sudo]\n"
                                   "steps = [\"container\"]\npassword_file = \"pw\"");
  Result<launch::Sudo> sudo = launch::Sudo::FromSpec(spec.cluster.sudo);
  ASSERT_TRUE(sudo.ok()) << sudo.error().message;
  launcher_.set_sudo(*sudo);
  const run::SampleOutput out = RunSample(spec);
  EXPECT_EQ(VerdictOf(out), "ok") << out.detail;
  const std::string name = "ppsearch-" + sample_.str() + "-n1";
  EXPECT_THAT(Steps(),
              ElementsAre("apps 0", "gpus 0", "apps 1", "gpus 1", "start 0", "start 1", "gpus 0",
                          "gpus 1", "SIGTERM 0", "SIGTERM 1", "SIGKILL 1",
                          "run 1 sudo -k -S -p  -- docker rm -f " + name, "gpus 0", "gpus 1"));
  int starts = 0;
  for (const FakeCall& c : launcher_.calls()) {
    for (const auto& w : c.argv) EXPECT_THAT(w, ::testing::Not(HasSubstr(password)));
    const bool cleanup = c.kind == FakeCall::Kind::kRunOnHost && c.argv[0] == "sudo";
    if (c.kind == FakeCall::Kind::kStart || cleanup) {
      EXPECT_EQ(c.input, password + "\n") << c.Describe();
    } else {
      EXPECT_EQ(c.input, "") << c.Describe();  // nvidia-smi runs as the login user
    }
    starts += c.kind == FakeCall::Kind::kStart ? 1 : 0;
  }
  EXPECT_EQ(starts, 2);
  // What commands.txt and a dry run show: sudo around the runtime, no password.
  const std::vector<std::string> commands = SampleCommands(spec, sample_, 1, &launcher_);
  EXPECT_THAT(commands[1], StartsWith("n1: env PPS_V=x sudo -k -S -p '' --preserve-env=PPS_V -- "
                                      "docker run --rm --name " +
                                      name));
  for (const auto& line : commands) EXPECT_THAT(line, ::testing::Not(HasSubstr(password)));
  // Without a password: `sudo -n`, which fails at once where sudo would prompt.
  spec::SudoSpec no_password;
  no_password.steps = {"container"};
  launcher_.set_sudo(*launch::Sudo::FromSpec(no_password));
  EXPECT_THAT(SampleCommands(spec, sample_, 1, &launcher_)[0],
              StartsWith("n0: env PPS_V=x sudo -n --preserve-env=PPS_V -- docker run"));
}

TEST_F(SglangEngineTest, GpuMemoryHeldByAnotherProcessFailsPreflightAndStartsNothing) {
  launcher_.ScriptCommand(1, "--query-compute-apps", {FakeOutput("4242, python3, 40000\n")});
  launcher_.ScriptCommand(1, "--query-gpu", {FakeOutput(kBusyGpus)});
  const run::SampleOutput out = RunSample(MakeSpec());
  EXPECT_EQ(VerdictOf(out), "preflight_failed");
  EXPECT_EQ(out.detail,
            "n1: GPU memory is held by another process: pid 4242 (python3) uses 40000 MiB (more "
            "than lifecycle.preflight_gpu_mib = 1024)");
  // Checked on every node, then only the snapshot: no server was started.
  EXPECT_THAT(Steps(), ElementsAre("apps 0", "gpus 0", "apps 1", "gpus 1", "gpus 0", "gpus 1"));
}

TEST_F(SglangEngineTest, GpuMemoryHeldWithNoProcessListedFailsPreflight) {
  launcher_.ScriptCommand(1, "--query-gpu", {FakeOutput(kBusyGpus)});
  const run::SampleOutput out = RunSample(MakeSpec());
  EXPECT_EQ(VerdictOf(out), "preflight_failed");
  EXPECT_EQ(out.detail,
            "n1: GPU 0 holds 120000 MiB with no process listed; n1: GPU 1 holds 120000 MiB with "
            "no process listed");
  EXPECT_THAT(Steps(), ::testing::Not(::testing::Contains("start 0")));
}

TEST_F(SglangEngineTest, ANodeThatDiesDuringTheBenchmarkEndsItWithEngineDied) {
  die_at_generate_ = 2;  // the readiness probe is the first /generate
  const run::SampleOutput out = RunSample(MakeSpec());
  EXPECT_EQ(VerdictOf(out), "engine_died");
  EXPECT_THAT(out.detail, StartsWith("node 1 (n1) exited with status 1 during the benchmark"));
  EXPECT_THAT(Steps(), ElementsAre("apps 0", "gpus 0", "apps 1", "gpus 1", "start 0", "start 1",
                                   "gpus 0", "gpus 1", "SIGTERM 0", "gpus 0", "gpus 1"));
}

TEST_F(SglangEngineTest, AFatalLineOnAnyNodeEndsTheBenchmarkBeforeTheRequestsTimeOut) {
  fatal_at_generate_ = 2;  // the readiness probe is the first /generate
  const auto started = std::chrono::steady_clock::now();
  const run::SampleOutput out = RunSample(MakeSpec());
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(VerdictOf(out), "engine_died");
  EXPECT_THAT(out.detail, StartsWith("node 1 (n1) log line 2: Fatal Python error: Segmentation "
                                     "fault during the benchmark"));
  // The requests hang for request_timeout_s = 10 s; the log ends the sample first.
  EXPECT_LT(wall_s, 6.0);
  EXPECT_THAT(Steps(),
              ElementsAre("apps 0", "gpus 0", "apps 1", "gpus 1", "start 0", "start 1", "gpus 0",
                          "gpus 1", "SIGTERM 0", "SIGTERM 1", "gpus 0", "gpus 1"));
}

TEST_F(SglangEngineTest, APeersLostLineBlamesTheNodeThatExitsJustAfter) {
  peer_lost_at_generate_ = 2;  // the readiness probe is the first /generate
  const run::SampleOutput out = RunSample(MakeSpec());
  EXPECT_EQ(VerdictOf(out), "engine_died");
  EXPECT_THAT(out.detail, StartsWith("node 1 (n1) exited with status 1 during the benchmark"));
}

TEST_F(SglangEngineTest, AFatalLineBeforeReadyFailsTheStart) {
  launch::FakeServerScript aborted;
  aborted.log = "[2026-01-01 00:00:00 PP1 TP0] Load weight end.\nFatal Python error: Aborted\n";
  launcher_.ScriptServer(1, aborted);
  const run::SampleOutput out = RunSample(MakeSpec());
  EXPECT_EQ(VerdictOf(out), "engine_failed_to_start");
  EXPECT_EQ(out.detail,
            "node 1 (n1) log line 2: Fatal Python error: Aborted before the server was ready");
}

// Ctrl-C while the servers start ends the wait for them at once (not at
// start_timeout_s, nor when the probe the server holds open times out),
// stops every node as a finished sample does, and is no failed start.
TEST_F(SglangEngineTest, AnInterruptWhileTheServersStartStopsThemAndIsNoFailure) {
  stop_at_health_ = true;
  const auto started = std::chrono::steady_clock::now();
  const run::SampleOutput out = RunSample(MakeSpec());
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_TRUE(out.interrupted);
  EXPECT_EQ(out.detail, "interrupted while its servers started");
  EXPECT_EQ(VerdictOf(out), "ok") << "no verdict of its own: the runner records none";
  EXPECT_LT(wall_s, 3.0) << "start_timeout_s is 10 s";
  // No snapshot and no wait for the GPUs: the run exits, a resume waits.
  EXPECT_THAT(Steps(), ElementsAre("apps 0", "gpus 0", "apps 1", "gpus 1", "start 0", "start 1",
                                   "SIGTERM 0", "SIGTERM 1"));
  EXPECT_TRUE(NoServerStateLeft());
  EXPECT_THAT(*ReadFile(paths_.live_log(sample_, "n0")),
              HasSubstr("[ppsearch] stopping the server"));
}

// A server still loading answers 503 and readiness is polled again after
// poll_interval_s: the interrupt ends that sleep too.
TEST_F(SglangEngineTest, AnInterruptBetweenReadinessPollsEndsTheWaitAtOnce) {
  stop_at_health_ = true;
  health_hangs_ = false;
  poll_interval_s_ = "30";
  const auto started = std::chrono::steady_clock::now();
  const run::SampleOutput out = RunSample(MakeSpec());
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_TRUE(out.interrupted);
  EXPECT_EQ(out.detail, "interrupted while its servers started");
  EXPECT_LT(wall_s, 3.0) << "poll_interval_s is 30 s";
  EXPECT_TRUE(NoServerStateLeft());
}

// Ctrl-C during the load ends the benchmark at once (its requests hang for
// request_timeout_s = 10 s otherwise) and stops every node.
TEST_F(SglangEngineTest, AnInterruptDuringTheBenchmarkStopsItAndTheServers) {
  stop_at_generate_ = 3;  // the readiness probe is the first /generate
  const auto started = std::chrono::steady_clock::now();
  const run::SampleOutput out = RunSample(MakeSpec());
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_TRUE(out.interrupted);
  EXPECT_EQ(out.detail, "interrupted during the benchmark");
  EXPECT_LT(wall_s, 3.0) << "request_timeout_s is 10 s";
  EXPECT_THAT(Steps(), ElementsAre("apps 0", "gpus 0", "apps 1", "gpus 1", "start 0", "start 1",
                                   "SIGTERM 0", "SIGTERM 1"));
  EXPECT_TRUE(NoServerStateLeft());
  // The GPUs were not waited for, so the next sample waits for them before
  // its preflight (a resume's first does too: ServersStoppedElsewhere).
  stop_ = false;
  stop_at_generate_ = -1;
  sample_.repeat = 2;
  const size_t before = Steps().size();
  const run::SampleOutput next = RunSample(MakeSpec());
  EXPECT_FALSE(next.interrupted);
  EXPECT_EQ(VerdictOf(next), "ok") << next.detail;
  const std::vector<std::string> steps = Steps();
  ASSERT_GE(steps.size(), before + 6);
  EXPECT_THAT(std::vector<std::string>(steps.begin() + before, steps.begin() + before + 6),
              ElementsAre("gpus 0", "gpus 1", "apps 0", "gpus 0", "apps 1", "gpus 1"));
}

TEST_F(SglangEngineTest, ReuseServerKeepsTheServersAcrossSamplesOfALayout) {
  const spec::Spec spec = MakeSpec("reuse_server = true\n");
  EXPECT_EQ(VerdictOf(RunSample(spec, /*next_same_layout=*/true)), "ok");
  sample_.repeat = 2;
  EXPECT_EQ(VerdictOf(RunSample(spec, /*next_same_layout=*/false)), "ok");
  // One start per node; no preflight and no stop between the two samples.
  EXPECT_THAT(Steps(), ElementsAre("apps 0", "gpus 0", "apps 1", "gpus 1", "start 0", "start 1",
                                   "gpus 0", "gpus 1",  // the first sample's snapshot
                                   "gpus 0", "gpus 1",  // the second's
                                   "SIGTERM 0", "SIGTERM 1", "gpus 0", "gpus 1"));
}

}  // namespace
}  // namespace ppsearch::sglang
