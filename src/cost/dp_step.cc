// A step of SGLang's DP attention (--enable-dp-attention --dp-size dp), as
// the layer communicator runs it (python/sglang/srt/layers/communicator.py,
// layers/dp_attention.py). Per layer:
//  1. Each DP rank runs its attention on its own requests' tokens over its
//     attention-TP group (attn_tp = tp / dp GPUs, the heads split attn_tp
//     ways).
//  2. dp_gather_partial collects every rank's tokens on every GPU of the TP
//     group, summing o_proj's attention-TP partial sums on the way.
//  3. The FFN (MoE, or a dense MLP: moe_dense_tp_size unset keeps it FULL)
//     runs over the whole TP (or EP) group on the gathered tokens.
//  4. The result goes back to each rank's own tokens.
// Which collectives 2 and 4 are depends on DpPaddingMode
// (get_dp_padding_mode):
//  - SUM_LEN, when any rank extends (and for uneven decode batches:
//    2 x sum < max x dp): the ranks' tokens end to end; the gather is an
//    all-reduce of the zero-filled buffer over the TP group
//    (_dp_gather_via_all_reduce), the FFN all-reduces its partial sums over
//    the TP group and dp_scatter copies the rank's rows back.
//  - MAX_LEN, decode steps under CUDA graphs (get_default_mode_in_cuda_graph)
//    and even eager decode batches: every rank padded to the largest; the
//    gather reduce-scatters inside the attention-TP group and all-gathers
//    over the TP group (_dp_gather_via_all_gather), the scatter
//    reduce-scatters over the TP group and all-gathers inside the attention-TP
//    group (dp_reduce_scatter_tensor), with the FFN's all-reduce skipped.
// Kimi K3 does not use the layer communicator (its block attention
// residuals replace the norms the communicator owns): its MLP and MoE
// modules gather with dp_gather_replicate, run their own all-reduces over
// the whole TP group, and dp_scatter copies the rank's rows back
// (models/kimi_k3.py KimiK3MoE.forward, KimiK3MLP.forward). In MAX_LEN mode
// the FFN output is therefore all-reduced, not reduce-scattered; the gather
// and SUM_LEN mode are as above, and the attention-TP side is left as the
// communicator's.
// The ranks meet in every layer's gather, so a step lasts as long as its
// busiest rank's attention side plus the shared FFN and collectives; the
// other ranks wait inside the gather.
//
// Simplifications: the busiest rank is the one with the most attention-side
// time over the whole stage (its layers are alike, so per-layer maxima sum
// to it); the element-wise passes are split evenly between the attention
// side (before the gather) and the FFN side; the embedding is replicated
// per rank (deepseek_v2.py builds VocabParallelEmbedding with
// enable_tp=not is_dp_attention_enabled()), so it needs no all-reduce; the
// LM head runs over the whole TP group on the gathered last positions
// (logits_processor.py dp_gather_replicate, enable_dp_lm_head unset). With
// an all-to-all MoE backend the ranks dispatch their own tokens instead of
// gathering them; that is not modelled (predict::NotModelled refuses it).

#include <algorithm>

#include "cost/decode_step.h"
#include "cost/layout_cost.h"

