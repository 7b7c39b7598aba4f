#pragma once
// Activation and workspace memory of one TP rank of a pipeline stage while it
// runs one prefill chunk: the live set at its largest, computed from the
// model's per-layer operators (model::Linear) and the layout's per-rank
// widths. Pure; memory_model.cc adds it to each stage's peak.
//
// The caching allocator keeps the largest live set a stage ever needed, so
// the peak is what counts, not the average. Within a layer the attention
// sublayer and the MLP/MoE sublayer run one after the other; their transient
// buffers are not live together, but the residual stream is live throughout.

#include <cstdint>
#include <string>

#include "model/model.h"

namespace ppsearch::memory {

// Where the stage sits in the layout and what it runs.
struct ActivationShape {
  int first_layer = 0;  // layers [first_layer, end_layer)
  int end_layer = 0;
  bool has_lm_head = false;  // the last stage computes the logits
  bool receives = false;     // stages > 0 receive the previous stage's tensors
  int tp = 1;
  int ep = 1;                // MoE-TP = tp / ep splits each expert's intermediate
  int64_t chunk_tokens = 0;  // tokens of one prefill batch (the chunk)
  int64_t logit_rows = 1;    // sequences whose last prompt token is in the chunk
};

// The live set at the stage's peak, bytes per TP rank, by term. The terms
// are those of the moment the peak happens (a layer's sublayer, or the LM
// head after the last layer); `bytes` is their sum.
struct StageActivation {
  double stream_bytes = 0;    // hidden states + residual stream (block summaries)
  double sublayer_bytes = 0;  // the largest attention or MLP/MoE transient
  double logits_bytes = 0;    // LM head output at the peak (0 unless the logits set it)
  double receive_bytes = 0;   // PP receive buffers of the next micro-batch
  double bytes = 0;
  // What sets the peak, for people: the largest term's name, "MoE experts
  // (layer 92)", "KDA attention (layer 5)", "block residuals (layer 92)" (block
  // attention residuals), "residual stream (layer 3)", "LM head logits",
  // "PP receive buffers".
  std::string peak;
};

StageActivation EstimateStageActivation(const model::ModelDesc& model,
                                        const ActivationShape& shape);

}  // namespace ppsearch::memory
