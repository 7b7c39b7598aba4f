// The calibration file: round trip, defaults, and the exact messages of the
// common mistakes.

#include "evidence/calibration_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "util/files.h"

namespace ppsearch::evidence {
namespace {

using cost::AllParams;
using cost::Calibration;
using cost::Index;
using cost::kParamCount;
using cost::ModelFormScales;
using cost::Param;
using cost::ParamStatus;

// Every parameter at its prior's centre, as a file's "parameters" object.
std::string AllAtPrior() {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& p : AllParams()) j[std::string(p.name)] = p.nominal;
  return j.dump();
}

class CalibrationFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ppsearch_calibration_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& text) {
    std::string path = dir_ + "/calibration.json";
    EXPECT_TRUE(WriteFileAtomic(path, text).ok());
    return path;
  }

  std::string dir_;
};

TEST_F(CalibrationFileTest, SaveThenLoadRoundTrips) {
  Calibration c;
  c.Set(Param::kDenseGemm, 0.8125);
  c.Set(Param::kInterLink, 0.25);
  c.Set(Param::kHostOverhead, 1750);
  c.status[Index(Param::kDenseGemm)] = ParamStatus::kDetermined;
  c.status[Index(Param::kMoeGemm)] = ParamStatus::kAtBound;
  c.note[Index(Param::kDenseGemm)] = "determined: the data narrowed it";
  c.log_covariance.assign(kParamCount * kParamCount, 0.0);
  for (int i = 0; i < kParamCount; ++i) c.log_covariance[i * kParamCount + i] = 0.01 * (i + 1);
  c.log_covariance[1] = c.log_covariance[kParamCount] = -0.002;
  c.infeasible.push_back("moe_gemm_eff = 1 is at its physical bound");
  c.off_prior.push_back("intra_bw_scale = 1.65 is 1.4 prior widths outside its prior");
  const std::string path = dir_ + "/out/calibration.json";
  c.fitted_layouts = {"PP1/TP32/EP4"};
  const CalibrationFitRecord fit;
  ASSERT_TRUE(SaveCalibration(c, path, &fit).ok());
  Result<Calibration> loaded = LoadCalibration(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  for (int i = 0; i < kParamCount; ++i) {
    EXPECT_DOUBLE_EQ(loaded->value[i], c.value[i]) << AllParams()[i].name;
    EXPECT_EQ(loaded->status[i], c.status[i]) << AllParams()[i].name;
    EXPECT_EQ(loaded->note[i], c.note[i]) << AllParams()[i].name;
  }
  EXPECT_EQ(loaded->log_covariance, c.log_covariance);
  EXPECT_EQ(loaded->infeasible, c.infeasible);
  EXPECT_EQ(loaded->off_prior, c.off_prior);
  EXPECT_EQ(loaded->source, path);
  Result<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("\"schema\": \"ppsearch.calibration/2\""), std::string::npos) << *text;
  EXPECT_NE(text->find("\"PP1/TP32/EP4\""), std::string::npos) << *text;
}

spec::LayoutSpec LayoutOf(int pp, int tp, int ep) {
  spec::LayoutSpec l;
  l.pp = pp;
  l.tp = tp;
  l.ep = ep;
  return l;
}

