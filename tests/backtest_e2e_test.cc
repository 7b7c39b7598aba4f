// `ppsearch backtest` through the built binary: the shipped validation cases
// run and report well-formed results whose exit status matches their
// verdict; a synthetic case built from the simulator's own predictions
// passes; a broken case file is a configuration error naming file and key.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "memory/memory_interval.h"

namespace ppsearch::testing {
namespace {

using nlohmann::json;

constexpr int kExitCheckFailed = 5;

int CountCaseFiles(const std::filesystem::path& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    n += e.path().filename() == "case.toml";
  return n;
}

void ExpectWellFormed(const json& j) {
  for (const char* key : {"cases", "figures", "figures_within", "signs", "signs_right", "passed"})
    ASSERT_TRUE(j.contains(key)) << key;
  int figures = 0, within = 0;
  for (const auto& c : j["cases"]) {
    for (const char* key : {"name", "path", "tolerance", "calibrations", "configurations",
                            "figures", "signs", "passed"})
      ASSERT_TRUE(c.contains(key)) << key;
    EXPECT_FALSE(c["figures"].empty()) << c["name"];
    // A case of startup logs alone checks the memory model, and a case of
    // disaggregated deployments alone is predicted with the priors: nothing
    // is calibrated in either.
    bool deployments_alone = !c["configurations"].empty();
    for (const auto& p : c["configurations"])
      deployments_alone = deployments_alone && p.contains("deployment");
    if (c["name"] != "memory-sglang-logs" && !deployments_alone) {
      EXPECT_FALSE(c["calibrations"].empty()) << c["name"];
    }
    for (const auto& p : c["configurations"]) {
      // A deployment the model cannot plan or simulate says why, and has no figures.
      if (p.contains("not_predicted")) {
        EXPECT_FALSE(p["not_predicted"].get<std::string>().empty()) << p["name"];
        continue;
      }
      EXPECT_GT(p["input_tps"].get<double>(), 0) << p["name"];
      EXPECT_GT(p["ttft_p50_s"].get<double>(), 0) << p["name"];
    }
    bool all_within = true;
    for (const auto& f : c["figures"]) {
      for (const char* key : {"figure", "reference", "predicted", "error", "tolerance",
                              "within_tolerance", "known_miss"})
        ASSERT_TRUE(f.contains(key)) << key;
      const double ref = f["reference"], pred = f["predicted"], err = f["error"];
      EXPECT_NEAR(err, pred / ref - 1, 1e-9) << f["figure"];
      EXPECT_EQ(f["within_tolerance"].get<bool>(), std::abs(err) <= f["tolerance"].get<double>())
          << f["figure"];
      // A figure outside its tolerance passes only with the case's stated
      // reason, and a stated reason on a figure within it fails (stale).
      const bool stated = !f["known_miss"].get<std::string>().empty();
      all_within = all_within && (f["within_tolerance"].get<bool>() != stated);
      ++figures;
      within += f["within_tolerance"].get<bool>();
    }
    bool all_right = true;
    for (const auto& s : c["signs"]) all_right = all_right && s["right"].get<bool>();
    EXPECT_EQ(c["passed"].get<bool>(), all_within && all_right) << c["name"];
  }
  EXPECT_EQ(j["figures"].get<int>(), figures);
  EXPECT_EQ(j["figures_within"].get<int>(), within);
}

class BacktestE2e : public CliTest {};

constexpr const char* kSpecForBrokenCase = "examples/kimi-k3-pp-search.toml";

// The shipped cases are the model's acceptance: every published figure within
// its case's tolerance and every implied sign right, each family calibrated
// on its PP1 point alone. A change to the model that breaks one fails here.
TEST_F(BacktestE2e, ShippedCasesPassAndTheExitStatusMatchesTheVerdict) {
  CommandResult r = Run("backtest validation --json");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == kExitCheckFailed) << r.exit_code << r.err;
  EXPECT_EQ(r.exit_code, 0) << Run("backtest validation").out;
  json j = json::parse(r.out);
  EXPECT_TRUE(j["passed"].get<bool>());
  ExpectWellFormed(j);
  EXPECT_EQ(static_cast<int>(j["cases"].size()), CountCaseFiles("validation"));
  std::set<std::string> names;
  for (const auto& c : j["cases"]) names.insert(c["name"]);
  EXPECT_EQ(names, (std::set<std::string>{
                       "kimi-k3-pp1", "lmsys-h20/deepseek-v3.1", "lmsys-h20/qwen3-235b-a22b-fp8",
                       "memory-sglang-logs", "aiconfigurator-h200/deepseek-r1",
                       "aiconfigurator-h200/qwen3-235b-fp8", "aiconfigurator-b200/deepseek-r1",
                       "aiconfigurator-h200/deepseek-r1-1p1d",
                       "aiconfigurator-h100/deepseek-r1-1p1d", "lmsys-h100/deepseek-v3-4p9d"}));
  // The decode cases: TPOT at other concurrencies and lengths, two GPU kinds
  // and two model families, each figure within its tolerance or stated.
  int tpot_figures = 0;
  for (const auto& c : j["cases"])
    for (const auto& f : c["figures"])
      if (f["unit"] == "ms") {
        ++tpot_figures;
        EXPECT_NE(f["within_tolerance"].get<bool>(), !f["known_miss"].get<std::string>().empty())
            << f.dump();
      }
  EXPECT_GE(tpot_figures, 50);
  EXPECT_EQ(r.exit_code, j["passed"].get<bool>() ? 0 : kExitCheckFailed);
  // The mixed-memory case: PP1/TP8 on the 141 GB card, the rest on the 96 GB one.
  for (const auto& c : j["cases"]) {
    if (c["name"] != "lmsys-h20/deepseek-v3.1") continue;
    for (const auto& p : c["configurations"])
      EXPECT_EQ(p["hardware"], p["name"] == "pp1-tp8" ? "h20-141g" : "h20") << p["name"];
    // TP32 ran unquantized (SGLang refuses the FP8 checkpoint there), predicted
    // with the FP8 PP1 point's fit: one calibration for the whole case.
    EXPECT_EQ(c["calibrations"].size(), 1u);
    for (const auto& p : c["configurations"]) {
      const bool tp32 = p["name"] == "pp1-tp32";
      EXPECT_EQ(p["weights"], tp32 ? "none" : "fp8") << p["name"];
      EXPECT_EQ(p["calibration_from"], tp32 ? "pp1-tp8" : "") << p["name"];
    }
    bool named_comparison = false;
    for (const auto& s : c["signs"]) {
      if (s["better"] != "pp4-tp8-c12288" || s["worse"] != "pp1-tp32") continue;
      named_comparison = true;
      EXPECT_TRUE(s["right"].get<bool>()) << s.dump();
    }
    EXPECT_TRUE(named_comparison) << c["signs"].dump();
  }
  // The disaggregated cases: each deployment predicted by the disaggregated
  // predictor (its pools named, each pool's tokens per node), or, for the
  // LMSYS deployment the planner cannot take as it ran, said to be not
  // predicted, every figure then a stated miss; none in the model-form fit.
  int deployment_figures = 0, pool_figures = 0;
  for (const auto& c : j["cases"]) {
    const std::string name = c["name"];
    const bool lmsys = name == "lmsys-h100/deepseek-v3-4p9d";
    const bool h100 = name == "aiconfigurator-h100/deepseek-r1-1p1d";
    if (name != "aiconfigurator-h200/deepseek-r1-1p1d" && !h100 && !lmsys) continue;
    EXPECT_TRUE(c["calibrations"].empty()) << name;
    for (const auto& p : c["configurations"]) {
      ASSERT_TRUE(p.contains("deployment")) << p.dump();
      EXPECT_EQ(p["hardware"], lmsys || h100 ? "h100" : "h200");
      if (lmsys) {
        EXPECT_EQ(p["deployment"], "1P x PP1/TP32/EP32/DP32 + 1D x PP1/TP72/EP72/DP72");
        EXPECT_NE(p["not_predicted"].get<std::string>().find("must be a multiple of EP"),
                  std::string::npos)
            << p.dump();
      } else {
        EXPECT_EQ(p["deployment"], h100 ? "1P x PP1/TP16/EP1 + 1D x PP1/TP16/EP1"
                                        : "1P x PP1/TP8/EP1 + 1D x PP1/TP8/EP1");
        EXPECT_FALSE(p.contains("not_predicted")) << p.dump();
        EXPECT_GT(p["prefill_tps_per_node"].get<double>(), 0) << p.dump();
        EXPECT_GT(p["decode_tps_per_node"].get<double>(), 0) << p.dump();
      }
    }
    for (const auto& f : c["figures"]) {
      ++deployment_figures;
      EXPECT_TRUE(f["deployment"].get<bool>()) << f.dump();
      EXPECT_FALSE(f.contains("low")) << f.dump();
      EXPECT_NE(f["within_tolerance"].get<bool>(), !f["known_miss"].get<std::string>().empty())
          << f.dump();
      if (f["figure"].get<std::string>().find("TPS/node") != std::string::npos) {
        ++pool_figures;
        EXPECT_EQ(f["predicted"].get<double>(), 0) << f.dump();  // not predicted, stated
      }
    }
  }
  // aiconfigurator's 1P1D rows (TTFT and TPOT: six on H200, eight on H100
  // less one TTFT the file's two runs disagree on), LMSYS's four.
  EXPECT_EQ(deployment_figures, 12 + 15 + 4);
  EXPECT_EQ(pool_figures, 4);
  // SGLang's startup logs: weights per GPU within 2%, KV pool tokens within
  // 5%, each figure against its own tolerance, not the case's.
  int memory_figures = 0, weight_figures = 0;
  double largest_kv_miss = 0;
  for (const auto& c : j["cases"]) {
    if (c["name"] != "memory-sglang-logs") continue;
    for (const auto& f : c["figures"]) {
      const std::string unit = f["unit"];
      ASSERT_TRUE(unit == "GiB" || unit == "tokens") << f.dump();
      EXPECT_DOUBLE_EQ(f["tolerance"].get<double>(), unit == "GiB" ? 0.02 : 0.05) << f.dump();
      // Within, or outside with the reason the case file cites.
      EXPECT_NE(f["within_tolerance"].get<bool>(), !f["known_miss"].get<std::string>().empty())
          << f.dump();
      ++memory_figures;
      weight_figures += unit == "GiB" ? 1 : 0;
      if (unit == "tokens")
        largest_kv_miss = std::max(largest_kv_miss, std::abs(f["error"].get<double>()));
    }
  }
  // The shipped logs: 11 setups (TP1 to TP16, one with DP attention and
  // EP), 8 weight and 10 KV-pool figures; dropping one fails here.
  EXPECT_EQ(memory_figures, 18);
  EXPECT_EQ(weight_figures, 8);
  // The memory intervals' model form is the largest KV-pool miss on these
  // logs (memory/memory_interval.cc): a larger miss must raise it.
  EXPECT_LE(largest_kv_miss, memory::DefaultMemoryTermRange().kv_model_form_share);
  EXPECT_GT(largest_kv_miss, memory::DefaultMemoryTermRange().kv_model_form_share - 0.01);
  // Coverage, measured leave-one-case-out over the figures not fitted to: the
  // 10-90% intervals (parameters and model form) hold about 80% of them.
  // With n figures the count inside is binomial(n, 0.8); on the shipped
  // corpus's 8 one figure moves coverage by 12.5 points, so the test asks
  // for a count a nominal 80% makes plausible (each tail at least 2.5%),
  // and for intervals narrow enough to rank (mean relative width <= 0.3).
  ASSERT_TRUE(j.contains("coverage")) << r.out;
  const int n = j["coverage_figures"].get<int>();
  EXPECT_GE(n, 8);
  const int inside = static_cast<int>(std::lround(j["coverage"].get<double>() * n));
  double below = 0, above = 0;  // P(X <= inside), P(X >= inside)
  for (int k = 0; k <= n; ++k) {
    double p = 1;
    for (int i = 0; i < k; ++i) p *= 0.8 * (n - i) / (i + 1);
    for (int i = k; i < n; ++i) p *= 0.2;
    if (k <= inside) below += p;
    if (k >= inside) above += p;
  }
  EXPECT_GE(below, 0.025) << inside << " of " << n << " inside: too few for 80% intervals";
  EXPECT_GE(above, 0.025) << inside << " of " << n << " inside: too many for 80% intervals";
  // With the decode cases the corpus holds about 50 such figures: the
  // stated 70-95% band is a few figures wide and checked as it stands.
  EXPECT_GE(j["coverage"].get<double>(), 0.70);
  EXPECT_LE(j["coverage"].get<double>(), 0.95);
  // The same cases predicted with no calibration (each from its priors, the
  // model form at d_uncal = 1) hold their figures about as the calibrated
  // ones do (issue's band: 70-95%), and the measured K3 PP1 baseline lies
  // inside its uncalibrated interval: the profile's borrowed link table
  // states the hosts' range, so the priors reach a switched host.
  ASSERT_TRUE(j.contains("uncalibrated_coverage")) << r.out;
  EXPECT_GE(j["uncalibrated_coverage_figures"].get<int>(), 40);
  EXPECT_GE(j["uncalibrated_coverage"].get<double>(), 0.70);
  EXPECT_LE(j["uncalibrated_coverage"].get<double>(), 0.95);
  bool k3_seen = false;
  for (const auto& c : j["cases"]) {
    if (c["name"] != "kimi-k3-pp1") continue;
    for (const auto& f : c["uncalibrated_figures"]) {
      if (f["figure"].get<std::string>().find("input TPS") == std::string::npos) continue;
      k3_seen = true;
      EXPECT_TRUE(f["inside"].get<bool>()) << f.dump();
      EXPECT_LT(std::abs(f["error"].get<double>()), 0.25) << f.dump();
    }
  }
  EXPECT_TRUE(k3_seen);
  // Wide enough to hold the misses, narrow enough to rank: the decode cases
  // extrapolate up to 16x in concurrency from one calibrated row, and their
  // intervals are about +-25% there (docs/model.md, the model's form error).
  EXPECT_GT(j["mean_interval_width"].get<double>(), 0.0);
  EXPECT_LE(j["mean_interval_width"].get<double>(), 0.50);
  EXPECT_EQ(j["model_form_left_out"].size(), j["cases"].size());
  int held_out = 0;
  for (const auto& c : j["cases"])
    for (const auto& f : c["figures"]) {
      if (!f.contains("low")) continue;
      held_out += f["held_out"].get<bool>() ? 1 : 0;
      EXPECT_GT(f["model_form_rel"].get<double>(), 0.0) << f.dump();
      EXPECT_LE(f["low"].get<double>(), f["parameter_low"].get<double>()) << f.dump();
      EXPECT_GE(f["high"].get<double>(), f["parameter_high"].get<double>()) << f.dump();
    }
  // Figures with a stated miss are shown with their interval but not counted.
  EXPECT_EQ(held_out, j["coverage_figures"].get<int>() + j["coverage_stated_misses"].get<int>());
  // The blog could not run DeepSeek-V3.1 FP8 at TP32 nor Qwen3-235B-A22B-FP8
  // at TP8; the planner refuses both, with SGLang's block-FP8 message.
  EXPECT_EQ(j["refusals"], 2);
  EXPECT_EQ(j["refusals_right"], 2);
  for (const auto& c : j["cases"])
    for (const auto& refusal : c["refusals"])
      EXPECT_NE(refusal["reason"].get<std::string>().find("is not divisible by weight "
                                                          "quantization block_n = 128"),
                std::string::npos)
          << refusal.dump();
}

TEST_F(BacktestE2e, SyntheticCaseFromTheSimulatorsOwnPredictionsPasses) {
  CommandResult r = Run("backtest tests/data/backtest-synthetic --json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  json j = json::parse(r.out);
  ExpectWellFormed(j);
  ASSERT_EQ(j["cases"].size(), 1u);
  EXPECT_TRUE(j["passed"].get<bool>());
  EXPECT_EQ(j["figures_within"], j["figures"]);
  EXPECT_EQ(j["signs_right"], j["signs"]);
  EXPECT_GT(j["signs"].get<int>(), 0);
  CommandResult text = Run("backtest tests/data/backtest-synthetic");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("# backtest: 1 cases"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("PASS"), std::string::npos);
}

// A configuration the source says cannot run must be refused by the planner
// too; one ppsearch would plan fails the case (exit 5) and says so.
TEST_F(BacktestE2e, RefusedConfigurationThatPlansFailsTheCase) {
  const std::filesystem::path dir = dir_ / "refused";
  std::filesystem::create_directories(dir);
  const std::string spec =
      (std::filesystem::current_path() / "tests" / "data" / "backtest-synthetic" / "spec.toml")
          .string();
  std::ofstream(dir / "case.toml")
      << "[case]\nname = \"refusals\"\nspec = \"" << spec << "\"\ntolerance = 0.15\n"
      << "[configurations.pp1]\nlayout = {pp = 1, tp = 32, ep = 4}\nconcurrency = 4\n"
         "calibrate = true\n"
         "measured = [{concurrency = 4, input_tps = 2343.08, ttft_p50_s = 27.31}]\n"
         "[configurations.pp4]\nlayout = {pp = 4, tp = 8, ep = 4}\n"
         "[configurations.pp3]\nlayout = {pp = 3, tp = 8, ep = 4}\n"
         "[configurations.pp3-blocks]\nlayout = {pp = 3, tp = 8, ep = 4}\n"
         "[[reference]]\nrefused = \"pp4\"\nwhat = \"said not to run\"\n"
         "[[reference]]\nrefused = \"pp3\"\n"
         "[[reference]]\nrefused = \"pp3-blocks\"\nbecause = \"block-FP8\"\n";
  CommandResult r = Run("backtest " + dir.string() + " --json");
  EXPECT_EQ(r.exit_code, kExitCheckFailed) << r.err << r.out;
  json j = json::parse(r.out);
  ASSERT_EQ(j["cases"].size(), 1u);
  const json& refusals = j["cases"][0]["refusals"];
  ASSERT_EQ(refusals.size(), 3u);
  EXPECT_EQ(refusals[0]["configuration"], "pp4");
  EXPECT_FALSE(refusals[0]["refused"].get<bool>());  // PP4/TP8/EP4 is a valid layout
  EXPECT_EQ(refusals[0]["what"], "said not to run");
  EXPECT_TRUE(refusals[1]["refused"].get<bool>());  // 24 GPUs on a 32-GPU cluster
  EXPECT_NE(refusals[1]["reason"].get<std::string>().find("uses 24 GPUs but the cluster has 32"),
            std::string::npos)
      << refusals[1].dump();
  // Refused, but not for the reason the case expects: not a match.
  EXPECT_FALSE(refusals[2]["refused"].get<bool>());
  EXPECT_EQ(refusals[2]["because"], "block-FP8");
  EXPECT_EQ(j["refusals"], 3);
  EXPECT_EQ(j["refusals_right"], 1);
  EXPECT_FALSE(j["passed"].get<bool>());
  CommandResult text = Run("backtest " + dir.string());
  EXPECT_NE(text.out.find("PLANS IT"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("REFUSES IT FOR ANOTHER REASON"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1/3 refusals right: FAIL"), std::string::npos) << text.out;
}

TEST_F(BacktestE2e, BrokenCaseIsAConfigurationErrorNamingFileLineAndKey) {
  const std::filesystem::path dir = dir_ / "broken";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "case.toml") << "[case]\nname = \"x\"\nspec = \"s.toml\"\ntolerance = 0.15\n"
                                      "[configurations.a]\nlayout = {pp = 1, tp = 8}\n"
                                      "calibrate = true\nmesured = []\n";
  CommandResult r = Run("backtest " + dir.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find((dir / "case.toml").string() +
                       ":8:1: unknown key 'configurations.a.mesured' (did you mean 'measured'?)"),
            std::string::npos)
      << r.err;

  // A spec that is not there is the `spec` key's error, not a configuration's.
  std::ofstream(dir / "case.toml") << "[case]\nname = \"x\"\nspec = \"nope.toml\"\n"
                                      "tolerance = 0.15\n[configurations.a]\n"
                                      "layout = {pp = 1, tp = 32, ep = 4}\ncalibrate = true\n"
                                      "measured = [{concurrency = 8, input_tps = 3000}]\n";
  r = Run("backtest " + dir.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + (dir / "case.toml").string() +
                       ":3:8: key 'case.spec': cannot read " + (dir / "nope.toml").string() +
                       ": no such file (expected the case's experiment spec, relative to the "
                       "case)\n");

  // A measured CSV without the configuration's layout: its key, the file once.
  std::ofstream(dir / "m.csv") << "pp,tp,ep,concurrency,input_tps_median\n1,8,1,8,3000\n";
  std::ofstream(dir / "case.toml")
      << "[case]\nname = \"x\"\nspec = \"" << std::filesystem::absolute(kSpecForBrokenCase).string()
      << "\"\ntolerance = 0.15\n[configurations.a]\n"
         "layout = {pp = 1, tp = 32, ep = 4}\ncalibrate = true\n"
         "measured_csv = \"m.csv\"\n";
  r = Run("backtest " + dir.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + (dir / "case.toml").string() +
                       ":8:16: key 'configurations.a.measured_csv': " + (dir / "m.csv").string() +
                       " has no row for PP1/TP32/EP4, the configuration's layout\n");
}

}  // namespace
}  // namespace ppsearch::testing
