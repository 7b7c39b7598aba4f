#pragma once
// The narrow interface between the engine model (scheduler and pipeline) and
// the performance model of operators and links. The engine asks what a
// micro-batch costs on each stage; it never sees layers or GPUs.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/batch.h"

namespace ppsearch::sim {

// Time one pipeline stage spends on a micro-batch. TP collectives run on the
// compute stream in SGLang (no overlap), so the parts add up.
struct StageTime {
  int64_t compute_ns = 0;  // GEMMs, attention, MoE, element-wise work
  // Of compute_ns, by class (the rest is element-wise and other work): dense
  // GEMMs; routed experts (their GEMMs and token permutation); attention
  // cores (softmax, MLA and linear attention). What a profile's kernel
  // classes measure (nsys/compute_kernels.h).
  int64_t gemm_ns = 0, moe_ns = 0, attention_ns = 0;
  int64_t comm_ns = 0;      // exposed TP collectives (all-reduce)
  int64_t transfer_ns = 0;  // exposed part of receiving activations (intra-stage all-gather)
  int64_t overhead_ns = 0;  // kernel launch gaps, host work on the critical path
  int allreduce_calls = 0;

  int64_t total_ns() const { return compute_ns + comm_ns + transfer_ns + overhead_ns; }
};

// How a decode step's stage time grows while its batch decodes on with the
// same sequences: the step in which each sequence has k more tokens of
// context costs `at_start` but for its compute, which is
//   round(fixed_compute_ns + max over groups g of (group_ns[g] + k * group_growth_ns[g]))
// One group, or one per DP attention rank (the busiest rank's attention
// sets the step); attention reads each sequence's context once, so a
// group's time is affine in its summed context.
struct DecodeGrowth {
  StageTime at_start;
  double fixed_compute_ns = 0;
  std::vector<double> group_ns;
  std::vector<double> group_growth_ns;  // per step: ns per context token x sequences

  int64_t ComputeNs(int64_t k) const {
    double most = 0;
    for (size_t g = 0; g < group_ns.size(); ++g)
      most = std::max(most, group_ns[g] + static_cast<double>(k) * group_growth_ns[g]);
    // llround for the non-negative times here, without its library call
    // (a decode stretch rounds once per step and stage).
    return static_cast<int64_t>(fixed_compute_ns + most + 0.5);
  }
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual int num_stages() const = 0;
  virtual StageTime StageCost(int stage, const MicroBatch& batch) const = 0;
  // StageCost of `batch` (a decode step) and of the steps that follow it
  // with the same sequences, as one form, written over `growth` (its
  // vectors' room reused: a decode stretch prices every stage of each batch
  // it forms); false: the engine asks StageCost step by step.
  virtual bool DecodeStepGrowth(int /*stage*/, const MicroBatch& /*batch*/,
                                DecodeGrowth* /*growth*/) const {
    return false;
  }
  // Latency from the end of `from_stage`'s compute until stage from_stage + 1
  // holds the activations (point-to-point send of hidden states and residual).
  virtual int64_t HopNs(int from_stage, const MicroBatch& batch) const = 0;
  // next_token_ids from the last stage back to stage 0 (SGLang's output ring).
  virtual int64_t OutputReturnNs(const MicroBatch& batch) const = 0;
  // Host time of one scheduler loop iteration that forms and launches a batch.
  virtual int64_t ScheduleNs(const MicroBatch& batch) const = 0;
  // From a request's arrival at the server until the scheduler can see it
  // (HTTP parsing, tokenizer manager, IPC).
  virtual int64_t IngestNs(int64_t input_tokens) const = 0;
  // From the scheduler's result processing until the client holds the token.
  virtual int64_t StreamOutNs() const = 0;
};

}  // namespace ppsearch::sim
