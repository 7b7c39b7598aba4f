#pragma once
// What SGLang keeps out of mem_fraction_static when the user does not set it,
// and the defaults it scales with the GPU's memory. Follows SGLang's
// python/sglang/srt/arg_groups/memory_hook.py (handle_gpu_memory_settings,
// reserve_for_graph_mb, reserve_for_deepep_a2a_mb) and cuda_graph_hook.py
// (generate_prefill_cuda_graph_batch_sizes; apply_cuda_graph_compatibility,
// which turns the breakable prefill graph off by default at pp > 1). All
// sizes are MiB of the device capacity, as SGLang's "MB" there.
//
// These are SGLang's allowances, used to resolve mem_fraction_static the way
// it does; the stage peaks use this model's own activations
// (memory/activation.h).

#include <cstdint>

#include "memory/memory_model.h"

namespace ppsearch::memory {

// chunked_prefill_size when the user leaves it unset: 2048 below 20 GiB,
// 4096 below 60 GiB, 8192 below 160 GiB, else 16384.
int64_t DefaultChunkedPrefillSize(double gpu_total_mib);

// The decode CUDA graph's largest captured batch when unset: 8 below 20 GiB;
// 48 (tp < 4) or 160 below 35 GiB; 32 (tp < 4) or 160 below 60 GiB; 256
// (tp < 4) or 512 below 160 GiB; 512 above.
int DefaultDecodeGraphMaxBs(double gpu_total_mib, int tp);

// The decode graph's largest batch: the user's cuda-graph-max-bs(-decode)
// when given, else the default for the GPU.
int DecodeGraphMaxBs(const MemoryInputs& in);

// The prefill graph's largest captured token count when unset: 2048 for MLA
// attention, else chunked_prefill_size; at pp > 1 (an explicitly chosen
// breakable graph) at most 8192.
int64_t PrefillGraphMaxBs(const MemoryInputs& in);

// How many token counts the prefill graph captures up to max_bs: 4..32 by 4,
// 48..256 by 16, 288..512 by 32, 576..1024 by 64, 1280..4096 by 256, then
// by 512 (58 sizes at 8192).
int PrefillGraphCaptureCount(int64_t max_bs);

// reserve_for_graph_mb: decode max_bs * 2 when the decode graph is on; with
// DP attention max_bs * dp * 3 (and * 1.5 more above max_bs 300); with the
// prefill graph on, 1.5 GiB for MLA or 8 per captured size otherwise, and
// 1 GiB more for a breakable prefill graph with DeepEP.
double GraphReserveMib(const MemoryInputs& in);

// reserve_for_deepep_a2a_mb: 2 GiB for DeepEP's all-to-all buffers when the
// decode graph is on.
double DeepEpReserveMib(const MemoryInputs& in);

}  // namespace ppsearch::memory
