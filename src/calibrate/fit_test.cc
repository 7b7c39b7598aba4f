// Reading a measurement (CSV of medians, Nsight summary) with exact messages
// for the common mistakes, and the fit end to end on the shipped baseline.

#include "calibrate/fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "evidence/run_metadata.h"
#include "hardware/hardware.h"
#include "inputs/search_inputs.h"
#include "model/hf_config.h"
#include "plan/plan.h"
#include "ppsearch_source_dir.h"
#include "predict/predict.h"
#include "predict/search_points.h"
#include "spec/spec_parser.h"
#include "util/files.h"

namespace ppsearch::calibrate {
namespace {

using ::testing::Contains;

const std::string kRoot = PPSEARCH_SOURCE_DIR;
const std::string kBaselineCsv = kRoot + "/data/baseline/pp1-tp32-ep4.csv";
const std::string kBaselineProfile = kRoot + "/data/baseline/pp1-nsys-summary.json";

constexpr const char* kHeader =
    "pp,tp,ep,concurrency,input_tps_median,ttft_p50_s_median,ttft_p95_s_median\n";

class MeasurementFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "ppsearch_fit_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    EXPECT_TRUE(WriteFileAtomic(path, text).ok());
    return path;
  }

  // The message loading gives; "" when it loads.
  std::string ErrorFor(const std::string& csv_path, const std::string& profile_path = "") {
    Result<std::vector<Measurement>> m = LoadMeasurements(csv_path);
    if (!m.ok()) return m.error().message;
    if (profile_path.empty()) return "";
    Status s = AttachProfileSummary(profile_path, *m);
    return s.ok() ? "" : s.error().message;
  }

  std::string dir_;
};

TEST_F(MeasurementFileTest, ReadsTheShippedBaseline) {
  Result<std::vector<Measurement>> all = LoadMeasurements(kBaselineCsv);
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_TRUE(AttachProfileSummary(kBaselineProfile, *all).ok());
  ASSERT_EQ(all->size(), 1u);
  const Measurement* m = &all->front();
  EXPECT_EQ(m->layout.Label(), "PP1/TP32/EP4");
  EXPECT_EQ(m->source, kBaselineCsv);
  ASSERT_EQ(m->points.size(), 2u);
  EXPECT_EQ(m->points[0].concurrency, 8);
  EXPECT_DOUBLE_EQ(m->points[0].input_tps, 3257.96);
  EXPECT_DOUBLE_EQ(m->points[0].ttft_p50_s, 39.19);
  EXPECT_DOUBLE_EQ(m->points[0].ttft_p95_s, 41.62);
  EXPECT_DOUBLE_EQ(m->points[0].peak_gpu_mib, 81355);
  EXPECT_EQ(m->points[1].concurrency, 16);
  EXPECT_DOUBLE_EQ(m->points[1].input_tps, 3260.14);
  ASSERT_TRUE(m->exposed_comm_share.has_value());
  EXPECT_DOUBLE_EQ(*m->exposed_comm_share, 0.5727);
}

TEST_F(MeasurementFileTest, OptionalColumnsAndProfile) {
  const std::string csv = Write("m.csv", "pp,tp,ep,concurrency,input_tps_median\n2,16,4,8,4000\n");
  Result<std::vector<Measurement>> all = LoadMeasurements(csv);
  ASSERT_TRUE(all.ok()) << all.error().message;
  const Measurement* m = &all->front();
  EXPECT_EQ(m->layout.Label(), "PP2/TP16/EP4");
  ASSERT_EQ(m->points.size(), 1u);
  EXPECT_DOUBLE_EQ(m->points[0].ttft_p50_s, 0);
  EXPECT_DOUBLE_EQ(m->points[0].peak_gpu_mib, 0);
  EXPECT_FALSE(m->exposed_comm_share.has_value());
}

// A disaggregated deployment's row (another run's summary.csv) is not fitted
// as if it were an aggregated layout of its own sizes.
TEST_F(MeasurementFileTest, ADeploymentsRowIsRefused) {
  const std::string csv = Write("m.csv",
                                "pp,tp,ep,concurrency,input_tps_median,pools\n"
                                ",,,64,5400,1p3d-pp1-tp8-ep8+3x-pp1-tp8-ep8-dp8\n");
  EXPECT_EQ(ErrorFor(csv), csv +
                               ":2: column 'pools': 1P3D PP1/TP8/EP8 + 3xPP1/TP8/EP8/DP8 is a "
                               "disaggregated deployment; a calibration is fitted to aggregated "
                               "layouts only (measure the pools' layouts aggregated to calibrate "
                               "them)");
}

