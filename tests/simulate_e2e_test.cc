// `ppsearch calibrate` and `ppsearch simulate` on the shipped example and
// baseline, through the built binary.

#include <nlohmann/json.hpp>

#include "cli_fixture.h"

namespace ppsearch::testing {
namespace {

using nlohmann::json;

constexpr const char* kSpec = "examples/kimi-k3-pp-search.toml";

class SimulateE2e : public CliTest {
 protected:
  std::string Calibrate() {
    const std::string cal = (dir_ / "cal.json").string();
    CommandResult r = Run(std::string("calibrate ") + kSpec +
                          " --measured data/baseline/pp1-tp32-ep4.csv"
                          " --profile-summary data/baseline/pp1-nsys-summary.json -o " +
                          cal);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    for (const char* text : {"dense_gemm_eff", "intra_bw_scale", "determined", "prior", "at bound",
                             "residuals (fitted points)"})
      EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
    EXPECT_EQ(r.out.find("infeasible: "), std::string::npos) << r.out;
    return cal;
  }
};

// The fit stays inside physical bounds, so on the shipped baseline (which
// the model reaches with its GEMM classes at their bound and the links
// above their prior) PP1 is reproduced within a few per cent, not exactly.
TEST_F(SimulateE2e, CalibratedPp1ReproducesBaselineAndPredictsEveryLayout) {
  const std::string cal = Calibrate();
  CommandResult r = Run(std::string("simulate ") + kSpec + " --calibration " + cal + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["points"].size(), 8u);  // 4 layouts x 2 concurrency
  ASSERT_TRUE(j["calibration_infeasible"].is_array());
  EXPECT_TRUE(j["calibration_infeasible"].empty());  // no bound the data pulls past
  CommandResult text = Run(std::string("simulate ") + kSpec + " --calibration " + cal +
                           " --layout 1/32/4 --concurrency 8");
  EXPECT_EQ(text.out.find("# the calibration is infeasible"), std::string::npos) << text.out;
  const std::map<int, std::pair<double, double>> measured = {{8, {3257.96, 39.19}},
                                                             {16, {3260.14, 78.39}}};
  std::set<int> pps;
  for (const auto& p : j["points"]) {
    for (const char* key :
         {"pp", "tp", "ep", "concurrency", "input_tps", "ttft_p50_s", "ttft_p95_s", "peak_gpu_mib",
          "exposed_comm_share", "allreduce_per_forward"})
      ASSERT_TRUE(p.contains(key)) << key;
    pps.insert(p["pp"].get<int>());
    EXPECT_EQ(p["pp"].get<int>() * p["tp"].get<int>(), 32);
    EXPECT_EQ(p["requests_completed"].get<int>(), 40);
    if (p["pp"] == 1) {
      auto [tps, ttft] = measured.at(p["concurrency"].get<int>());
      EXPECT_NEAR(p["input_tps"].get<double>(), tps, 0.05 * tps);
      EXPECT_NEAR(p["ttft_p50_s"].get<double>(), ttft, 0.08 * ttft);
      EXPECT_GT(p["exposed_comm_share"].get<double>(), 0.3);
      EXPECT_EQ(p["allreduce_per_forward"].get<int>(), 187);
      // The stage's compute by class adds up to its compute share; at TP32
      // the replicated latent projections make GEMMs the largest class.
      const json& st = p["stages"][0];
      const json& classes = st["compute_class_share"];
      double sum = 0;
      for (const char* c : {"gemm", "moe", "attention", "other"}) sum += classes[c].get<double>();
      EXPECT_NEAR(sum, st["compute_share"].get<double>(), 1e-6);
      EXPECT_GT(classes["gemm"].get<double>(), classes["moe"].get<double>());
      EXPECT_GT(classes["attention"].get<double>(), 0.0);
    }
    EXPECT_LT(p["peak_gpu_mib"].get<double>(), 85651);
  }
  EXPECT_EQ(pps, (std::set<int>{1, 2, 4, 8}));
}

TEST_F(SimulateE2e, TextReportsTableBreakdownCapCheckAndTrace) {
  const std::string trace = (dir_ / "trace.json").string();
  CommandResult r = Run(std::string("simulate ") + kSpec +
                        " --layout 4/8/4 --layout 1/32/4 --concurrency 8"
                        " --trace " +
                        trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PP / TP / EP"), std::string::npos);
  EXPECT_NE(r.out.find("baseline"), std::string::npos);
  EXPECT_NE(r.out.find("time breakdown"), std::string::npos);
  // The compute by class, in the names `ppsearch nsys` measures kernels by.
  EXPECT_NE(r.out.find("  compute by class, share of the window (mean over stages): gemm "),
            std::string::npos);
  EXPECT_NE(r.out.find("pp-max-micro-batch-size = 1"), std::string::npos);
  EXPECT_NE(r.out.find("PP4/TP8/EP4  C=8  default cap"), std::string::npos);
  // Each layout's tightest stage under its breakdown: PP4's last stage holds
  // one layer more than the others (93 = 23 + 23 + 23 + 24).
  EXPECT_NE(r.out.find("  tightest: stage 3 (layer weights, 24 layers: +"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  tightest: stage 0 (the only stage); headroom "), std::string::npos);
  json t = json::parse(ReadText(trace));
  ASSERT_TRUE(t.contains("traceEvents"));
  int slices = 0, names = 0;
  for (const auto& e : t["traceEvents"]) {
    slices += e["ph"] == "X";
    names += e["ph"] == "M";
  }
  EXPECT_GT(slices, 100);
  EXPECT_EQ(names, 2 + 5);  // two processes, 4 + 1 stage threads
}

// --layout and --concurrency take comma lists, as search's flags do, and
// select what the repeated flags select.
TEST_F(SimulateE2e, PointSelectionTakesCommaLists) {
  const std::string base = std::string("simulate ") + kSpec + " --samples 0 --no-cap-check --json";
  CommandResult commas = Run(base + " --layout 4/8/4,1/32/4 --concurrency 4,8");
  ASSERT_EQ(commas.exit_code, 0) << commas.err;
  CommandResult repeated =
      Run(base + " --layout 4/8/4 --layout 1/32/4 --concurrency 4 --concurrency 8");
  ASSERT_EQ(repeated.exit_code, 0) << repeated.err;
  const json points = json::parse(commas.out)["points"];
  EXPECT_EQ(points.size(), 4u) << commas.out;
  EXPECT_EQ(points, json::parse(repeated.out)["points"]);
}

// The tensor burst's share is of input TPS in a closed loop and of TTFT p50
// under Poisson arrivals, where the input TPS is the arrival rate's.
TEST_F(SimulateE2e, TheTensorBurstsShareNamesItsFigure) {
  const std::string base = std::string("simulate ") + kSpec +
                           " --layout 1/32/4 --concurrency 8 --samples 0 --no-cap-check";
  CommandResult closed = Run(base + " --json");
  ASSERT_EQ(closed.exit_code, 0) << closed.err;
  EXPECT_EQ(json::parse(closed.out)["points"][0]["tensor_burst_share_of"], "input_tps");
  const std::string open = base + " --set workload.request_rate=0.15";
  CommandResult poisson = Run(open + " --json");
  ASSERT_EQ(poisson.exit_code, 0) << poisson.err;
  const json p = json::parse(poisson.out)["points"][0];
  EXPECT_EQ(p["tensor_burst_share_of"], "ttft_p50_s");
  EXPECT_GT(p["tensor_burst_share"].get<double>(), 0.01) << p.dump();
  CommandResult text = Run(open);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("off these predictions' TTFT p50 (Poisson arrivals"), std::string::npos)
      << text.out;
}

// A load point whose batches outgrow the GPU (PP1 at mem-fraction-static
// 0.9: its full chunk leaves no room) is named with its peak; with the
// default fraction nothing is.
TEST_F(SimulateE2e, ALoadPointWhoseBatchesOutgrowTheGpuIsNamed) {
  const std::string base = std::string("simulate ") + kSpec +
                           " --layout 1/32/4 --concurrency 8 --samples 0 --no-cap-check"
                           " --no-partition-check";
  CommandResult tight = Run(base + " --set engine.args.mem-fraction-static=0.9");
  ASSERT_EQ(tight.exit_code, 0) << tight.err;
  EXPECT_NE(tight.out.find("# PP1/TP32/EP4 at C=8: its batches outgrow the GPU (stage 0 peaks "
                           "at 88,354 MiB of 85,651 MiB): SGLang runs out of memory there"),
            std::string::npos)
      << tight.out;
  CommandResult roomy = Run(base);
  ASSERT_EQ(roomy.exit_code, 0) << roomy.err;
  EXPECT_EQ(roomy.out.find("outgrow"), std::string::npos) << roomy.out;
  // A disaggregated deployment's pool: DeepSeek-V3's decode servers at
  // 0.835 hold their decode steps in the graph's pool and still pass the GPU.
  const std::string pd =
      "simulate examples/deepseek-v3-1p3d.toml --samples 0 --set "
      "sweep.decode.args.mem-fraction-static=0.835";
  CommandResult pd_text = Run(pd);
  ASSERT_EQ(pd_text.exit_code, 0) << pd_text.err;
  EXPECT_NE(pd_text.out.find("# the decode servers at C=64, C=256: their batches outgrow the GPU"),
            std::string::npos)
      << pd_text.out;
  EXPECT_EQ(pd_text.out.find("prefill servers at"), std::string::npos) << pd_text.out;
  // Its peak rounded as `plan` prints it (129,328.6 MiB).
  EXPECT_NE(pd_text.out.find("prefill  peak 129,329 MiB"), std::string::npos) << pd_text.out;
  // Each of a DP-attention decode server's ranks admits its own share.
  EXPECT_NE(pd_text.out.find("max running requests 64 per DP rank (8 ranks)\n"), std::string::npos)
      << pd_text.out;
  EXPECT_NE(pd_text.out.find("max running requests 2048\n"), std::string::npos) << pd_text.out;
  CommandResult pd_json = Run(pd + " --json");
  ASSERT_EQ(pd_json.exit_code, 0) << pd_json.err;
  const json pools = json::parse(pd_json.out)["points"][0]["pools"];
  EXPECT_EQ(pools["decode"]["out_of_memory_stage"], 0);
  EXPECT_TRUE(pools["prefill"]["out_of_memory_stage"].is_null());
  CommandResult tight_json = Run(base + " --set engine.args.mem-fraction-static=0.9 --json");
  ASSERT_EQ(tight_json.exit_code, 0) << tight_json.err;
  EXPECT_EQ(json::parse(tight_json.out)["points"][0]["out_of_memory_stage"], 0);
}

// A PP > 1 layout is simulated again with the layer split that leaves its
// tightest stage more memory (plan/partition.h), in the text, the JSON and
// the page; --no-partition-check leaves it out.
TEST_F(SimulateE2e, ARoomierLayerSplitIsPredictedBesideTheEvenOne) {
  const std::string args = std::string("simulate ") + kSpec +
                           " --layout 8/4/4 --concurrency 8 --samples 0 --no-cap-check";
  CommandResult r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# SGLANG_PP_LAYER_PARTITION that leaves the tightest stage more memory "
                       "than SGLang's even split"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  PP8/TP4/EP4  C=8  even: headroom "), std::string::npos) << r.out;
  // What to write in the spec to run it, and, written, PP8 is planned with
  // it and its what-if is gone.
  const size_t table = r.out.find("    [engine.pp_layer_partition]\n    8 = [");
  ASSERT_NE(table, std::string::npos) << r.out;
  const size_t open = r.out.find('[', table + 35), close = r.out.find(']', open);
  const std::string split = r.out.substr(open, close - open + 1);
  CommandResult set = Run(args + " --set 'engine.pp_layer_partition.8=" + split + "'");
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_EQ(set.out.find("SGLANG_PP_LAYER_PARTITION that"), std::string::npos) << set.out;
  EXPECT_NE(set.out.find("      7   [82,93)"), std::string::npos) << split << "\n" << set.out;
  CommandResult j = Run(args + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json point = json::parse(j.out)["points"][0];
  ASSERT_TRUE(point.contains("roomier_partition")) << j.out;
  const json& roomier = point["roomier_partition"];
  int layers = 0;
  for (const auto& n : roomier["sglang_pp_layer_partition"]) layers += n.get<int>();
  EXPECT_EQ(layers, 93);
  double even_peak = 0;  // the highest stage peak, as the split's figure
  for (const auto& s : point["stages"])
    even_peak = std::max(even_peak, s["peak_gpu_mib"].get<double>());
  EXPECT_LT(roomier["peak_gpu_mib"].get<double>(), even_peak - 1000);
  EXPECT_GT(roomier["input_tps"].get<double>(), 0);
  const std::string page = (dir_ / "p.html").string();
  ASSERT_EQ(Run(args + " --html " + page).exit_code, 0);
  EXPECT_NE(ReadText(page).find("Layer split"), std::string::npos);
  EXPECT_NE(ReadText(page).find("[engine.pp_layer_partition]"), std::string::npos);
  CommandResult off = Run(args + " --no-partition-check");
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(off.out.find("SGLANG_PP_LAYER_PARTITION that"), std::string::npos);
}

// Each point is judged by the one steady-state rule (decide/steady_state.h),
// in the table's header and per point in the JSON: 40 requests are five
// waves at C=8 and two and a half at C=16.
TEST_F(SimulateE2e, EachPointSaysWhetherItsSampleHoldsItsSteadyState) {
  const std::string point = std::string("simulate ") + kSpec + " --layout 8/4/4";
  CommandResult text = Run(point);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("\n# steady state: a closed loop's figures are steady-state when its "
                          "sample holds at least 4 waves"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("; short of it at C=16: 40 requests are 2.5 waves of 16, fewer than 4\n"),
            std::string::npos)
      << text.out;
  CommandResult j = Run(point + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json parsed = json::parse(j.out);
  EXPECT_NE(parsed["steady_rule"].get<std::string>().find("at least 4 waves"), std::string::npos);
  ASSERT_EQ(parsed["points"].size(), 2u);
  EXPECT_EQ(parsed["points"][0]["concurrency"], 8);
  EXPECT_EQ(parsed["points"][0]["steady_state"], true);
  EXPECT_TRUE(parsed["points"][0]["not_steady"].is_null());
  EXPECT_EQ(parsed["points"][1]["steady_state"], false);
  EXPECT_EQ(parsed["points"][1]["not_steady"], "40 requests are 2.5 waves of 16, fewer than 4");
  // Enough requests at every level: the rule is stated and nothing is short.
  CommandResult steady = Run(point + " --set workload.requests=64");
  ASSERT_EQ(steady.exit_code, 0) << steady.err;
  EXPECT_NE(steady.out.find("most half of it; every load point holds it\n"), std::string::npos)
      << steady.out;
}

TEST_F(SimulateE2e, BadCalibrationFileIsAConfigError) {
  std::ofstream(dir_ / "bad.json")
      << "{\"schema\": \"ppsearch.calibration/2\", \"parameters\": {\"moe_gemm_eff\": 1.5}}";
  CommandResult r =
      Run(std::string("simulate ") + kSpec + " --calibration " + (dir_ / "bad.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("key 'parameters.moe_gemm_eff': expected a value in [0.05, 1.0]"),
            std::string::npos)
      << r.err;
}

// A layout that cannot run is an error after the valid ones' tables; with
// no valid one there is nothing to print before it, in text or JSON.
TEST_F(SimulateE2e, NoLayoutToPredictPrintsOnlyTheError) {
  for (const char* json : {"", " --json"}) {
    CommandResult r = Run(std::string("simulate ") + kSpec + " --layout 1/32/1/0" + json);
    EXPECT_EQ(r.exit_code, 2) << json;
    EXPECT_EQ(r.out, "") << json;
    EXPECT_NE(r.err.find("PP1/TP32/EP1/DP0 has a size below 1"), std::string::npos) << r.err;
  }
  CommandResult mixed = Run(std::string("simulate ") + kSpec + " --layout 1/32/1/0,8/4/4");
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.out.find("8 / 4 / 4"), std::string::npos) << mixed.out;
}

// The spec's attention backend selects the profile's rate for it: Triton's
// MLA prefill is far slower on this GPU than FlashInfer's.
TEST_F(SimulateE2e, AttentionBackendSelectsTheProfilesRate) {
  auto tps = [&](const std::string& backend) {
    CommandResult r =
        Run(std::string("simulate ") + kSpec + " --layout 8/4/4 --concurrency 8 --json" +
            (backend.empty() ? "" : " --set engine.args.attention-backend=" + backend));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out)["points"][0]["input_tps"].get<double>() : 0.0;
  };
  const double standard = tps(""), flashinfer = tps("flashinfer"), triton = tps("triton");
  EXPECT_DOUBLE_EQ(flashinfer, standard);  // the profile's own backend
  EXPECT_LT(triton, 0.8 * standard);
  CommandResult r =
      Run(std::string("simulate ") + kSpec + " --set engine.args.attention-backend=fa3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("engine.args: attention backend 'fa3': hardware profile rtx-6000d"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(known: flashinfer, triton)"), std::string::npos) << r.err;
  // validate and plan load the profile the same way, so they say it too.
  CommandResult v =
      Run(std::string("validate ") + kSpec + " --set engine.args.attention-backend=fa3");
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_NE((v.out + v.err).find("engine.args: attention backend 'fa3'"), std::string::npos)
      << v.out << v.err;
}

// With output tokens to decode, a point carries its decode figures with
// their intervals; a one-token workload has none (its prefill figures stay
// as they were).
TEST_F(SimulateE2e, DecodeFiguresWithIntervals) {
  const std::string point =
      std::string("simulate ") + kSpec +
      " --layout 8/4/4 --concurrency 8 --samples 4 --no-cap-check --json --set workload.requests=8";
  CommandResult r = Run(point + " --set workload.output_tokens=32");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json p = json::parse(r.out)["points"][0];
  for (const char* key : {"tpot_p50_ms", "itl_p99_ms", "output_tps", "e2e_p50_s"}) {
    ASSERT_TRUE(p.contains(key)) << key;
    EXPECT_GT(p[key].get<double>(), 0) << key;
    EXPECT_LE(p[std::string(key) + "_low"].get<double>(),
              p[std::string(key) + "_high"].get<double>())
        << key;
  }
  // Every request's e2e is its TTFT plus 31 of its tokens.
  const double tpot_s = p["tpot_p50_ms"].get<double>() / 1e3;
  EXPECT_GT(p["e2e_p50_s"].get<double>(), p["ttft_p50_s"].get<double>() + 25 * tpot_s);
  EXPECT_GE(p["itl_p99_ms"].get<double>(), p["itl_p50_ms"].get<double>());
  CommandResult one = Run(point);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_FALSE(json::parse(one.out)["points"][0].contains("tpot_p50_ms"));
  CommandResult text = Run(std::string("simulate ") + kSpec +
                           " --layout 8/4/4 --concurrency 8 --samples 0 --no-cap-check"
                           " --set workload.requests=8 --set workload.output_tokens=32");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("# decode (predicted): TPOT p50"), std::string::npos) << text.out;
}

TEST_F(SimulateE2e, CalibrateRejectsCsvWithMissingColumn) {
  std::ofstream(dir_ / "m.csv") << "pp,tp,ep,concurrency\n1,32,4,8\n";
  CommandResult r =
      Run(std::string("calibrate ") + kSpec + " --measured " + (dir_ / "m.csv").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing column 'input_tps_median'"), std::string::npos) << r.err;
}

// A measurement the model cannot reach (1e-3 tokens/s; a CSV refuses a
// throughput below 1e-9, kMinMeasuredFigure) holds parameters
// at their bounds and far off their priors: the file calibrate writes is
// still one its reader takes (a value at its bound, not an ulp past it; a
// widened variance no wider than the reader allows).
TEST_F(SimulateE2e, ACalibrationHeldAtItsBoundsIsOneSimulateReads) {
  std::ofstream(dir_ / "m.csv")
      << "pp,tp,ep,concurrency,input_tps_median,ttft_p50_s_median\n1,32,4,8,1e-3,39.19\n";
  const std::string cal = (dir_ / "cal.json").string();
  CommandResult fit = Run(std::string("calibrate ") + kSpec + " --measured " +
                          (dir_ / "m.csv").string() + " -o " + cal);
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_NE(fit.out.find("at bound"), std::string::npos) << fit.out;
  EXPECT_NE(fit.out.find("off prior: "), std::string::npos) << fit.out;
  CommandResult sim = Run(std::string("simulate ") + kSpec + " --calibration " + cal +
                          " --layout 1/32/4 --concurrency 8");
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
}

// With DeepEP the breakdown and the JSON count its dispatches and combines
// per forward: DeepSeek-V3 (58 MoE layers) at PP1/TP32/EP32 on the example's
// four nodes of H200s (DeepEP needs NVLink), its dense MLPs whole so it loads
// at TP32.
TEST_F(SimulateE2e, DeepEpAllToAllsAreCountedPerForward) {
  const std::string deepseek = std::string(" --layout 1/32/32 --concurrency 8 --samples 0") +
                               " --set cluster.hardware=h200" +
                               " --set engine.model_config=../data/models/deepseek-v3/config.json" +
                               " --set engine.args.moe-dense-tp-size=1" +
                               " --set engine.args.moe-a2a-backend=deepep";
  CommandResult text = Run(std::string("simulate ") + kSpec + deepseek);
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("all-to-all/forward 116 (116 across nodes)"), std::string::npos)
      << text.out;
  CommandResult j = Run(std::string("simulate ") + kSpec + deepseek + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(json::parse(j.out)["points"][0]["alltoall_per_forward"].get<int>(), 116);
  // Without DeepEP there are none, and the header says nothing of them.
  CommandResult k3 = Run(std::string("simulate ") + kSpec + " --layout 8/4/4 --concurrency 8");
  EXPECT_EQ(k3.exit_code, 0) << k3.err;
  EXPECT_EQ(k3.out.find("all-to-all/forward"), std::string::npos) << k3.out;
}

}  // namespace
}  // namespace ppsearch::testing

namespace ppsearch::testing {
namespace {

// A DP-attention layout is planned and, at PP 1, predicted (one scheduler
// per DP rank); with PP it is refused as not modelled rather than timed as
// another layout.
TEST_F(SimulateE2e, DpAttentionIsPredictedAtPp1AndRefusedWithPp) {
  CommandResult plan = Run(std::string("plan ") + kSpec + " --layout 2/16/4/2");
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("== PP2/TP16/EP4/DP2  valid"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("attn groups"), std::string::npos) << plan.out;
  CommandResult sim = Run(std::string("simulate ") + kSpec + " --layout 2/16/4/2");
  EXPECT_NE(sim.exit_code, 0);
  EXPECT_NE(sim.err.find("PP2/TP16/EP4/DP2 runs DP attention with pipeline parallelism, which "
                         "the simulator does not model"),
            std::string::npos)
      << sim.err;
  // At the example's 8192-token chunk the embedding, whole on every DP
  // rank, leaves no KV room; 4096 leaves some.
  CommandResult dp = Run(std::string("simulate ") + kSpec +
                         " --layout 1/32/4/2 --set engine.args.chunked-prefill-size=4096 --json");
  EXPECT_EQ(dp.exit_code, 0) << dp.err;
  EXPECT_NE(dp.out.find("\"label\": \"PP1/TP32/EP4/DP2\""), std::string::npos)
      << dp.out.substr(0, 2000);
  CommandResult bad = Run(std::string("plan ") + kSpec + " --layout 1/32/4/3");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.out.find("SGLang asserts tp_size % dp_size == 0"), std::string::npos)
      << bad.out << bad.err;
}

}  // namespace
}  // namespace ppsearch::testing
