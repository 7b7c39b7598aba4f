#include "spec/spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ppsearch_source_dir.h"
#include "spec/engine_env.h"
#include "spec/layout_text.h"
#include "spec/new_run.h"
#include "spec/spec_parser.h"
#include "util/files.h"
#include "util/safe_name.h"

namespace ppsearch::spec {
namespace {

const std::string kExample = std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml";

// A small valid spec, lines 1-8; tests append a [sweep] and a [workload]
// (or replace them) so line numbers in expected messages are easy to count.
constexpr char kHead[] =
    "[experiment]\n"               // 1
    "name = \"t\"\n"               // 2
    "[cluster]\n"                  // 3
    "hosts = [\"a\", \"b\"]\n"     // 4
    "gpus_per_node = 4\n"          // 5
    "[engine]\n"                   // 6
    "model_config = \"m.json\"\n"  // 7
    "args = {}\n";                 // 8
constexpr char kSweep[] =
    "[sweep]\n"             // 9
    "pp = [1, 2]\n"         // 10
    "concurrency = [8]\n";  // 11
constexpr char kWorkload[] =
    "[workload]\n"          // 12
    "input_tokens = 100\n"  // 13
    "requests = 4\n";       // 14

std::string Text(const std::string& sweep = kSweep, const std::string& workload = kWorkload,
                 const std::string& extra = "") {
  return std::string(kHead) + sweep + workload + extra;
}

// The error message of parsing `text` as /s/spec.toml, or "" if it parsed.
std::string ErrorOf(const std::string& text, const std::vector<std::string>& overrides = {}) {
  Result<Spec> spec = ParseSpec(text, "/s/spec.toml", overrides);
  return spec.ok() ? "" : spec.error().message;
}

Spec MustParse(const std::string& text, const std::vector<std::string>& overrides = {}) {
  Result<Spec> spec = ParseSpec(text, "/s/spec.toml", overrides);
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  return spec.ok() ? spec.value() : Spec{};
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

std::vector<std::string> Labels(const Spec& spec) {
  std::vector<std::string> labels;
  for (const auto& layout : spec.sweep.layouts) labels.push_back(layout.Label());
  return labels;
}

std::vector<std::string> ArgNames(const Spec& spec) {
  std::vector<std::string> names;
  for (const auto& [name, value] : spec.engine.args) names.push_back(name);
  return names;
}

TEST(SpecExample, ParsesTheKimiK3Search) {
  Result<Spec> loaded = LoadSpec(kExample);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const Spec& spec = loaded.value();
  const std::string root = PPSEARCH_SOURCE_DIR;

  EXPECT_EQ(spec.experiment.name, "kimi3-pp");
  EXPECT_EQ(spec.experiment.results_dir, root + "/results");
  ASSERT_EQ(spec.cluster.hosts.size(), 4u);
  EXPECT_EQ(spec.cluster.hosts[0].name, "601");
  EXPECT_EQ(spec.cluster.hosts[3].address, "604");
  EXPECT_EQ(spec.cluster.world_size(), 32);
  EXPECT_EQ(spec.cluster.hardware, "rtx-6000d");
  EXPECT_EQ(spec.cluster.launcher, "ssh");

  EXPECT_EQ(spec.engine.kind, "sglang");
  EXPECT_EQ(spec.engine.image, "local/sglang:kimi-k3-sm120-flashinfer-mxfp4-phase5");
  EXPECT_EQ(spec.engine.model_path, "/models/kimi-k3");
  EXPECT_EQ(spec.engine.model_config, root + "/data/models/kimi-k3/config.json");
  EXPECT_TRUE(std::filesystem::exists(spec.engine.model_config));
  EXPECT_EQ(ArgNames(spec), (std::vector<std::string>{"moe-runner-backend", "moe-a2a-backend",
                                                      "chunked-prefill-size", "disable-radix-cache",
                                                      "trust-remote-code", "watchdog-timeout"}));
  EXPECT_EQ(spec.engine.ArgString("moe-runner-backend"), "flashinfer_mxfp4");
  EXPECT_EQ(spec.engine.ArgString("moe-a2a-backend"), "none");
  EXPECT_EQ(spec.engine.ArgInt("chunked-prefill-size"), 8192);
  EXPECT_EQ(spec.engine.ArgInt("--watchdog-timeout"), 3600);
  EXPECT_TRUE(spec.engine.ArgTrue("disable-radix-cache"));
  EXPECT_TRUE(spec.engine.ArgTrue("trust-remote-code"));
  EXPECT_EQ(spec.engine.FindArg("pp-max-micro-batch-size"), nullptr);

  EXPECT_EQ(Labels(spec), (std::vector<std::string>{"PP1/TP32/EP4", "PP2/TP16/EP4", "PP4/TP8/EP4",
                                                    "PP8/TP4/EP4"}));
  EXPECT_EQ(spec.sweep.layouts[2].origin.key, "sweep.pp[2]");
  EXPECT_EQ(spec.sweep.layouts[2].origin.file, kExample);
  EXPECT_GT(spec.sweep.layouts[2].origin.line, 0);
  EXPECT_EQ(spec.sweep.concurrency, (std::vector<int>{8, 16}));
  EXPECT_EQ(spec.sweep.repeats, 3);
  EXPECT_EQ(spec.sweep.sample_count(), 24);

  EXPECT_EQ(spec.workload.input_tokens, 16000);
  EXPECT_EQ(spec.workload.output_tokens, 1);
  EXPECT_EQ(spec.workload.requests, 40);
  EXPECT_EQ(spec.workload.input_distribution, "fixed");
  EXPECT_EQ(spec.workload.routing, "least-outstanding");

  ASSERT_TRUE(spec.baseline.layout.has_value());
  EXPECT_EQ(spec.baseline.layout->Label(), "PP1/TP32/EP4");
  EXPECT_EQ(spec.baseline.import_csv, root + "/data/baseline/pp1-tp32-ep4.csv");
  EXPECT_TRUE(std::filesystem::exists(spec.baseline.import_csv));

  EXPECT_EQ(spec.decision.objective.name(), "input_tps");
  EXPECT_EQ(spec.decision.min_headroom_mib, 2048);
  EXPECT_DOUBLE_EQ(spec.decision.max_repeat_spread, 0.05);
  EXPECT_EQ(spec.decision.failure_policy, "exclude");
}

TEST(SpecWorkload, RoutingIsOneOfBenchsPolicies) {
  EXPECT_EQ(
      MustParse(Text(kSweep, kWorkload, ""), {"workload.routing=\"round-robin\""}).workload.routing,
      "round-robin");
  EXPECT_NE(ErrorOf(Text(), {"workload.routing=\"random\""})
                .find("key 'workload.routing': expected one of"),
            std::string::npos);
}

TEST(SpecSweep, DefaultsAndOrigins) {
  Spec spec = MustParse(Text());
  EXPECT_EQ(Labels(spec), (std::vector<std::string>{"PP1/TP8/EP1", "PP2/TP4/EP1"}));
  EXPECT_EQ(spec.sweep.layouts[1].origin.Where(), "/s/spec.toml:10:10: key 'sweep.pp[1]'");
  EXPECT_EQ(spec.sweep.repeats, 1);
  EXPECT_EQ(spec.workload.output_tokens, 1);
  EXPECT_EQ(spec.cluster.launcher, "local");
  EXPECT_EQ(spec.experiment.results_dir, "/s/results");
  EXPECT_EQ(spec.engine.model_config, "/s/m.json");
  EXPECT_EQ(spec.workload.origin.Where(), "/s/spec.toml:12:1: key 'workload'");
  EXPECT_EQ(spec.Origin("workload.requests").Where(),
            "/s/spec.toml:14:12: key 'workload.requests'");
  EXPECT_EQ(spec.Origin("cluster.hosts[1]").Where(), "/s/spec.toml:4:15: key 'cluster.hosts[1]'");
  EXPECT_EQ(spec.Origin("workload.seed").Where(), "/s/spec.toml: key 'workload.seed'");
}

TEST(SpecSweep, ExplicitTpListIsPpMajor) {
  Spec spec =
      MustParse(Text("[sweep]\npp = [1, 2]\ntp = [4, 8]\nep = [1, 4]\nconcurrency = [8]\n"));
  EXPECT_EQ(Labels(spec),
            (std::vector<std::string>{"PP1/TP4/EP1", "PP1/TP4/EP4", "PP1/TP8/EP1", "PP1/TP8/EP4",
                                      "PP2/TP4/EP1", "PP2/TP4/EP4", "PP2/TP8/EP1", "PP2/TP8/EP4"}));
}

TEST(SpecSweep, ExplicitTuples) {
  Spec spec =
      MustParse(Text("[sweep]\n"
                     "layouts = [{pp = 8, tp = 1, ep = 1},\n"
                     "           {pp = 2, tp = 4}]\n"
                     "concurrency = [8, 16]\n"
                     "repeats = 2\n"));
  EXPECT_EQ(Labels(spec), (std::vector<std::string>{"PP8/TP1/EP1", "PP2/TP4/EP1"}));
  EXPECT_EQ(spec.sweep.layouts[1].origin.Where(), "/s/spec.toml:11:12: key 'sweep.layouts[1]'");
  EXPECT_EQ(spec.sweep.sample_count(), 8);
}

TEST(SpecSweep, DpAttentionInTuplesAndLists) {
  Spec tuples =
      MustParse(Text("[sweep]\n"
                     "layouts = [{pp = 1, tp = 8, ep = 8, dp = 8},\n"
                     "           {pp = 1, tp = 8, ep = 8}]\n"
                     "concurrency = [8]\n"));
  EXPECT_EQ(Labels(tuples), (std::vector<std::string>{"PP1/TP8/EP8/DP8", "PP1/TP8/EP8"}));
  EXPECT_EQ(tuples.sweep.layouts[0].Slug(), "pp1-tp8-ep8-dp8");
  EXPECT_EQ(tuples.sweep.layouts[1].Slug(), "pp1-tp8-ep8");
  Spec lists =
      MustParse(Text("[sweep]\npp = [1]\ntp = [8]\nep = [8]\ndp = [1, 4]\n"
                     "concurrency = [8]\n"));
  EXPECT_EQ(Labels(lists), (std::vector<std::string>{"PP1/TP8/EP8", "PP1/TP8/EP8/DP4"}));
  EXPECT_EQ(ErrorOf(Text("[sweep]\nlayouts = [{pp = 1, tp = 8, dp = 0}]\nconcurrency = [8]\n")),
            "/s/spec.toml:10:34: key 'sweep.layouts[0].dp': expected an integer in [1, 32768], "
            "got 0");
}

TEST(SpecSweep, InstancesInListsAndTuples) {
  // 8 GPUs: tp "auto" is the GPU count over instances x pp.
  Spec lists = MustParse(Text("[sweep]\npp = [1, 2]\ninstances = [1, 2]\nconcurrency = [8]\n"));
  EXPECT_EQ(Labels(lists), (std::vector<std::string>{"PP1/TP8/EP1", "PP2/TP4/EP1", "2xPP1/TP4/EP1",
                                                     "2xPP2/TP2/EP1"}));
  EXPECT_EQ(lists.sweep.layouts[3].Slug(), "2x-pp2-tp2-ep1");
  EXPECT_EQ(lists.sweep.layouts[3].gpus(), 8);
  Spec tuples =
      MustParse(Text("[sweep]\nlayouts = [{pp = 1, tp = 4, instances = 2}, {pp = 1, tp = 4}]\n"
                     "concurrency = [8]\n"));
  EXPECT_EQ(Labels(tuples), (std::vector<std::string>{"2xPP1/TP4/EP1", "PP1/TP4/EP1"}));
  EXPECT_EQ(ErrorOf(Text("[sweep]\npp = [1]\ninstances = [3]\nconcurrency = [8]\n")),
            "/s/spec.toml:10:7: key 'sweep.pp[0]': tp = \"auto\" needs instances x pp (3 x 1) "
            "to divide the cluster's 8 GPUs, got pp = 1; list tp explicitly");
  EXPECT_EQ(
      ErrorOf(Text("[sweep]\nlayouts = [{pp = 1, tp = 4}]\ninstances = [2]\nconcurrency = [8]\n")),
      "/s/spec.toml:11:13: key 'sweep.instances': set either 'layouts' or the "
      "pp/tp/ep/dp/instances lists, not both");
  Spec search = MustParse(Text(kSweep, kWorkload, "[search]\ninstances = [1, 2]\n"));
  EXPECT_EQ(search.search.instances, (std::vector<int>{1, 2}));
}

TEST(SpecLayoutText, InstancesPrefixTheLayout) {
  auto two = ParseLayoutText("2xPP2/TP8/EP4");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->instances, 2);
  EXPECT_EQ(two->Label(), "2xPP2/TP8/EP4");
  auto bare = ParseLayoutText("4x1/8/8");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->Label(), "4xPP1/TP8/EP8");
  EXPECT_FALSE(ParseLayoutText("0x1/8/8").ok());
  EXPECT_FALSE(ParseLayoutText("x1/8/8").ok());
  auto slug = ParseSlugPrefix("2x-pp2-tp8-ep4_c8_r1");
  ASSERT_TRUE(slug.has_value());
  EXPECT_EQ(slug->first.instances, 2);
  EXPECT_EQ(slug->first.Slug(), "2x-pp2-tp8-ep4");
  EXPECT_EQ(std::string("2x-pp2-tp8-ep4_c8_r1").substr(slug->second), "_c8_r1");
  EXPECT_FALSE(ParseSlugPrefix("2x-tp8-ep4").has_value());
  EXPECT_FALSE(ParseSlugPrefix("2-pp2-tp8-ep4").has_value());
}

// A disaggregated deployment's name: its ratio, then each pool's slug; the
// counts must be the pools' server counts.
TEST(SpecLayoutText, ADeploymentsSlugNamesBothPoolsAndReadsBack) {
  LayoutSpec prefill;
  prefill.tp = 8;
  prefill.ep = 8;
  LayoutSpec decode = prefill;
  decode.dp = 8;
  decode.instances = 3;
  const LayoutSpec d = DeploymentLayout(prefill, decode, {});
  EXPECT_TRUE(d.disaggregated());
  EXPECT_EQ(d.Slug(), "1p3d-pp1-tp8-ep8+3x-pp1-tp8-ep8-dp8");
  EXPECT_EQ(d.Label(), "1P3D PP1/TP8/EP8 + 3xPP1/TP8/EP8/DP8");
  EXPECT_EQ(d.gpus(), 32);
  EXPECT_FALSE(d == prefill);
  const std::string id = d.Slug() + "_c64_r2";
  auto parsed = ParseSlugPrefix(id);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->first, d);
  EXPECT_EQ(id.substr(parsed->second), "_c64_r2");
  // Counts that are not the pools', a missing pool, a pool's own slug.
  EXPECT_FALSE(ParseSlugPrefix("2p3d-pp1-tp8-ep8+3x-pp1-tp8-ep8-dp8_c64_r2").has_value());
  EXPECT_FALSE(ParseSlugPrefix("1p3d-pp1-tp8-ep8_c64_r2").has_value());
  EXPECT_FALSE(ParseSlugPrefix("1p3d-pp1-tp8-ep8+_c64_r2").has_value());
  EXPECT_FALSE(ParseSlugPrefix("pp1-tp8-ep8_c64_r2")->first.disaggregated());
}