TEST_F(MeasurementFileTest, MissingColumn) {
  const std::string csv = Write("m.csv", "pp,tp,concurrency,input_tps_median\n1,32,8,3257.96\n");
  EXPECT_EQ(ErrorFor(csv), csv +
                               ":1: missing column 'ep' in the header (a CSV of medians needs "
                               "pp, tp, ep, concurrency, input_tps_median)");
}

TEST_F(MeasurementFileTest, MissingThroughputColumn) {
  const std::string csv = Write("m.csv", "pp,tp,ep,concurrency\n1,32,4,8\n");
  EXPECT_EQ(ErrorFor(csv), csv +
                               ":1: missing column 'input_tps_median' in the header (a CSV of "
                               "medians needs pp, tp, ep, concurrency, input_tps_median)");
}

TEST_F(MeasurementFileTest, SeveralLayoutsInOneCsv) {
  const std::string csv = Write("m.csv", std::string(kHeader) +
                                             "1,32,4,8,3257.96,39.19,41.62\n"
                                             "2,16,4,8,4100.00,31.00,33.00\n"
                                             "1,32,4,16,3260.14,78.39,80.88\n");
  Result<std::vector<Measurement>> m = LoadMeasurements(csv);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].layout.Label(), "PP1/TP32/EP4");
  EXPECT_EQ((*m)[0].points.size(), 2u);
  EXPECT_EQ((*m)[1].layout.Label(), "PP2/TP16/EP4");
  // A profile without a layout cannot be attached when several were measured.
  const std::string bare =
      Write("p.json", R"({"exposed_nccl_share_of_prefill_window_median": 0.5})");
  EXPECT_EQ(ErrorFor(csv, bare),
            bare +
                ": no 'layout' key, and 2 layouts were measured: add \"layout\": {\"pp\": .., "
                "\"tp\": .., \"ep\": ..}");
  const std::string other = Write(
      "q.json",
      R"({"layout": {"pp": 8, "tp": 4, "ep": 4}, "exposed_nccl_share_of_prefill_window_median": 0.5})");
  EXPECT_EQ(ErrorFor(csv, other), other + ": profiles PP8/TP4/EP4, which no --measured file has");
  const std::string named = Write(
      "r.json",
      R"({"layout": {"pp": 2, "tp": 16, "ep": 4}, "exposed_nccl_share_of_prefill_window_median": 0.5})");
  Status s = AttachProfileSummary(named, *m);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_FALSE((*m)[0].exposed_comm_share.has_value());
  EXPECT_DOUBLE_EQ(*(*m)[1].exposed_comm_share, 0.5);
}

TEST_F(MeasurementFileTest, RunDirectoryMeansItsSummary) {
  std::filesystem::create_directories(dir_ + "/run");
  Write("run/summary.csv", std::string(kHeader) + "4,8,4,8,9000,15.2,15.9\n");
  Result<std::vector<Measurement>> m = LoadMeasurements(dir_ + "/run");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->front().layout.Label(), "PP4/TP8/EP4");
  std::filesystem::create_directories(dir_ + "/empty");
  EXPECT_EQ(ErrorFor(dir_ + "/empty"),
            dir_ + "/empty: a directory without summary.csv (expected a run directory)");
}

