#pragma once
// A real-engine search on this machine: the rehearsal's four "nodes" on
// 127.0.0.1-4 running `ppsearch serve-sim` (as SGLang) and `ppsearch smi-sim`
// (as nvidia-smi), with ports, GPU state and results private to the test.

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "cli_fixture.h"
#include "process_fixture.h"
#include "serve_sim_fixture.h"

namespace ppsearch::testing {

class RealRunTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    server_port_ = FreePort();
    dist_port_ = FreePort();
    bootstrap_port_ = FreePort();
    router_port_ = FreePort();
    gpu_dir_ = (dir_ / "gpus").string();
    results_ = (dir_ / "results").string();
  }

  // The spec: `sweep` and `extra` are TOML lines added to their sections;
  // `command_extra` words go after serve-sim (before SGLang's flags).
  std::string WriteSpec(const std::string& sweep, const std::string& lifecycle,
                        const std::string& command_extra = "",
                        const std::string& launcher = "local",
                        const std::string& extra_sections = "", int time_scale = 100) {
    const std::string repo = std::filesystem::current_path().string();
    std::ostringstream s;
    s << "[experiment]\nname = \"real\"\nresults_dir = \"" << results_ << "\"\n"
      << "[cluster]\nhosts = [{name = \"n0\", address = \"127.0.0.1\"}, {name = \"n1\", address "
         "= \"127.0.0.2\"}, {name = \"n2\", address = \"127.0.0.3\"}, {name = \"n3\", address = "
         "\"127.0.0.4\"}]\n"
      << "gpus_per_node = 8\nhardware = \"rtx-6000d\"\nlauncher = \"" << launcher << "\"\n"
      << "server_port = " << server_port_ << "\ndist_init_port = " << dist_port_ << "\n"
      << "nvidia_smi = [\"{ppsearch}\", \"smi-sim\", \"--state-dir\", \"" << gpu_dir_
      << "/{host}\"]\n"
      << "[engine]\nkind = \"sglang\"\n"
      << "command = [\"{ppsearch}\", \"serve-sim\", \"--time-scale\", \"" << time_scale
      << "\", \"--model-config\", \"" << repo
      << "/data/models/kimi-k3/config.json\", \"--gpu-state-dir\", \"" << gpu_dir_ << "/{host}\""
      << command_extra << "]\n"
      << "model_path = \"/models/kimi-k3\"\nmodel_config = \"" << repo
      << "/data/models/kimi-k3/config.json\"\n"
      << "[engine.args]\nchunked-prefill-size = 8192\nmoe-a2a-backend = \"none\"\n"
      << "disable-radix-cache = true\n"
      << "[sweep]\n"
      << sweep << "\ntp = \"auto\"\nep = [4]\n"
      << "[workload]\ninput_tokens = 16000\noutput_tokens = 1\nrequests = 16\nseed = 7\n"
      // These tests are about the lifecycle: serve-sim's throughput on a busy
      // 2-core machine varies more between repeats than the 5% a decision
      // allows by default, which would turn the exit code into 4.
      << "[decision]\nmin_headroom_mib = 1024\nmax_repeat_spread = 1.0\n"
      << "[lifecycle]\n";
    // The test's own lifecycle values replace these defaults.
    std::map<std::string, std::string> lc = {{"start_timeout_s", "30"},
                                             {"poll_interval_s", "0.05"},
                                             {"request_timeout_s", "60"},
                                             {"stop_grace_s", "5"},
                                             {"memory_release_timeout_s", "10"}};
    std::istringstream given(lifecycle);
    for (std::string line; std::getline(given, line);) {
      const size_t eq = line.find(" = ");
      if (eq != std::string::npos) lc[line.substr(0, eq)] = line.substr(eq + 3);
    }
    for (const auto& [k, v] : lc) s << k << " = " << v << "\n";
    s << extra_sections;
    const std::filesystem::path path = dir_ / "spec.toml";
    std::ofstream(path) << s.str();
    return path.string();
  }

  // A disaggregated deployment: 1P1D DeepSeek-V3 on H200 (prefill on
  // n0, decode on n1, n2 spare, each its own loopback address), serve-sim
  // as SGLang's PD servers 10 times faster than real time, router-sim as
  // its router. `sweep` lines go into [sweep]; `command_extra` words after
  // serve-sim's; `extra_sections` at the end.
  std::string WritePdSpec(const std::string& sweep, const std::string& command_extra = "",
                          const std::string& prefill_hosts = "[\"n0\"]", int prefill_instances = 1,
                          const std::string& launcher = "local",
                          const std::string& extra_sections = "") {
    const std::string repo = std::filesystem::current_path().string();
    std::ostringstream s;
    s << "[experiment]\nname = \"pd\"\nresults_dir = \"" << results_ << "\"\n"
      << "[cluster]\nhosts = [{name = \"n0\", address = \"127.0.0.1\"}, {name = \"n1\", address "
         "= \"127.0.0.2\"}, {name = \"n2\", address = \"127.0.0.3\"}]\n"
      << "gpus_per_node = 8\nhardware = \"h200\"\nlauncher = \"" << launcher << "\"\n"
      << "server_port = " << server_port_ << "\ndist_init_port = " << dist_port_ << "\n"
      << "nvidia_smi = [\"{ppsearch}\", \"smi-sim\", \"--state-dir\", \"" << gpu_dir_
      << "/{host}\", \"--total-mib\", \"143771\", \"--name\", \"NVIDIA H200\"]\n"
      << "[engine]\nkind = \"sglang\"\n"
      << "command = [\"{ppsearch}\", \"serve-sim\", \"--time-scale\", \"10\", \"--model-config\", "
         "\""
      << repo << "/data/models/deepseek-v3/config.json\", \"--hardware\", \"h200\", "
      << "\"--gpu-state-dir\", \"" << gpu_dir_ << "/{host}\"" << command_extra << "]\n"
      << "model_path = \"/models/deepseek-v3\"\nmodel_config = \"" << repo
      << "/data/models/deepseek-v3/config.json\"\n"
      << "[engine.disaggregation]\nbootstrap_port = " << bootstrap_port_
      << "\nrouter_port = " << router_port_
      << "\nrouter_command = [\"{ppsearch}\", \"router-sim\"]\n"
      << "[sweep]\n"
      << sweep << "\n"
      << "[sweep.prefill]\nhosts = " << prefill_hosts << "\ninstances = " << prefill_instances
      << "\ntp = 8\nep = 8\n"
      << "[sweep.decode]\nhosts = [\"n1\"]\ntp = 8\nep = 8\n"
      << "[workload]\ninput_tokens = 2000\noutput_tokens = 40\nrequests = 24\nseed = 7\n"
      << "[decision]\nmax_repeat_spread = 1.0\n"
      << "[lifecycle]\nstart_timeout_s = 30\npoll_interval_s = 0.05\nrequest_timeout_s = 60\n"
      << "stop_grace_s = 5\nmemory_release_timeout_s = 10\n"
      << extra_sections;
    const std::filesystem::path path = dir_ / "pd.toml";
    std::ofstream(path) << s.str();
    return path.string();
  }

  std::filesystem::path RunDir() {
    std::filesystem::path found;
    if (!std::filesystem::exists(results_)) return found;
    for (const auto& e : std::filesystem::directory_iterator(results_))
      if (e.is_directory()) found = e.path();
    return found;
  }

  // The last manifest line of every sample.
  std::map<std::string, nlohmann::json> Verdicts(const std::filesystem::path& run) {
    std::map<std::string, nlohmann::json> out;
    std::istringstream in(ReadText(run / "manifest.jsonl"));
    std::string line;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.value("state", "") != "started") out[j["sample"]] = j;
    }
    return out;
  }

  int CountState(const std::filesystem::path& run, const std::string& sample,
                 const std::string& state) {
    int n = 0;
    std::istringstream in(ReadText(run / "manifest.jsonl"));
    std::string line;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.value("sample", "") == sample && j.value("state", "") == state) ++n;
    }
    return n;
  }

  // serve-sim processes whose command line names this test's GPU state dir.
  std::vector<pid_t> LeftoverServers() { return ProcessesMentioning({"serve-sim", gpu_dir_}); }
  // router-sim processes listening on this test's router port.
  std::vector<pid_t> LeftoverRouters() {
    return ProcessesMentioning({"router-sim", " --port " + std::to_string(router_port_) + " "});
  }

  // `ppsearch run SPEC` as a child of the test, its output discarded.
  // `run SPEC`, with `flag` after SPEC when given.
  pid_t StartRunInBackground(const std::string& spec, const char* flag = nullptr) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::freopen("/dev/null", "w", stdout);
      ::freopen("/dev/null", "w", stderr);
      ::execl(bin_.c_str(), bin_.c_str(), "run", spec.c_str(), flag, static_cast<char*>(nullptr));
      ::_exit(127);
    }
    return pid;
  }

  void TearDown() override {
    for (int pid : LeftoverServers()) ::kill(pid, SIGKILL);
    for (int pid : LeftoverRouters()) ::kill(pid, SIGKILL);
    CliTest::TearDown();
  }

  int server_port_ = 0;
  int dist_port_ = 0;
  int bootstrap_port_ = 0;  // a disaggregated deployment's (WritePdSpec)
  int router_port_ = 0;
  std::string gpu_dir_;
  std::string results_;
};

}  // namespace ppsearch::testing