TEST(SpecLayoutText, DpIsAFourthPart) {
  auto dp = ParseLayoutText("PP1/TP8/EP8/DP4");
  ASSERT_TRUE(dp.ok());
  EXPECT_EQ(dp->Label(), "PP1/TP8/EP8/DP4");
  auto plain = ParseLayoutText("8/4/4");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->dp, 1);
  EXPECT_FALSE(ParseLayoutText("1/8/8/x").ok());
  EXPECT_FALSE(ParseLayoutText("1/8/8/8/8").ok());
}

TEST(SpecLayoutText, SlugPrefixRoundTrips) {
  for (const char* text : {"pp2-tp16-ep4_c8_r1", "pp1-tp8-ep8-dp8_c8_r1"}) {
    auto parsed = ParseSlugPrefix(text);
    ASSERT_TRUE(parsed.has_value()) << text;
    EXPECT_EQ(parsed->first.Slug() + "_c8_r1", text);
    EXPECT_EQ(std::string(text).substr(parsed->second), "_c8_r1");
  }
  EXPECT_FALSE(ParseSlugPrefix("pp2-tp16_c8_r1").has_value());
  EXPECT_FALSE(ParseSlugPrefix("pp0-tp16-ep4").has_value());
  EXPECT_FALSE(ParseSlugPrefix("pp99999999-tp1-ep1").has_value());
}