TEST_F(MeasurementFileTest, PointsWithoutValidRepeatsAreLeftOutAndSaid) {
  // A run's summary.csv: PP2 C=8 lost every repeat (OOM), so its medians are empty.
  const std::string csv =
      Write("summary.csv",
            "schema_version,pp,tp,ep,concurrency,repeats,valid_repeats,input_tps_median,"
            "ttft_p50_s_median,peak_gpu_mib,simulated\n"
            "1,1,32,4,8,3,3,3257.96,39.19,81355,false\n"
            "1,2,16,4,8,3,0,,,,false\n"
            "1,2,16,4,16,3,2,5100.5,48.2,,false\n");
  std::vector<std::string> notes;
  Result<std::vector<Measurement>> m = LoadMeasurements(csv, &notes);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->size(), 2u);
  ASSERT_EQ((*m)[1].points.size(), 1u);
  EXPECT_EQ((*m)[1].points[0].concurrency, 16);
  EXPECT_DOUBLE_EQ((*m)[1].points[0].peak_gpu_mib, 0);  // empty cell: not measured
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], csv + ":3: PP2/TP16/EP4 C=8 has no valid repeats; left out of the fit");
  const std::string none = Write("none.csv",
                                 "pp,tp,ep,concurrency,valid_repeats,input_tps_median\n"
                                 "2,16,4,8,0,\n");
  EXPECT_EQ(ErrorFor(none), none + ": no measured point with valid repeats");
}

TEST_F(MeasurementFileTest, SimulatedMediansAreSaidToBeSo) {
  const std::string csv = Write("s.csv",
                                "pp,tp,ep,concurrency,input_tps_median,simulated\n"
                                "8,4,4,8,9500,true\n");
  std::vector<std::string> notes;
  ASSERT_TRUE(LoadMeasurements(csv, &notes).ok());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("come from the simulated engine"), std::string::npos) << notes[0];
}

TEST_F(MeasurementFileTest, NoRows) {
  const std::string csv = Write("m.csv", kHeader);
  EXPECT_EQ(ErrorFor(csv), csv + ": no measured rows");
}

TEST_F(MeasurementFileTest, NonPositiveThroughput) {
  const std::string csv = Write("m.csv", std::string(kHeader) + "1,32,4,8,0,39.19,41.62\n");
  EXPECT_EQ(ErrorFor(csv), csv +
                               ":2: column 'input_tps_median': expected a positive number "
                               "(tokens/s) in [1e-09, 1e+12], got 0 (a point without valid "
                               "repeats has valid_repeats = 0 or an empty cell)");
}

TEST_F(MeasurementFileTest, NonNumberCell) {
  const std::string csv = Write("m.csv", std::string(kHeader) + "1,32,4,8,3257.96,n/a,41.62\n");
  EXPECT_EQ(ErrorFor(csv), csv + ":2: column 'ttft_p50_s_median': expected a number, got \"n/a\"");
}

TEST_F(MeasurementFileTest, ProfileSummaryMissingTheKey) {
  const std::string csv = Write("m.csv", std::string(kHeader) + "1,32,4,8,3257.96,39.19,41.62\n");
  const std::string profile = Write("p.json", R"({"exposed_nccl_share": 0.57})");
  EXPECT_EQ(ErrorFor(csv, profile),
            profile + ": missing number 'exposed_nccl_share_of_prefill_window_median'");
  const std::string text =
      Write("q.json", R"({"exposed_nccl_share_of_prefill_window_median": "57%"})");
  EXPECT_EQ(ErrorFor(csv, text), text +
                                     ": key 'exposed_nccl_share_of_prefill_window_median': "
                                     "expected a number, got string \"57%\"");
}

TEST_F(MeasurementFileTest, ProfileSummaryShareOutOfRange) {
  const std::string csv = Write("m.csv", std::string(kHeader) + "1,32,4,8,3257.96,39.19,41.62\n");
  const std::string percent =
      Write("p.json", R"({"exposed_nccl_share_of_prefill_window_median": 57.27})");
  EXPECT_EQ(ErrorFor(csv, percent), percent +
                                        ": key 'exposed_nccl_share_of_prefill_window_median': "
                                        "expected a share in (0, 1), got 57.27");
  const std::string zero = Write("z.json", R"({"exposed_nccl_share_of_prefill_window_median": 0})");
  EXPECT_EQ(ErrorFor(csv, zero), zero +
                                     ": key 'exposed_nccl_share_of_prefill_window_median': "
                                     "expected a share in (0, 1), got 0");
}

TEST_F(MeasurementFileTest, ProfileSummaryNotJson) {
  const std::string csv = Write("m.csv", std::string(kHeader) + "1,32,4,8,3257.96,39.19,41.62\n");
  const std::string profile = Write("p.json", "share = 0.57\n");
  EXPECT_EQ(ErrorFor(csv, profile).rfind(profile + ": not valid JSON: ", 0), 0u)
      << ErrorFor(csv, profile);
}