// The fit section says what the fit met: each measured layout's source, every
// fitted point measured against predicted, the exposed communication shares
// and the leave-one-layout-out points, in this order.
TEST_F(CalibrationFileTest, TheFitSectionRecordsWhatTheFitMet) {
  Calibration c;
  c.fitted_hardware = "h20";
  c.fitted_gpus_per_node = 8;
  c.fitted_input_tokens = 1024;
  c.fitted_layouts = {"PP1/TP8/EP1", "PP2/TP4/EP1"};
  CalibrationFitRecord fit;
  fit.measured = {"a.csv", "b.csv"};
  fit.points.push_back({LayoutOf(1, 8, 1), 4, 1000, 1100, 2.5, 2.25, 70000, 71000});
  fit.exposed_comm_share.push_back({LayoutOf(1, 8, 1), 0.25, 0.125});
  fit.leave_one_layout_out.push_back({LayoutOf(2, 4, 1), 8, 900, 990, 3, 3.5, 0, 60000});
  const std::string path = dir_ + "/calibration.json";
  ASSERT_TRUE(SaveCalibration(c, path, &fit).ok());
  Result<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  const nlohmann::json j = nlohmann::json::parse(*text);
  const nlohmann::json& f = j["fit"];
  EXPECT_EQ(f["hardware"], "h20");
  EXPECT_EQ(f["gpus_per_node"], 8);
  EXPECT_EQ(f["input_tokens"], 1024);
  EXPECT_EQ(f["layouts"], nlohmann::json({"PP1/TP8/EP1", "PP2/TP4/EP1"}));
  EXPECT_EQ(f["measured"], nlohmann::json({"a.csv", "b.csv"}));
  ASSERT_EQ(f["points"].size(), 1u);
  EXPECT_EQ(f["points"][0]["tp"], 8);
  EXPECT_EQ(f["points"][0]["concurrency"], 4);
  EXPECT_EQ(f["points"][0]["input_tps_predicted"], 1100.0);
  EXPECT_EQ(f["points"][0]["ttft_p50_s_measured"], 2.5);
  EXPECT_EQ(f["points"][0]["peak_gpu_mib_measured"], 71000.0);
  EXPECT_EQ(f["exposed_comm_share"][0]["layout"], "PP1/TP8/EP1");
  EXPECT_EQ(f["exposed_comm_share"][0]["predicted"], 0.125);
  EXPECT_EQ(f["leave_one_layout_out"][0]["pp"], 2);
  EXPECT_EQ(f["leave_one_layout_out"][0]["ttft_p50_s_predicted"], 3.5);
  // `fit` is written last.
  EXPECT_LT(text->find("\"off_prior\""), text->find("\"fit\""));
  // Read back: the fields the Calibration holds.
  Result<Calibration> loaded = LoadCalibration(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->fitted_layouts, c.fitted_layouts);
  EXPECT_EQ(loaded->fitted_input_tokens, 1024);
  // Without a record the file has no fit section.
  ASSERT_TRUE(SaveCalibration(c, path).ok());
  text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->find("\"fit\""), std::string::npos) << *text;
}

TEST_F(CalibrationFileTest, TheModelFormTermAndWhereTheFitSatRoundTrip) {
  Calibration c;
  ModelFormScales form;
  form.s0 = 0.03;
  form.SetPerUnit({0.04, 0.05, 0.06, 0.07, 0.09, 0.10});
  form.source = "data/model_error.json";
  c.model_form = form;
  const std::string path = dir_ + "/calibration.json";
  c.fitted_hardware = "h20";
  c.fitted_gpus_per_node = 8;
  c.fitted_input_tokens = 131072;
  c.fitted_concurrency = {1, 16};
  c.fitted_output_tokens = 1024;
  c.fitted_layouts = {"PP1/TP8/EP1"};
  const CalibrationFitRecord fit;
  ASSERT_TRUE(SaveCalibration(c, path, &fit).ok());
  Result<Calibration> loaded = LoadCalibration(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_TRUE(loaded->model_form.has_value());
  EXPECT_DOUBLE_EQ(loaded->model_form->s0, 0.03);
  EXPECT_DOUBLE_EQ(loaded->model_form->hardware, 0.07);
  EXPECT_DOUBLE_EQ(loaded->model_form->concurrency, 0.09);
  EXPECT_DOUBLE_EQ(loaded->model_form->output_length, 0.10);
  EXPECT_EQ(loaded->model_form->source, "data/model_error.json");
  EXPECT_EQ(loaded->fitted_hardware, "h20");
  EXPECT_EQ(loaded->fitted_gpus_per_node, 8);
  EXPECT_EQ(loaded->fitted_input_tokens, 131072);
  EXPECT_EQ(loaded->fitted_concurrency, (std::vector<int>{1, 16}));
  EXPECT_EQ(loaded->fitted_output_tokens, 1024);
  EXPECT_EQ(loaded->fitted_layouts, c.fitted_layouts);
  // A file without the section states none: the shipped fit applies.
  Result<Calibration> bare = LoadCalibration(
      Write(R"({"schema": "ppsearch.calibration/2", "parameters": )" + AllAtPrior() + "}"));
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare->model_form.has_value());
}

