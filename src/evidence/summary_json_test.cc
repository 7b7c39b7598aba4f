// summary.json: what is unknown is null (not zero), the keys every tool
// reads are there, and the confounder check is written once for
// summary.json and `ppsearch compare --json` alike.

#include "evidence/summary_json.h"

#include <gtest/gtest.h>

namespace ppsearch::evidence {
namespace {

spec::LayoutSpec Pp2Tp16Ep4() {
  spec::LayoutSpec l;
  l.pp = 2;
  l.tp = 16;
  l.ep = 4;
  return l;
}

TEST(SummaryJson, APrefillPointHasNullDecodeFiguresAndUnknownMemoryIsNull) {
  RunSummary s;
  PointSummary p;
  p.layout = Pp2Tp16Ep4();
  p.concurrency = 8;
  p.median.input_tps = 5123.25;
  p.median.output_tps = 64;  // one token per request: not a decode figure
  s.points.push_back(p);
  const nlohmann::json j = SummaryJson(s);
  EXPECT_EQ(j["schema_version"], kSummarySchemaVersion);
  const nlohmann::json& point = j["points"][0];
  EXPECT_EQ(point["layout"]["label"], "PP2/TP16/EP4");
  EXPECT_EQ(point["layout"]["instances"], 1);
  EXPECT_EQ(point["input_tps_median"], 5123.25);
  EXPECT_TRUE(point["output_tps_median"].is_null());
  EXPECT_TRUE(point["tpot_p99_s_median"].is_null());
  EXPECT_TRUE(point["peak_gpu_mib"].is_null());
  EXPECT_TRUE(j["decision"]["primary"].is_null());
  EXPECT_TRUE(j["baseline"]["layout"].is_null());
}

TEST(SummaryJson, ASampleWithImpossibleEvidenceHasUnknownCountsNotZeros) {
  RunSummary s;
  SampleCheck c;
  c.sample = "pp2-tp16-ep4_c8_r1";
  c.invalid_evidence.push_back({"duplicate_request_id", "raw/pp2-tp16-ep4_c8_r1.jsonl", "id 3"});
  c.verdict = Verdict::kInvalidEvidence;
  s.checks.samples.push_back(c);
  s.checks.missing_samples.push_back({"pp2-tp16-ep4_c8_r2", "not run"});
  const nlohmann::json checks = SummaryJson(s)["checks"];
  const nlohmann::json& sample = checks["samples"][0];
  EXPECT_TRUE(sample["requests_completed"].is_null());
  EXPECT_TRUE(sample["input_tps"].is_null());
  EXPECT_EQ(sample["verdict"], "invalid_evidence");
  EXPECT_EQ(sample["invalid_evidence"][0]["kind"], "duplicate_request_id");
  EXPECT_EQ(checks["incomplete"], true);
  EXPECT_EQ(checks["missing_samples"][0]["state"], "not run");
  EXPECT_TRUE(checks["baseline_confounders"].is_null());
}

TEST(SummaryJson, TheBaselineConfounderCheckIsTheCompareFormat) {
  ConfounderCheck check;
  check.differences.push_back({"engine.args.chunked-prefill-size", "chunked-prefill-size",
                               "server flag", "harmful", "changes the prefill batch", "8192",
                               "16384"});
  check.comparable = false;
  check.verdict = "not comparable because chunked-prefill-size differs";
  RunSummary s;
  s.checks.baseline_confounders = check;
  EXPECT_EQ(SummaryJson(s)["checks"]["baseline_confounders"], ConfounderCheckJson(check));
  const nlohmann::json written = ConfounderCheckJson(check);
  const nlohmann::json& d = written["differences"][0];
  EXPECT_EQ(d["class"], "harmful");
  EXPECT_EQ(d["b"], "16384");
}

}  // namespace
}  // namespace ppsearch::evidence