TEST_F(MeasurementFileTest, MissingFiles) {
  EXPECT_NE(ErrorFor(dir_ + "/absent.csv").find(dir_ + "/absent.csv"), std::string::npos);
  const std::string csv = Write("m.csv", std::string(kHeader) + "1,32,4,8,3257.96,39.19,41.62\n");
  EXPECT_NE(ErrorFor(csv, dir_ + "/absent.json").find(dir_ + "/absent.json"), std::string::npos);
}

// The shipped example spec, its model and hardware.
using Baseline = inputs::SearchInputs;

Baseline LoadBaseline() {
  Result<inputs::SearchInputs> in =
      inputs::LoadSpecFileInputs(kRoot + "/examples/kimi-k3-pp-search.toml");
  EXPECT_TRUE(in.ok()) << in.error().message;
  return in.ok() ? *in : Baseline();
}

spec::LayoutSpec Pp1Tp32Ep4() {
  spec::LayoutSpec l;
  l.pp = 1;
  l.tp = 32;
  l.ep = 4;
  return l;
}

FitInputs InputsFor(const Baseline& b, std::vector<Measurement> measurements) {
  FitInputs in;
  for (const auto& m : measurements)
    in.plans.push_back(plan::PlanLayout(m.layout, b.spec, b.model, b.hardware));
  in.measurements = std::move(measurements);
  in.search = &b;
  return in;
}

void ExpectWithinBounds(const cost::Calibration& c, const hardware::HardwareProfile& hw) {
  for (const auto& p : cost::AllParams()) {
    const cost::Range r = cost::Bounds(p.param, hw);
    EXPECT_GE(c.Get(p.param), r.lo * (1 - 1e-9)) << p.name;
    EXPECT_LE(c.Get(p.param), r.hi * (1 + 1e-9)) << p.name;
    EXPECT_FALSE(c.note[cost::Index(p.param)].empty()) << p.name;
  }
}

// The fit to PP1/TP32/EP4 measured at `points`, which no physical parameter
// set reaches: it is infeasible, and no value leaves its bound.
void FitOutOfReach(std::vector<MeasuredPoint> points, FitResult* out) {
  const Baseline b = LoadBaseline();
  ASSERT_FALSE(b.model.layers.empty());
  Measurement m;
  m.layout = Pp1Tp32Ep4();
  m.source = "out of reach";
  m.points = std::move(points);
  Result<FitResult> fit = FitCalibration(InputsFor(b, {m}));
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  ExpectWithinBounds(fit->calibration, b.hardware);
  ASSERT_FALSE(fit->calibration.infeasible.empty());
  *out = std::move(*fit);
}

// On the shipped baseline the fit is feasible: with the profile's tensor
// burst between collectives the compute fits in the time the profile
// leaves for it, at the dense GEMM class's bound, and the links make up
// the rest at a bus bandwidth that only hosts with PCIe switches or tuned
// NCCL channels measured (37.6-41.1 GB/s at 8 GPUs, the top of the range
// the profile states), below the PCIe line rate.
TEST(FitCalibration, ShippedBaselineIsFeasibleWithTheLinksOfASwitchedHost) {
  const Baseline b = LoadBaseline();
  ASSERT_FALSE(b.model.layers.empty());
  Result<std::vector<Measurement>> m = LoadMeasurements(kBaselineCsv);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(AttachProfileSummary(kBaselineProfile, *m).ok());
  Result<FitResult> fit = FitCalibration(InputsFor(b, *m));
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  const cost::Calibration& c = fit->calibration;
  ExpectWithinBounds(c, b.hardware);
  ASSERT_EQ(fit->residuals.size(), 2u);
  for (const PointResidual& r : fit->residuals)
    EXPECT_LT(std::abs(r.predicted_tps / r.measured_tps - 1), 0.03) << r.concurrency;
  ASSERT_EQ(fit->shares.size(), 1u);
  EXPECT_DOUBLE_EQ(fit->shares[0].measured, 0.5727);
  // Within 5 points, low: at TP32 the model's compute, at its bounds, is
  // more than the profile leaves for it (docs/model.md), and the fit
  // spends the rest of the prior's room on the links.
  EXPECT_NEAR(fit->shares[0].predicted, 0.5727, 0.05);
  // One layout cannot separate the attention classes, the links across
  // nodes or the host time: they stay at their priors.
  for (cost::Param p : {cost::Param::kFp8Gemm, cost::Param::kInterLink, cost::Param::kHostOverhead})
    EXPECT_EQ(c.Status(p), cost::ParamStatus::kPrior) << cost::Info(p).name;
  EXPECT_EQ(c.Status(cost::Param::kDenseGemm), cost::ParamStatus::kAtBound);
  EXPECT_DOUBLE_EQ(c.Get(cost::Param::kDenseGemm), 1.0);
  EXPECT_TRUE(c.infeasible.empty()) << c.infeasible.front();
  const double busbw = c.Get(cost::Param::kIntraLink) * b.hardware.IntraFor(8).busbw_gbps;
  EXPECT_GT(busbw, 37.6);
  EXPECT_LT(busbw, 0.9 * b.hardware.p2p_gbps);
  // At the top of what the board's hosts span: not a prior width out.
  EXPECT_TRUE(c.off_prior.empty()) << c.off_prior.front();
  EXPECT_TRUE(fit->held_out.empty());  // one layout: nothing to hold out
}