TEST(SpecEngine, ArgsKeepFileOrderAndTypes) {
  Spec spec = MustParse(Text(kSweep, kWorkload, "[engine.env]\nZ = \"1\"\nA = 2\n"));
  EXPECT_EQ(spec.engine.env,
            (std::vector<std::pair<std::string, std::string>>{{"Z", "1"}, {"A", "2"}}));
  std::string text = std::string(kHead).substr(0, std::string(kHead).find("args")) +
                     "[engine.args]\nz-flag = 0.85\nb-flag = \"x\"\na-flag = false\n" + kSweep +
                     kWorkload;
  spec = MustParse(text);
  EXPECT_EQ(ArgNames(spec), (std::vector<std::string>{"z-flag", "b-flag", "a-flag"}));
  EXPECT_EQ(spec.engine.FindArg("z-flag")->kind, ArgValue::Kind::kFloat);
  EXPECT_EQ(spec.engine.ArgString("z-flag"), "0.85");
  EXPECT_FALSE(spec.engine.ArgTrue("a-flag"));
  EXPECT_EQ(spec.engine.ArgInt("b-flag"), std::nullopt);
}

// A spec whose [engine.env] sets `name` to `value` (TOML, quoted if a
// string), parsed, and the error parsing it gives ("" when it parses).
Spec WithEnv(const std::string& name, const std::string& value) {
  return MustParse(Text(kSweep, kWorkload, "[engine.env]\n" + name + " = " + value + "\n"));
}
std::string EnvError(const std::string& name, const std::string& value) {
  return ErrorOf(Text(kSweep, kWorkload, "[engine.env]\n" + name + " = " + value + "\n"));
}

// A variable holds text: a number or a boolean is its TOML text, in the
// file and through --set alike; a date, an array or a table is refused,
// saying to quote it.
TEST(SpecEngine, EnvScalarsAreTheirTextAndOthersAreRefused) {
  Spec spec =
      MustParse(Text(kSweep, kWorkload, "[engine.env]\nN = 1\nF = 0.5\nB = true\nS = \"x\"\n"));
  EXPECT_EQ(spec.engine.env, (std::vector<std::pair<std::string, std::string>>{
                                 {"N", "1"}, {"F", "0.5"}, {"B", "true"}, {"S", "x"}}));
  Result<Spec> set = ParseSpec(Text(kSweep, kWorkload), "/s/spec.toml",
                               {"engine.env.X=1", "engine.env.Y=true", "engine.env.Z=false"});
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(*FindEnv(set->engine, "X"), "1");
  EXPECT_EQ(*FindEnv(set->engine, "Y"), "true");
  EXPECT_EQ(*FindEnv(set->engine, "Z"), "false");
  const std::string date = ErrorOf(Text(kSweep, kWorkload), {"engine.env.D=2024-01-01"});
  EXPECT_NE(date.find("key 'engine.env.D': expected a string (quote it), a number or a boolean, "
                      "got a date"),
            std::string::npos)
      << date;
  EXPECT_NE(EnvError("A", "[1, 2]")
                .find("key 'engine.env.A': expected a string (quote it), a "
                      "number or a boolean, got an array"),
            std::string::npos)
      << EnvError("A", "[1, 2]");
}

// Dynamic chunking's smoothing factor is read from [engine.env] as SGLang
// does; a float is accepted as the variable's text, anything outside [0, 1]
// is an error at the key.
TEST(SpecEngine, DynamicChunkSmoothFactor) {
  EXPECT_DOUBLE_EQ(DynamicChunkSmoothFactor(MustParse(Text()).engine), 0.75);
  Spec spec = WithEnv("SGLANG_DYNAMIC_CHUNKING_SMOOTH_FACTOR", "0.65");
  EXPECT_EQ(*FindEnv(spec.engine, "SGLANG_DYNAMIC_CHUNKING_SMOOTH_FACTOR"), "0.65");
  EXPECT_DOUBLE_EQ(DynamicChunkSmoothFactor(spec.engine), 0.65);
  const std::string error = EnvError("SGLANG_DYNAMIC_CHUNKING_SMOOTH_FACTOR", "\"1.5\"");
  EXPECT_NE(error.find("key 'engine.env.SGLANG_DYNAMIC_CHUNKING_SMOOTH_FACTOR': expected a number "
                       "from 0 (fixed chunks) to 1 (strict), got \"1.5\""),
            std::string::npos)
      << error;
  EXPECT_EQ(error.rfind("/s/spec.toml:", 0), 0u) << error;
}

// The cached prefix below which MLA prefill absorbs: a whole number of
// tokens, SGLang's 8,192 when unset, an error at the key otherwise.
TEST(SpecEngine, ChunkedPrefixCacheThreshold) {
  EXPECT_EQ(ChunkedPrefixCacheThreshold(MustParse(Text()).engine), 8192);
  EXPECT_EQ(
      ChunkedPrefixCacheThreshold(WithEnv("SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD", "4096").engine),
      4096);
  const std::string error = EnvError("SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD", "\"4k\"");
  EXPECT_NE(error.find("key 'engine.env.SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD': expected a whole "
                       "number of tokens, got \"4k\""),
            std::string::npos)
      << error;
}