TEST_F(CalibrationFileTest, AModelFormOfAnotherShapeIsRefused) {
  Result<Calibration> c =
      LoadCalibration(Write(R"({"schema": "ppsearch.calibration/2", "parameters": )" +
                            AllAtPrior() + R"(, "model_error": {"form": "gp"}})"));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("key 'model_error.form': expected \"lognormal"),
            std::string::npos)
      << c.error().message;
  // The form of an older version (before the uncalibrated distance): what
  // was found, and what to do.
  const std::string older =
      "lognormal: sigma^2 = s0^2 + (pp_depth*d_pp)^2 + (node_span*d_span)^2 + "
      "(input_length*d_len)^2 + (hardware*d_hw)^2 + (concurrency*d_c)^2 + (output_length*d_out)^2";
  Result<Calibration> old =
      LoadCalibration(Write(R"({"schema": "ppsearch.calibration/2", "parameters": )" +
                            AllAtPrior() + R"(, "model_error": {"form": ")" + older + R"("}})"));
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().message.find("run 'ppsearch calibrate' again to write this one"),
            std::string::npos)
      << old.error().message;
}

TEST_F(CalibrationFileTest, AMissingParameterIsAnErrorNotItsPrior) {
  const std::string path =
      Write(R"({"schema": "ppsearch.calibration/2", "parameters": {"dense_gemm_eff": 0.5}})");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, path +
                                   ": key 'parameters.fp8_gemm_eff' is missing; a calibration "
                                   "states every parameter (fraction of fp8_tflops; its "
                                   "prior's centre is 0.85)");
  nlohmann::json all = nlohmann::json::parse(AllAtPrior());
  all["dense_gemm_eff"] = 0.5;
  Result<Calibration> full = LoadCalibration(
      Write(R"({"schema": "ppsearch.calibration/2", "parameters": )" + all.dump() + "}"));
  ASSERT_TRUE(full.ok()) << full.error().message;
  EXPECT_DOUBLE_EQ(full->Get(Param::kDenseGemm), 0.5);
  EXPECT_TRUE(full->log_covariance.empty());
}

// Each model-form scale and each variance is bounded by what it can mean:
// 1e5 as s0 made every draw of an adaptive run overflow.
TEST_F(CalibrationFileTest, ModelFormAndCovarianceBeyondWhatTheyCanMeanAreRefused) {
  const auto with = [&](const std::string& extra) {
    return Write(R"({"schema": "ppsearch.calibration/2", "parameters": )" + AllAtPrior() + ", " +
                 extra + "}");
  };
  std::string scales;
  for (const char* k : cost::kModelFormDistanceNames) scales += ", \"" + std::string(k) + "\": 0.1";
  const std::string form = "\"form\": \"" + std::string(cost::kModelForm) + "\"";
  const std::string huge = with(R"("model_error": {)" + form + R"(, "s0": 1e5)" + scales + "}");
  Result<Calibration> c = LoadCalibration(huge);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            huge +
                ": key 'model_error.s0': expected a number in [0, 2.0] (a standard deviation "
                "of log(measured / predicted); 2 is a factor of 7.4 at one sigma), got 100000.0");
  EXPECT_TRUE(
      LoadCalibration(with(R"("model_error": {)" + form + R"(, "s0": 0.05)" + scales + "}")).ok());
  EXPECT_FALSE(
      LoadCalibration(with(R"("model_error": {)" + form + R"(, "s0": -0.1)" + scales + "}")).ok());
  // A covariance: variances in [0, 9], symmetric, correlations within [-1, 1].
  const auto covariance = [&](int r, int k, double v) {
    nlohmann::json m = nlohmann::json::array();
    for (int i = 0; i < kParamCount; ++i) {
      nlohmann::json row = nlohmann::json::array();
      for (int j = 0; j < kParamCount; ++j) row.push_back(i == j ? 0.01 : 0.0);
      m.push_back(row);
    }
    m[r][k] = v;
    m[k][r] = v;
    return with(R"("log_covariance": )" + m.dump());
  };
  EXPECT_TRUE(LoadCalibration(covariance(0, 1, 0.005)).ok());
  const auto error = [](const std::string& path) {
    Result<Calibration> c = LoadCalibration(path);
    return c.ok() ? std::string("loaded") : c.error().message;
  };
  const std::string negative = covariance(2, 2, -0.5);
  EXPECT_EQ(error(negative),
            negative +
                ": key 'log_covariance[2][2]' (moe_gemm_eff, moe_gemm_eff): expected a "
                "variance in [0, 9.0] (of log(parameter); 9 is a factor of 20 at one "
                "sigma, wider than any parameter's bounds), got -0.5");
  EXPECT_FALSE(LoadCalibration(covariance(3, 3, 1e300)).ok());
  const std::string correlated = covariance(0, 1, 0.05);
  EXPECT_EQ(error(correlated),
            correlated +
                ": key 'log_covariance[0][1]' (dense_gemm_eff, fp8_gemm_eff): expected "
                "|covariance| <= sqrt(variance x variance), a correlation within "
                "[-1, 1], got 0.05");
}