// A profile summary from `ppsearch nsys` states the compute by kernel
// class: read as shares in its class order, checked key by key, and set
// beside the fitted model's prediction of the same layout (not fitted to).
TEST_F(MeasurementFileTest, ComputeClassesAreReadAndComparedNotFitted) {
  const std::string summary =
      R"({"layout": {"pp": 1, "tp": 32, "ep": 4},
          "exposed_nccl_share_of_prefill_window_median": 0.5727,
          "compute_classes": {"gemm": {"share": {"median": 0.20}},
                              "moe": {"share": {"median": 0.10}},
                              "attention": {"share": {"median": 0.04}},
                              "other": {"share": {"median": 0.05}}}})";
  const std::string with = Write("classes.json", summary);
  Result<std::vector<Measurement>> m = LoadMeasurements(kBaselineCsv);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(AttachProfileSummary(with, *m).ok());
  ASSERT_TRUE(m->front().compute_class_shares.has_value());
  EXPECT_DOUBLE_EQ((*m->front().compute_class_shares)[static_cast<int>(nsys::ComputeClass::kMoe)],
                   0.10);
  // The classes change nothing the fit reads: the same fit as without them.
  const Baseline b = LoadBaseline();
  Result<FitResult> fit = FitCalibration(InputsFor(b, *m));
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  ASSERT_EQ(fit->class_shares.size(), 1u);
  const ClassShares& cs = fit->class_shares.front();
  EXPECT_DOUBLE_EQ(cs.measured[static_cast<int>(nsys::ComputeClass::kGemm)], 0.20);
  double predicted = 0;
  for (double x : cs.predicted) predicted += x;
  // The classes add up to the predicted compute: what exposed
  // communication and the rest leave of the window.
  EXPECT_GT(predicted, 0.3);
  EXPECT_LT(predicted, 1 - fit->shares.front().predicted + 1e-9);
  EXPECT_GT(cs.predicted[static_cast<int>(nsys::ComputeClass::kGemm)],
            cs.predicted[static_cast<int>(nsys::ComputeClass::kMoe)]);
  Result<std::vector<Measurement>> plain = LoadMeasurements(kBaselineCsv);
  ASSERT_TRUE(AttachProfileSummary(kBaselineProfile, *plain).ok());
  Result<FitResult> without = FitCalibration(InputsFor(b, *plain));
  ASSERT_TRUE(without.ok());
  EXPECT_TRUE(without->class_shares.empty());
  for (const auto& p : cost::AllParams())
    EXPECT_DOUBLE_EQ(fit->calibration.Get(p.param), without->calibration.Get(p.param)) << p.name;

  const std::string bad =
      summary.substr(0, summary.find("\"other\"")) + R"("other": {"share": {"median": -0.5}}}})";
  EXPECT_EQ(ErrorFor(kBaselineCsv, Write("bad.json", bad)),
            dir_ +
                "/bad.json: key 'compute_classes.other.share.median': expected a share >= 0, "
                "got -0.5");
  const std::string missing =
      summary.substr(0, summary.find(",\n                              \"other\"")) + "}}";
  EXPECT_EQ(ErrorFor(kBaselineCsv, Write("missing.json", missing)),
            dir_ +
                "/missing.json: key 'compute_classes.other.share.median': expected a share "
                ">= 0, missing");
}