// SGLANG_PP_LAYER_PARTITION: each stage's layers, as SGLang's int() of
// each comma-separated field reads them; at least 1 a stage.
TEST(SpecEngine, PpLayerPartition) {
  EXPECT_TRUE(PpLayerPartition(MustParse(Text()).engine, 3).empty());
  EXPECT_EQ(PpLayerPartition(WithEnv("SGLANG_PP_LAYER_PARTITION", "\"12, 12,+11\"").engine, 3),
            (std::vector<int>{12, 12, 11}));
  EXPECT_EQ(PpLayerPartition(WithEnv("SGLANG_PP_LAYER_PARTITION", "93").engine, 3),
            (std::vector<int>{93}));
  // int() strips any whitespace and reads single underscores between digits.
  EXPECT_EQ(PpLayerPartition(WithEnv("SGLANG_PP_LAYER_PARTITION", "\"1_2,\\n81\\t\"").engine, 3),
            (std::vector<int>{12, 81}));
  for (const std::string bad :
       {"12,,11", "12;11", "0,93", "-1,94", "twelve", "", "12,", "1__2", "_12", "12_"}) {
    const std::string error = EnvError("SGLANG_PP_LAYER_PARTITION", "\"" + bad + "\"");
    EXPECT_NE(error.find("key 'engine.env.SGLANG_PP_LAYER_PARTITION': expected each pipeline "
                         "stage's layer count, whole numbers of at least 1 separated by commas "
                         "(\"12,12,11\"), got \"" +
                         bad + "\""),
              std::string::npos)
        << bad << ": " << error;
  }
}

// [engine.pp_layer_partition]: a split per pipeline size, used by the
// layouts of that size only, ahead of nothing else: the spec refuses it
// beside [engine.env]'s variable, and each entry names a size of 2 or more
// and holds one count of at least 1 per stage.
TEST(SpecEngine, PpLayerPartitionPerPipelineSize) {
  const Spec spec = MustParse(
      Text(kSweep, kWorkload, "[engine.pp_layer_partition]\n4 = [23, 24, 23, 23]\n2 = [47, 46]\n"));
  EXPECT_EQ(PpLayerPartition(spec.engine, 4), (std::vector<int>{23, 24, 23, 23}));
  EXPECT_EQ(PpLayerPartition(spec.engine, 2), (std::vector<int>{47, 46}));
  EXPECT_TRUE(PpLayerPartition(spec.engine, 8).empty());
  EXPECT_EQ(PpLayerPartitionSource(spec.engine, 4),
            "[engine.pp_layer_partition] 4 = [23, 24, 23, 23]");
  EXPECT_EQ(FindEnv(spec.engine, "SGLANG_PP_LAYER_PARTITION"), nullptr);
  auto error = [](const std::string& table) {
    return ErrorOf(Text(kSweep, kWorkload, "[engine.pp_layer_partition]\n" + table));
  };
  const std::string both = ErrorOf(Text(kSweep, kWorkload,
                                        "[engine.env]\nSGLANG_PP_LAYER_PARTITION = \"47,46\"\n"
                                        "[engine.pp_layer_partition]\n2 = [47, 46]\n"));
  EXPECT_NE(both.find("key 'engine.pp_layer_partition': set the layer split either in "
                      "[engine.env] SGLANG_PP_LAYER_PARTITION (every layout) or here (per "
                      "pipeline size), not in both"),
            std::string::npos)
      << both;
  EXPECT_NE(error("4 = [23, 24, 23]\n")
                .find("key 'engine.pp_layer_partition.4': expected 4 layer counts, one per stage "
                      "of PP4, got 3"),
            std::string::npos)
      << error("4 = [23, 24, 23]\n");
  for (const std::string key : {"1", "pp4", "04", "-4", "\"\"", "32769", "99999999999"}) {
    const std::string e = error(key + " = [93]\n");
    EXPECT_NE(e.find("expected a pipeline size from 2 to 32768 as the key"), std::string::npos)
        << key << ": " << e;
    EXPECT_EQ(e.rfind("/s/spec.toml:", 0), 0u) << e;
  }
  EXPECT_NE(error("2 = [93, 0]\n").find("engine.pp_layer_partition.2[1]"), std::string::npos)
      << error("2 = [93, 0]\n");
  EXPECT_NE(error("2 = \"47,46\"\n").find("engine.pp_layer_partition.2"), std::string::npos)
      << error("2 = \"47,46\"\n");
}

// SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK as SGLang's EnvBool reads it; SGLang
// ignores anything else with a warning, which a typo would hide, so the
// spec refuses it at the key.
TEST(SpecEngine, MambaSkipDecodeLock) {
  EXPECT_FALSE(MambaSkipDecodeLock(MustParse(Text()).engine));
  for (const std::string on : {"1", "\"True\"", "\"yes\"", "\"Y\""})
    EXPECT_TRUE(MambaSkipDecodeLock(WithEnv("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK", on).engine)) << on;
  EXPECT_FALSE(MambaSkipDecodeLock(WithEnv("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK", "0").engine));
  const std::string error = EnvError("SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK", "\"on\"");
  EXPECT_NE(error.find("key 'engine.env.SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK': expected true, 1, "
                       "yes, y, false, 0, no or n (SGLang's EnvBool; SGLang would run with the "
                       "lock kept, warning that it ignores the value), got \"on\""),
            std::string::npos)
      << error;
}

TEST(SpecCluster, SshDefaultsAndPerHostSettings) {
  std::string text = Text(kSweep, kWorkload,
                          "[cluster.ssh]\nuser = \"ops\"\nport = 2222\n"
                          "[cluster.ssh.b]\naddress = \"10.0.0.2\"\nuser = \"root\"\n");
  Spec spec = MustParse(text);
  EXPECT_EQ(spec.cluster.hosts[0].address, "a");
  EXPECT_EQ(spec.cluster.hosts[0].ssh_user, "ops");
  EXPECT_EQ(spec.cluster.hosts[0].ssh_port, 2222);
  EXPECT_EQ(spec.cluster.hosts[1].address, "10.0.0.2");
  EXPECT_EQ(spec.cluster.hosts[1].ssh_user, "root");
  EXPECT_EQ(spec.cluster.hosts[1].ssh_port, 2222);
}

TEST(SpecOverrides, ApplyBeforeConversion) {
  Spec spec = MustParse(
      Text(), {"workload.requests=80", "sweep.pp=[2,4]", "engine.args.chunked-prefill-size=16384",
               "decision.objective=\"ttft_p50\"", "engine.version=0.5.18", "cluster.launcher = ssh",
               "workload.unique_prompts=false"});
  EXPECT_EQ(spec.workload.requests, 80);
  EXPECT_EQ(Labels(spec), (std::vector<std::string>{"PP2/TP4/EP1", "PP4/TP2/EP1"}));
  EXPECT_EQ(spec.sweep.layouts[0].origin.Where(), "--set sweep.pp=[2,4]: key 'sweep.pp[0]'");
  EXPECT_EQ(spec.engine.ArgInt("chunked-prefill-size"), 16384);
  EXPECT_EQ(spec.Origin("engine.args.chunked-prefill-size").Position(),
            "--set engine.args.chunked-prefill-size=16384");
  EXPECT_EQ(spec.decision.objective.name(), "ttft_p50");
  EXPECT_EQ(spec.engine.version, "0.5.18");
  EXPECT_EQ(spec.cluster.launcher, "ssh");
  EXPECT_FALSE(spec.workload.unique_prompts);
}

