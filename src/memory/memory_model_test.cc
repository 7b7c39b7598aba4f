// SGLang's memory sizing rules against hand-worked numbers: the default
// static fraction, the KV pool, max_running_requests and per-stage peaks.

#include "memory/memory_model.h"

#include <gtest/gtest.h>

#include "memory/memory_testing.h"

namespace ppsearch::memory {
namespace {

constexpr double kBytesPerMib = 1024.0 * 1024.0;

// A stage's footprint. Its activations are given as 12,288 MiB (SGLang's own
// 1.5 MiB x 8192-token allowance, a round number for the hand-worked peaks);
// the real ones come from the model (activation_test.cc).
StageFootprint Stage(double weight_mib, double kv_bytes_per_token, double state_bytes,
                     double activation_mib = 12288) {
  StageFootprint f;
  f.weight_mib = weight_mib;
  f.kv_bytes_per_token = kv_bytes_per_token;
  f.state_bytes_per_request = state_bytes;
  f.activation.bytes = activation_mib * kBytesPerMib;
  f.activation.peak = "MoE experts (layer 1)";
  return f;
}

using testing::Inputs;

TEST(DefaultMemFractionStatic, RtxTp32Pp1Chunk8192) {
  // reserved = 512 + 8192 x 1.5 + 32 x 1 / 8 x 1024 + 512 (graph bs, tp >= 4) x 2
  //          = 512 + 12288 + 4096 + 1024 = 17920 MiB (above the 10 GiB floor)
  // (85651 - 17920) / 85651 = 67731 / 85651 = 0.79078 -> 0.791
  EXPECT_DOUBLE_EQ(DefaultMemFractionStatic(Inputs(85651, 32, 1, 8192)), 0.791);
}

TEST(DefaultMemFractionStatic, TpTimesPpIsWhatCounts) {
  // PP4 x TP8 reserves the same 4096 MiB for tp x pp = 32 as TP32: 0.791.
  EXPECT_DOUBLE_EQ(DefaultMemFractionStatic(Inputs(85651, 8, 4, 8192)), 0.791);
  // PP8 x TP4: 512 + 12288 + 4096 + 1024 again (tp 4 still captures bs 512).
  EXPECT_DOUBLE_EQ(DefaultMemFractionStatic(Inputs(85651, 4, 8, 8192)), 0.791);
}

TEST(DefaultMemFractionStatic, TenGibFloorOnLargeGpus) {
  // 512 + 2048 x 1.5 + 2 / 8 x 1024 + 256 x 2 = 512 + 3072 + 256 + 512 = 4352
  // -> raised to 10240 on a > 60 GiB GPU: (85651 - 10240) / 85651 = 0.88044 -> 0.880
  EXPECT_DOUBLE_EQ(DefaultMemFractionStatic(Inputs(85651, 2, 1, 2048)), 0.88);
  // A chunk below 2048 reserves for 2048 tokens: the same answer.
  EXPECT_DOUBLE_EQ(DefaultMemFractionStatic(Inputs(85651, 2, 1, 512)), 0.88);
}

TEST(DefaultMemFractionStatic, SmallGpuHasNoFloor) {
  // 48 GiB = 49152 MiB: a 35-60 GiB GPU at tp < 4 captures decode up to bs 32:
  // 512 + 4096 x 1.5 + 1 / 8 x 1024 + 32 x 2 = 512 + 6144 + 128 + 64 = 6848;
  // (49152 - 6848) / 49152 = 0.86068 -> 0.861
  EXPECT_DOUBLE_EQ(DefaultMemFractionStatic(Inputs(49152, 1, 1, 4096)), 0.861);
}

TEST(DefaultMemFractionStatic, UserGraphBatchSize) {
  // cuda_graph_max_bs 160: 512 + 12288 + 4096 + 320 = 17216;
  // (85651 - 17216) / 85651 = 68435 / 85651 = 0.79899 -> 0.799
  MemoryInputs in = Inputs(85651, 32, 1, 8192);
  in.cuda_graph_max_bs = 160;
  EXPECT_DOUBLE_EQ(DefaultMemFractionStatic(in), 0.799);
}

// Two stages on an 80000 MiB GPU with mem_fraction_static 0.8:
//   pre-load free = 80000 - 1500 = 78500; slack = 78500 x 0.2 = 15700
//   budget = 78500 - 40000 (heaviest stage) - 15700 = 22800 MiB
//   stage 0: 22800 MiB / 100 KiB per token = 233,472 tokens
//   stage 1: 22800 MiB / 50 KiB per token  = 466,944 tokens -> MIN 233,472
// A context of 32,764 tokens makes a request's table row (context + 4)
// x 4 B = 128 KiB: the table is (max_running_requests + 1) / 8 MiB.
MemoryInputs TwoStages() {
  MemoryInputs in = Inputs(80000, 4, 2, 8192);
  in.mem_fraction_static = 0.8;
  in.context_len = 32764;
  in.stages = {Stage(40000, 102400, 0), Stage(38000, 51200, 0)};
  return in;
}

TEST(PlanMemory, KvPoolIsTheMinOverStages) {
  MemoryPlan plan = PlanMemory(TwoStages());
  EXPECT_DOUBLE_EQ(plan.mem_fraction_static, 0.8);
  EXPECT_DOUBLE_EQ(plan.pre_load_free_mib, 78500);
  EXPECT_TRUE(plan.fits);
  EXPECT_EQ(plan.max_total_tokens, 233472);
  EXPECT_EQ(plan.state_slots, 0);
}

TEST(PlanMemory, WorkspaceAddsToEveryPeakNotToThePools) {
  MemoryInputs in = TwoStages();
  const MemoryPlan without = PlanMemory(in);
  in.workspace_mib = 6500;
  const MemoryPlan with = PlanMemory(in);
  EXPECT_EQ(with.max_total_tokens,
            without.max_total_tokens);  // pools come from mem_fraction_static
  ASSERT_EQ(with.stages.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_DOUBLE_EQ(with.stages[i].workspace_mib, 6500);
    EXPECT_DOUBLE_EQ(with.stages[i].peak_mib, without.stages[i].peak_mib + 6500);
    EXPECT_DOUBLE_EQ(with.stages[i].headroom_mib, without.stages[i].headroom_mib - 6500);
  }
  EXPECT_DOUBLE_EQ(with.peak_mib_max, without.peak_mib_max + 6500);
}

TEST(PlanMemory, PeaksPerStageHandWorked) {
  MemoryPlan plan = PlanMemory(TwoStages());
  ASSERT_EQ(plan.stages.size(), 2u);
  // stage 0: runtime 1500 + weights 40000 + KV 233,472 x 100 KiB = 22800
  //          + activations 12288 (the stage's own) + graphs 512 x 2 = 1024
  //          + request table (3648 + 1) / 8 = 456.125 -> 78068.125
  // stage 1: 1500 + 38000 + 233,472 x 50 KiB = 11400 + 12288 + 1024 + 456.125 -> 64668.125
  const StageMemory& s0 = plan.stages[0];
  EXPECT_DOUBLE_EQ(s0.runtime_mib, 1500);
  EXPECT_DOUBLE_EQ(s0.weight_mib, 40000);
  EXPECT_DOUBLE_EQ(s0.kv_pool_mib, 22800);
  EXPECT_DOUBLE_EQ(s0.state_pool_mib, 0);
  EXPECT_DOUBLE_EQ(s0.activation_mib, 12288);
  EXPECT_DOUBLE_EQ(s0.graph_mib, 1024);
  EXPECT_DOUBLE_EQ(s0.request_table_mib, 456.125);
  EXPECT_DOUBLE_EQ(s0.peak_mib, 78068.125);
  EXPECT_DOUBLE_EQ(s0.headroom_mib, 1931.875);
  EXPECT_DOUBLE_EQ(plan.stages[1].kv_pool_mib, 11400);
  EXPECT_DOUBLE_EQ(plan.stages[1].request_table_mib, 456.125);
  EXPECT_DOUBLE_EQ(plan.stages[1].peak_mib, 64668.125);
  EXPECT_DOUBLE_EQ(plan.stages[1].headroom_mib, 15331.875);
  EXPECT_DOUBLE_EQ(plan.peak_mib_max, 78068.125);
  EXPECT_DOUBLE_EQ(plan.peak_spread_mib, 78068.125 - 64668.125);
}

TEST(PlanMemory, MaxRunningRequestsClampRule) {
  // capacity / context x 512 = 233,472 x 512 / 32764 = 3648, inside [2048, 4096].
  EXPECT_EQ(PlanMemory(TwoStages()).max_running_requests, 3648);
  MemoryInputs long_context = TwoStages();
  long_context.context_len = 1000000;  // 233,472 x 512 / 1e6 = 119 -> raised to 2048
  EXPECT_EQ(PlanMemory(long_context).max_running_requests, 2048);
  MemoryInputs short_context = TwoStages();
  short_context.context_len = 1024;  // 116,736 -> capped at 4096
  EXPECT_EQ(PlanMemory(short_context).max_running_requests, 4096);
  MemoryInputs no_context = TwoStages();
  no_context.context_len = 0;  // unknown context: 4096
  EXPECT_EQ(PlanMemory(no_context).max_running_requests, 4096);
}

// With DP attention each rank's scheduler runs the user's requests / dp and
// holds a table for them: 64 / 4 = 16 rows and the padding row, 17 / 8 MiB.
TEST(PlanMemory, EachDpRankHoldsTheTableOfItsShareOfTheRequests) {
  MemoryInputs in = TwoStages();
  in.max_running_requests = 64;
  EXPECT_DOUBLE_EQ(PlanMemory(in).stages[0].request_table_mib, 65.0 / 8);
  in.dp_attention = true;
  in.dp_size = 4;
  EXPECT_DOUBLE_EQ(PlanMemory(in).stages[0].request_table_mib, 17.0 / 8);
}

TEST(PlanMemory, UserMaxRunningRequestsIsCappedByHalfTheCapacity) {
  MemoryInputs in = TwoStages();
  in.max_running_requests = 10000;  // taken as is: 10000 < 233,472 / 2
  EXPECT_EQ(PlanMemory(in).max_running_requests, 10000);
  in.max_running_requests = 200000;  // capped at 233,472 / 2 = 116,736
  EXPECT_EQ(PlanMemory(in).max_running_requests, 116736);
}

// --max-total-tokens caps the pool below what the memory leaves, and is
// ignored above it (model_runner_kv_cache_mixin.py init_memory).
TEST(PlanMemory, MaxTotalTokensCapsThePool) {
  // TwoStages leaves 233,472 tokens; a cap of 4096 allocates 4096:
  //   stage 0: 4096 x 100 KiB = 400 MiB, stage 1: 4096 x 50 KiB = 200 MiB.
  MemoryInputs in = TwoStages();
  in.max_total_tokens = 4096;
  MemoryPlan plan = PlanMemory(in);
  EXPECT_EQ(plan.max_total_tokens, 4096);
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_DOUBLE_EQ(plan.stages[0].kv_pool_mib, 400);
  EXPECT_DOUBLE_EQ(plan.stages[1].kv_pool_mib, 200);
  // stage 0's peak: 1500 + 40000 + 400 + 12288 + 1024 + (2048 + 1) / 8 = 55468.125 MiB.
  EXPECT_DOUBLE_EQ(plan.stages[0].peak_mib, 55468.125);
  // max_running_requests comes from the profiled 233,472 (3648), then is
  // capped at half the allocated pool: 2048.
  EXPECT_EQ(plan.max_running_requests, 2048);
  // A cap above what the memory leaves changes nothing.
  in.max_total_tokens = 1000000;
  EXPECT_EQ(PlanMemory(in).max_total_tokens, 233472);
}

TEST(PlanMemory, SmallKvPoolCapsRequestsAtHalfItsTokens) {
  // budget = 78500 - 40000 - 15700 = 22800 MiB; 8 MiB per token -> 2850 tokens;
  // the clamp's 2048 is capped by 2850 / 2 = 1425.
  MemoryInputs in = TwoStages();
  in.stages = {Stage(40000, 8 * kBytesPerMib, 0)};
  MemoryPlan plan = PlanMemory(in);
  EXPECT_EQ(plan.max_total_tokens, 2850);
  EXPECT_EQ(plan.max_running_requests, 1425);
}

// The state pool of SGLang v0.5.18 (memory/state_pool.h) on TwoStages with
// 8 and 4 MiB of state per request: it takes 0.9 / 1.9 of the 22,800 MiB
// budget, 10,800 MiB, in slots of the largest stage's 8 MiB plus a padding
// slot: floor((10,800 - 8) / 8) = 1349 slots, 1350 x 8 = 10,800 MiB charged.
// KV: 22,800 - 10,800 = 12,000 MiB / 100 KiB = 122,880 tokens. Requests:
// 122,880 x 512 / 32764 = 1920 -> raised to 2048, then the 1349 slots at 3
// per request cap them at 449.
MemoryInputs HybridStages() {
  MemoryInputs in = TwoStages();
  in.stages[0].state_bytes_per_request = 8 * kBytesPerMib;
  in.stages[1].state_bytes_per_request = 4 * kBytesPerMib;
  in.state_pool.slots_per_request = 3;
  return in;
}

TEST(PlanMemory, LinearAttentionStateTakesItsRatioOfTheBudgetFirst) {
  MemoryPlan plan = PlanMemory(HybridStages());
  EXPECT_TRUE(plan.fits) << plan.refusal;
  EXPECT_EQ(plan.state_slots, 1349);
  EXPECT_EQ(plan.state_slots_per_request, 3);
  EXPECT_EQ(plan.max_total_tokens, 122880);
  EXPECT_EQ(plan.max_running_requests, 449);
  // Each stage allocates the slots and the padding slot for its own layers.
  EXPECT_DOUBLE_EQ(plan.stages[0].state_pool_mib, 10800);  // 1350 x 8 MiB
  EXPECT_DOUBLE_EQ(plan.stages[1].state_pool_mib, 5400);   // 1350 x 4 MiB
  EXPECT_DOUBLE_EQ(plan.stages[0].kv_pool_mib, 12000);     // 122,880 x 100 KiB
  // 1500 + 40000 + 12000 + 10800 + (449 + 1) / 8 + 12288 + 1024 = 77668.25
  EXPECT_DOUBLE_EQ(plan.stages[0].peak_mib, 77668.25);
}

TEST(PlanMemory, StateSlotsAreWhatTheBudgetHoldsWithNoFixedCap) {
  // 1 MiB per request: floor((10,800 - 1) / 1) = 10,799 slots, far past
  // the 4,096 an older model of this pool capped them at.
  MemoryInputs in = HybridStages();
  in.stages[0].state_bytes_per_request = kBytesPerMib;
  in.stages[1].state_bytes_per_request = 0;
  MemoryPlan plan = PlanMemory(in);
  EXPECT_EQ(plan.state_slots, 10799);
  EXPECT_EQ(plan.max_total_tokens, 12000 * 1024 / 100);  // 12,000 MiB / 100 KiB
}

TEST(PlanMemory, BeforeV0517EveryStagePaidForTheWholeModelsState) {
  // The whole model keeps 24 MiB per request: floor(10,800 / 24) = 450
  // slots, 450 x 24 = 10,800 MiB charged on every rank, yet stage 0
  // allocates (450 + 1) x 8 MiB = 3608 and stage 1 451 x 4 = 1804: the rest
  // of the state budget stays unused.
  MemoryInputs in = HybridStages();
  in.state_pool.whole_model_per_stage = true;
  in.state_pool.whole_model_bytes_per_request = 24 * kBytesPerMib;
  MemoryPlan plan = PlanMemory(in);
  EXPECT_EQ(plan.state_slots, 450);
  EXPECT_EQ(plan.max_total_tokens, 122880);
  EXPECT_EQ(plan.max_running_requests, 150);  // 450 slots / 3 per request
  EXPECT_DOUBLE_EQ(plan.stages[0].state_pool_mib, 3608);
  EXPECT_DOUBLE_EQ(plan.stages[1].state_pool_mib, 1804);
  const MemoryPlan now = PlanMemory(HybridStages());
  EXPECT_GT(plan.stages[0].headroom_mib, now.stages[0].headroom_mib + 7000);
}

TEST(PlanMemory, UsersSlotsOrRequestsSetThePool) {
  MemoryInputs in = HybridStages();
  in.state_pool.max_cache_size = 1000;  // 1001 x 8 = 8008 MiB charged
  MemoryPlan plan = PlanMemory(in);
  EXPECT_EQ(plan.state_slots, 1000);
  EXPECT_EQ(plan.max_total_tokens, static_cast<int64_t>((22800 - 8008) * 1024.0 / 100));
  EXPECT_EQ(plan.max_running_requests, 333);  // 1000 / 3
  in.dp_size = 2;                             // a whole server's count, split over the DP ranks
  EXPECT_EQ(PlanMemory(in).state_slots, 500);
  // With the radix cache off, --max-running-requests sets the slots.
  MemoryInputs no_radix = HybridStages();
  no_radix.state_pool.radix_cache = false;
  no_radix.state_pool.slots_per_request = 1;
  no_radix.max_running_requests = 64;
  const MemoryPlan sized = PlanMemory(no_radix);
  EXPECT_EQ(sized.state_slots, 64);
  EXPECT_EQ(sized.max_running_requests, 64);
  EXPECT_DOUBLE_EQ(sized.stages[0].state_pool_mib, 65 * 8);
  no_radix.dp_size = 2;  // each DP rank takes its share of the requests
  EXPECT_EQ(PlanMemory(no_radix).state_slots, 32);
}

// resolve_max_num_reqs: a user's --max-running-requests is the whole
// server's; each DP attention rank takes max_running_requests // dp
// (requested_per_worker), and its request table holds that many rows and a
// padding row.
TEST(PlanMemory, AUsersRequestCapIsSplitOverTheDpRanks) {
  MemoryInputs in = TwoStages();
  in.max_running_requests = 256;
  in.dp_size = 4;
  const MemoryPlan plan = PlanMemory(in);
  EXPECT_EQ(plan.max_running_requests, 64);
  EXPECT_DOUBLE_EQ(plan.stages[0].request_table_mib, 65.0 / 8);
  // A hybrid model: its state cap is per rank too (1349 slots / 3 = 449).
  MemoryInputs hybrid = HybridStages();
  hybrid.max_running_requests = 1024;
  hybrid.dp_size = 2;
  EXPECT_EQ(PlanMemory(hybrid).max_running_requests, 449);
  hybrid.dp_size = 4;
  EXPECT_EQ(PlanMemory(hybrid).max_running_requests, 256);
}

// disaggregation/decode.py HybridMambaDecodeReqToTokenPool: a decode
// server's state pool holds at least (running + pre-allocated) x (1 +
// ping-pong) slots, whatever the budget sized.
TEST(PlanMemory, APdDecodeServerRaisesItsStatePoolForItsPreAllocatedRequests) {
  MemoryInputs in = HybridStages();
  in.state_pool.max_cache_size = 60;  // 61 x 8 = 488 MiB charged to the budget
  in.state_pool.decode_slots_per_request = 3;
  in.max_running_requests = 16;  // 60 / 3 = 20 would allow more
  in.request_table_extra_rows = 32;
  const MemoryPlan aggregated = PlanMemory(in);
  EXPECT_EQ(aggregated.state_slots, 60);
  EXPECT_DOUBLE_EQ(aggregated.stages[0].state_pool_mib, 61 * 8);
  in.pd_decode = true;
  const MemoryPlan decode = PlanMemory(in);
  EXPECT_EQ(decode.max_running_requests, 16);
  EXPECT_EQ(decode.state_slots, 144);  // (16 + 32) x 3
  EXPECT_DOUBLE_EQ(decode.stages[0].state_pool_mib, 145 * 8);
  EXPECT_DOUBLE_EQ(decode.stages[1].state_pool_mib, 145 * 4);
  // The KV pool was sized first: the raise comes out of the headroom.
  EXPECT_EQ(decode.max_total_tokens, aggregated.max_total_tokens);
  EXPECT_DOUBLE_EQ(aggregated.stages[0].headroom_mib - decode.stages[0].headroom_mib, 84 * 8);
  // A pool the budget already made large enough is left as it is.
  MemoryInputs roomy = HybridStages();
  roomy.pd_decode = true;
  roomy.state_pool.decode_slots_per_request = 3;
  roomy.max_running_requests = 16;
  roomy.request_table_extra_rows = 32;
  EXPECT_EQ(PlanMemory(roomy).state_slots, 1349);
}

TEST(PlanMemory, AStrategySglangRefusesIsARefusal) {
  MemoryInputs in = HybridStages();
  in.state_pool.rule_refusal = "no_buffer only supports page_size=1.";
  const MemoryPlan plan = PlanMemory(in);
  EXPECT_FALSE(plan.fits);
  EXPECT_TRUE(plan.sglang_refuses);
  EXPECT_EQ(plan.state_refusal, MemoryPlan::StateRefusal::kSetting);
  EXPECT_EQ(plan.refusal, "no_buffer only supports page_size=1.");
  // A model without state has no state pool to refuse.
  MemoryInputs plain = TwoStages();
  plain.state_pool.rule_refusal = "no_buffer only supports page_size=1.";
  EXPECT_TRUE(PlanMemory(plain).fits);
}

TEST(PlanMemory, NoStateSlotIsRefusedInSglangsWords) {
  // Weights of 62,790 MiB leave 10 MiB; 0.9 / 1.9 of it is 4.74 MiB, short
  // of one 8 MiB state and its padding slot: floor((4.74 - 8) / 8) = -1.
  MemoryInputs in = HybridStages();
  in.stages[0].weight_mib = 62790;
  MemoryPlan plan = PlanMemory(in);
  EXPECT_FALSE(plan.fits);
  EXPECT_TRUE(plan.sglang_refuses);
  EXPECT_EQ(plan.refusal,
            "Not enough GPU memory for hybrid (mamba/linear-attention) state cache. Computed "
            "max_mamba_cache_size=-1 (total_rest_memory=0.01 GB, mamba_cache_per_req=8.00 MB). "
            "Try: (1) reduce --max-running-requests, (2) increase --mem-fraction-static, (3) "
            "reduce --speculative-num-draft-tokens, or (4) use GPUs with more memory.");
  // Two slots at 3 per request serve no request.
  MemoryInputs two = HybridStages();
  two.state_pool.max_cache_size = 2;
  const MemoryPlan none = PlanMemory(two);
  EXPECT_FALSE(none.fits);
  EXPECT_EQ(none.refusal,
            "Hybrid (mamba/linear-attention) state cache is too small to serve any requests. "
            "max_mamba_cache_size=2, mamba_ratio=3, resulting max_num_reqs=0. Try: (1) reduce "
            "--max-running-requests, (2) increase --mem-fraction-static, or (3) use GPUs with more "
            "memory.");
}

TEST(PlanMemory, DoesNotFitWhenWeightsExceedTheBudget) {
  // budget = 78500 - 70000 - 15700 = -7200 MiB
  MemoryInputs in = TwoStages();
  in.stages[0].weight_mib = 70000;
  MemoryPlan plan = PlanMemory(in);
  EXPECT_FALSE(plan.fits);
  EXPECT_EQ(plan.max_total_tokens, 0);
  EXPECT_EQ(plan.max_running_requests, 1);
  EXPECT_DOUBLE_EQ(plan.stages[0].kv_pool_mib, 0);
}

// kv_cache_configurator.py: minimum viable = 1 - available / pre = weights /
// pre = 70000 / 78500 = 0.89172 -> "above 0.892".
TEST(PlanMemory, NoKvRoomIsRefusedInSglangsWords) {
  MemoryInputs in = TwoStages();
  in.stages[0].weight_mib = 70000;
  MemoryPlan plan = PlanMemory(in);
  EXPECT_FALSE(plan.fits);
  EXPECT_TRUE(plan.sglang_refuses);
  EXPECT_EQ(plan.refusal,
            "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.8. "
            "Raise --mem-fraction-static above 0.892 (minimum viable = 1 - available/pre = "
            "0.8917).");
  // Headroom 80000 - (1500 + 70000 + 12288 + 1024 + a request table of
  // (1 + 1) / 8 MiB) = -4812.25 on stage 0.
  EXPECT_EQ(plan.tightest_stage, 0);
  EXPECT_DOUBLE_EQ(plan.stages[0].headroom_mib, -4812.25);
}

// A budget of 22,800 MiB holds no token of 30,000 MiB: pool_configurator.py's
// RuntimeError.
TEST(PlanMemory, APoolOfNoTokenIsRefused) {
  MemoryInputs in = TwoStages();
  in.stages = {Stage(40000, 30000 * kBytesPerMib, 0)};
  MemoryPlan plan = PlanMemory(in);
  EXPECT_FALSE(plan.fits);
  EXPECT_TRUE(plan.sglang_refuses);
  EXPECT_EQ(plan.refusal,
            "Not enough memory. Please try to increase --mem-fraction-static. Current value: "
            "mem_fraction_static=0.8");
}

// mem_fraction_static 0.99 leaves SGLang 78500 x 0.99 - 40000 = 37,715 MiB of
// pool, but stage 0's 1500 + 40000 + 40000 (activations) + 1024 = 82,524 MiB
// exceed the 80,000 MiB GPU before any KV cache.
TEST(PlanMemory, ActivationsThatFillTheGpuLeaveNoKvRoom) {
  MemoryInputs in = TwoStages();
  in.mem_fraction_static = 0.99;
  in.stages[0] = Stage(40000, 102400, 0, 40000);
  MemoryPlan plan = PlanMemory(in);
  EXPECT_FALSE(plan.fits);
  EXPECT_FALSE(plan.sglang_refuses);
  EXPECT_EQ(plan.refusal,
            "stage 0 needs 82524 MiB without any KV cache (weights 40000, activations 40000, CUDA "
            "graphs 1024, CUDA context and NCCL 1500) of the GPU's 80000 MiB; no "
            "--mem-fraction-static leaves room for the KV cache");
  in.stages[0] = Stage(40000, 102400, 0, 30000);  // 72,524 MiB: room is left
  EXPECT_TRUE(PlanMemory(in).fits);
}

// TwoStages: headroom 2388 (stage 0) and 15788 (stage 1). Against stage 1,
// stage 0 has 2000 MiB more layer weights and 22800 - 11400 = 11,400 MiB more
// KV cache (twice the bytes per token for the same token count).
TEST(PlanMemory, TightestStageAndWhy) {
  MemoryPlan plan = PlanMemory(TwoStages());
  EXPECT_EQ(plan.tightest_stage, 0);
  EXPECT_EQ(plan.tightest_reason, "KV cache: +11,400 MiB over stage 1");
  // Equal KV; stage 1 builds the LM head (3000 MiB of its 43000): its layer
  // weights match stage 0's 40000, the LM head is the difference.
  MemoryInputs in = TwoStages();
  in.stages = {Stage(40000, 51200, 0), Stage(43000, 51200, 0)};
  in.stages[0].num_layers = in.stages[1].num_layers = 10;
  in.stages[1].lm_head_mib = 3000;
  plan = PlanMemory(in);
  EXPECT_EQ(plan.tightest_stage, 1);
  EXPECT_EQ(plan.tightest_reason, "LM head weights: +3,000 MiB over stage 0");
  // Alike but for stage 1's activations (14000 MiB, set by its logits).
  in.stages = {Stage(40000, 51200, 0), Stage(40000, 51200, 0, 14000)};
  in.stages[1].activation.peak = "LM head logits";
  plan = PlanMemory(in);
  EXPECT_EQ(plan.tightest_stage, 1);
  EXPECT_EQ(plan.tightest_reason, "activations, LM head logits: +1,712 MiB over stage 0");
  in.stages = {Stage(40000, 51200, 0), Stage(40000, 51200, 0)};
  EXPECT_EQ(PlanMemory(in).tightest_reason, "all stages alike");
  in.stages.resize(1);
  EXPECT_EQ(PlanMemory(in).tightest_reason, "the only stage");
}

TEST(PlanMemory, ActivationsAreEachStagesOwn) {
  MemoryInputs in = TwoStages();
  in.stages[1] = Stage(38000, 51200, 0, 3000);
  in.stages[1].activation.peak = "KDA attention (layer 5)";
  MemoryPlan plan = PlanMemory(in);
  EXPECT_DOUBLE_EQ(plan.stages[0].activation_mib, 12288);
  EXPECT_DOUBLE_EQ(plan.stages[1].activation_mib, 3000);
  EXPECT_EQ(plan.stages[1].activation_peak, "KDA attention (layer 5)");
  // 1500 + 38000 + 11400 + 3000 + 1024 + 456.125 (request table) = 55380.125
  EXPECT_DOUBLE_EQ(plan.stages[1].peak_mib, 55380.125);
}

TEST(DefaultReservedMib, SglangsAllowanceNotTheModels) {
  // 512 + 8192 x 1.5 + 32 / 8 x 1024 + 512 x 2 = 17920 MiB
  EXPECT_DOUBLE_EQ(DefaultReservedMib(Inputs(85651, 32, 1, 8192)), 17920);
  // 512 + 3072 + 128 + 32 x 2 = 3776 on a 40,000 MiB GPU (no 10 GiB floor;
  // below 60 GiB a tp < 4 server captures decode up to bs 32)
  EXPECT_DOUBLE_EQ(DefaultReservedMib(Inputs(40000, 1, 1, 1024)), 3776);
}

TEST(PlanMemory, DefaultFractionWhenTheUserGivesNone) {
  MemoryInputs in = TwoStages();
  in.mem_fraction_static.reset();
  // tp 4 x pp 2 = 8: 512 + 12288 + 1024 + 1024 = 14848; (80000 - 14848) / 80000
  // = 0.8144 -> 0.814
  MemoryPlan plan = PlanMemory(in);
  EXPECT_DOUBLE_EQ(plan.mem_fraction_static, 0.814);
  EXPECT_DOUBLE_EQ(plan.mem_fraction_static, DefaultMemFractionStatic(in));
}

TEST(PlanMemory, OneStageHasNoSpread) {
  MemoryInputs in = TwoStages();
  in.stages.resize(1);
  MemoryPlan plan = PlanMemory(in);
  EXPECT_DOUBLE_EQ(plan.peak_spread_mib, 0);
  EXPECT_DOUBLE_EQ(plan.peak_mib_max, plan.stages[0].peak_mib);
}

TEST(PlanMemory, HigherFractionGrowsTheKvPool) {
  int64_t previous = -1;
  for (double f : {0.6, 0.7, 0.8, 0.85, 0.9}) {
    MemoryInputs in = TwoStages();
    in.mem_fraction_static = f;
    const int64_t tokens = PlanMemory(in).max_total_tokens;
    EXPECT_GT(tokens, previous) << f;
    previous = tokens;
  }
}

}  // namespace
}  // namespace ppsearch::memory