// The off-prior rule on hand-made fit results: only a value more than one
// prior width outside its prior range is flagged, and its log-space spread
// then reaches the prior's edge.
TEST(FlagOffPrior, FlagsOnlyBeyondOnePriorWidthAndWidensTheSpread) {
  Baseline b = LoadBaseline();
  // The default prior 0.7-1.1: a table that states no hosts' range.
  for (auto& e : b.hardware.intra_allreduce) e.busbw_lo_gbps = e.busbw_hi_gbps = 0;
  FitResult fit;
  constexpr int n = cost::kParamCount;
  fit.calibration.log_covariance.assign(n * n, 0.0);
  const int intra = cost::Index(cost::Param::kIntraLink);
  const int host = cost::Index(cost::Param::kHostOverhead);
  for (int i = 0; i < n; ++i) fit.calibration.log_covariance[i * n + i] = 0.03 * 0.03;
  // intra_bw_scale 1.646: (1.646 - 1.1) / 0.4 = 1.365 widths above 0.7-1.1.
  fit.calibration.value[intra] = 1.646;
  // host_overhead_us 6000: (6000 - 4000) / 3000 = 0.67 widths: kept.
  fit.calibration.value[host] = 6000;
  FlagOffPrior(b.hardware, fit);
  ASSERT_EQ(fit.calibration.off_prior.size(), 1u);
  EXPECT_NE(fit.calibration.off_prior[0].find("intra_bw_scale = 1.646 is 1.4 prior widths "
                                              "outside its prior [0.7, 1.1]"),
            std::string::npos)
      << fit.calibration.off_prior[0];
  // Variance 0.03^2 + ln(1.646 / 1.1)^2 = 0.0009 + 0.16231 -> sigma 0.40400.
  const double gap = std::log(1.646 / 1.1);
  EXPECT_NEAR(fit.calibration.log_covariance[intra * n + intra], 0.0009 + gap * gap, 1e-12);
  EXPECT_NEAR(fit.posterior_sigma[intra], std::sqrt(0.0009 + gap * gap), 1e-12);
  EXPECT_DOUBLE_EQ(fit.calibration.log_covariance[host * n + host], 0.0009);
  EXPECT_NE(fit.calibration.off_prior[0].find("to reach the prior's edge"), std::string::npos);

  // Far off (1e5 us against 1,000-4,000: ln(25)^2 = 10.4): capped at the
  // calibration file's bound, which its reader would refuse past.
  fit.calibration.off_prior.clear();
  fit.calibration.value[host] = 1e5;
  FlagOffPrior(b.hardware, fit);
  ASSERT_EQ(fit.calibration.off_prior.size(), 2u);
  EXPECT_DOUBLE_EQ(fit.calibration.log_covariance[host * n + host], cost::kMaxLogVariance);
  EXPECT_NE(fit.calibration.off_prior[1].find("capped there, short of the prior's edge"),
            std::string::npos)
      << fit.calibration.off_prior[1];
}

