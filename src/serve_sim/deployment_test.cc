#include "serve_sim/deployment.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ppsearch_source_dir.h"
#include "serve_sim/gpu_registry.h"
#include "serve_sim/server_log.h"

namespace ppsearch::serve_sim {
namespace {

ServerArgs Qwen(int tp, int pp, int nnodes) {
  ServerArgs a;
  a.model_path = std::string(PPSEARCH_SOURCE_DIR) + "/data/models/qwen3-235b-a22b";
  a.tp_size = tp;
  a.pp_size = pp;
  a.nnodes = nnodes;
  if (nnodes > 1) a.dist_init_addr = "127.0.0.1:25000";
  return a;
}

TEST(DeploymentTest, SpecDescribesTheLaunchArguments) {
  ServerArgs a = Qwen(4, 2, 2);
  a.chunked_prefill_size = 4096;
  spec::Spec s = SpecFromArgs(a);
  ASSERT_EQ(s.cluster.hosts.size(), 2u);
  EXPECT_EQ(s.cluster.hosts[1].name, "node1");
  EXPECT_EQ(s.cluster.gpus_per_node, 4);
  EXPECT_EQ(s.engine.ArgInt("chunked-prefill-size"), 4096);
  ASSERT_EQ(s.sweep.layouts.size(), 1u);
  EXPECT_EQ(s.sweep.layouts[0].Label(), "PP2/TP4/EP1");
}

// The flags serve-sim does not serve itself still size SGLang's memory:
// Kimi K3's state pool gives each request more slots with the radix cache
// on than without (_calculate_mamba_ratio), so --disable-radix-cache, as
// the K3 search passes it, admits more requests, and the planner reads it
// as it reads a spec's [engine.args].
TEST(DeploymentTest, FlagsItDoesNotServeStillSizeTheMemory) {
  ServerArgs a;
  a.model_path = "/models/kimi-k3";
  a.model_config = std::string(PPSEARCH_SOURCE_DIR) + "/data/models/kimi-k3";
  a.hardware = "rtx-6000d";
  a.tp_size = 8;
  a.pp_size = 4;
  a.ep_size = 4;
  a.nnodes = 4;
  a.dist_init_addr = "127.0.0.1:25000";
  a.extra_flags = {{"moe-a2a-backend", std::string("none")}, {"watchdog-timeout", "3600"}};
  auto radix = BuildDeployment(a);
  ASSERT_TRUE(radix.ok()) << radix.error().message;
  a.extra_flags.push_back({"disable-radix-cache", std::nullopt});
  const spec::Spec s = SpecFromArgs(a);
  EXPECT_EQ(s.engine.ArgInt("watchdog-timeout"), 3600);
  EXPECT_EQ(s.engine.ArgString("moe-a2a-backend"), "none");
  auto chunk = BuildDeployment(a);
  ASSERT_TRUE(chunk.ok()) << chunk.error().message;
  EXPECT_GT((*radix)->memory.state_slots_per_request, (*chunk)->memory.state_slots_per_request);
  EXPECT_GT((*chunk)->memory.max_running_requests, (*radix)->memory.max_running_requests);
}

// The variables SGLang reads that the model follows reach a simulated
// server's plan as they reach SGLang's: its environment's layer split
// splits its stages.
TEST(DeploymentTest, TheEnvironmentsLayerSplitSplitsTheStages) {
  ServerArgs a = Qwen(4, 2, 2);
  auto even = BuildDeployment(a);
  ASSERT_TRUE(even.ok()) << even.error().message;
  a.engine_env = {{"SGLANG_PP_LAYER_PARTITION", "40,54"}};
  auto split = BuildDeployment(a);
  ASSERT_TRUE(split.ok()) << split.error().message;
  ASSERT_EQ((*split)->plan.stages.size(), 2u);
  EXPECT_EQ((*split)->plan.stages[0].end_layer - (*split)->plan.stages[0].first_layer, 40);
  EXPECT_EQ((*even)->plan.stages[0].end_layer - (*even)->plan.stages[0].first_layer, 47);
  a.engine_env = {{"SGLANG_PP_LAYER_PARTITION", "40,50"}};
  auto refused = BuildDeployment(a);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("sum(partitions)=90 does not match"), std::string::npos)
      << refused.error().message;
  // Named where it came from: the server's environment, not a spec.
  EXPECT_NE(refused.error().message.find(
                "does not fit the environment's SGLANG_PP_LAYER_PARTITION = \"40,50\""),
            std::string::npos)
      << refused.error().message;
}

TEST(DeploymentTest, TwoNodesHoldOneStageEach) {
  auto d = BuildDeployment(Qwen(4, 2, 2));
  ASSERT_TRUE(d.ok()) << d.error().message;
  const Deployment& dep = **d;
  EXPECT_EQ(StagesOnNode(dep, 0), std::vector<int>({0}));
  EXPECT_EQ(StagesOnNode(dep, 1), std::vector<int>({1}));
  EXPECT_GT(dep.memory.max_total_tokens, 0);
  EXPECT_EQ(dep.pp_max_micro_batch_size, std::max(dep.memory.max_running_requests / 2, 1));

  // After a full chunk whose prompts all end in it, the GPUs hold what the
  // plan's peak holds at most; before any batch, less (no activations).
  const int64_t chunk = dep.memory_inputs.stages[1].activation_shape.chunk_tokens;
  const memory::MemoryPlan full = ServedMemory(dep, {{{chunk, chunk}}, 0});
  auto gpus = NodeGpuMemory(dep, full, 1);
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_EQ(gpus[0].name, "NVIDIA RTX 6000D");
  EXPECT_DOUBLE_EQ(*gpus[0].total_mib, 85651);
  EXPECT_NEAR(*gpus[3].used_mib, full.stages[1].peak_mib, 1e-9);
  const memory::MemoryPlan idle = ServedMemory(dep, {});
  EXPECT_EQ(idle.max_total_tokens, dep.memory.max_total_tokens);  // the pools stay
  EXPECT_DOUBLE_EQ(idle.stages[1].activation_mib, 0);
  EXPECT_LT(*NodeGpuMemory(dep, idle, 1)[3].used_mib, *gpus[3].used_mib);
  // What /gpu_memory serves reads back through the nvidia-smi parser.
  auto parsed = nvidia_smi::ParseGpuMemoryCsv(nvidia_smi::FormatGpuMemoryCsv(gpus));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ((*parsed)[2].index, 2);
  // The uuids smi-sim gives the state directory's GPUs, so a GPU keeps its
  // uuid whether a registration describes it or not; per node without one.
  const auto registered = NodeGpuMemory(dep, full, 1, "/tmp/state/n1/");
  EXPECT_EQ(registered[3].uuid, SimGpuUuid(GpuUuidSeed("/tmp/state/n1"), 3));
  EXPECT_NE(gpus[3].uuid, NodeGpuMemory(dep, full, 0)[3].uuid);
}

TEST(DeploymentTest, StartupLinesCarryTheMemoryModelsNumbers) {
  ServerArgs a = Qwen(8, 1, 1);
  auto d = BuildDeployment(a);
  ASSERT_TRUE(d.ok()) << d.error().message;
  auto lines = StartupLines(a, **d, 0);
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[0].message, "Init torch distributed begin.");
  EXPECT_EQ(lines[0].prefix, " TP0");
  const std::string summary = lines.back().message;
  EXPECT_EQ(summary.rfind(
                fmt::format(
                    "max_total_num_tokens={}, chunked_prefill_size=8192, max_prefill_tokens=16384, "
                    "max_running_requests={}, context_len=",
                    (*d)->memory.max_total_tokens, (*d)->memory.max_running_requests),
                0),
            0u)
      << summary;
  bool kv_line = false;
  for (const auto& l : lines)
    kv_line |= l.message.find("KV Cache is allocated. dtype: torch.bfloat16, #tokens: " +
                              std::to_string((*d)->memory.max_total_tokens)) == 0;
  EXPECT_TRUE(kv_line);
}

TEST(DeploymentTest, RejectedLayoutNamesThePlannersError) {
  auto d = BuildDeployment(Qwen(3, 1, 1));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().message.rfind("SGLang would reject this layout:", 0), 0u)
      << d.error().message;
}

}  // namespace
}  // namespace ppsearch::serve_sim