TEST(SpecOverrides, ReplacedArgKeepsItsPlaceAndNewArgsGoLast) {
  Spec spec = MustParse(Text(), {"engine.args.b-flag=1", "engine.args.a-flag=true"});
  EXPECT_EQ(ArgNames(spec), (std::vector<std::string>{"b-flag", "a-flag"}));

  Result<Spec> example = LoadSpec(
      kExample, {"engine.args.chunked-prefill-size=16384", "engine.args.enable-mixed-chunk=true"});
  ASSERT_TRUE(example.ok()) << example.error().message;
  EXPECT_EQ(ArgNames(*example)[2], "chunked-prefill-size");
  EXPECT_EQ(ArgNames(*example).back(), "enable-mixed-chunk");
  EXPECT_EQ(example->engine.ArgInt("chunked-prefill-size"), 16384);
}

TEST(SpecErrors, TomlSyntax) {
  EXPECT_EQ(ErrorOf(Text(kSweep, "[workload]\ninput_tokens = = 100\n")),
            "/s/spec.toml:13:16: Error while parsing value: could not determine value type");
  EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload + std::string("requests = 5\n"))),
            "/s/spec.toml:15:12: Error while parsing key-value pair: cannot redefine existing "
            "integer 'requests'");
}

TEST(SpecErrors, UnknownKeySuggestsTheClosest) {
  EXPECT_EQ(ErrorOf(Text(kSweep, "[workload]\ninput_tokens = 100\nrequest = 4\n")),
            "/s/spec.toml:14:1: unknown key 'workload.request' (did you mean 'requests'?)");
  EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload, "[decision]\nfoo = 1\n")),
            "/s/spec.toml:16:1: unknown key 'decision.foo'");
  EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload, "[worklaod]\n")),
            "/s/spec.toml:15:2: unknown key 'worklaod' (did you mean 'workload'?)");
}

// 1e-308 requests/s once predicted a communication share of 2e12%: a rate
// is 0 (closed loop) or at least one request every 1,000 s.
TEST(SpecErrors, ARequestRateTooLowToMeanAnythingIsRefused) {
  EXPECT_EQ(ErrorOf(Text(kSweep, std::string(kWorkload) + "request_rate = 1e-308\n")),
            "/s/spec.toml:15:16: key 'workload.request_rate': expected 0 (closed loop) or "
            "requests/s >= 0.001, got 1e-308");
  EXPECT_EQ(ErrorOf(Text(kSweep, std::string(kWorkload) + "request_rate = 0.5\n")), "");
  EXPECT_EQ(ErrorOf(Text(kSweep, std::string(kWorkload) + "request_rate = 0\n")), "");
}

TEST(SpecErrors, WrongType) {
  EXPECT_EQ(ErrorOf(Text(kSweep, "[workload]\ninput_tokens = 100\nrequests = \"40\"\n")),
            "/s/spec.toml:14:12: key 'workload.requests': expected an integer, got a string");
  EXPECT_EQ(ErrorOf(Text("[sweep]\npp = 2\nconcurrency = [8]\n")),
            "/s/spec.toml:10:6: key 'sweep.pp': expected an array of positive integers, got an "
            "integer");
  EXPECT_EQ(ErrorOf("workload = 3\n" + Text(kSweep, "")),
            "/s/spec.toml:1:12: key 'workload': expected a table, got an integer");
}

TEST(SpecErrors, MissingRequired) {
  EXPECT_EQ(ErrorOf(Text(kSweep, "[workload]\nrequests = 4\n")),
            "/s/spec.toml:12:1: missing required key 'workload.input_tokens'");
  EXPECT_EQ(ErrorOf(Text(kSweep, "")), "/s/spec.toml: missing required section [workload]");
  EXPECT_EQ(ErrorOf(Text("[sweep]\nconcurrency = [8]\n")),
            "/s/spec.toml:9:1: missing required key 'sweep.pp' (or 'sweep.layouts')");
  EXPECT_EQ(ErrorOf(Text("[sweep]\nlayouts = [{pp = 2}]\nconcurrency = [8]\n")),
            "/s/spec.toml:10:12: missing required key 'sweep.layouts[0].tp'");
}

TEST(SpecErrors, OutOfRange) {
  EXPECT_EQ(
      ErrorOf(Text("[sweep]\npp = [1]\nconcurrency = [8, 0]\n")),
      "/s/spec.toml:11:19: key 'sweep.concurrency[1]': expected an integer in [1, 65536], got "
      "0");
  EXPECT_EQ(ErrorOf(Text("[sweep]\npp = [1]\nconcurrency = []\n")),
            "/s/spec.toml:11:15: key 'sweep.concurrency': expected a non-empty array of positive "
            "integers");
  EXPECT_EQ(ErrorOf(Text("[sweep]\npp = [1]\nconcurrency = [8]\nrepeats = 0\n")),
            "/s/spec.toml:12:11: key 'sweep.repeats': expected an integer in [1, 100], got 0");
  EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload, "[decision]\nobjective = \"throughput\"\n")),
            "/s/spec.toml:16:13: key 'decision.objective': expected one of 'input_tps', "
            "'ttft_p50', 'output_tps', 'output_tps_per_gpu', 'goodput', got 'throughput'");
  EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload, "[decision]\nmax_repeat_spread = -0.1\n")),
            "/s/spec.toml:16:21: key 'decision.max_repeat_spread': expected a number >= 0, got "
            "-0.1");
  EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload, "[cluster.ssh]\nport = 0\n")),
            "/s/spec.toml:16:8: key 'cluster.ssh.port': expected an integer in [1, 65535], got 0");
}

// What an adaptive run reads (docs/adaptive.md): the stop threshold in
// [decision], the budgets and the expected server start in [adaptive].
TEST(SpecAdaptive, DefaultsValuesAndTheMistakesAUserMakes) {
  const Spec defaults = MustParse(Text());
  EXPECT_DOUBLE_EQ(defaults.decision.stop_probability, 0.05);
  EXPECT_EQ(defaults.adaptive.budget_samples, 0);
  EXPECT_DOUBLE_EQ(defaults.adaptive.budget_gpu_hours, 0);
  EXPECT_DOUBLE_EQ(defaults.adaptive.server_start_s, 600);
  const Spec set = MustParse(Text(kSweep, kWorkload,
                                  "[decision]\nstop_probability = 0.01\n[adaptive]\n"
                                  "budget_samples = 12\nbudget_gpu_hours = 40.5\n"
                                  "server_start_s = 900\n"));
  EXPECT_DOUBLE_EQ(set.decision.stop_probability, 0.01);
  EXPECT_EQ(set.adaptive.budget_samples, 12);
  EXPECT_DOUBLE_EQ(set.adaptive.budget_gpu_hours, 40.5);
  EXPECT_DOUBLE_EQ(set.adaptive.server_start_s, 900);
  // A probability of 1 would stop at once, 0 never: both are refused.
  const std::pair<const char*, const char*> mistakes[] = {
      {"[decision]\nstop_probability = 1.0\n",
       "16:20: key 'decision.stop_probability': expected a number in [0.0001, 0.5], got 1"},
      {"[decision]\nstop_probability = -0.1\n",
       "16:20: key 'decision.stop_probability': expected a number in [0.0001, 0.5], got -0.1"},
      // Past a pebibyte a headroom is a typo, and its MiB overflow the
      // integers the search prints (1e20 read as -0 MiB).
      {"[decision]\nmin_headroom_mib = 1e20\n",
       "16:20: key 'decision.min_headroom_mib': expected a number in [0, 1073741824], got 1e+20"},
      {"[decision]\nstop_probability = \"5%\"\n",
       "16:20: key 'decision.stop_probability': expected a number, got a string"},
      {"[adaptive]\nbudget_samples = -1\n",
       "16:18: key 'adaptive.budget_samples': expected an integer in [0, 1000000], got -1"},
      {"[adaptive]\nbudget_gpu_hours = -2\n",
       "16:20: key 'adaptive.budget_gpu_hours': expected a number in [0, 1e+09], got -2"},
      {"[adaptive]\nbudget_sample = 10\n",
       "16:1: unknown key 'adaptive.budget_sample' (did you mean 'budget_samples'?)"}};
  for (const auto& [text, error] : mistakes)
    EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload, text)), std::string("/s/spec.toml:") + error);
}