// Measurements the simulator itself produces with known parameters: the fit
// must find parameters that reproduce them, recover what the data
// determines, and predict held-out layouts from the others.
TEST(FitCalibration, RecoversKnownParametersFromSeveralLayouts) {
  Baseline b = LoadBaseline();
  ASSERT_FALSE(b.model.layers.empty());
  b.spec.workload.requests = 8;  // small samples keep the fit quick
  cost::Calibration truth;
  truth.Set(cost::Param::kDenseGemm, 0.78);
  truth.Set(cost::Param::kMoeGemm, 0.72);
  truth.Set(cost::Param::kIntraLink, 0.85);
  truth.Set(cost::Param::kExpertSkew, 1.3);
  truth.Set(cost::Param::kWorkspace, 7000);
  std::vector<Measurement> measured;
  for (int pp : {1, 2, 4, 8}) {
    Measurement m;
    m.layout.pp = pp;
    m.layout.tp = 32 / pp;
    m.layout.ep = 4;
    m.source = "synthetic";
    const plan::LayoutPlan plan = plan::PlanLayout(m.layout, b.spec, b.model, b.hardware);
    ASSERT_TRUE(plan.valid) << m.layout.Label();
    predict::PointRequest request;
    request.concurrency = 8;
    const predict::PointPrediction p = predict::PredictSearchPoint(b, plan, truth, request);
    m.points.push_back({8, p.metrics.input_tps, p.metrics.ttft_s.p50, 0, p.memory.peak_mib_max});
    m.exposed_comm_share = p.exposed_comm_share;
    measured.push_back(m);
  }
  Result<FitResult> fit = FitCalibration(InputsFor(b, measured));
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  const cost::Calibration& c = fit->calibration;
  ExpectWithinBounds(c, b.hardware);
  EXPECT_TRUE(c.infeasible.empty()) << c.infeasible.front();
  for (const PointResidual& r : fit->residuals)
    EXPECT_LT(std::abs(r.predicted_tps / r.measured_tps - 1), 0.01) << r.layout.Label();
  // Every parameter, determined or not, lies within three of its posterior
  // sigmas of the truth (plus the finite differences' step): the stated
  // uncertainty covers the error. The compute classes move the data alike,
  // so four layouts narrow them without separating them.
  for (const auto& p : cost::AllParams()) {
    const int i = cost::Index(p.param);
    EXPECT_LT(std::abs(std::log(c.Get(p.param) / truth.Get(p.param))),
              3 * fit->posterior_sigma[i] + 0.02)
        << p.name << " fitted " << c.Get(p.param) << " truth " << truth.Get(p.param);
  }
  EXPECT_EQ(c.Status(cost::Param::kIntraLink), cost::ParamStatus::kDetermined);
  EXPECT_NEAR(c.Get(cost::Param::kIntraLink), 0.85, 0.85 * 0.08);
  // The measured peaks determine the memory nothing else accounts for.
  EXPECT_EQ(c.Status(cost::Param::kWorkspace), cost::ParamStatus::kDetermined);
  EXPECT_NEAR(c.Get(cost::Param::kWorkspace), 7000, 7000 * 0.03);
  ASSERT_EQ(fit->held_out.size(), 4u);
  for (const PointResidual& r : fit->held_out)
    EXPECT_LT(std::abs(r.predicted_tps / r.measured_tps - 1), 0.05) << r.layout.Label();
}

// Throughput no physical parameter set can reach is reported as infeasible,
// naming the bound and the assumption, and no value leaves its bound.
TEST(FitCalibration, ImpossibleThroughputIsInfeasible) {
  FitResult fit;
  ASSERT_NO_FATAL_FAILURE(FitOutOfReach({{8, 3 * 3257.96, 0, 0, 0}}, &fit));
  const cost::Calibration& c = fit.calibration;
  bool names_compute = false;
  for (const auto& s : c.infeasible)
    names_compute |= s.find("ran faster than its operators allow") != std::string::npos;
  EXPECT_TRUE(names_compute) << c.infeasible.front();
  EXPECT_NE(c.infeasible.front().find("PP1/TP32/EP4 C=8 input TPS predicted"), std::string::npos)
      << c.infeasible.front();
  // It names where the work goes: the latent projections every TP rank runs whole.
  const auto compute =
      std::find_if(c.infeasible.begin(), c.infeasible.end(), [](const std::string& s) {
        return s.find("ran faster than its operators allow") != std::string::npos;
      });
  ASSERT_NE(compute, c.infeasible.end());
  EXPECT_NE(compute->find("latent_down_proj 24% (replicated on every TP rank)"), std::string::npos)
      << *compute;
}