namespace ppsearch::cost {

using model::OpRole;

GroupSpan LayoutCostModel::AttnTpGroup(int stage) const {
  // attn_dp_rank = tp_rank / attn_tp_size (dp_attention.py
  // compute_dp_attention_world_info): a rank's group is attn_tp consecutive
  // TP ranks, on its share of the TP group's nodes; the dp groups on one
  // node run their collectives at the same time.
  const StageShape& st = layout_.stages[stage];
  const int dp = std::max(layout_.dp, 1);
  const int tp_nodes = std::max(st.tp_nodes, 1);
  const int nodes = std::max(1, tp_nodes / dp);
  const int groups_on_node = std::max(1, dp / tp_nodes);
  return GroupSpan{layout_.attn_tp(), nodes, st.groups_per_node * groups_on_node};
}

StageBreakdown LayoutCostModel::DpRankSide(int stage, const sim::MicroBatch& part,
                                           int64_t rows) const {
  StageBreakdown b;
  if (rows <= 0) return b;  // an idle batch without a graph runs no kernel of note
  const int64_t sequences = static_cast<int64_t>(part.entries.size());
  const DpKey key{0, stage, rows, sequences, part.is_prefill ? 1 : 0, 0};
  bool cached = false;
  if (auto it = dp_cache_.find(key); it != dp_cache_.end()) {
    b = it->second;
    cached = true;
  }
  if (!cached) {
    const double act_bytes = static_cast<double>(rows) * model_.hidden * kBf16Bytes;
    const std::vector<double> linears_ns = LinearNsInOrder(stage, [&](const model::Linear& l) {
      if (l.role != OpRole::kAttention) return 0.0;
      return part.is_prefill ? LinearNs(l, rows, sequences) : DecodeLinearNs(l, rows, sequences);
    });
    size_t next = 0;
    for (const auto* layer : stage_layers_[stage].layers) {
      for (const auto& l : layer->linears) {
        const double ns = linears_ns[next++];
        if (l.role == OpRole::kAttention) b.gemm_ns += ns;
      }
      b.elementwise_ns += k_.elementwise_passes / 2 * act_bytes / MemoryBw() * 1e9;
      if (model_.attn_res_block_size > 0) {  // the residual before the attention
        const double res_ns = model_.ResidualVectorsAt(layer->index) * act_bytes / MemoryBw() * 1e9;
        b.attn_res_ns += res_ns;
        b.elementwise_ns += res_ns;
      }
    }
    if (layout_.stages[stage].has_embedding) b.gemm_ns += EmbeddingNs(rows);
    dp_cache_.emplace(key, b);
  }
  b.attention_ns = AttentionNs(stage, part);
  if (layout_.stages[stage].has_lm_head && !part.is_prefill && sequences > 0) {
    b.sampling_ns = SamplingBytes(sequences, model_.vocab) / MemoryBw() * 1e9;
    b.elementwise_ns += b.sampling_ns;
  }
  return b;
}

StageBreakdown LayoutCostModel::DpSharedSide(int stage, int64_t gathered, int64_t sequences,
                                             int64_t logit_rows, int64_t rank_rows,
                                             bool max_len_padding) const {
  const DpKey key{1, stage, gathered, sequences, logit_rows, rank_rows * 2 + max_len_padding};
  if (auto it = dp_cache_.find(key); it != dp_cache_.end()) return it->second;
  StageBreakdown b;
  const StageShape& st = layout_.stages[stage];
  const GroupSpan tp_group = TpGroup(stage);
  const GroupSpan attn_group = AttnTpGroup(stage);
  const bool attn_tp_split = layout_.attn_tp() > 1;
  const double act_bytes = static_cast<double>(gathered) * model_.hidden * kBf16Bytes;
  const double rank_bytes = static_cast<double>(rank_rows) * model_.hidden * kBf16Bytes;
  const double tp_arrival_ns = ArrivalWaitUs(tp_group, links_) * 1e3;
  const double attn_arrival_ns = ArrivalWaitUs(attn_group, links_) * 1e3;
  const double skew = ExpertSkew();
  const bool ffn_all_reduces = model_.model_type == "kimi_k3";
  auto linear_ns = [&](const model::Linear& l) {
    return sequences >= 0 ? DecodeLinearNs(l, gathered, sequences)
                          : LinearNs(l, gathered, logit_rows);
  };
  const std::vector<double> linears_ns = LinearNsInOrder(stage, [&](const model::Linear& l) {
    return l.role == OpRole::kAttention ? 0.0 : linear_ns(l);
  });
  size_t next = 0;
  for (const auto* layer : stage_layers_[stage].layers) {
    for (const auto& l : layer->linears) {
      const double ns = linears_ns[next++];
      if (l.role == OpRole::kAttention) continue;
      b.gemm_ns += ns;
      if (l.role == OpRole::kRoutedExpert) {
        b.imbalance_wait_ns += (skew - 1.0) * ns;
        b.routed_gemm_ns += ns;
      }
    }
    double bytes = k_.elementwise_passes / 2 * act_bytes;
    if (layer->ffn == model::FfnKind::kMoe) {
      const double permute =
          4.0 * gathered * model_.moe.top_k * model_.moe.expert_hidden * kBf16Bytes / layout_.ep;
      bytes += permute;
      b.moe_permute_ns += permute / MemoryBw() * 1e9;
    }
    if (model_.attn_res_block_size > 0) {  // the residual before the FFN
      const double res_ns = model_.ResidualVectorsAt(layer->index) * act_bytes / MemoryBw() * 1e9;
      b.attn_res_ns += res_ns;
      b.elementwise_ns += res_ns;
    }
    b.elementwise_ns += bytes / MemoryBw() * 1e9;
    b.gaps_ns += KernelGapsNs(*layer, sequences >= 0);
    const double ffn_bytes = static_cast<double>(FfnAllReduceWidth(*layer)) * gathered * kBf16Bytes;
    if (max_len_padding) {
      const int64_t ffn_out_ns = ffn_all_reduces ? AllReduceNs(ffn_bytes, tp_group, links_)
                                                 : ReduceScatterNs(ffn_bytes, tp_group, links_);
      b.allreduce_ns += static_cast<double>(AllGatherNs(act_bytes, tp_group, links_) + ffn_out_ns);
      b.allreduce_calls += 2;
      b.jitter_wait_ns += 2 * tp_arrival_ns;
      if (attn_tp_split) {
        b.allreduce_ns += static_cast<double>(ReduceScatterNs(rank_bytes, attn_group, links_) +
                                              AllGatherNs(rank_bytes, attn_group, links_));
        b.allreduce_calls += 2;
        b.jitter_wait_ns += 2 * attn_arrival_ns;
      }
    } else {
      b.allreduce_ns += static_cast<double>(AllReduceNs(act_bytes, tp_group, links_) +
                                            AllReduceNs(ffn_bytes, tp_group, links_));
      b.allreduce_calls += 2;
      b.jitter_wait_ns += 2 * tp_arrival_ns;
    }
  }
  if (st.has_lm_head) {
    // The last positions gathered (an all-reduce of their hidden states), the
    // vocabulary-parallel LM head over the TP group, its logits all-gathered.
    b.gemm_ns += linear_ns(model_.lm_head);
    const double rows = static_cast<double>(logit_rows);
    b.allreduce_ns +=
        static_cast<double>(AllReduceNs(rows * model_.hidden * kBf16Bytes, tp_group, links_) +
                            AllGatherNs(rows * model_.vocab * kBf16Bytes, tp_group, links_));
    b.allreduce_calls += 1;
    b.jitter_wait_ns += tp_arrival_ns;
  }
  dp_cache_.emplace(key, b);
  return b;
}

StageBreakdown LayoutCostModel::DpSides(int stage, const sim::MicroBatch& step,
                                        std::vector<StageBreakdown>* rank_sides) const {
  const std::vector<sim::MicroBatch>& ranks = step.dp_ranks;
  const int dp = static_cast<int>(ranks.size());
  bool extend = false;
  int64_t most_sequences = 0, sequences = 0;
  for (const auto& part : ranks) {
    extend = extend || part.is_prefill;
    const int64_t n = static_cast<int64_t>(part.entries.size());
    most_sequences = std::max(most_sequences, n);
    sequences += n;
  }
  // A decode-only step replays, on every rank, the graph captured for the
  // largest rank's batch (cuda_graph_runner.py: with the MLP sync the replay
  // size is max(global_num_tokens)); a step in which any rank extends runs
  // eagerly.
  const std::vector<int>& graphs = layout_.decode_graph_batch_sizes;
  const bool graph = !extend && !graphs.empty() && most_sequences <= graphs.back();
  std::vector<int64_t> rows(dp);
  int64_t max_rows = 0, sum_rows = 0;
  for (int r = 0; r < dp; ++r) {
    rows[r] = graph ? PaddedDecodeBatch(most_sequences, graphs)
                    : ranks[static_cast<size_t>(r)].extend_tokens();
    max_rows = std::max(max_rows, rows[r]);
    sum_rows += rows[r];
  }
  const bool max_len = graph || (!extend && 2 * sum_rows >= max_rows * dp);
  const int64_t gathered = max_len ? max_rows * dp : sum_rows;
  rank_sides->clear();
  for (int r = 0; r < dp; ++r)
    rank_sides->push_back(DpRankSide(stage, ranks[static_cast<size_t>(r)], rows[r]));
  return DpSharedSide(stage, gathered, extend ? -1 : sequences, extend ? sequences : gathered,
                      max_rows, max_len);
}

StageBreakdown LayoutCostModel::DpBreakdown(int stage, const sim::MicroBatch& step) const {
  std::vector<StageBreakdown> sides;
  return DpCombined(DpSides(stage, step, &sides), sides);
}

StageBreakdown LayoutCostModel::DpCombined(StageBreakdown b,
                                           const std::vector<StageBreakdown>& sides) {
  // The busiest rank sets the step; the others wait for it in the gather.
  StageBreakdown busiest;
  double most = -1;
  for (const StageBreakdown& side : sides) {
    const double t = side.gemm_ns + side.attention_ns + side.elementwise_ns;
    if (t > most) {
      most = t;
      busiest = side;
    }
  }
  b.gemm_ns += busiest.gemm_ns;
  b.attention_ns = busiest.attention_ns;
  b.elementwise_ns += busiest.elementwise_ns;
  b.attn_res_ns += busiest.attn_res_ns;
  b.sampling_ns = busiest.sampling_ns;
  return b;
}

}  // namespace ppsearch::cost