TEST(SpecDecision, SlaLimitsAreHeldInSeconds) {
  const std::string decode = std::string(kWorkload) + "output_tokens = 64\n";
  Result<Spec> spec = ParseSpec(Text(kSweep, decode,
                                     "[decision]\nobjective = \"goodput\"\nttft_p99_s = 2.5\n"
                                     "tpot_p99_ms = 40\nitl_p99_ms = 60\ne2e_p99_s = 30\n"),
                                "/s/spec.toml");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const decide::SlaLimits& sla = spec->decision.sla;
  EXPECT_EQ(spec->decision.objective.name(), "goodput");
  EXPECT_DOUBLE_EQ(*sla[decide::SlaMetric::kTtft], 2.5);
  EXPECT_DOUBLE_EQ(*sla[decide::SlaMetric::kTpot], 0.040);
  EXPECT_DOUBLE_EQ(*sla[decide::SlaMetric::kItl], 0.060);
  EXPECT_DOUBLE_EQ(*sla[decide::SlaMetric::kE2e], 30);
  EXPECT_FALSE(MustParse(Text()).decision.sla.any());
}

TEST(SpecErrors, SlaLimitsMustBePositiveNumbers) {
  const std::string decode = std::string(kWorkload) + "output_tokens = 64\n";  // line 15
  EXPECT_EQ(ErrorOf(Text(kSweep, decode, "[decision]\ntpot_p99_ms = 0\n")),
            "/s/spec.toml:17:15: key 'decision.tpot_p99_ms': expected a positive number (ms), "
            "got 0");
  EXPECT_EQ(ErrorOf(Text(kSweep, decode, "[decision]\nttft_p99_s = -1\n")),
            "/s/spec.toml:17:14: key 'decision.ttft_p99_s': expected a number >= 0, got -1");
  EXPECT_EQ(ErrorOf(Text(kSweep, decode, "[decision]\ne2e_p99_s = \"30\"\n")),
            "/s/spec.toml:17:13: key 'decision.e2e_p99_s': expected a number, got a string");
  EXPECT_EQ(ErrorOf(Text(kSweep, decode, "[decision]\nttft_p99_ms = 500\n")),
            "/s/spec.toml:17:1: unknown key 'decision.ttft_p99_ms' (did you mean 'ttft_p99_s'?)");
}

// TPOT and ITL start at the second token: a limit on them with one-token
// requests would never be checked.
TEST(SpecErrors, DecodeSlaNeedsMoreThanOneOutputToken) {
  EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload, "[decision]\nitl_p99_ms = 50\n")),
            "/s/spec.toml:16:14: key 'decision.itl_p99_ms': ITL p99 needs requests of more than "
            "one output token, and the workload asks for one (set workload.output_tokens above "
            "1, or remove the limit)");
  EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload, "[decision]\nttft_p99_s = 5\n")), "");
}

TEST(SpecErrors, ArgsTheSweepOrLauncherOwns) {
  std::string head = std::string(kHead).substr(0, std::string(kHead).find("args"));
  EXPECT_EQ(ErrorOf(head + "args = {tp-size = 8}\n" + kSweep + kWorkload),
            "/s/spec.toml:8:9: key 'engine.args.tp-size': the sweep sets it from [sweep] "
            "(pp/tp/ep or layouts); remove it from [engine.args]");
  EXPECT_EQ(ErrorOf(head + "args = {dp-size = 8}\n" + kSweep + kWorkload),
            "/s/spec.toml:8:9: key 'engine.args.dp-size': the sweep sets it from [sweep] "
            "(dp, or dp in layouts); remove it from [engine.args]");
  EXPECT_EQ(ErrorOf(head + "args = {port = 30000}\n" + kSweep + kWorkload),
            "/s/spec.toml:8:9: key 'engine.args.port': the launcher sets it from [cluster]; "
            "remove it from [engine.args]");
  EXPECT_EQ(ErrorOf(head + "args = {\"--chunked-prefill-size\" = 8192}\n" + kSweep + kWorkload),
            "/s/spec.toml:8:9: key 'engine.args.--chunked-prefill-size': write the flag without "
            "leading dashes ('chunked-prefill-size')");
  EXPECT_EQ(ErrorOf(head + "args = {chunked_prefill_size = 8192}\n" + kSweep + kWorkload),
            "/s/spec.toml:8:9: key 'engine.args.chunked_prefill_size': SGLang flags are spelled "
            "with dashes ('chunked-prefill-size')");
  EXPECT_EQ(ErrorOf(head + "args = {cuda-graph-bs = [1, 2]}\n" + kSweep + kWorkload),
            "/s/spec.toml:8:25: key 'engine.args.cuda-graph-bs': expected a string, number or "
            "boolean, got an array");
}

TEST(SpecErrors, SweepShapes) {
  EXPECT_EQ(ErrorOf(Text("[sweep]\npp = [1]\nlayouts = [{pp = 1, tp = 8}]\nconcurrency = [8]\n")),
            "/s/spec.toml:10:6: key 'sweep.pp': set either 'layouts' or the "
            "pp/tp/ep/dp/instances lists, not both");
  EXPECT_EQ(ErrorOf(Text("[sweep]\npp = [3]\nconcurrency = [8]\n")),
            "/s/spec.toml:10:7: key 'sweep.pp[0]': tp = \"auto\" needs pp to divide the cluster's "
            "8 GPUs, got pp = 3; list tp explicitly");
  EXPECT_EQ(ErrorOf(Text("[sweep]\npp = [1, 1]\nconcurrency = [8]\n")),
            "/s/spec.toml:10:10: key 'sweep.pp[1]': 1 is listed twice");
  EXPECT_EQ(
      ErrorOf(Text("[sweep]\nlayouts = [{pp = 2, tp = 4}, {pp = 2, tp = 4, ep = 1}]\n"
                   "concurrency = [8]\n")),
      "/s/spec.toml:10:30: key 'sweep.layouts[1]': layout PP2/TP4/EP1 is listed twice (first at "
      "/s/spec.toml:10:12)");
  EXPECT_EQ(ErrorOf(Text("[sweep]\nlayouts = [4]\nconcurrency = [8]\n")),
            "/s/spec.toml:10:12: key 'sweep.layouts[0]': expected a table like {pp = 2, tp = 16, "
            "ep = 4}, got an integer");
}

