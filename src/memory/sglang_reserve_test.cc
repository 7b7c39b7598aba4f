// SGLang's reserve and its GPU-scaled defaults against hand-worked numbers
// (memory_hook.py handle_gpu_memory_settings, reserve_for_graph_mb,
// reserve_for_deepep_a2a_mb; cuda_graph_hook.py capture sizes).

#include "memory/sglang_reserve.h"

#include <gtest/gtest.h>

#include "memory/memory_testing.h"

namespace ppsearch::memory {
namespace {

constexpr double kH20Mib = 97871;  // nvidia-smi total of a 96 GB H20

using testing::Inputs;

TEST(SglangReserve, ChunkedPrefillSizeScalesWithGpuMemory) {
  EXPECT_EQ(DefaultChunkedPrefillSize(16 * 1024), 2048);    // T4
  EXPECT_EQ(DefaultChunkedPrefillSize(24 * 1024), 4096);    // 4090
  EXPECT_EQ(DefaultChunkedPrefillSize(46068), 4096);        // L40S
  EXPECT_EQ(DefaultChunkedPrefillSize(81559), 8192);        // H100
  EXPECT_EQ(DefaultChunkedPrefillSize(143771), 8192);       // H200
  EXPECT_EQ(DefaultChunkedPrefillSize(180 * 1024), 16384);  // B200
}

TEST(SglangReserve, DecodeGraphMaxBsScalesWithGpuMemoryAndTp) {
  EXPECT_EQ(DefaultDecodeGraphMaxBs(16 * 1024, 8), 8);
  EXPECT_EQ(DefaultDecodeGraphMaxBs(24 * 1024, 2), 48);
  EXPECT_EQ(DefaultDecodeGraphMaxBs(24 * 1024, 4), 160);
  EXPECT_EQ(DefaultDecodeGraphMaxBs(46068, 1), 32);
  EXPECT_EQ(DefaultDecodeGraphMaxBs(46068, 8), 160);
  EXPECT_EQ(DefaultDecodeGraphMaxBs(81559, 2), 256);
  EXPECT_EQ(DefaultDecodeGraphMaxBs(143771, 8), 512);
  EXPECT_EQ(DefaultDecodeGraphMaxBs(180 * 1024, 1), 512);
  MemoryInputs in = Inputs(kH20Mib, 8, 1, 8192);
  EXPECT_EQ(DecodeGraphMaxBs(in), 512);
  in.cuda_graph_max_bs = 160;  // the user's flag wins
  EXPECT_EQ(DecodeGraphMaxBs(in), 160);
}

TEST(SglangReserve, PrefillCaptureSizes) {
  // 4..32 by 4: 8; 48..256 by 16: 14; 288..512 by 32: 8; 576..1024 by 64: 8;
  // 1280..4096 by 256: 12; 4608..8192 by 512: 8 -> 58
  EXPECT_EQ(PrefillGraphCaptureCount(8192), 58);
  // up to 2048: 8 + 14 + 8 + 8 + (1280, 1536, 1792, 2048) = 42
  EXPECT_EQ(PrefillGraphCaptureCount(2048), 42);
  EXPECT_EQ(PrefillGraphCaptureCount(16384), 8 + 14 + 8 + 8 + 12 + 24);
  EXPECT_EQ(PrefillGraphCaptureCount(4), 1);
  EXPECT_EQ(PrefillGraphCaptureCount(3), 0);
}

TEST(SglangReserve, PrefillGraphMaxBs) {
  MemoryInputs in = Inputs(kH20Mib, 8, 1, 16384);
  EXPECT_EQ(PrefillGraphMaxBs(in), 16384);  // the chunk
  in.mla = true;
  EXPECT_EQ(PrefillGraphMaxBs(in), 2048);
  in.mla = false;
  in.pp = 4;  // a breakable prefill graph chosen at pp > 1 stops at 8192
  EXPECT_EQ(PrefillGraphMaxBs(in), 8192);
  in.prefill_graph_max_bs = 1024;
  EXPECT_EQ(PrefillGraphMaxBs(in), 1024);
}

TEST(SglangReserve, GraphReserve) {
  MemoryInputs in = Inputs(kH20Mib, 8, 1, 8192);
  // Decode only: 512 x 2.
  EXPECT_DOUBLE_EQ(GraphReserveMib(in), 1024);
  // A GQA model's prefill graph: 58 sizes x 8 = 464 more.
  in.prefill_graph = true;
  EXPECT_DOUBLE_EQ(GraphReserveMib(in), 1024 + 464);
  // MLA: 1.5 GiB instead.
  in.mla = true;
  EXPECT_DOUBLE_EQ(GraphReserveMib(in), 1024 + 1536);
  // With DeepEP, the breakable prefill graph's bridge pool: 1 GiB more.
  in.deepep = true;
  EXPECT_DOUBLE_EQ(GraphReserveMib(in), 1024 + 1536 + 1024);
  // No graphs, no reserve.
  in.decode_graph = false;
  in.prefill_graph = false;
  EXPECT_DOUBLE_EQ(GraphReserveMib(in), 0);
}

TEST(SglangReserve, DpAttentionPadding) {
  MemoryInputs in = Inputs(kH20Mib, 8, 1, 8192);
  in.dp_attention = true;
  in.dp_size = 8;
  // 512 x 2 + 512 x 8 x 3 + (512 > 300) 512 x 8 x 1.5 = 1024 + 12288 + 6144
  EXPECT_DOUBLE_EQ(GraphReserveMib(in), 19456);
  in.cuda_graph_max_bs = 256;
  // 256 x 2 + 256 x 8 x 3 = 512 + 6144 (no extra at or below 300)
  EXPECT_DOUBLE_EQ(GraphReserveMib(in), 6656);
}

TEST(SglangReserve, DeepEpBuffersOnlyWithTheDecodeGraph) {
  MemoryInputs in = Inputs(kH20Mib, 8, 1, 8192);
  in.deepep = true;
  EXPECT_DOUBLE_EQ(DeepEpReserveMib(in), 2048);
  in.decode_graph = false;
  EXPECT_DOUBLE_EQ(DeepEpReserveMib(in), 0);
}

TEST(SglangReserve, MlaPrefillGraphLowersTheDefaultFraction) {
  // H20, TP8, PP1, MLA with the prefill graph on:
  // 512 + 8192 x 1.5 + 8 / 8 x 1024 + (512 x 2 + 1536) = 16384;
  // (97871 - 16384) / 97871 = 0.83260 -> 0.833
  MemoryInputs in = Inputs(kH20Mib, 8, 1, 8192);
  in.mla = true;
  in.prefill_graph = true;
  EXPECT_DOUBLE_EQ(DefaultReservedMib(in), 16384);
  EXPECT_DOUBLE_EQ(DefaultMemFractionStatic(in), 0.833);
  // Without it (SGLang's default at pp > 1): 14848 -> 0.848.
  in.prefill_graph = false;
  EXPECT_DOUBLE_EQ(DefaultMemFractionStatic(in), 0.848);
}

TEST(SglangReserve, DeepEpComesOnTopOfTheTenGibFloor) {
  // 80 GiB, TP1, chunk 2048: 512 + 3072 + 128 + 256 x 2 = 4224 -> floor 10240,
  // then DeepEP's 2048 on top: 12288.
  MemoryInputs in = Inputs(81920, 1, 1, 2048);
  in.deepep = true;
  EXPECT_DOUBLE_EQ(DefaultReservedMib(in), 12288);
  // A disabled decode graph drops both the graph and the DeepEP reserve: the floor.
  in.decode_graph = false;
  EXPECT_DOUBLE_EQ(DefaultReservedMib(in), 10240);
}

}  // namespace
}  // namespace ppsearch::memory
