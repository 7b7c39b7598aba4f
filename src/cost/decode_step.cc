#include "cost/decode_step.h"

#include <algorithm>
#include <cmath>

#include "cost/layout_cost.h"

namespace ppsearch::cost {

std::vector<int> DecodeCaptureBatchSizes(int max_bs, int max_running_requests) {
  std::vector<int> sizes;
  if (max_bs <= 0) return sizes;
  const int cap = max_running_requests > 0 ? std::min(max_bs, max_running_requests) : max_bs;
  auto add = [&](int bs) {
    if (bs <= cap) sizes.push_back(bs);
  };
  for (int bs : {1, 2, 4, 8, 12}) add(bs);
  for (int bs = 16; bs <= 256; bs += 8) add(bs);
  for (int bs = 272; bs < 512; bs += 16) add(bs);
  for (int bs = 512; bs <= max_bs; bs += 32) add(bs);
  return sizes;
}

int64_t PaddedDecodeBatch(int64_t batch, const std::vector<int>& captured) {
  auto it = std::lower_bound(captured.begin(), captured.end(), batch);
  return it == captured.end() ? batch : *it;
}

double ExpectedExpertsTouched(int64_t local_experts, int64_t num_experts, int64_t top_k,
                              int64_t tokens) {
  if (local_experts <= 0 || num_experts <= 0 || tokens <= 0) return 0;
  const double miss = 1.0 - std::min<double>(top_k, num_experts) / num_experts;
  return static_cast<double>(local_experts) * (1.0 - std::pow(miss, static_cast<double>(tokens)));
}

double DecodeGemmNs(const GemmShape& g, double peak_tflops, double memory_bw_gbps, double scale) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.groups <= 0) return 0;
  const double groups = static_cast<double>(g.groups);
  const int64_t tile = TileM(g.m);
  const double padded_m = static_cast<double>((g.m + tile - 1) / tile * tile);
  const double padded_flops = 2.0 * padded_m * g.n * g.k * groups;
  const double bytes =
      groups * (g.n * g.k * g.weight_bytes_per_param + 2.0 * g.m * g.k + 2.0 * g.m * g.n);
  const double compute_s = padded_flops / (peak_tflops * 1e12 * scale);
  const double memory_s = bytes / (memory_bw_gbps * 1e9);
  return std::max(compute_s, memory_s) * 1e9;
}

double SamplingBytes(int64_t batch, int64_t vocab) {
  constexpr double kPasses = 3;
  constexpr double kFp32Bytes = 4;
  return kPasses * static_cast<double>(batch) * static_cast<double>(vocab) * kFp32Bytes;
}

int AttentionDecodeKernels(const std::string& backend) {
  // The split-KV backends that combine the splits in a kernel of their own.
  return backend == "triton" || backend == "fa3" || backend == "flashmla" ? 2 : 1;
}

DecodeKernels DecodeKernelsPerLayer(const model::LayerDesc& layer, const std::string& backend) {
  using model::AttentionKind;
  DecodeKernels k;
  bool shared_experts = false;
  for (size_t i = 0; i < layer.linears.size(); ++i) {
    const model::Linear& l = layer.linears[i];
    shared_experts = shared_experts || l.role == model::OpRole::kSharedExpert;
    // A merged GEMM counts once, at its first member.
    const auto first_member = [&] {
      for (size_t j = 0; j < i; ++j)
        if (layer.linears[j].fused_gemm == l.fused_gemm) return false;
      return true;
    };
    if (!l.fused_gemm.empty() && !first_member()) continue;
    k.gemms += 1;
    if (l.dtype == model::DType::kFp8) k.activation_quant += 1;
  }
  k.norms = 2;
  switch (layer.attention) {
    case AttentionKind::kMla:
      k.norms += 2;
      k.attention = 3 + AttentionDecodeKernels(backend);
      break;
    case AttentionKind::kGqa:
      k.attention = 2 + AttentionDecodeKernels(backend);
      break;
    case AttentionKind::kKda:
      k.norms += 1;
      k.attention = 2;
      break;
    case AttentionKind::kNone:
      break;
  }
  if (layer.ffn == model::FfnKind::kMoe) {
    k.routing = 2;
    k.ffn = 2 + (shared_experts ? 1 : 0);
  } else {
    k.ffn = 1;
  }
  return k;
}