// Counts that multiply into the number of samples, requests or ranks are
// bounded, and so is their product: a typo must not print a wrapped-around
// sample count or run out of memory.
TEST(SpecLimits, CountsThatMultiplyIntoASearchAreBounded) {
  EXPECT_EQ(ErrorOf(Text("[sweep]\npp = [1]\nconcurrency = [8]\nrepeats = 2147483647\n")),
            "/s/spec.toml:12:11: key 'sweep.repeats': expected an integer in [1, 100], got "
            "2147483647");
  EXPECT_EQ(ErrorOf(Text("[sweep]\npp = [1]\nconcurrency = [8, 100000]\n")),
            "/s/spec.toml:11:19: key 'sweep.concurrency[1]': expected an integer in [1, 65536], "
            "got 100000");
  EXPECT_EQ(ErrorOf(Text(kSweep, "[workload]\ninput_tokens = 100\nrequests = 2000000000\n")),
            "/s/spec.toml:14:12: key 'workload.requests': expected an integer in [1, 1000000], "
            "got 2000000000");
  EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload + std::string("warmup_requests = 9999999\n"))),
            "/s/spec.toml:15:19: key 'workload.warmup_requests': expected an integer in [0, "
            "1000000], got 9999999");
  EXPECT_EQ(ErrorOf(Text("[sweep]\nlayouts = [{pp = 65536, tp = 1}]\nconcurrency = [8]\n")),
            "/s/spec.toml:10:18: key 'sweep.layouts[0].pp': expected an integer in [1, 32768], "
            "got 65536");
  std::string many;
  for (int c = 1; c <= 1000; ++c) many += (c > 1 ? ", " : "") + std::to_string(c);
  EXPECT_EQ(ErrorOf(Text("[sweep]\npp = [1, 2]\nconcurrency = [" + many + "]\nrepeats = 100\n")),
            "/s/spec.toml:12:11: key 'sweep.repeats': 2 layouts x 1000 concurrency levels x 100 "
            "repeats = 200000 samples, more than the 100000 a search may hold; sweep fewer "
            "layouts, concurrency levels or repeats");
  std::string hundred;
  for (int v = 1; v <= 100; ++v) hundred += (v > 1 ? ", " : "") + std::to_string(v);
  EXPECT_EQ(
      ErrorOf(Text("[sweep]\npp = [" + hundred + "]\ntp = [" + hundred + "]\nconcurrency = [8]\n")),
      "/s/spec.toml:10:6: key 'sweep.pp': the instances x pp x tp x ep x dp lists expand to "
      "10000 layouts, "
      "more than the 4096 a sweep may hold");
  // At the bound the count is exact.
  Spec at = MustParse(Text("[sweep]\npp = [1, 2]\nconcurrency = [" + many + "]\nrepeats = 50\n"));
  EXPECT_EQ(at.sweep.sample_count(), 100000);
}

// The name becomes a directory name and a word of commands: it may not read
// as an option, and stays short enough for the suffixes a run adds.
TEST(SpecErrors, ExperimentNameIsAShortNameThatIsNoOption) {
  const std::string rule =
      "/s/spec.toml:2:8: key 'experiment.name': expected letters, digits, '.', '_' or '-', "
      "starting with a letter or digit, at most 128 characters (it names the run directory), "
      "got '";
  std::string text = Text();
  EXPECT_EQ(ErrorOf(Replace(text, "name = \"t\"", "name = \"-rf\"")), rule + "-rf'");
  EXPECT_EQ(ErrorOf(Replace(text, "name = \"t\"", "name = \"" + std::string(300, 'a') + "\"")),
            rule + std::string(80, 'a') + "... (300 bytes)'");
  // A 128-character name is a run id, and a recorded spec with one reads;
  // a new run without --run-id is refused, its default id being 16 more.
  const Spec named =
      MustParse(Replace(text, "name = \"t\"", "name = \"" + std::string(128, 'n') + "\""));
  EXPECT_THAT(NewRunProblems(named, false), ::testing::IsEmpty());
  EXPECT_THAT(
      NewRunProblems(named, true),
      ::testing::ElementsAre("/s/spec.toml:2:8: key 'experiment.name': expected at most 108 "
                             "characters for a run without --run-id, got 128 ('" +
                             std::string(80, 'n') +
                             "... (128 bytes)'): its default id is the name and '-YYYYMMDD-HHMMSS' "
                             "(and '-N' for a second run in the same second), and a run id is at "
                             "most 128 characters; shorten the name or give --run-id"));
  const std::string longest(108, 'a');
  EXPECT_THAT(
      NewRunProblems(MustParse(Replace(text, "name = \"t\"", "name = \"" + longest + "\"")), true),
      ::testing::IsEmpty());
  EXPECT_TRUE(IsSafeName(longest + "-20261207-160000-999"));
}

// A value pasted by mistake (a whole file in one key) is quoted in part.
TEST(SpecErrors, QuotedValuesAreCutToAnExcerpt) {
  const std::string huge(1 << 20, 'x');
  const std::string message =
      ErrorOf(Text(kSweep, kWorkload, "[decision]\nobjective = \"" + huge + "\"\n"));
  EXPECT_EQ(message,
            "/s/spec.toml:16:13: key 'decision.objective': expected one of "
            "'input_tps', 'ttft_p50', 'output_tps', 'output_tps_per_gpu', 'goodput', got '" +
                std::string(80, 'x') + "... (1048576 bytes)'");
  const std::string override_message = ErrorOf(Text(), {"decision.objective=[" + huge});
  EXPECT_LT(override_message.size(), 2000u) << override_message.substr(0, 300);
}

TEST(SpecErrors, SshHostsMustBeListed) {
  EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload, "[cluster.ssh.c]\naddress = \"x\"\n")),
            "/s/spec.toml:15:14: unknown key 'cluster.ssh.c' (not in cluster.hosts)");
}

TEST(SpecErrors, OverridesAreNamed) {
  EXPECT_EQ(ErrorOf(Text(), {"workload.request=80"}),
            "--set workload.request=80: unknown key 'workload.request' (did you mean "
            "'requests'?)");
  EXPECT_EQ(ErrorOf(Text(), {"workload.requests=many"}),
            "--set workload.requests=many: key 'workload.requests': expected an integer, got a "
            "string");
  EXPECT_EQ(ErrorOf(Text(), {"sweep.pp=[2,4"}),
            "--set sweep.pp=[2,4: invalid TOML value '[2,4': Error while parsing array: "
            "encountered end-of-file");
  EXPECT_EQ(ErrorOf(Text(), {"workload.requests.x=1"}),
            "--set workload.requests.x=1: 'workload.requests' is an integer, not a table");
  EXPECT_EQ(ErrorOf(Text(), {"workload.requests"}),
            "--set workload.requests: expected key.path=value, e.g. workload.requests=80");
  EXPECT_EQ(ErrorOf(Text(), {"workload..requests=1"}),
            "--set workload..requests=1: invalid key path 'workload..requests' (expected dotted "
            "names of letters, digits, '_' or '-')");
  EXPECT_EQ(ErrorOf(Text(), {"workload.requests="}),
            "--set workload.requests=: missing value after '='");
  EXPECT_EQ(ErrorOf(Text(), {"baseline.layout={pp=1}"}),
            "--set baseline.layout={pp=1}: missing required key 'baseline.layout.tp'");
}