// The fit section is where the model-form distances start: each key is
// bounded by what it can mean (the spec value calibrate copied), and the
// layouts and levels are those of the points the fit met. Edited, "abc" or
// -16000 input tokens dropped the length distance and narrowed every
// interval; a layout no point was measured at narrowed its neighbours'.
TEST_F(CalibrationFileTest, AFitSectionBeyondWhatItCanMeanIsRefused) {
  Calibration c;
  c.fitted_hardware = "rtx-6000d";
  c.fitted_gpus_per_node = 8;
  c.fitted_input_tokens = 16000;
  c.fitted_output_tokens = 1;
  c.fitted_concurrency = {8, 16};
  c.fitted_layouts = {"PP1/TP32/EP4"};
  CalibrationFitRecord fit;
  fit.measured = {"data/baseline/pp1-tp32-ep4.csv"};
  fit.points.push_back({LayoutOf(1, 32, 4), 8, 3257.96, 3200, 39.19, 40, 81000, 81355});
  fit.points.push_back({LayoutOf(1, 32, 4), 16, 3260.14, 3210, 78.39, 79, 81000, 81355});
  const std::string path = dir_ + "/calibration.json";
  ASSERT_TRUE(SaveCalibration(c, path, &fit).ok());
  Result<Calibration> written = LoadCalibration(path);
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(written->fitted_concurrency, (std::vector<int>{8, 16}));
  const nlohmann::json saved = nlohmann::json::parse(*ReadFile(path));
  const auto edited = [&](const std::string& key, const nlohmann::json& value) {
    nlohmann::json j = saved;
    if (value.is_discarded()) {
      j["fit"].erase(key);
    } else {
      j["fit"][key] = value;
    }
    const std::string edit = Write(j.dump());
    Result<Calibration> loaded = LoadCalibration(edit);
    return loaded.ok() ? std::string("loaded") : loaded.error().message;
  };
  const std::string at = dir_ + "/calibration.json: key 'fit.";
  EXPECT_EQ(edited("input_tokens", "abc"),
            at + "input_tokens': expected an integer in [1, 16777216] (the fitted spec's "
                 "workload.input_tokens), got \"abc\"");
  EXPECT_EQ(edited("input_tokens", -16000),
            at + "input_tokens': expected an integer in [1, 16777216] (the fitted spec's "
                 "workload.input_tokens), got -16000");
  EXPECT_EQ(edited("input_tokens", 1e12),
            at + "input_tokens': expected an integer in [1, 16777216] (the fitted spec's "
                 "workload.input_tokens), got 1000000000000.0");
  EXPECT_EQ(edited("output_tokens", 0),
            at + "output_tokens': expected an integer in [1, 16777216] (the fitted spec's "
                 "workload.output_tokens), got 0");
  EXPECT_EQ(edited("gpus_per_node", -3),
            at + "gpus_per_node': expected an integer in [1, 256] (the fitted spec's "
                 "cluster.gpus_per_node), got -3");
  EXPECT_EQ(edited("hardware", ""),
            at + "hardware': expected a hardware profile's name (the fitted spec's "
                 "cluster.hardware, e.g. \"rtx-6000d\"), got \"\"");
  EXPECT_EQ(edited("hardware", 3),
            at + "hardware': expected a hardware profile's name (the fitted spec's "
                 "cluster.hardware, e.g. \"rtx-6000d\"), got 3");
  EXPECT_EQ(edited("concurrency", nlohmann::json({16, 8})),
            at + "concurrency': expected the measured concurrency levels: a non-empty array of "
                 "integers in [1, 65536], ascending, each once, got [16,8]");
  EXPECT_EQ(edited("concurrency", nlohmann::json({8})),
            at + "concurrency': expected the levels of the points in fit.points and "
                 "fit.leave_one_layout_out ([8,16]), got [8]");
  EXPECT_EQ(edited("layouts", nlohmann::json({"PP1/TP32/EP4", "PP8/TP4/EP4"})),
            at + "layouts': expected the layouts of the points in fit.points and "
                 "fit.leave_one_layout_out (PP1/TP32/EP4), got [\"PP1/TP32/EP4\",\"PP8/TP4/EP4\"]");
  EXPECT_EQ(edited("layouts", nlohmann::json({"pp1/tp32/ep4"})),
            at + "layouts[0]': expected a fitted layout's label, each once (e.g. "
                 "\"PP1/TP32/EP4\"), got \"pp1/tp32/ep4\"");
  EXPECT_EQ(edited("points", nlohmann::json::parse(R"([{"pp": 0}])")),
            at + "points[0].pp': expected an integer in [1, 32768], got 0");
  EXPECT_EQ(edited("fit", nlohmann::json()), "loaded");  // an unknown key: a newer writer's
  // A key left out is not recorded, as in a file written before it existed.
  for (const char* key : {"hardware", "gpus_per_node", "input_tokens", "output_tokens",
                          "concurrency", "layouts", "points"})
    EXPECT_EQ(edited(key, nlohmann::json(nlohmann::json::value_t::discarded)), "loaded") << key;
  nlohmann::json not_object = saved;
  not_object["fit"] = "PP1/TP32/EP4";
  Result<Calibration> refused = LoadCalibration(Write(not_object.dump()));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            dir_ +
                "/calibration.json: key 'fit': expected an object (what 'ppsearch calibrate' "
                "fitted to), got string");
  // A calibration without what the fit saw leaves the keys out, and reads.
  Calibration bare;
  bare.fitted_layouts = {"PP1/TP32/EP4"};
  ASSERT_TRUE(SaveCalibration(bare, path, &fit).ok());
  const nlohmann::json bare_fit = nlohmann::json::parse(*ReadFile(path))["fit"];
  EXPECT_FALSE(bare_fit.contains("input_tokens")) << bare_fit.dump();
  EXPECT_FALSE(bare_fit.contains("hardware")) << bare_fit.dump();
  EXPECT_TRUE(LoadCalibration(path).ok());
}

