// `ppsearch compare` through the built binary, on runs the test makes for
// real: the older PP4 run of the mission (pp-max-micro-batch-size = 1,
// Marlin MoE kernels, 16K chunks) against the new one, also imported as a
// baseline; a simulated run against a rehearsal (serve-sim processes
// measured over HTTP) of the same spec; and bad input.

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "cli_fixture.h"
#include "ppsearch_source_dir.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;

std::string Source(const std::string& relative) {
  return std::string(PPSEARCH_SOURCE_DIR) + "/" + relative;
}

class CompareE2e : public CliTest {
 protected:
  std::string WriteSpec(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  // The Kimi K3 search of the mission on the simulated engine: `pp`, the
  // three flags' values, and what else differs (baseline) as given.
  std::string KimiSpec(const std::string& name, const std::string& pp,
                       const std::string& extra_args, const std::string& baseline) {
    return "[experiment]\nname = \"" + name + "\"\nresults_dir = \"" + (dir_ / "results").string() +
           "\"\n"
           "[cluster]\nhosts = [\"601\", \"602\", \"603\", \"604\"]\ngpus_per_node = 8\n"
           "hardware = \"rtx-6000d\"\n"
           "[engine]\nimage = \"local/sglang:kimi-k3-sm120-flashinfer-mxfp4-phase5\"\n"
           "model_path = \"/models/kimi-k3\"\nmodel_config = \"" +
           Source("data/models/kimi-k3/config.json") +
           "\"\n"
           "[engine.args]\nmoe-a2a-backend = \"none\"\ndisable-radix-cache = true\n"
           "trust-remote-code = true\nwatchdog-timeout = 3600\n" +
           extra_args + "[sweep]\npp = " + pp +
           "\ntp = \"auto\"\nep = [4]\nconcurrency = [8, 16]\nrepeats = 3\n"
           "[workload]\ninput_tokens = 16000\noutput_tokens = 1\nrequests = 40\n"
           "seed = 20240601\n"
           "[baseline]\n" +
           baseline;
  }

  nlohmann::json Json(const std::string& text) {
    return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  }
};

TEST_F(CompareE2e, TheOlderPp4RunIsNotComparableForExactlyItsThreeFlags) {
  const std::string old_spec = WriteSpec(
      "old.toml", KimiSpec("kimi3-pp4-old", "[4]",
                           "moe-runner-backend = \"marlin\"\nchunked-prefill-size = 16384\n"
                           "pp-max-micro-batch-size = 1\n",
                           "layout = {pp = 4, tp = 8, ep = 4}\n"));
  CommandResult old_run = Run("run " + old_spec + " --engine sim --run-id old");
  ASSERT_EQ(old_run.exit_code, 0) << old_run.err;
  const std::string old_dir = (dir_ / "results" / "old").string();
  // The new search imports the old PP4 run as its baseline: the same check runs there.
  const std::string new_spec =
      WriteSpec("new.toml",
                KimiSpec("kimi3-pp", "[2, 4, 8]",
                         "moe-runner-backend = \"flashinfer_mxfp4\"\nchunked-prefill-size = 8192\n",
                         "layout = {pp = 4, tp = 8, ep = 4}\nimport_run = \"" + old_dir + "\"\n"));
  CommandResult new_run = Run("run " + new_spec + " --engine sim --run-id new");
  ASSERT_TRUE(new_run.exit_code == 0 || new_run.exit_code == 4) << new_run.err;
  const std::string new_dir = (dir_ / "results" / "new").string();
  const std::string verdict =
      "not comparable because of chunked-prefill-size (16384 vs 8192), moe-runner-backend "
      "(marlin vs flashinfer_mxfp4), pp-max-micro-batch-size (1 vs unset)";

  CommandResult text = Run("compare " + old_dir + " " + new_dir);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("verdict: " + verdict + "\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("# 2 points matched by layout and concurrency; only in B: "
                          "PP2/TP16/EP4 C=8, PP2/TP16/EP4 C=16, PP8/TP4/EP4 C=8, PP8/TP4/EP4 C=16"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("4 / 8 / 4       8   Input TPS   "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("harmful    MoE backend       moe-runner-backend"), std::string::npos)
      << text.out;

  CommandResult json = Run("compare " + old_dir + " " + new_dir + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = Json(json.out);
  ASSERT_TRUE(j.is_object()) << json.out;
  std::vector<std::string> harmful, others;
  for (const auto& d : j["confounders"]["differences"])
    (d["class"] == "harmful" ? harmful : others).push_back(d["key"].get<std::string>());
  EXPECT_EQ(harmful, (std::vector<std::string>{"engine.args.chunked-prefill-size",
                                               "engine.args.moe-runner-backend",
                                               "engine.args.pp-max-micro-batch-size"}));
  EXPECT_EQ(others, std::vector<std::string>{"experiment.name"});
  EXPECT_FALSE(j["confounders"]["comparable"].get<bool>());
  EXPECT_EQ(j["confounders"]["verdict"], verdict);
  EXPECT_TRUE(j["prediction"].is_null());  // both simulated: no prediction check
  ASSERT_EQ(j["points"].size(), 2u);
  EXPECT_EQ(j["points"][0]["concurrency"], 8);
  EXPECT_TRUE(j["points"][0]["metrics"]["input_tps"]["rel"].is_number());

  // A run's summary.csv is described by the run it sits in: the same verdict.
  CommandResult csv = Run("compare " + old_dir + "/summary.csv " + new_dir + "/summary.csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("(summary.csv of run old, simulated, 2 points)"), std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find("verdict: " + verdict + "\n"), std::string::npos) << csv.out;

  // The import: report.md and summary.json carry the same check, stderr the verdict.
  const std::string report = ReadText(fs::path(new_dir) / "report.md");
  EXPECT_NE(report.find("**Verdict:** not comparable because of chunked-prefill-size (8192 vs "
                        "16384), moe-runner-backend (flashinfer_mxfp4 vs marlin), "
                        "pp-max-micro-batch-size (unset vs 1)"),
            std::string::npos)
      << report;
  const nlohmann::json summary = Json(ReadText(fs::path(new_dir) / "summary.json"));
  const nlohmann::json& check = summary["checks"]["baseline_confounders"];
  ASSERT_TRUE(check.is_object()) << summary.dump(2);
  EXPECT_FALSE(check["comparable"].get<bool>());
  EXPECT_EQ(check["differences"].size(), 4u);
  // On stderr twice: before the first sample, and from the report at the end.
  const std::string warning = "warning: baseline " + old_dir + ": not comparable because of";
  const size_t first = new_run.err.find(warning);
  ASSERT_NE(first, std::string::npos) << new_run.err;
  EXPECT_NE(new_run.err.find(warning, first + 1), std::string::npos) << new_run.err;
}

// A rehearsal (four serve-sim processes per sample, measured over HTTP like
// SGLang) and the simulated engine on the same spec: a prediction check.
TEST_F(CompareE2e, SimulatedAgainstMeasuredIsAPredictionCheck) {
  const std::string state = (dir_ / "gpu-state").string();
  // Both ports below Linux's ephemeral range (32768-60999): node 0 listens
  // on the dist-init port, and one inside the range can already be the
  // source port of another test's connection under ctest -j2.
  const std::string spec = WriteSpec(
      "rehearsal.toml",
      "[experiment]\nname = \"rehearsal\"\nresults_dir = \"" + (dir_ / "results").string() +
          "\"\n"
          "[cluster]\nhosts = [\n  {name = \"n0\", address = \"127.0.0.1\"},\n"
          "  {name = \"n1\", address = \"127.0.0.2\"},\n  {name = \"n2\", address = "
          "\"127.0.0.3\"},\n"
          "  {name = \"n3\", address = \"127.0.0.4\"},\n]\ngpus_per_node = 8\n"
          "hardware = \"rtx-6000d\"\nlauncher = \"local\"\nserver_port = 32410\n"
          "dist_init_port = 32310\n"
          "nvidia_smi = [\"{ppsearch}\", \"smi-sim\", \"--state-dir\", \"" +
          state +
          "/{host}\", \"--driver-version\", \"575.57.08\"]\n"
          "[engine]\ncommand = [\"{ppsearch}\", \"serve-sim\", \"--model-config\", \"" +
          Source("data/models/kimi-k3/config.json") +
          "\", \"--hardware\", \"rtx-6000d\", \"--gpu-state-dir\", \"" + state +
          "/{host}\"]\n"
          "model_path = \"/models/kimi-k3\"\nmodel_config = \"" +
          Source("data/models/kimi-k3/config.json") +
          "\"\n"
          "[engine.args]\nmoe-runner-backend = \"flashinfer_mxfp4\"\nmoe-a2a-backend = \"none\"\n"
          "chunked-prefill-size = 8192\ndisable-radix-cache = true\n"
          "[sweep]\npp = [4, 8]\ntp = \"auto\"\nep = [4]\nconcurrency = [2]\nrepeats = 2\n"
          "[workload]\ninput_tokens = 1000\noutput_tokens = 1\nrequests = 2\n"
          "[baseline]\nlayout = {pp = 4, tp = 8, ep = 4}\n"
          "[lifecycle]\nstart_timeout_s = 60\npoll_interval_s = 0.1\nrequest_timeout_s = 60\n"
          "stop_grace_s = 10\nmemory_release_timeout_s = 20\n");
  CommandResult measured = Run("run " + spec + " --run-id measured");
  ASSERT_TRUE(measured.exit_code == 0 || measured.exit_code == 4) << measured.err;
  CommandResult sim = Run("run " + spec + " --engine sim --run-id sim");
  ASSERT_TRUE(sim.exit_code == 0 || sim.exit_code == 4) << sim.err;
  const std::string sim_dir = (dir_ / "results" / "sim").string();
  const std::string measured_dir = (dir_ / "results" / "measured").string();

  CommandResult text = Run("compare " + sim_dir + " " + measured_dir);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Prediction check: A is simulated, B measured; error = predicted / "
                          "measured - 1"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("4 / 8 / 4      2   "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("ranking by Input TPS at C=2: "), std::string::npos) << text.out;

  CommandResult json = Run("compare " + sim_dir + " " + measured_dir + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = Json(json.out);
  ASSERT_TRUE(j["prediction"].is_object()) << json.out;
  EXPECT_EQ(j["prediction"]["predicted_side"], "A");
  ASSERT_EQ(j["prediction"]["points"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const nlohmann::json& p = j["prediction"]["points"][i];
    const nlohmann::json& m = j["points"][i]["metrics"];
    EXPECT_EQ(p["layout"], j["points"][i]["layout"]);
    for (const char* metric : {"input_tps", "ttft_p50_s"}) {
      const std::string key =
          std::string(metric) == "input_tps" ? "input_tps_error" : "ttft_p50_error";
      ASSERT_TRUE(p[key].is_number()) << p.dump();
      // A is the prediction, B the measurement.
      EXPECT_NEAR(p[key].get<double>(),
                  m[metric]["a"].get<double>() / m[metric]["b"].get<double>() - 1, 1e-9)
          << p.dump();
    }
  }
  // What only the measured side records: the driver smi-sim reports and the
  // version serve-sim reports.
  const nlohmann::json& b = j["b"]["settings"];
  EXPECT_EQ(b["gpu.driver"], "575.57.08");
  EXPECT_EQ(b["server.version"], "0.5.18");
  EXPECT_EQ(b["gpu.name"], "NVIDIA RTX 6000D");
  EXPECT_TRUE(j["confounders"]["comparable"].get<bool>()) << j["confounders"].dump(2);
  std::vector<std::string> keys;
  for (const auto& d : j["confounders"]["differences"]) keys.push_back(d["key"]);
  EXPECT_EQ(keys, std::vector<std::string>{"engine.kind"});
}

// Patches named by the spec are hashed into run.json, and two runs whose
// patch differs are not comparable; a patch that cannot be read stops the
// run at the spec line naming it.
TEST_F(CompareE2e, PatchesAreHashedAndCompared) {
  const std::string patch = (dir_ / "pp.patch").string();
  std::ofstream(patch) << "--- a/scheduler.py\n+++ b/scheduler.py\n";
  const std::string args = "moe-runner-backend = \"flashinfer_mxfp4\"\n";
  const std::string spec = WriteSpec(
      "patched.toml", KimiSpec("patched", "[4]", args, "layout = {pp = 4, tp = 8, ep = 4}\n"));
  const std::string plain = WriteSpec(
      "plain.toml", KimiSpec("patched", "[4]", args, "layout = {pp = 4, tp = 8, ep = 4}\n"));
  // A key of [engine], which ends where [engine.args] begins.
  std::string text = ReadText(spec);
  const size_t at = text.find("[engine.args]");
  text.insert(at, "patches = [\"pp.patch\"]\n");
  std::ofstream(spec) << text;
  CommandResult patched =
      Run("run " + spec + " --engine sim --run-id patched --set sweep.repeats=1");
  ASSERT_EQ(patched.exit_code, 0) << patched.err;
  const nlohmann::json run = Json(ReadText(dir_ / "results" / "patched" / "metadata" / "run.json"));
  ASSERT_EQ(run["patches"].size(), 1u) << run.dump(2);
  EXPECT_EQ(run["patches"][0]["path"], patch);
  EXPECT_EQ(run["patches"][0]["bytes"], fs::file_size(patch));
  EXPECT_EQ(run["patches"][0]["sha256"].get<std::string>().size(), 64u);
  CommandResult unpatched =
      Run("run " + plain + " --engine sim --run-id plain --set sweep.repeats=1");
  ASSERT_EQ(unpatched.exit_code, 0) << unpatched.err;
  CommandResult c = Run("compare " + (dir_ / "results" / "patched").string() + " " +
                        (dir_ / "results" / "plain").string() + " --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const nlohmann::json j = Json(c.out);
  EXPECT_EQ(j["confounders"]["verdict"],
            "not comparable because of pp.patch (sha256:" +
                run["patches"][0]["sha256"].get<std::string>().substr(0, 16) + " vs unset)");

  std::filesystem::remove(patch);
  CommandResult missing = Run("run " + spec + " --engine sim --run-id gone --set sweep.repeats=1");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_FALSE(fs::exists(dir_ / "results" / "gone"));  // stopped before the run directory
  const size_t line = std::count(text.begin(), text.begin() + static_cast<long>(at), '\n') + 1;
  EXPECT_NE(missing.err.find(spec + ":" + std::to_string(line) +
                             ":12: key 'engine.patches[0]': cannot hash the file it names: "),
            std::string::npos)
      << missing.err;
}

// A CSV without the TTFT columns holds no TTFT: its cells are "-", no
// difference is made of a 0, and JSON says null where the text says unknown.
TEST_F(CompareE2e, AFigureOneCsvLacksIsUnknownNotZero) {
  const std::string a = WriteSpec("a.csv", "pp,tp,ep,concurrency,input_tps_median\n4,8,4,8,1200\n");
  const std::string b = WriteSpec(
      "b.csv", "pp,tp,ep,concurrency,input_tps_median,ttft_p50_s_median\n4,8,4,8,1300,0.28\n");
  CommandResult text = Run("compare " + a + " " + b);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const size_t at = text.out.find("TTFT p50");
  ASSERT_NE(at, std::string::npos) << text.out;
  const std::string row = text.out.substr(at, text.out.find('\n', at) - at);
  EXPECT_EQ(row.substr(0, row.find("0.28 s")).find_first_not_of("TTFp50 -"), std::string::npos)
      << "A's cell is '-': " << row;
  EXPECT_EQ(text.out.find("0.00 s"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("TTFT p95"), std::string::npos) << "neither side holds it: " << text.out;
  CommandResult json = Run("compare " + a + " " + b + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = Json(json.out);
  const nlohmann::json& p50 = j["points"][0]["metrics"]["ttft_p50_s"];
  EXPECT_TRUE(p50["a"].is_null()) << p50.dump();
  EXPECT_DOUBLE_EQ(p50["b"].get<double>(), 0.28);
  EXPECT_TRUE(p50["abs"].is_null()) << p50.dump();
  EXPECT_TRUE(j["points"][0]["metrics"]["input_tps"]["within_noise"].is_null())
      << "no spread on either side: unknown, not beyond noise";
  EXPECT_EQ(j["points"][0]["layout"]["label"], "PP4/TP8/EP4");
  EXPECT_EQ(j["points"][0]["layout"]["dp"], 1);
}

TEST_F(CompareE2e, BadInputNamesTheFileAndLine) {
  CommandResult missing =
      Run("compare " + (dir_ / "nope").string() + " " + Source("data/baseline/pp1-tp32-ep4.csv"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "error: A: " + (dir_ / "nope").string() +
                             ": no such file or directory (expected a run directory, its "
                             "summary.csv or a CSV of medians)\n");
  const std::string bad = WriteSpec("bad.csv", "pp,tp,ep,conc,input_tps_median\n1,32,4,8,3000\n");
  CommandResult header = Run("compare " + Source("data/baseline/pp1-tp32-ep4.csv") + " " + bad);
  EXPECT_EQ(header.exit_code, 2);
  EXPECT_EQ(
      header.err.rfind("error: B: " + bad + ":1: missing column 'concurrency' in the header", 0),
      0u)
      << header.err;
  const std::string other = WriteSpec("pp4.csv",
                                      "pp,tp,ep,concurrency,input_tps_median,ttft_p50_s_median\n"
                                      "4,8,4,8,4000,30\n");
  CommandResult none = Run("compare " + Source("data/baseline/pp1-tp32-ep4.csv") + " " + other);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("error: no matching points: A ("), std::string::npos) << none.err;
}

// A CSV that could be read two ways (a point twice, a column twice) or that
// holds a throughput no run measures is refused, not compared.
TEST_F(CompareE2e, AmbiguousOrImpossibleCsvRowsAreRefused) {
  const std::string header = "pp,tp,ep,concurrency,input_tps_median";
  // The CSV's text and the message after "error: B: <file>".
  const std::pair<std::string, std::string> cases[] = {
      {header + "\n1,32,4,8,3000\n1,32,4,8,3600\n",
       ":3: PP1/TP32/EP4 at concurrency 8 appears twice (first at line 2); expected one row per "
       "layout and concurrency\n"},
      {header + ",input_tps_median\n1,32,4,8,3000,3600\n",
       ":1: column 'input_tps_median' appears twice (5 and 6); expected each column once\n"},
      {header + "\n1,32,4,8,0\n",
       ":2: column 'input_tps_median': expected a positive number (tokens/s) in [1e-09, 1e+12], "
       "got 0 (a point without valid repeats has valid_repeats = 0 or an empty cell)\n"},
      {header + "\n1,32,4,8,-3000\n",
       ":2: column 'input_tps_median': expected a positive number (tokens/s) in [1e-09, 1e+12], "
       "got -3000 (a point without valid repeats has valid_repeats = 0 or an empty cell)\n"}};
  for (const auto& [text, message] : cases) {
    const std::string b = WriteSpec("b.csv", text);
    CommandResult r = Run("compare " + Source("data/baseline/pp1-tp32-ep4.csv") + " " + b);
    EXPECT_EQ(r.exit_code, 2) << text;
    EXPECT_EQ(r.err, "error: B: " + b + message);
  }
}

}  // namespace
}  // namespace ppsearch::testing