TEST(SpecErrors, UnreadableFile) {
  Result<Spec> spec = LoadSpec("/nonexistent/spec.toml");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().message, "cannot read /nonexistent/spec.toml: No such file or directory");
}

}  // namespace
}  // namespace ppsearch::spec

namespace ppsearch::spec {
namespace {

TEST(SpecSim, NoiseSeedAndInjectedFaults) {
  Spec spec =
      MustParse(Text(kSweep, kWorkload,
                     "[sim]\nnoise_cv = 0.01\nseed = 9\n"
                     "inject = [{sample = \"pp2-tp4-ep1_c8_r1\", fault = \"lose_requests\", "
                     "count = 3}, {sample = \"pp1-tp8-ep1_c8_r1\", fault = \"oom\"}]\n"));
  EXPECT_DOUBLE_EQ(spec.sim.noise_cv, 0.01);
  EXPECT_EQ(spec.sim.seed, 9u);
  ASSERT_EQ(spec.sim.inject.size(), 2u);
  EXPECT_EQ(spec.sim.inject[0].fault, "lose_requests");
  EXPECT_EQ(spec.sim.inject[0].count, 3);
  EXPECT_EQ(spec.sim.inject[1].sample, "pp1-tp8-ep1_c8_r1");
  EXPECT_EQ(spec.sim.inject[1].count, 1);
  EXPECT_DOUBLE_EQ(MustParse(Text()).sim.noise_cv, 0.003);
}

TEST(SpecSim, Errors) {
  EXPECT_EQ(
      ErrorOf(Text(kSweep, kWorkload, "[sim]\ninject = [{sample = \"x\", fault = \"oom\"}]\n")),
      "/s/spec.toml:16:21: key 'sim.inject[0].sample': expected a sample id like "
      "\"pp2-tp16-ep4_c8_r2\", got \"x\"");
  EXPECT_EQ(
      ErrorOf(Text(kSweep, kWorkload,
                   "[sim]\ninject = [{sample = \"pp1-tp8-ep1_c8_r1\", fault = \"fire\"}]\n")),
      "/s/spec.toml:16:50: key 'sim.inject[0].fault': expected one of 'lose_requests', 'oom', "
      "'nccl', 'traceback', 'engine_exit', 'kv_transfer', got 'fire'");
  EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload, "[sim]\nnoise_cb = 0.1\n")),
            "/s/spec.toml:16:1: unknown key 'sim.noise_cb' (did you mean 'noise_cv'?)");
}

// A sample sends workload.requests requests (4 here): a count above that is
// refused, not quietly cut to what the sample can lose.
// A count above the requests of a sample is a new run's refusal, not the
// parser's: a run directory recorded before the rule still reads.
TEST(SpecSim, InjectCountAboveTheRequestsOfASampleIsRefusedForANewRun) {
  const std::string inject =
      "[sim]\ninject = [{sample = \"pp2-tp4-ep1_c8_r1\", fault = \"lose_requests\", count = ";
  const Spec five = MustParse(Text(kSweep, kWorkload, inject + "5}]\n"));
  EXPECT_EQ(five.sim.inject[0].count, 5);
  EXPECT_THAT(NewRunProblems(five, false),
              ::testing::ElementsAre(
                  "/s/spec.toml:16:11: key 'sim.inject[0].count': count = 5 is more than "
                  "the 4 requests of a sample (workload.requests = 4); a sample can lose "
                  "at most all of them"));
  EXPECT_THAT(NewRunProblems(MustParse(Text(kSweep, kWorkload, inject + "4}]\n")), false),
              ::testing::IsEmpty());
}

// A fault for a sample the sweep does not hold would never fire.
TEST(SpecSim, InjectNamingASampleOutsideTheSweepIsAnError) {
  EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload,
                         "[sim]\ninject = [{sample = \"pp2-tp4-ep1_c8_r2\", fault = \"oom\"}]\n")),
            "/s/spec.toml:16:21: key 'sim.inject[0].sample': no sample \"pp2-tp4-ep1_c8_r2\" in "
            "the sweep (did you mean \"pp2-tp4-ep1_c8_r1\"?)");
  EXPECT_EQ(ErrorOf(Text(kSweep, kWorkload,
                         "[sim]\ninject = [{sample = \"pp8-tp1-ep1_c64_r9\", fault = \"oom\"}]\n")),
            "/s/spec.toml:16:21: key 'sim.inject[0].sample': no sample \"pp8-tp1-ep1_c64_r9\" in "
            "the sweep (the sweep's 2 samples: pp1-tp8-ep1_c8_r1, pp2-tp4-ep1_c8_r1)");
}

TEST(SpecWorkload, RangeRatioZeroIsRejectedAsBenchRejectsIt) {
  EXPECT_EQ(ErrorOf(Text(kSweep, std::string(kWorkload) + "range_ratio = 0\n")),
            "/s/spec.toml:15:15: key 'workload.range_ratio': expected a number in (0, 1] "
            "(prompts are uniform on [input_tokens x range_ratio, input_tokens]), got 0");
  EXPECT_DOUBLE_EQ(
      MustParse(Text(kSweep, std::string(kWorkload) + "range_ratio = 0.5\n")).workload.range_ratio,
      0.5);
}

TEST(SpecWorkload, OutputLengthsUniformAndTheirRatioChecked) {
  const Spec spec =
      MustParse(Text(kSweep, std::string(kWorkload) + "output_tokens = 256\noutput_distribution = "
                                                      "\"uniform\"\noutput_range_ratio = 0.25\n"));
  EXPECT_EQ(spec.workload.output_distribution, "uniform");
  EXPECT_DOUBLE_EQ(spec.workload.output_range_ratio, 0.25);
  EXPECT_EQ(ErrorOf(Text(kSweep, std::string(kWorkload) + "output_range_ratio = 0\n")),
            "/s/spec.toml:15:22: key 'workload.output_range_ratio': expected a number in (0, 1] "
            "(outputs are uniform on [output_tokens x output_range_ratio, output_tokens]), got 0");
}

// The lengths file is read with the spec, relative to it; its errors name
// the spec's key and the file's line.
TEST(SpecWorkload, LengthsFileIsReadRelativeToTheSpec) {
  const std::string dir = ::testing::TempDir() + "spec_lengths_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(
      WriteFileAtomic(dir + "/lengths.csv", "input_tokens,output_tokens\n100,20\n50,7\n").ok());
  ASSERT_TRUE(
      WriteFileAtomic(dir + "/bad.csv", "input_tokens,output_tokens\n100,20\n50,-7\n").ok());
  const std::string text =
      Text(kSweep, std::string(kWorkload) + "lengths_file = \"lengths.csv\"\n");
  Result<Spec> spec = ParseSpec(text, dir + "/spec.toml", {});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->workload.lengths_file, dir + "/lengths.csv");
  ASSERT_EQ(spec->workload.lengths.size(), 2u);
  EXPECT_EQ(spec->workload.lengths[1].output_tokens, 7);
  Result<Spec> bad = ParseSpec(Replace(text, "lengths.csv", "bad.csv"), dir + "/spec.toml", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, dir + "/spec.toml:15:16: key 'workload.lengths_file': " + dir +
                                     "/bad.csv:3: column 'output_tokens': expected a whole number "
                                     "of tokens in [1, 16777216], got -7");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ppsearch::spec