TEST_F(CalibrationFileTest, MissingParametersObject) {
  const std::string path = Write(R"({"schema": "ppsearch.calibration/2", "dense_gemm_eff": 0.5})");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, path +
                                   ": expected a calibration file with a 'parameters' object "
                                   "(written by 'ppsearch calibrate')");
}

TEST_F(CalibrationFileTest, ValueOutsideItsPhysicalBound) {
  const std::string path =
      Write(R"({"schema": "ppsearch.calibration/2", "parameters": {"dense_gemm_eff": 1.4}})");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            path +
                ": key 'parameters.dense_gemm_eff': expected a value in [0.05, 1.0] (fraction "
                "of bf16_tflops; bound: the profile's measured sustained BF16 GEMM rate), got "
                "1.4");
  const std::string negative =
      Write(R"({"schema": "ppsearch.calibration/2", "parameters": {"rank_jitter_us": -1}})");
  Result<Calibration> n = LoadCalibration(negative);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().message.find("key 'parameters.rank_jitter_us': expected a value in [0.0, "),
            std::string::npos)
      << n.error().message;
}

TEST_F(CalibrationFileTest, OlderSingleFactorFormatSaysToRecalibrate) {
  const std::string path =
      Write(R"({"schema": "ppsearch.calibration/2", "parameters": {"compute_scale": 1.42}})");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            path +
                ": key 'parameters.compute_scale' is from an older calibration format (one "
                "factor for every kernel); run 'ppsearch calibrate' again to fit the "
                "per-operator efficiencies");
  const std::string v1 =
      Write(R"({"schema": "ppsearch.calibration/1", "parameters": {"compute_scale": 1.42}})");
  Result<Calibration> old = LoadCalibration(v1);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().message,
            v1 + ": schema \"ppsearch.calibration/1\", expected schema "
                 "\"ppsearch.calibration/2\" (a calibration written by 'ppsearch calibrate'; "
                 "run it again to write this version)");
}

