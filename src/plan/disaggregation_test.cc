// A disaggregated deployment's plan: each pool planned on its own hosts with
// its own engine configuration, memory per pool as SGLang sizes a PD
// server, and the checks SGLang makes between a prefill and a decode server
// (each test names the SGLang v0.5.18 source it follows).

#include "plan/disaggregation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "memory/activation.h"
#include "model/hf_config.h"
#include "plan/spec_hardware.h"
#include "spec/spec_parser.h"
#include "util/files.h"

namespace ppsearch::plan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// DeepSeek-V3 on four 8-GPU H200 nodes; `pools` from line 15 on.
std::string SpecText(const std::string& pools) {
  return "[experiment]\nname = \"t\"\n"                         // 1-2
         "[cluster]\ngpus_per_node = 8\nhardware = \"h200\"\n"  // 3-5
         "hosts = [\"n0\", \"n1\", \"n2\", \"n3\"]\n"           // 6
         "[engine]\nmodel_config = \"" +                        // 7-8
         DataDir() +
         "/models/deepseek-v3/config.json\"\n" +                                  //
         "[workload]\ninput_tokens = 2000\noutput_tokens = 1000\nrequests = 8\n"  // 9-12
         "[sweep]\nconcurrency = [8]\n" +                                         // 13-14
         pools;
}

const char* const kOnePrefillThreeDecode =
    "[sweep.prefill]\nhosts = [\"n0\"]\ntp = 8\nep = 8\n"
    "args = {chunked-prefill-size = 16384}\n"
    "[sweep.decode]\nhosts = [\"n1\", \"n2\", \"n3\"]\ninstances = 3\ntp = 8\nep = 8\ndp = 8\n"
    "args = {max-running-requests = 512}\n";

// What a deployment is planned from: the spec, its pools, the model and the
// hardware; `ok` is false (with a test failure) when any failed to load.
struct Inputs {
  bool ok = false;
  spec::Spec spec;
  spec::Disaggregation deployment;
  model::ModelDesc model;
  hardware::HardwareProfile hw;
};

Inputs InputsOf(const std::string& pools) {
  const std::string text = SpecText(pools);
  Inputs in;
  Result<spec::Spec> spec = spec::ParseSpec(text, "/s/pd.toml", {});
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  Result<std::optional<spec::Disaggregation>> deployment =
      spec::ParseDisaggregation(text, "/s/pd.toml", {});
  EXPECT_TRUE(deployment.ok() && deployment->has_value());
  if (!spec.ok() || !deployment.ok() || !deployment->has_value()) return in;
  Result<model::ModelDesc> model = model::LoadModel(spec->engine.model_config);
  Result<hardware::HardwareProfile> hw = LoadSpecHardware(*spec);
  EXPECT_TRUE(model.ok() && hw.ok());
  if (!model.ok() || !hw.ok()) return in;
  in = {true, *spec, **deployment, *model, *hw};
  return in;
}

DisaggregatedPlan PlanOf(const std::string& pools) {
  const Inputs in = InputsOf(pools);
  if (!in.ok) return {};
  return PlanDisaggregated(in.spec, in.deployment, in.model, in.hw);
}

std::vector<std::string> ErrorsOf(const std::string& pools) {
  std::vector<std::string> out;
  for (const Diagnostic& d : PlanOf(pools).AllErrors()) out.push_back(d.message);
  return out;
}

