// Reading case.toml: the shape, written order, and the messages of the
// common mistakes (file:line:col, key, what was expected); memory references
// checked against the memory model.

#include "backtest/case_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "backtest/memory_case.h"

namespace ppsearch::backtest {
namespace {

using ::testing::HasSubstr;

constexpr char kCase[] = R"([case]
name = "toy"
spec = "spec.toml"
tolerance = 0.15

[configurations.pp1]
layout = {pp = 1, tp = 8}
calibrate = true
measured = [{concurrency = 1, input_tps = 2702.5, ttft_p50_s = 48.5}]

[configurations.pp4]
layout = {pp = 4, tp = 8}
set = ['cluster.hardware="h20"', "engine.args.chunked-prefill-size=12288"]

[[reference]]
ratio = ["pp4", "pp1"]
value = 3.2
what = "3.20x"

[[reference]]
ttft_p50_s = "pp4"
value = 15.5

[[reference]]
beats = ["pp4", "pp1"]
)";

std::string ErrorOf(const std::string& text) {
  Result<Case> c = ParseCase(text, "/c/case.toml");
  return c.ok() ? "" : c.error().message;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(CaseFile, ReadsConfigurationsInWrittenOrderAndReferences) {
  Result<Case> c = ParseCase(kCase, "/c/case.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->spec_path, "/c/spec.toml");
  ASSERT_EQ(c->configurations.size(), 2u);
  EXPECT_EQ(c->configurations[0].name, "pp1");  // written order, not alphabetical
  EXPECT_TRUE(c->configurations[0].calibrate);
  ASSERT_EQ(c->configurations[0].measured.size(), 1u);
  EXPECT_DOUBLE_EQ(c->configurations[0].measured[0].ttft_p50_s, 48.5);
  EXPECT_EQ(c->configurations[1].layout.pp, 4);
  EXPECT_EQ(c->configurations[1].overrides,
            (std::vector<std::string>{"cluster.hardware=\"h20\"",
                                      "engine.args.chunked-prefill-size=12288"}));
  ASSERT_EQ(c->references.size(), 3u);
  EXPECT_EQ(c->references[0].kind, FigureKind::kTpsRatio);
  EXPECT_EQ(c->references[0].what, "3.20x");
  EXPECT_EQ(c->references[1].kind, FigureKind::kTtftP50);
  EXPECT_EQ(c->references[1].a, "pp4");
  EXPECT_EQ(c->references[2].kind, FigureKind::kBeats);
}

TEST(CaseFile, TpotReferencesAndStatedMisses) {
  const std::string text = std::string(kCase).append(
      "\n[[reference]]\ntpot_ms = \"pp4\"\nvalue = 23.3\nmiss = \"why\"\n");
  Result<Case> c = ParseCase(text, "/c/case.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->references.size(), 4u);
  EXPECT_EQ(c->references[3].kind, FigureKind::kTpotMs);
  EXPECT_EQ(c->references[3].a, "pp4");
  EXPECT_DOUBLE_EQ(c->references[3].value, 23.3);
  EXPECT_EQ(c->references[3].miss, "why");
  // A sign has no value to miss.
  EXPECT_THAT(ErrorOf(Replace(kCase, "beats = [\"pp4\", \"pp1\"]",
                              "beats = [\"pp4\", \"pp1\"]\nmiss = \"x\"")),
              HasSubstr("key 'reference[2].miss': a stated miss belongs to a figure with a value"));
}

TEST(CaseFile, MistakesNameTheFileLineAndKey) {
  EXPECT_EQ(ErrorOf(Replace(kCase, "ratio = [\"pp4\", \"pp1\"]", "ratio = [\"pp4\", \"pp2\"]")),
            "/c/case.toml:16:9: key 'reference[0].ratio': no configuration named 'pp2' (did you "
            "mean 'pp1'?)");
  EXPECT_EQ(ErrorOf(Replace(kCase, "tolerance = 0.15", "tolerence = 0.15")),
            "/c/case.toml:4:1: unknown key 'case.tolerence' (did you mean 'tolerance'?)");
  EXPECT_EQ(ErrorOf(Replace(kCase, "value = 15.5\n", "")),
            "/c/case.toml:20:1: missing required key 'reference[1].value'");
  EXPECT_EQ(ErrorOf(Replace(kCase, "calibrate = true\n", "")),
            "/c/case.toml:8:12: key 'configurations.pp1.measured': measured figures are used "
            "only for calibration; set calibrate = true or give the figure as a [[reference]]");
  EXPECT_EQ(ErrorOf(Replace(kCase, "beats = [\"pp4\", \"pp1\"]",
                            "beats = [\"pp4\", \"pp1\"]\nvalue = 1")),
            "/c/case.toml:26:9: key 'reference[2].value': a 'beats' reference is sign-only; "
            "remove value");
  // DP attention is predicted at pp 1 only.
  EXPECT_EQ(
      ErrorOf(Replace(kCase, "layout = {pp = 4, tp = 8}", "layout = {pp = 4, tp = 8, dp = 2}")),
      "/c/case.toml:12:10: key 'configurations.pp4.layout': dp = 2 with pp = 4: the "
      "simulator models DP attention at pp = 1 only, so a case cannot predict it");
  EXPECT_EQ(
      ErrorOf(Replace(kCase, "layout = {pp = 1, tp = 8}", "layout = {pp = 1, tp = 8, dp = 2}")),
      "");
}

// Inline measured points follow the rules of a CSV of medians (the same
// check, evidence::FigureOutOfOrder, and the same bounds): two points at one
// concurrency were both fitted, a TTFT p95 below its p50 was not measured.
TEST(CaseFile, InlineMeasuredPointsFollowTheCsvOfMediansRules) {
  const std::string line = "measured = [{concurrency = 1, input_tps = 2702.5, ttft_p50_s = 48.5}]";
  EXPECT_EQ(ErrorOf(Replace(kCase, line,
                            "measured = [{concurrency = 8, input_tps = 3257.96, ttft_p50_s = "
                            "39.19}, {concurrency = 8, input_tps = 9999, ttft_p50_s = 10}]")),
            "/c/case.toml:9:88: key 'configurations.pp1.measured[1].concurrency': concurrency 8 "
            "appears twice (first in configurations.pp1.measured[0]); expected one point per "
            "concurrency");
  EXPECT_EQ(ErrorOf(Replace(kCase, line,
                            "measured = [{concurrency = 1, input_tps = 2702.5, ttft_p50_s = "
                            "48.5, ttft_p95_s = 30}]")),
            "/c/case.toml:9:64: key 'configurations.pp1.measured[0].ttft_p50_s': 48.5 is above "
            "ttft_p95_s (30); expected at most it");
  EXPECT_EQ(ErrorOf(Replace(kCase, line,
                            "measured = [{concurrency = 1, input_tps = 1e-300, ttft_p50_s = "
                            "48.5}]")),
            "/c/case.toml:9:43: key 'configurations.pp1.measured[0].input_tps': expected a number "
            "in [1e-09, 1e+12], got 1e-300");
  EXPECT_EQ(ErrorOf(Replace(kCase, line,
                            "measured = [{concurrency = 1, input_tps = 2702.5, ttft_p50_s = 48.5, "
                            "ttft_p95_s = 52}, {concurrency = 8, input_tps = 3000}]")),
            "");
}

constexpr char kDeploymentCase[] = R"([case]
name = "pd"
spec = "spec.toml"
tolerance = 0.25

[configurations.1p1d-c8]
deployment = true
concurrency = 8
set = ["workload.requests=16"]

[[reference]]
tpot_ms = "1p1d-c8"
value = 8.3

[[reference]]
prefill_tps_per_node = "1p1d-c8"
value = 57674

[[reference]]
decode_tps_per_node = "1p1d-c8"
value = 22282
miss = "why, with its source"
)";

// A deployment configuration is the disaggregated spec's whole deployment:
// no layout, nothing to calibrate (a case of deployments alone needs no
// calibration configuration), and the pools' figures name only deployments.
TEST(CaseFile, ADeploymentConfigurationAndItsPoolFigures) {
  Result<Case> c = ParseCase(kDeploymentCase, "/c/case.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->configurations.size(), 1u);
  EXPECT_TRUE(c->configurations[0].deployment);
  EXPECT_EQ(c->configurations[0].concurrency, 8);
  EXPECT_EQ(c->configurations[0].overrides, std::vector<std::string>{"workload.requests=16"});
  ASSERT_EQ(c->references.size(), 3u);
  EXPECT_EQ(c->references[1].kind, FigureKind::kPrefillTpsPerNode);
  EXPECT_EQ(c->references[2].kind, FigureKind::kDecodeTpsPerNode);
  EXPECT_EQ(c->references[2].miss, "why, with its source");

  EXPECT_EQ(ErrorOf(Replace(kDeploymentCase, "deployment = true\n",
                            "deployment = true\nlayout = {pp = 1, tp = 8}\n")),
            "/c/case.toml:8:10: key 'configurations.1p1d-c8.layout': a deployment configuration "
            "takes no 'layout': its layouts are the spec's pools, and it is predicted with the "
            "parameters' priors (a deployment is not calibrated on)");
  EXPECT_THAT(ErrorOf(Replace(kDeploymentCase, "deployment = true\n",
                              "deployment = true\ncalibrate = true\n")),
              HasSubstr("key 'configurations.1p1d-c8.calibrate': a deployment configuration "
                        "takes no 'calibrate'"));
  // A pool's figure of a layout, and a refusal of a deployment.
  EXPECT_THAT(ErrorOf(std::string(kCase).append("\n[[reference]]\nprefill_tps_per_node = "
                                                "\"pp4\"\nvalue = 1\n")),
              HasSubstr("key 'reference[3].prefill_tps_per_node': 'pp4' is a layout, not a "
                        "deployment"));
  EXPECT_THAT(
      ErrorOf(std::string(kDeploymentCase).append("\n[[reference]]\nrefused = \"1p1d-c8\"\n")),
      HasSubstr("'1p1d-c8' is a deployment; a 'refused' reference names a layout"));
  // Two figures of one pool that disagree are refused as any pair is.
  EXPECT_THAT(ErrorOf(std::string(kDeploymentCase)
                          .append("\n[[reference]]\nprefill_tps_per_node = \"1p1d-c8\"\n"
                                  "value = 50000\n")),
              HasSubstr("prefill_tps_per_node = \"1p1d-c8\", value = 50000 contradicts "
                        "prefill_tps_per_node = \"1p1d-c8\", value = 57674"));
  // Layouts still need a calibration configuration.
  EXPECT_THAT(ErrorOf(Replace(kCase,
                              "calibrate = true\nmeasured = [{concurrency = 1, input_tps "
                              "= 2702.5, ttft_p50_s = 48.5}]\n",
                              "")),
              HasSubstr("expected at least one configuration with calibrate = true"));
}

// The signs implied by a case are checked once per pair: a second 'beats'
// of the same pair, reversed or not, would be dropped without a word.
TEST(CaseFile, BeatsReferencesThatDisagreeOrRepeatAreRefusedNamingBoth) {
  // A ratio of 1 says neither is faster: only the two 'beats' disagree.
  const std::string tie = Replace(kCase, "value = 3.2", "value = 1");
  EXPECT_EQ(ErrorOf(tie + "\n[[reference]]\nbeats = [\"pp1\", \"pp4\"]\n"),
            "/c/case.toml:27:1: reference 'reference[3]': beats = [\"pp1\", \"pp4\"] "
            "contradicts beats = [\"pp4\", \"pp1\"] at /c/case.toml:24:1; keep the one the "
            "source supports");
  EXPECT_EQ(ErrorOf(tie + "\n[[reference]]\nbeats = [\"pp4\", \"pp1\"]\n"),
            "/c/case.toml:27:1: reference 'reference[3]': beats = [\"pp4\", \"pp1\"] repeats "
            "beats = [\"pp4\", \"pp1\"] at /c/case.toml:24:1; give it once");
  // A ratio of the same pair says which is faster too: pp4 / pp1 = 3.2.
  EXPECT_EQ(ErrorOf(Replace(kCase, "beats = [\"pp4\", \"pp1\"]", "beats = [\"pp1\", \"pp4\"]")),
            "/c/case.toml:24:1: reference 'reference[2]': beats = [\"pp1\", \"pp4\"] contradicts "
            "ratio = [\"pp4\", \"pp1\"], value = 3.2 at /c/case.toml:15:1; keep the one the source "
            "supports");
  EXPECT_EQ(ErrorOf(Replace(kCase, "value = 3.2", "value = 0.5")),
            "/c/case.toml:24:1: reference 'reference[2]': beats = [\"pp4\", \"pp1\"] "
            "contradicts ratio = [\"pp4\", \"pp1\"], value = 0.5 at /c/case.toml:15:1; keep "
            "the one the source supports");
}

TEST(CaseFile, FiguresThatCannotAllBeTrueAreRefusedNamingBoth) {
  const std::string more = std::string(kCase) + "\n[[reference]]\n";
  // pp4 / pp1 = 3.2 and pp1 / pp4 = 0.5: one pair, two answers.
  EXPECT_EQ(ErrorOf(more + "ratio = [\"pp1\", \"pp4\"]\nvalue = 0.5\n"),
            "/c/case.toml:27:1: reference 'reference[3]': ratio = [\"pp1\", \"pp4\"], value = "
            "0.5 contradicts ratio = [\"pp4\", \"pp1\"], value = 3.2 at /c/case.toml:15:1; keep "
            "the one the source supports");
  // The same figure again, or its inverse: given once.
  EXPECT_EQ(ErrorOf(more + "ratio = [\"pp4\", \"pp1\"]\nvalue = 3.2\n"),
            "/c/case.toml:27:1: reference 'reference[3]': ratio = [\"pp4\", \"pp1\"], value = "
            "3.2 repeats ratio = [\"pp4\", \"pp1\"], value = 3.2 at /c/case.toml:15:1; give it "
            "once");
  EXPECT_THAT(ErrorOf(more + "ratio = [\"pp1\", \"pp4\"]\nvalue = 0.3125\n"),
              HasSubstr("repeats ratio = [\"pp4\", \"pp1\"], value = 3.2"));
  // One TTFT given as 15.5 s and 50 s.
  EXPECT_EQ(ErrorOf(more + "ttft_p50_s = \"pp4\"\nvalue = 50\n"),
            "/c/case.toml:27:1: reference 'reference[3]': ttft_p50_s = \"pp4\", value = 50 "
            "contradicts ttft_p50_s = \"pp4\", value = 15.5 at /c/case.toml:20:1; keep the one "
            "the source supports");
  // A chain: pp2 / pp1 = 2 and pp4 / pp1 = 3.2 give pp4 / pp2 = 1.6, not 4.
  const std::string chain = std::string(kCase) +
                            "\n[configurations.pp2]\nlayout = {pp = 2, tp = 8}\n\n"
                            "[[reference]]\nratio = [\"pp2\", \"pp1\"]\nvalue = 2\n\n"
                            "[[reference]]\nratio = [\"pp4\", \"pp2\"]\nvalue = ";
  EXPECT_EQ(ErrorOf(chain + "4\n"),
            "/c/case.toml:34:1: reference 'reference[4]': ratio = [\"pp4\", \"pp2\"], value = 4 "
            "contradicts ratio = [\"pp2\", \"pp1\"], value = 2 at /c/case.toml:30:1 and ratio = "
            "[\"pp4\", \"pp1\"], value = 3.2 at /c/case.toml:15:1, which give 1.6 (more than the "
            "case's tolerance 0.15 apart); keep the one the source supports");
  // Within the tolerance, rounding of published figures is no contradiction.
  EXPECT_EQ(ErrorOf(chain + "1.7\n"), "");
}

TEST(CaseFile, CalibrationFromNamesACalibrationConfiguration) {
  const std::string pp4 = "layout = {pp = 4, tp = 8}\n";
  Result<Case> c =
      ParseCase(Replace(kCase, pp4, pp4 + "calibration_from = \"pp1\"\n"), "/c/case.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->configurations[1].calibration_from, "pp1");
  EXPECT_EQ(c->configurations[0].calibration_from, "");
  EXPECT_EQ(ErrorOf(Replace(kCase, pp4, pp4 + "calibration_from = \"pp2\"\n")),
            "/c/case.toml:13:20: key 'configurations.pp4.calibration_from': no configuration "
            "named 'pp2' (did you mean 'pp1'?)");
  // A configuration cannot borrow a fit that is not one, nor a fitted one borrow another's.
  const std::string calibrate = "calibrate = true\n";
  std::string two = Replace(kCase, pp4, pp4 + "calibration_from = \"pp1\"\n");
  two = Replace(two, "[configurations.pp4]",
                "[configurations.pp2]\nlayout = {pp = 2, tp = 8}\ncalibration_from = \"pp4\"\n\n"
                "[configurations.pp4]");
  EXPECT_EQ(ErrorOf(two),
            "/c/case.toml:13:20: key 'configurations.pp2.calibration_from': 'pp4' is not a "
            "calibration configuration (calibrate = true)");
  EXPECT_EQ(ErrorOf(Replace(kCase, calibrate, calibrate + "calibration_from = \"pp4\"\n")),
            "/c/case.toml:9:20: key 'configurations.pp1.calibration_from': a calibration "
            "configuration is fitted itself; remove calibration_from or calibrate = true");
}

TEST(CaseFile, RefusedConfigurationsHaveNoFigures) {
  const std::string refused = "\n[[reference]]\nrefused = \"pp4\"\nwhat = \"cannot load\"\n";
  // Without the other references naming pp4 the case reads.
  std::string only = kCase;
  only = only.substr(0, only.find("[[reference]]")) + refused.substr(1);
  Result<Case> c = ParseCase(only, "/c/case.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->references.size(), 1u);
  EXPECT_EQ(c->references[0].kind, FigureKind::kRefused);
  EXPECT_EQ(c->references[0].what, "cannot load");
  EXPECT_TRUE(c->Refused("pp4"));
  EXPECT_FALSE(c->Refused("pp1"));
  // A ratio over a configuration that cannot run compares nothing.
  EXPECT_EQ(ErrorOf(kCase + refused),
            "/c/case.toml:15:1: reference compares 'pp4', which a 'refused' reference says "
            "cannot run; a refused configuration has no figures");
  EXPECT_EQ(ErrorOf(Replace(only, "refused = \"pp4\"", "refused = \"pp1\"")),
            "/c/case.toml:6:1: key 'configurations.pp1': configuration 'pp1' is calibrated on, "
            "but a 'refused' reference says it cannot run");
  EXPECT_EQ(ErrorOf(Replace(kCase, "value = 15.5", "value = 15.5\nbecause = \"x\"")),
            "/c/case.toml:23:11: key 'reference[1].because': 'because' belongs to a 'refused' "
            "reference (the planner's reason)");
  EXPECT_EQ(ErrorOf(only + refused.substr(1)),
            "/c/case.toml:18:1: a second 'refused' reference for 'pp4'; give one, with one "
            "'because'");
  EXPECT_EQ(ErrorOf(Replace(only, "what = \"cannot load\"", "value = 1")),
            "/c/case.toml:17:9: key 'reference[0].value': a 'refused' reference has no value; "
            "remove it");
}

TEST(CaseFile, FindsOneCaseOrEveryCaseBelow) {
  const std::filesystem::path root = std::filesystem::path(testing::TempDir()) / "bt_find";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "b" / "deep");
  std::filesystem::create_directories(root / "a");
  std::ofstream(root / "a" / "case.toml") << kCase;
  std::ofstream(root / "b" / "deep" / "case.toml") << kCase;
  Result<std::vector<std::string>> all = FindCases(root.string());
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(*all, (std::vector<std::string>{(root / "a" / "case.toml").string(),
                                            (root / "b" / "deep" / "case.toml").string()}));
  Result<std::vector<std::string>> one = FindCases((root / "a").string());
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 1u);
  EXPECT_EQ(FindCases((root / "b" / "deep" / "none").string()).error().message,
            (root / "b" / "deep" / "none").string() +
                ": not a directory (expected a case folder or a folder of cases)");
}

// Memory references (backtest/memory_case.h): a case may hold only these.
constexpr char kMemoryOnly[] = R"([case]
name = "logs"
spec = "spec.toml"
tolerance = 0.05

[memory.tp4-h100]
layout = {pp = 2, tp = 4}
set = ['cluster.gpus_per_node=4']
stage = 1
gpu = "H100 80GB"
gpu_memory_mib = 81559
weight_gib = 54.6
kv_tokens = 367404
source = "https://example.org/log"
what = "KV Cache is allocated. #tokens: 367404"
)";

TEST(MemoryCase, AMemoryOnlyCaseNeedsNoConfigurations) {
  Result<Case> c = ParseCase(kMemoryOnly, "/c/case.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->configurations.empty());
  ASSERT_EQ(c->memory.size(), 1u);
  const MemoryReference& m = c->memory[0];
  EXPECT_EQ(m.name, "tp4-h100");
  EXPECT_EQ(m.layout.pp, 2);
  EXPECT_EQ(m.layout.tp, 4);
  EXPECT_EQ(m.stage, 1);
  EXPECT_EQ(m.gpu, "H100 80GB");
  EXPECT_DOUBLE_EQ(m.gpu_memory_mib, 81559);
  EXPECT_DOUBLE_EQ(m.weight_gib, 54.6);
  EXPECT_EQ(m.kv_tokens, 367404);
  EXPECT_EQ(m.overrides, std::vector<std::string>{"cluster.gpus_per_node=4"});
}

TEST(MemoryCase, Mistakes) {
  EXPECT_THAT(ErrorOf(Replace(kMemoryOnly, "weight_gib = 54.6\nkv_tokens = 367404\n", "")),
              HasSubstr("memory reference 'memory.tp4-h100': expected weight_gib, kv_tokens or "
                        "both"));
  EXPECT_THAT(ErrorOf(Replace(kMemoryOnly, "source = \"https://example.org/log\"\n", "")),
              HasSubstr("source"));
  EXPECT_THAT(ErrorOf(Replace(kMemoryOnly, "stage = 1", "stage = 2")), HasSubstr("stage"));
  EXPECT_THAT(ErrorOf(Replace(kMemoryOnly, "kv_tokens", "kv_token")), HasSubstr("kv_tokens"));
  // Without memory references the configurations are required as before.
  const std::string head =
      std::string(kMemoryOnly).substr(0, std::string(kMemoryOnly).find("[memory"));
  EXPECT_THAT(ErrorOf(head), HasSubstr("configurations"));
}

// The shipped case: the log's GPU memory replaces the base profile's.
TEST(MemoryCase, TheLogsGpuMemoryReplacesTheProfiles) {
  Result<Case> c = LoadCase("validation/memory-sglang-logs/case.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_FALSE(c->memory.empty());
  c->memory.resize(1);
  Result<std::vector<FigureResult>> on_h100 = MemoryFigures(*c);
  ASSERT_TRUE(on_h100.ok()) << on_h100.error().message;
  ASSERT_EQ(on_h100->size(), 1u);
  const FigureResult& f = on_h100->front();
  EXPECT_EQ(f.unit, "tokens");
  EXPECT_DOUBLE_EQ(f.reference, 367404);
  EXPECT_DOUBLE_EQ(f.tolerance, kKvTokenTolerance);
  EXPECT_THAT(f.label, HasSubstr("H100 80GB"));
  c->memory[0].gpu_memory_mib = 0;  // the base profile's 141 GB H200
  Result<std::vector<FigureResult>> on_h200 = MemoryFigures(*c);
  ASSERT_TRUE(on_h200.ok()) << on_h200.error().message;
  EXPECT_GT(on_h200->front().predicted, 2 * f.predicted);
}

}  // namespace
}  // namespace ppsearch::backtest