// Throughput far below the model at its slowest (the baseline's input TPS
// / 100, its TTFTs x 100) holds the parameters at the bounds that make the
// model slowest: the note says the measurement is slower than the model can
// be, not that it ran faster than the operators or links allow.
TEST(FitCalibration, ImpossiblySlowThroughputSaysTheMeasurementIsSlower) {
  FitResult fit;
  ASSERT_NO_FATAL_FAILURE(
      FitOutOfReach({{8, 32.5796, 3919, 4162, 0}, {16, 32.6014, 7839, 8088, 0}}, &fit));
  const cost::Calibration& c = fit.calibration;
  bool names_compute = false;
  for (const auto& s : c.infeasible) {
    EXPECT_EQ(s.find("faster than"), std::string::npos) << s;
    EXPECT_EQ(s.find("less waiting"), std::string::npos) << s;
    EXPECT_NE(s.find("a throughput per GPU given as a whole server's"), std::string::npos) << s;
    if (s.find("ran slower than its operators take at the least efficiency the model allows") !=
        std::string::npos) {
      names_compute = true;
      // 0.05 closes the range the fit searches; the profile's rate is the other end.
      EXPECT_NE(s.find("dense_gemm_eff = 0.05 (the least the fit searches)"), std::string::npos)
          << s;
      EXPECT_NE(s.find("are at the bound and the data pulls further"), std::string::npos) << s;
    }
  }
  EXPECT_TRUE(names_compute) << c.infeasible.front();
  EXPECT_EQ(c.note[cost::Index(cost::Param::kDenseGemm)],
            "held at its lower bound 0.05 (the least the fit searches)");
}

// A run directory is of the spec's model and GPU: a Kimi K3 run on RTX
// 6000D calibrated a DeepSeek-V3 / H200 spec with exit 0.
TEST_F(MeasurementFileTest, ARunOfAnotherModelOrGpuIsRefusedNamingBoth) {
  const Baseline b = LoadBaseline();
  ASSERT_FALSE(b.model.layers.empty());
  const std::string run = dir_ + "/run";
  std::filesystem::create_directories(run + "/metadata");
  evidence::RunMetadata m;
  m.run_id = "run";
  const auto check = [&](const std::vector<std::pair<std::string, std::string>>& files) {
    Result<std::vector<evidence::RunInput>> inputs = evidence::HashInputs(files);
    EXPECT_TRUE(inputs.ok());
    m.inputs = *inputs;
    if (files.empty()) m.inputs.reset();  // a run older than the inputs list
    EXPECT_TRUE(evidence::WriteRunMetadata(evidence::RunPaths{run}, m).ok());
    const Status s = CheckMeasuredSetup(run, b);
    return s.ok() ? std::string() : s.error().message;
  };
  const std::string profiles = kRoot + "/data/hardware/";
  EXPECT_EQ(check({{"engine.model_config", b.model.source_path},
                   {"cluster.hardware", profiles + "rtx-6000d.toml"}}),
            "");
  const std::string other = Write("config.json", "{}");
  const std::string ours =
      evidence::HashInputs({{"engine.model_config", b.model.source_path}})->front().sha256;
  EXPECT_EQ(check({{"engine.model_config", other}, {"cluster.hardware", profiles + "h200.toml"}}),
            run + ": the run measured the model config " + other +
                " (SHA-256 44136fa355b3), not this spec's " + b.model.source_path + " (" +
                ours.substr(0, 12) +
                "); and the hardware profile h200, not this spec's rtx-6000d: a fit to it would "
                "predict this spec's model and GPU at another's speed; calibrate on a run of "
                "this spec's model config and hardware profile");
  EXPECT_EQ(check({}), "");                                   // recorded nothing: not checked
  EXPECT_EQ(CheckMeasuredSetup(kBaselineCsv, b).ok(), true);  // a CSV says neither
}

TEST(FitCalibration, InvalidPlanIsAnError) {
  Measurement m;
  m.layout = Pp1Tp32Ep4();
  m.source = "m.csv";
  m.points.push_back({8, 3000, 0, 0, 0});
  plan::LayoutPlan plan;
  plan.layout = m.layout;
  plan.valid = false;
  FitInputs in;
  in.measurements = {m};
  in.plans = {plan};
  Result<FitResult> fit = FitCalibration(in);
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.error().message,
            "measured layout PP1/TP32/EP4 (from m.csv) is not valid for this spec");
  // Read from a CSV, the layout's first row and the planner's reasons.
  in.measurements[0].line = 3;
  in.plans[0].errors.push_back({"PP1/TP32/EP4 needs 32 GPUs; the cluster has 16", {}, "gpu_count"});
  in.plans[0].errors.push_back({"another reason", {}, "kv_room"});
  EXPECT_EQ(FitCalibration(in).error().message,
            "measured layout PP1/TP32/EP4 (from m.csv:3) is not valid for this spec: PP1/TP32/EP4 "
            "needs 32 GPUs; the cluster has 16; another reason");
}

}  // namespace
}  // namespace ppsearch::calibrate