TEST(Disaggregated, EachPoolIsPlannedOnItsHostsWithItsRole) {
  const DisaggregatedPlan plan = PlanOf(kOnePrefillThreeDecode);
  EXPECT_THAT(plan.AllErrors(), IsEmpty());
  EXPECT_TRUE(plan.valid());
  const LayoutPlan& prefill = plan.prefill.layout();
  const LayoutPlan& decode = plan.decode.layout();
  EXPECT_EQ(plan.prefill.hosts, std::vector<std::string>{"n0"});
  EXPECT_EQ(plan.decode.plan.cluster.hosts, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(plan.prefill.pd.mode, "prefill");
  EXPECT_EQ(prefill.engine.chunked_prefill_size, 16384);  // the pool's own args
  EXPECT_EQ(plan.decode.pd.mode, "decode");
  EXPECT_EQ(decode.engine.chunked_prefill_size, 8192);  // SGLang's default below 160 GiB
  // handle_pd_disaggregation: "KV cache is forced as chunk cache for decode server".
  EXPECT_TRUE(decode.engine.disable_radix_cache);
  EXPECT_FALSE(prefill.engine.disable_radix_cache);
  // Each decode instance is one node of the pool: instance i on pool node i.
  EXPECT_EQ(decode.instance_nodes.size(), 3u);
  EXPECT_EQ(decode.ranks.size(), 8u);
  EXPECT_EQ(decode.attention_groups.size(), 8u);
  // A decode server prefills nothing: DP attention's smaller chunks are no
  // warning of its (an aggregated DP8 server's is).
  ASSERT_EQ(decode.ranks.size(), 8u);
  for (const Diagnostic& w : decode.warnings)
    EXPECT_THAT(w.message, ::testing::Not(::testing::HasSubstr("prefills chunks"))) << w.message;
}

// server_args.py _handle_gpu_memory_settings with reserve_for_graph_mb and
// _apply_cuda_graph_disaggregation_roles, on an H200 (143,771 MiB):
//   prefill (TP8, chunk 16,384, MLA): 512 + 16,384 x 1.5 + 8/8 x 1,024 + no
//     decode graph + 1,536 (MLA prefill graph) = 27,648 MiB;
//     (143,771 - 27,648) / 143,771 = 0.808
//   decode (TP8 DP8, 512 running requests): 512 + max(512, 2,048) x 1.5 +
//     1,024 + 512 x 2 (decode graph) + 512 x 8 x 3 + 512 x 8 x 1.5 (DP
//     attention above max_bs 300) + no prefill graph = 24,064 MiB;
//     (143,771 - 24,064) / 143,771 = 0.833
// Aggregated, the decode layout would keep 34,816 MiB (0.758): the chunk's
// activations and the MLA prefill graph besides.
TEST(Disaggregated, EachPoolReservesWhatSglangReservesForItsRole) {
  const DisaggregatedPlan plan = PlanOf(kOnePrefillThreeDecode);
  EXPECT_DOUBLE_EQ(plan.prefill.layout().memory.mem_fraction_static, 0.808);
  EXPECT_DOUBLE_EQ(plan.decode.layout().memory.mem_fraction_static, 0.833);
}

// Scheduler.init_disaggregation: MetadataBuffers of max_running_requests x 2
// slots, 1,600 bytes each (disaggregation/utils.py MetadataBuffers).
TEST(Disaggregated, TransferBuffersFollowTheRunningRequests) {
  const DisaggregatedPlan plan = PlanOf(kOnePrefillThreeDecode);
  EXPECT_EQ(plan.decode.metadata_slots, 1024);
  EXPECT_EQ(plan.decode.metadata_host_bytes, 1024 * 1600);
  EXPECT_EQ(plan.prefill.metadata_slots, 2 * plan.prefill.layout().memory.max_running_requests);
  EXPECT_EQ(plan.decode.decode_extra_slots, 0);  // 512 / 8 = 64 per worker, above 32
}

// arg_groups/pd_disaggregation_hook.py handle_pd_disaggregation.
TEST(Disaggregated, DecodeExtraSlotsFollowSglangsDefault) {
  EXPECT_EQ(DecodeExtraSlots(std::nullopt, 8), 0);
  EXPECT_EQ(DecodeExtraSlots(64, 8), 16);  // 8 per worker: twice that
  EXPECT_EQ(DecodeExtraSlots(32, 1), 64);
  EXPECT_EQ(DecodeExtraSlots(33, 1), 0);
}

// A decode server's request table has its pre-allocation rows too
// (disaggregation/decode.py DecodeReqToTokenPool: size + pre_alloc_size + 1
// rows of DeepSeek-V3's 163,840-token context + 4, int32): 16 running
// requests and 32 pre-allocated, 49 rows of 640 KiB + 16 B.
TEST(Disaggregated, TheDecodeRequestTableHoldsThePreAllocationRows) {
  const DisaggregatedPlan plan = PlanOf(
      "[sweep.prefill]\nhosts = [\"n0\"]\ntp = 8\nep = 8\n"
      "[sweep.decode]\nhosts = [\"n1\"]\ntp = 8\nep = 8\n"
      "args = {max-running-requests = 16}\n");
  ASSERT_EQ(plan.decode.decode_extra_slots, 32);
  const memory::MemoryPlan& decode = plan.decode.layout().memory;
  ASSERT_EQ(decode.max_running_requests, 16);
  EXPECT_DOUBLE_EQ(decode.stages[0].request_table_mib, 49.0 * (163840 + 4) * 4 / (1024 * 1024));
  // The prefill server pre-allocates nothing: its running requests and one row.
  const memory::MemoryPlan& prefill = plan.prefill.layout().memory;
  EXPECT_DOUBLE_EQ(prefill.stages[0].request_table_mib,
                   (prefill.max_running_requests + 1.0) * (163840 + 4) * 4 / (1024 * 1024));
  // A user's --disaggregation-decode-extra-slots is the pre_alloc_size
  // (pd_disaggregation_hook.py fills in the default only when it is unset).
  const DisaggregatedPlan set = PlanOf(
      "[sweep.prefill]\nhosts = [\"n0\"]\ntp = 8\nep = 8\n"
      "[sweep.decode]\nhosts = [\"n1\"]\ntp = 8\nep = 8\n"
      "args = {max-running-requests = 16, disaggregation-decode-extra-slots = 8}\n");
  ASSERT_EQ(set.decode.decode_extra_slots, 8);
  EXPECT_DOUBLE_EQ(set.decode.layout().memory.stages[0].request_table_mib,
                   25.0 * (163840 + 4) * 4 / (1024 * 1024));
}

// Only a decode server raises its state pool for its pre-allocated requests
// (memory_model_test.cc has the rule): the memory inputs say which it is.
// The one-prefill, three-decode deployment's memory inputs, each pool's as
// predict builds them.
struct PoolInputs {
  model::ModelDesc model;
  DisaggregatedPlan plan;
  memory::MemoryInputs prefill, decode;
};

std::optional<PoolInputs> OnePrefillThreeDecodeInputs() {
  const Inputs in = InputsOf(kOnePrefillThreeDecode);
  if (!in.ok) return std::nullopt;
  const spec::Disaggregation& d = in.deployment;
  PoolInputs out{in.model, PlanDisaggregated(in.spec, d, in.model, in.hw), {}, {}};
  out.prefill = PoolMemoryInputs(out.plan.prefill.layout(), out.plan.prefill.pd,
                                 PoolSpecOf(in.spec, d, d.prefill), in.model, in.hw);
  out.decode = PoolMemoryInputs(out.plan.decode.layout(), out.plan.decode.pd,
                                PoolSpecOf(in.spec, d, d.decode), in.model, in.hw);
  return out;
}

TEST(Disaggregated, OnlyTheDecodeServersMemoryIsPlannedAsADecodeServers) {
  const std::optional<PoolInputs> in = OnePrefillThreeDecodeInputs();
  ASSERT_TRUE(in.has_value());
  EXPECT_TRUE(in->decode.pd_decode);
  EXPECT_FALSE(in->prefill.pd_decode);
}

// A decode server runs no prefill chunk: the prompts' KV arrives prefilled
// (disaggregation/decode.py, the prebuilt batch runs no forward), and its
// largest batch is one decode step of its 64 running requests per DP rank,
// inside the decode CUDA graph, whose pool the graphs' reserve holds. So it
// plans no activations beyond the graphs, where an 8,192-token chunk's
// were; the prefill server's stay its chunk's.
TEST(Disaggregated, TheDecodeServersActivationsAreItsDecodeSteps) {
  const std::optional<PoolInputs> in = OnePrefillThreeDecodeInputs();
  ASSERT_TRUE(in.has_value());
  const memory::MemoryInputs& decode = in->decode;
  ASSERT_EQ(decode.stages.size(), 1u);
  EXPECT_DOUBLE_EQ(decode.stages[0].activation.bytes, 0);
  const memory::StageMemory& planned = in->plan.decode.layout().memory.stages[0];
  EXPECT_EQ(planned.activation_peak, "decode steps in the CUDA graph's pool");
  EXPECT_GT(planned.graph_mib, 0);
  EXPECT_GT(in->prefill.stages[0].activation.bytes, 0);
  EXPECT_EQ(in->prefill.stages[0].activation_shape.chunk_tokens, 16384);
}

// scheduler.py dispatch_event_loop runs event_loop_pp_disagg_prefill and
// event_loop_pp_disagg_decode at pp > 1, and CommonKVManager._resolve_rank_mapping
// maps any prefill PP onto a PP1 decode server.
TEST(Disaggregated, PipelineStagesInsideAPoolAreAccepted) {
  EXPECT_THAT(ErrorsOf("[sweep.prefill]\nhosts = [\"n0\", \"n1\"]\npp = 2\ntp = 8\n"
                       "[sweep.decode]\nhosts = [\"n2\", \"n3\"]\ntp = 16\ndp = 16\nep = 16\n"),
              IsEmpty());
}

// disaggregation/common/conn.py CommonKVManager._resolve_rank_mapping:
// "Decode pp size should be equal to prefill pp size or 1".
TEST(Disaggregated, DecodePpMustMatchPrefillPpOrBeOne) {
  EXPECT_THAT(
      ErrorsOf("[sweep.prefill]\nhosts = [\"n0\"]\npp = 2\ntp = 4\n"
               "[sweep.decode]\nhosts = [\"n1\", \"n2\", \"n3\"]\npp = 3\ntp = 8\n"),
      ElementsAre("/s/pd.toml:19:1: key 'sweep.decode': the decode pool's PP 3 must equal the "
                  "prefill pool's PP 2 or be 1; SGLang maps each decode stage to one prefill "
                  "stage, or one decode stage to all (disaggregation/common/conn.py "
                  "CommonKVManager._resolve_rank_mapping)"));
}

// The same function maps attention TP ranks by the ratio of the sizes.
TEST(Disaggregated, AttentionTpSizesMustDivideOneAnother) {
  const std::vector<std::string> errors = ErrorsOf(
      "[sweep.prefill]\nhosts = [\"n0\"]\ntp = 8\n"
      "[sweep.decode]\nhosts = [\"n1\", \"n2\", \"n3\"]\ntp = 24\ndp = 8\nep = 24\n");
  EXPECT_THAT(errors, testing::Contains(
                          "/s/pd.toml:18:1: key 'sweep.decode': the decode pool's attention TP 3 "
                          "and the prefill pool's 8 must divide one another; SGLang maps KV "
                          "between attention TP ranks by their ratio (disaggregation/common/"
                          "conn.py CommonKVManager._resolve_rank_mapping)"));
}

// CommonKVManager.try_ensure_parallel_info refuses mismatched page sizes and
// KV cache dtypes.
TEST(Disaggregated, PageSizeAndKvDtypeMustMatch) {
  EXPECT_THAT(
      ErrorsOf("[sweep.prefill]\nhosts = [\"n0\"]\ntp = 8\n"
               "args = {page-size = 64, kv-cache-dtype = \"fp8_e4m3\"}\n"
               "[sweep.decode]\nhosts = [\"n1\"]\ntp = 8\n"),
      ElementsAre(
          "/s/pd.toml:19:1: key 'sweep.decode': the decode pool's page-size 1 differs from the "
          "prefill pool's 64; SGLang refuses the pair (\"Both servers must use the same "
          "--page-size value\", CommonKVManager.try_ensure_parallel_info)",
          "/s/pd.toml:19:1: key 'sweep.decode': the decode pool's kv-cache-dtype 'auto' differs "
          "from the prefill pool's 'fp8_e4m3'; SGLang refuses the pair (\"Both servers must use "
          "the same --kv-cache-dtype value\", CommonKVManager.try_ensure_parallel_info)"));
}

TEST(Disaggregated, ARatioThatDoesNotFitThePoolsNodesIsRefused) {
  EXPECT_THAT(
      ErrorsOf("[sweep.prefill]\nhosts = [\"n0\"]\ntp = 8\n"
               "[sweep.decode]\nhosts = [\"n1\", \"n2\", \"n3\"]\ninstances = 2\ntp = 8\n"),
      ElementsAre("/s/pd.toml:18:1: key 'sweep.decode': the decode pool's 2xPP1/TP8/EP1 uses 16 "
                  "GPUs but its 3 hosts x 8 have 24; instances x PP x TP must equal the pool's "
                  "GPUs",
                  "/s/pd.toml:18:1: key 'sweep.decode': the decode pool runs 2 instances on 3 "
                  "hosts; each instance needs whole nodes of its own, so the instance count "
                  "must divide the pool's host count"));
}

TEST(Disaggregated, APoolThatCannotHoldTheModelIsRefused) {
  const std::vector<std::string> errors = ErrorsOf(
      "[sweep.prefill]\nhosts = [\"n0\"]\ntp = 8\nargs = {mem-fraction-static = 0.5}\n"
      "[sweep.decode]\nhosts = [\"n1\"]\ntp = 8\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("/s/pd.toml:15:1: key 'sweep.prefill': PP1/TP8/EP1 "));
  EXPECT_THAT(errors[0], HasSubstr("mem_fraction_static"));
}

TEST(Disaggregated, PlanTextShowsBothPoolsAndTheirPdSettings) {
  const std::string text = RenderDisaggregatedText(PlanOf(kOnePrefillThreeDecode));
  EXPECT_THAT(text, HasSubstr("# transfer  mooncake, bootstrap port 8998, IB devices detected "
                              "by SGLang\n# router    cache_aware on port 8000\n"
                              "# prefill   PP1/TP8/EP8 on n0 (8 GPUs)\n"
                              "# decode    3xPP1/TP8/EP8/DP8 on n1 n2 n3 (24 GPUs)\n"));
  EXPECT_THAT(text, HasSubstr("\n## prefill pool\n# ppsearch plan /s/pd.toml\n"));
  EXPECT_THAT(text, HasSubstr("# cluster  1 hosts x 8 GPUs = 8: n0\n"));
  EXPECT_THAT(text, HasSubstr("# cluster  3 hosts x 8 GPUs = 24: n1 n2 n3\n"));
  EXPECT_THAT(text, HasSubstr("  PD server       --disaggregation-mode decode\n"
                              "                  --disaggregation-transfer-backend mooncake "
                              "--disaggregation-bootstrap-port 8998\n"));
  EXPECT_THAT(text, HasSubstr("  transfer        1,024 metadata slots x 1,600 B"));
  EXPECT_THAT(text, HasSubstr("\n# disaggregated deployment valid (0 errors)\n"));
}

TEST(Disaggregated, JsonHoldsBothPoolsAndTheirPlans) {
  const nlohmann::json j = DisaggregatedToJson(PlanOf(kOnePrefillThreeDecode));
  EXPECT_EQ(j["transfer"]["backend"], "mooncake");
  EXPECT_EQ(j["transfer"]["router_policy"], "cache_aware");
  EXPECT_EQ(j["prefill"]["pd"]["mode"], "prefill");
  EXPECT_EQ(j["decode"]["hosts"], nlohmann::json({"n1", "n2", "n3"}));
  EXPECT_EQ(j["decode"]["metadata_slots"], 1024);
  EXPECT_EQ(j["decode"]["plan"]["layouts"][0]["dp"], 8);
  EXPECT_EQ(j["valid"], true);
  EXPECT_TRUE(j["errors"].empty());
}

}  // namespace
}  // namespace ppsearch::plan
