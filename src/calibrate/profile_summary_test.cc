// calibrate --profile-summary reads the nsys_analysis.json that `ppsearch
// nsys` writes: the exposed share of a real (schema-true) export reaches the
// measurement it is attached to.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "calibrate/fit.h"
#include "nsys/analysis_json.h"
#include "nsys/analyze.h"
#include "nsys/export_testing.h"
#include "util/files.h"

namespace ppsearch::calibrate {
namespace {

TEST(ProfileSummaryTest, CalibrateReadsTheAnalysisNsysWrites) {
  std::string pattern = (std::filesystem::temp_directory_path() / "ppsearch_cal_XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const std::string dir = pattern;
  auto Path = [&](const std::string& name) { return dir + "/" + name; };
  auto written = nsys::TestExportWriter::Create(Path("cal.sqlite"), true);
  ASSERT_TRUE(written.ok()) << written.error().message;
  auto w = std::move(written).value();
  w->AddNvtxRange(0, 1000, "prefill");
  w->AddKernel(0, 7, 0, 400, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n");
  w->AddKernel(0, 8, 400, 1000, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  ASSERT_TRUE(w->Close().ok());
  auto a =
      nsys::AnalyzeProfiles({Path("cal.sqlite")}, *nsys::ParseWindowChoice("nvtx:prefill", 1000));
  ASSERT_TRUE(a.ok()) << a.error().message;
  nsys::ProfileContext ctx;
  ctx.pp = 1;
  ctx.tp = 32;
  ctx.ep = 4;
  ctx.tp_span_nodes = 4;
  const nlohmann::ordered_json j = nsys::AnalysisJson(*a, ctx);
  EXPECT_EQ(j["layout"]["tp"], 32);
  EXPECT_DOUBLE_EQ(j["exposed_nccl_share_of_prefill_window_median"].get<double>(), 0.6);
  EXPECT_EQ(j["allreduce_calls_in_window"], 1.0);
  EXPECT_EQ(j["compute_communication_overlap"], "effectively none");
  EXPECT_EQ(j["tp_collectives_span_nodes"], 4);
  EXPECT_EQ(j["per_gpu"][0]["per_window"][0]["exposed_ns"], 600);
  const std::string summary = Path("nsys_analysis.json");
  ASSERT_TRUE(WriteFileAtomic(summary, j.dump(2)).ok());
  const std::string csv = Path("m.csv");
  ASSERT_TRUE(WriteFileAtomic(csv,
                              "pp,tp,ep,concurrency,input_tps_median,ttft_p50_s_median,ttft_p95_s_"
                              "median\n1,32,4,8,3257.96,39.19,41.62\n")
                  .ok());
  auto m = LoadMeasurements(csv);
  ASSERT_TRUE(m.ok()) << m.error().message;
  Status attached = AttachProfileSummary(summary, *m);
  ASSERT_TRUE(attached.ok()) << attached.error().message;
  ASSERT_TRUE(m->front().exposed_comm_share);
  EXPECT_DOUBLE_EQ(*m->front().exposed_comm_share, 0.6);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ppsearch::calibrate