// The decode path of LayoutCostModel: the same operators as a prefill of
// `padded` tokens (weights are read once per step whatever the batch, which
// EstimateGemm's roofline already charges), with the routed experts costed
// for the experts the batch touches, the attention of each sequence over its
// cache, and the sampler on the last stage.
StageBreakdown LayoutCostModel::DecodeBreakdown(int stage, const sim::MicroBatch& batch) const {
  const int64_t sequences = static_cast<int64_t>(batch.entries.size());
  const int64_t padded = PaddedDecodeBatch(sequences, layout_.decode_graph_batch_sizes);
  StageBreakdown b = TokenPart(stage, padded, padded, sequences);
  b.attention_ns = AttentionNs(stage, batch);
  if (layout_.stages[stage].has_lm_head) {
    b.sampling_ns = SamplingBytes(sequences, model_.vocab) / MemoryBw() * 1e9;
    b.elementwise_ns += b.sampling_ns;
  }
  return b;
}

// A linear of a decode step. Routed experts: the padded batch's rows routed
// to this EP rank (rows x top_k / ep) spread over the experts the real batch
// touches, each touched expert's weights read once; rounded to whole experts
// (B = 1 with k / E x local = 2 gives 2). LinearShape spreads tokens x active
// / count rows over count / ep local experts, so an expert count of
// touched x ep puts the rows on the touched ones.
double LayoutCostModel::DecodeLinearNs(const model::Linear& l, int64_t padded,
                                       int64_t sequences) const {
  if (l.role == model::OpRole::kEmbedding) return EmbeddingNs(padded);
  model::Linear run = l;
  if (l.role == model::OpRole::kRoutedExpert) {
    const int64_t local = std::max<int64_t>(l.count / layout_.ep, 1);
    const double touched = ExpectedExpertsTouched(local, l.count, l.active_count, sequences);
    run.count = std::clamp<int64_t>(std::llround(touched), 1, local) * layout_.ep;
  }
  return DecodeGemmNs(LinearShape(run, padded, padded), RateTflops(l.dtype), MemoryBw() / 1e9,
                      Efficiency(l));
}

double LayoutCostModel::KernelGapsNs(const model::LayerDesc& layer, bool decode) const {
  if (decode)
    return decode_kernels_[static_cast<size_t>(layer.index)] *
           calibration_.Get(Param::kDecodeKernel) * 1e3;
  return static_cast<double>(layer.linears.size() + kExtraKernelsPerLayer) * k_.kernel_gap_us * 1e3;
}

double LayoutCostModel::DecodeAttentionNsPerContextToken(int stage) const {
  // Two one-sequence steps 1,024 tokens of context apart: the difference is
  // the per-token part alone (a sequence's fixed part, as KDA's state read,
  // cancels).
  constexpr int64_t kSpan = 1024;
  sim::MicroBatch step;
  step.entries.push_back({0, 1, 0, false});
  const double at_zero = AttentionNs(stage, step);
  step.entries.front().prefix_tokens = kSpan;
  return (AttentionNs(stage, step) - at_zero) / kSpan;
}

bool LayoutCostModel::DecodeStepGrowth(int stage, const sim::MicroBatch& batch,
                                       sim::DecodeGrowth* growth) const {
  if (batch.is_prefill || batch.empty()) return false;
  const double per_token_ns = decode_attention_ns_per_token_[static_cast<size_t>(stage)];
  sim::DecodeGrowth& g = *growth;
  g.group_ns.clear();
  g.group_growth_ns.clear();
  if (batch.dp_ranks.empty()) {
    const StageBreakdown b = DecodeBreakdown(stage, batch);
    g.at_start = TimeOf(b);
    g.fixed_compute_ns = b.gemm_ns + b.elementwise_ns;
    g.group_ns.push_back(b.attention_ns);
    g.group_growth_ns.push_back(per_token_ns * static_cast<double>(batch.entries.size()));
    return true;
  }
  std::vector<StageBreakdown> sides;
  const StageBreakdown shared = DpSides(stage, batch, &sides);
  g.at_start = TimeOf(DpCombined(shared, sides));  // StageCost's, from the same sides
  g.fixed_compute_ns = shared.gemm_ns + shared.attention_ns + shared.elementwise_ns;
  for (size_t r = 0; r < sides.size(); ++r) {
    g.group_ns.push_back(sides[r].gemm_ns + sides[r].attention_ns + sides[r].elementwise_ns);
    g.group_growth_ns.push_back(per_token_ns *
                                static_cast<double>(batch.dp_ranks[r].entries.size()));
  }
  return true;
}

}  // namespace ppsearch::cost
