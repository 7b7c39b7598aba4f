// `ppsearch simulate`'s intervals through the built binary: every point's
// _low/_high fields, the sensitivity and decision summary, determinism by
// seed, --samples 0, and a calibration's measured layout left out of the
// next-measurement choice.

#include <nlohmann/json.hpp>

#include "cli_fixture.h"

namespace ppsearch::testing {
namespace {

using nlohmann::json;

constexpr const char* kIntervalsSpec = "examples/kimi-k3-pp-search.toml";

class SimulateIntervalsE2e : public CliTest {
 protected:
  json Simulate(const std::string& extra) {
    CommandResult r =
        Run(std::string("simulate ") + kIntervalsSpec + " --json --no-cap-check " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
};

TEST_F(SimulateIntervalsE2e, EveryPointCarriesItsIntervals) {
  const json j = Simulate("");
  ASSERT_EQ(j["points"].size(), 8u);
  for (const auto& p : j["points"]) {
    SCOPED_TRACE(p.dump());
    for (const char* key : {"pp", "tp", "ep", "concurrency"}) ASSERT_TRUE(p.contains(key)) << key;
    for (const std::string metric : {"input_tps", "ttft_p50_s", "ttft_p95_s", "peak_gpu_mib"}) {
      ASSERT_TRUE(p.contains(metric + "_low")) << metric;
      ASSERT_TRUE(p.contains(metric + "_high")) << metric;
      EXPECT_LE(p[metric + "_low"].get<double>(), p[metric + "_high"].get<double>()) << metric;
    }
    // The parameters move throughput, and the runtime workspace moves memory.
    EXPECT_LT(p["input_tps_low"].get<double>(), p["input_tps_high"].get<double>());
    // Every interval is the parameters' band widened by the model form.
    EXPECT_GT(p["model_form_rel"].get<double>(), 0.0);
    for (const std::string metric : {"input_tps", "ttft_p50_s", "ttft_p95_s"}) {
      EXPECT_LT(p[metric + "_low"].get<double>(), p[metric + "_parameter_low"].get<double>());
      EXPECT_GT(p[metric + "_high"].get<double>(), p[metric + "_parameter_high"].get<double>());
    }
    EXPECT_GT(p["input_tps_low"].get<double>(), 0.5 * p["input_tps"].get<double>());
    EXPECT_LT(p["input_tps_high"].get<double>(), 2 * p["input_tps"].get<double>());
    EXPECT_LT(p["peak_gpu_mib_low"].get<double>(), p["peak_gpu_mib_high"].get<double>());
    EXPECT_LE(p["peak_gpu_mib_low"].get<double>(), p["peak_gpu_mib"].get<double>());
    EXPECT_GE(p["peak_gpu_mib_high"].get<double>(), p["peak_gpu_mib"].get<double>());
  }
  const json& u = j["uncertainty"];
  EXPECT_EQ(u["samples"], 32);
  EXPECT_EQ(u["low_percentile"], 10);
  EXPECT_EQ(u["high_percentile"], 90);
  ASSERT_EQ(u["sensitivity"].size(), 4u);
  for (const auto& l : u["sensitivity"]) {
    ASSERT_EQ(l["parameters"].size(), 3u) << l.dump();
    double total = 0;
    for (const auto& p : l["parameters"]) total += p["share"].get<double>();
    EXPECT_LE(total, 1 + 1e-9);
    EXPECT_GE(l["parameters"][0]["share"], l["parameters"][1]["share"]);
  }
  const json& d = u["decision"];
  EXPECT_EQ(d["objective"], "input_tps");
  EXPECT_NE(d["primary"], d["runner_up"]);
  EXPECT_TRUE(d.contains("intervals_overlap"));
  ASSERT_TRUE(d.contains("next_measurement"));
  EXPECT_NE(d["next_measurement"]["line"].get<std::string>().find(" next: it explains "),
            std::string::npos);
}

TEST_F(SimulateIntervalsE2e, TheSeedDecidesTheDrawsAndZeroSamplesDropTheIntervals) {
  const json a = Simulate("--layout 8/4/4 --concurrency 8");
  EXPECT_EQ(Simulate("--layout 8/4/4 --concurrency 8 --interval-seed 1"), a);
  const json other = Simulate("--layout 8/4/4 --concurrency 8 --interval-seed 2");
  EXPECT_NE(other["points"][0]["input_tps_low"], a["points"][0]["input_tps_low"]);
  EXPECT_EQ(other["points"][0]["input_tps"], a["points"][0]["input_tps"]);
  const json none = Simulate("--layout 8/4/4 --concurrency 8 --samples 0");
  EXPECT_FALSE(none["points"][0].contains("input_tps_low"));
  EXPECT_FALSE(none.contains("uncertainty"));
  EXPECT_EQ(none["points"][0]["input_tps"], a["points"][0]["input_tps"]);
}

TEST_F(SimulateIntervalsE2e, TextShowsIntervalsSensitivityAndTheNextMeasurement) {
  CommandResult r = Run(std::string("simulate ") + kIntervalsSpec + " --no-cap-check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("10th\u201390th percentile over 32 draws (seed 1)"), std::string::npos);
  EXPECT_NE(r.out.find(" s ["), std::string::npos);  // a TTFT with its interval
  EXPECT_NE(r.out.find("# sensitivity"), std::string::npos);
  EXPECT_NE(r.out.find("Moves input TPS most"), std::string::npos);
  EXPECT_NE(r.out.find("predicted best PP"), std::string::npos);
  EXPECT_NE(r.out.find("the intervals of PP"), std::string::npos);
  EXPECT_NE(r.out.find("  measure PP"), std::string::npos) << r.out;
  CommandResult none =
      Run(std::string("simulate ") + kIntervalsSpec + " --no-cap-check --samples 0");
  EXPECT_EQ(none.out.find("# sensitivity"), std::string::npos);
  EXPECT_EQ(none.out.find(" s ["), std::string::npos);
  EXPECT_NE(Run(std::string("simulate ") + kIntervalsSpec + " --samples -1").exit_code, 0);
}

TEST_F(SimulateIntervalsE2e, ThePredictionPageShowsTheIntervalsAndTheUncertaintySection) {
  const std::string page = (dir_ / "predicted.html").string();
  CommandResult r =
      Run(std::string("simulate ") + kIntervalsSpec + " --no-cap-check --html " + page);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = ReadText(page);
  EXPECT_NE(html.find("<h2>Uncertainty</h2>"), std::string::npos);
  EXPECT_NE(html.find("data-key=\"PP8/TP4/EP4 C=16 predicted interval high\""), std::string::npos);
  EXPECT_NE(html.find(" next: it explains "), std::string::npos);
  const size_t results = html.find("<h2>Results</h2>");
  ASSERT_NE(results, std::string::npos);
  EXPECT_NE(html.find("\u2013", results), std::string::npos);  // "7,739.31 [7,309–8,126]"
}

TEST_F(SimulateIntervalsE2e, ACalibratedLayoutIsNotTheNextMeasurement) {
  const std::string cal = (dir_ / "cal.json").string();
  CommandResult c = Run(std::string("calibrate ") + kIntervalsSpec +
                        " --measured data/baseline/pp1-tp32-ep4.csv -o " + cal);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const json j = Simulate("--calibration " + cal);
  // The calibration states the model-form term it uses; PP8 extrapolates
  // further from its PP1 fit than PP2, so its model-form part is wider.
  const json saved = json::parse(ReadText(cal));
  ASSERT_TRUE(saved.contains("model_error")) << saved.dump();
  EXPECT_GT(saved["model_error"]["s0"].get<double>(), 0.0);
  EXPECT_EQ(saved["fit"]["hardware"], "rtx-6000d");
  double pp2 = 0, pp8 = 0;
  for (const auto& p : j["points"]) {
    if (p["pp"] == 2) pp2 = p["model_form_rel"].get<double>();
    if (p["pp"] == 8) pp8 = p["model_form_rel"].get<double>();
  }
  EXPECT_GT(pp2, 0.0);
  EXPECT_GT(pp8, pp2);
  const json& next = j["uncertainty"]["decision"]["next_measurement"];
  ASSERT_TRUE(next.contains("layout")) << next.dump();
  EXPECT_NE(next["layout"]["pp"], 1) << next.dump();
  // The sensitivity table names each parameter's status from the calibration.
  bool any_fitted = false;
  for (const auto& l : j["uncertainty"]["sensitivity"])
    for (const auto& p : l["parameters"]) any_fitted |= p["status"] != "prior";
  EXPECT_TRUE(any_fitted);
}

TEST_F(SimulateIntervalsE2e, ASimulatedRunsReportShowsTheIntervalsAndTheirOverlap) {
  CommandResult r = Run(std::string("run ") + kIntervalsSpec + " --engine sim --run-id ex --set " +
                        "experiment.results_dir='" + dir_.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string md = ReadText(dir_ / "ex" / "report.md");
  EXPECT_NE(md.find("in brackets, the 10th\u201390th percentile over 32 draws"), std::string::npos);
  EXPECT_NE(md.find("Inside the interval"), std::string::npos);
  EXPECT_NE(md.find("Uncertainty of the prediction behind these samples: the intervals of "),
            std::string::npos);
  EXPECT_EQ(r.out, md);  // run prints the report, this sentence included
}

}  // namespace
}  // namespace ppsearch::testing