// Without the schema a file is another tool's JSON, or a calibration of a
// format whose keys may mean something else: it is not read as this one.
TEST_F(CalibrationFileTest, MissingOrUnknownSchemaIsRefusedNamingBoth) {
  const std::string none = Write(R"({"parameters": {"dense_gemm_eff": 0.5}})");
  Result<Calibration> c = LoadCalibration(none);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, none +
                                   ": no 'schema' key, expected schema "
                                   "\"ppsearch.calibration/2\" (a calibration written by "
                                   "'ppsearch calibrate')");
  const std::string other = Write(R"({"schema": "acme.tuning/7", "parameters": {}})");
  c = LoadCalibration(other);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, other +
                                   ": schema \"acme.tuning/7\", expected schema "
                                   "\"ppsearch.calibration/2\" (a calibration written by "
                                   "'ppsearch calibrate')");
  const std::string number = Write(R"({"schema": 2, "parameters": {}})");
  c = LoadCalibration(number);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find(": schema 2, expected schema"), std::string::npos)
      << c.error().message;
  const std::string array = Write("[1, 2]");
  c = LoadCalibration(array);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find(": expected a JSON object"), std::string::npos)
      << c.error().message;
}

TEST_F(CalibrationFileTest, BadCovarianceShape) {
  const std::string path = Write(R"({"schema": "ppsearch.calibration/2", "parameters": )" +
                                 AllAtPrior() + R"(, "log_covariance": [[1, 0], [0, 1]]})");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, path +
                                   ": key 'log_covariance': expected a 13 x 13 array of "
                                   "numbers in parameter order");
}

TEST_F(CalibrationFileTest, NonNumberValue) {
  const std::string path =
      Write(R"({"schema": "ppsearch.calibration/2", "parameters": {"host_overhead_us": "fast"}})");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            path + ": key 'parameters.host_overhead_us': expected a number, got string");
}

// A value pasted by mistake is quoted in part, with its size.
TEST_F(CalibrationFileTest, AHugeBadValueIsQuotedInPart) {
  const std::string path =
      Write(R"({"schema": "ppsearch.calibration/2", "parameters": )" + AllAtPrior() +
            R"(, "status": {"dense_gemm_eff": ")" + std::string(1 << 20, 'x') + "\"}}");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, path +
                                   ": key 'status.dense_gemm_eff': expected \"prior\", "
                                   "\"determined\" or \"at bound\", got \"" +
                                   std::string(79, 'x') + "... (1048578 bytes)");
}

TEST_F(CalibrationFileTest, NotJson) {
  const std::string path = Write("dense_gemm_eff = 0.5\n");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message.rfind(path + ": not valid JSON: ", 0), 0u) << c.error().message;
}

TEST_F(CalibrationFileTest, MissingFile) {
  Result<Calibration> c = LoadCalibration(dir_ + "/absent.json");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find(dir_ + "/absent.json"), std::string::npos) << c.error().message;
}

TEST_F(CalibrationFileTest, UnknownKeyIsAnErrorWithDidYouMean) {
  const std::string path =
      Write(R"({"schema": "ppsearch.calibration/2", "parameters": {"dense_gem_eff": 0.5}})");
  Result<Calibration> c = LoadCalibration(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            path +
                ": unknown key 'parameters.dense_gem_eff' (did you mean 'dense_gemm_eff'?); "
                "known: dense_gemm_eff, fp8_gemm_eff, moe_gemm_eff, attention_eff, "
                "linear_attention_eff, memory_bw_eff, intra_bw_scale, inter_bw_eff, "
                "expert_skew, rank_jitter_us, host_overhead_us, runtime_workspace_mib, "
                "decode_kernel_us");
}

TEST_F(CalibrationFileTest, ADirectoryIsSaidToBeOne) {
  Result<Calibration> c = LoadCalibration(dir_);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "cannot read " + dir_ + ": is a directory, expected a regular file");
}

}  // namespace
}  // namespace ppsearch::evidence
