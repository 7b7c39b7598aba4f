#include "sglang_log/sglang_log.h"

#include <gtest/gtest.h>

#include "hardware/hardware.h"
#include "model/hf_config.h"
#include "ppsearch_source_dir.h"

namespace ppsearch::sglang_log {
namespace {

std::string Data(const std::string& rel) { return std::string(PPSEARCH_SOURCE_DIR) + "/" + rel; }

// A hand-made memory plan whose numbers are easy to work by hand: 78.50 GiB
// free before weights, 40 GiB of weights, 20 GiB of KV, 1 GiB of graphs.
memory::MemoryPlan HandPlan() {
  memory::MemoryPlan m;
  m.pre_load_free_mib = 80384;
  m.max_total_tokens = 100000;
  m.max_running_requests = 256;
  memory::StageMemory s;
  s.weight_mib = 40960;
  s.kv_pool_mib = 20480;
  s.graph_mib = 1024;
  m.stages = {s, s};
  return m;
}

struct Case {
  const char* model;
  const char* gpu;
};

LogSetup SetupFor(const Case& c) {
  auto model = model::LoadModel(Data(c.model));
  EXPECT_TRUE(model.ok()) << model.error().message;
  auto hw = hardware::LoadHardwareProfile(c.gpu);
  EXPECT_TRUE(hw.ok()) << hw.error().message;
  return MakeLogSetup(*model, *hw, HandPlan(), 8, 2, 8192, 16384, 32);
}

TEST(ModelClassNameTest, FromTheModelType) {
  model::ModelDesc m;
  m.model_type = "kimi_k3";
  EXPECT_EQ(ModelClassName(m), "KimiK3ForConditionalGeneration");
  m.model_type = "kimi_k2";
  EXPECT_EQ(ModelClassName(m), "DeepseekV3ForCausalLM");
  m.model_type = "qwen3_moe";
  EXPECT_EQ(ModelClassName(m), "Qwen3MoeForCausalLM");
  m.model_type = "glm4_moe";
  EXPECT_EQ(ModelClassName(m), "Glm4MoeForCausalLM");
}

TEST(LogSetupTest, DerivedFromModelAndGpu) {
  const LogSetup qwen = SetupFor({"data/models/qwen3-235b-a22b", "h20"});
  EXPECT_EQ(qwen.model_class, "Qwen3MoeForCausalLM");
  EXPECT_EQ(qwen.context_len, 40960);
  EXPECT_EQ(qwen.hidden_size, 4096);
  EXPECT_EQ(qwen.gpu_total_mib, 97871);
  EXPECT_FALSE(qwen.mla);
  const LogSetup kimi = SetupFor({"data/models/kimi-k3", "rtx-6000d"});
  EXPECT_EQ(kimi.model_class, "KimiK3ForConditionalGeneration");
  EXPECT_EQ(kimi.context_len, 1048576);
  EXPECT_EQ(kimi.hidden_size, 7168);
  EXPECT_EQ(kimi.gpu_total_mib, 85651);
}

TEST(StageStartupLinesTest, HandWorkedNumbersQwen3OnH20) {
  const LogSetup s = SetupFor({"data/models/qwen3-235b-a22b", "h20"});
  const auto lines = StageStartupLines(s, 1);
  ASSERT_EQ(lines.size(), 7u);
  for (const auto& l : lines) EXPECT_EQ(l.prefix, " PP1 TP0");
  // 97871 MiB total - 80384 free = 17487 MiB = 17.08 GiB before weights.
  EXPECT_EQ(lines[1].message, "Init torch distributed ends. elapsed=0.50 s, mem usage=17.08 GB");
  EXPECT_EQ(lines[2].message, "Load weight begin. avail mem=78.50 GB");
  // 40 GiB at 2 GiB/s.
  EXPECT_EQ(lines[3].message,
            "Load weight end. elapsed=20.00 s, type=Qwen3MoeForCausalLM, avail mem=38.50 GB, mem "
            "usage=40.00 GB.");
  EXPECT_EQ(lines[4].message,
            "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 100000, K size: 10.00 GB, V "
            "size: 10.00 GB");
  EXPECT_EQ(lines[5].message, "Memory pool end. avail mem=18.50 GB");
  EXPECT_EQ(lines[6].message,
            "max_total_num_tokens=100000, chunked_prefill_size=8192, max_prefill_tokens=16384, "
            "max_running_requests=256, context_len=40960, available_gpu_mem=17.50 GB");
}

TEST(StageStartupLinesTest, HandWorkedNumbersKimiK3OnRtx6000d) {
  const LogSetup s = SetupFor({"data/models/kimi-k3", "rtx-6000d"});
  const auto lines = StageStartupLines(s, 0);
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[0].prefix, " PP0 TP0");
  LogSetup ep = s;
  ep.ep_size = 8;  // SGLang adds the MoE EP rank when ep_size > 1
  EXPECT_EQ(StageStartupLines(ep, 1)[0].prefix, " PP1 TP0 EP0");
  // 85651 - 80384 = 5267 MiB = 5.14 GiB.
  EXPECT_EQ(lines[1].message, "Init torch distributed ends. elapsed=0.50 s, mem usage=5.14 GB");
  EXPECT_EQ(lines[3].message,
            "Load weight end. elapsed=20.00 s, type=KimiK3ForConditionalGeneration, avail "
            "mem=38.50 GB, mem usage=40.00 GB.");
  EXPECT_EQ(lines[4].message,
            "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 100000, KV size: 20.00 GB");
  EXPECT_EQ(lines[6].message,
            "max_total_num_tokens=100000, chunked_prefill_size=8192, max_prefill_tokens=16384, "
            "max_running_requests=256, context_len=1048576, available_gpu_mem=17.50 GB");
  EXPECT_TRUE(StageStartupLines(s, 2).empty());
}

TEST(FaultTextTest, OomCapacityIsTheGpusOwn) {
  const std::string h20 = FaultText("oom", SetupFor({"data/models/qwen3-235b-a22b", "h20"}), 0, "");
  // 97871 MiB = 95.58 GiB; in use 95.58 - 1.12 free; PyTorch 1.31 GiB less.
  EXPECT_NE(h20.find("GPU 0 has a total capacity of 95.58 GiB of which 1.12 GiB is free. "
                     "Including non-PyTorch memory, this process has 94.46 GiB memory in use. Of "
                     "the allocated memory 93.15 GiB is allocated by PyTorch"),
            std::string::npos)
      << h20;
  const std::string rtx = FaultText("oom", SetupFor({"data/models/kimi-k3", "rtx-6000d"}), 0, "");
  EXPECT_NE(rtx.find("GPU 0 has a total capacity of 83.64 GiB of which 1.12 GiB is free. "
                     "Including non-PyTorch memory, this process has 82.52 GiB memory in use. Of "
                     "the allocated memory 81.21 GiB is allocated by PyTorch"),
            std::string::npos)
      << rtx;
  EXPECT_NE(rtx.find("Scheduler hit an exception: Traceback (most recent call last):"),
            std::string::npos);
}

TEST(FaultTextTest, NcclNumelIsChunkTokensTimesHidden) {
  const LogSetup qwen = SetupFor({"data/models/qwen3-235b-a22b", "h20"});
  EXPECT_EQ(NcclTimeoutNumel(qwen), 8192 * 4096);
  EXPECT_NE(FaultText("nccl", qwen, 0, "").find("NumelIn=33554432, NumelOut=33554432"),
            std::string::npos);
  LogSetup kimi = SetupFor({"data/models/kimi-k3", "rtx-6000d"});
  EXPECT_NE(FaultText("nccl", kimi, 0, "").find("NumelIn=58720256, NumelOut=58720256"),
            std::string::npos);
  kimi.chunked_prefill_size = -1;  // chunking off: one max_prefill_tokens batch
  EXPECT_EQ(NcclTimeoutNumel(kimi), 16384 * 7168);
}

TEST(FaultTextTest, EveryKindEndsInANewlineAndUnknownIsEmpty) {
  const LogSetup s = SetupFor({"data/models/kimi-k3", "rtx-6000d"});
  for (const char* kind : {"oom", "nccl", "traceback", "engine_exit", "start", "kv_transfer"}) {
    const std::string text = FaultText(kind, s, 0, " PP0 TP0");
    ASSERT_FALSE(text.empty()) << kind;
    EXPECT_EQ(text.back(), '\n') << kind;
  }
  EXPECT_NE(FaultText("start", s, 0, "")
                .find("RuntimeError: Error(s) in loading state_dict for "
                      "KimiK3ForConditionalGeneration"),
            std::string::npos);
  EXPECT_NE(FaultText("traceback", s, 0, "").find("pp_max_micro_batch_size=32"), std::string::npos);
  EXPECT_EQ(FaultText("bogus", s, 0, ""), "");
}

TEST(LineTest, SglangFormat) {
  const std::string line = Line(0, " PP1", "hello");
  std::string expected = "[";
  expected += FormatTime(0);
  expected += " PP1] hello\n";
  EXPECT_EQ(line, expected);
  EXPECT_EQ(FormatTime(0).size(), 19u);
}

}  // namespace
}  // namespace ppsearch::sglang_log
