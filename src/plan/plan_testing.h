#pragma once
// Hand-built inputs for the planner's unit tests: the planner is a pure
// function of plain structs, so tests build them directly instead of parsing.

#include <string>
#include <utility>

#include "hardware/hardware.h"
#include "model/model.h"
#include "model/model_testing.h"
#include "spec/spec.h"

namespace ppsearch::plan::testing {

using model::testing::MakeLinear;

// Kimi K3's layer pattern (data/models/kimi-k3): 93 layers, MLA on
// 1-based layers 4, 8, ..., 92 and 93 (24), KDA elsewhere (69); layer 0 dense,
// the rest MoE with 896 experts. Weights are simplified but of the right size.
inline model::ModelDesc KimiLikeModel() {
  using model::Sharding;
  model::ModelDesc m;
  m.name = "kimi-k3";
  m.family = "kimi_linear";
  m.hidden = 7168;
  m.vocab = 163840;
  m.num_layers = 93;
  m.num_attention_heads = 96;
  m.mla = {96, 1536, 512, 128, 64, 128};
  m.kda = {96, 128, 4};
  m.moe = {896, 16, 2, 3072, 3584, model::DType::kMxfp4};
  m.dense_intermediate = 33792;
  for (int i = 0; i < m.num_layers; ++i) {
    model::LayerDesc layer;
    layer.index = i;
    const bool mla = (i + 1) % 4 == 0 || i == 92;
    layer.attention = mla ? model::AttentionKind::kMla : model::AttentionKind::kKda;
    layer.ffn = i == 0 ? model::FfnKind::kDense : model::FfnKind::kMoe;
    layer.linears.push_back(MakeLinear("qkv", 7168, 3 * 96 * 128, Sharding::kColumn));
    layer.linears.push_back(MakeLinear("o_proj", 96 * 128, 7168, Sharding::kRow));
    if (mla) {
      layer.linears.push_back(MakeLinear("kv_a", 7168, 576, Sharding::kReplicated));
      layer.kv_bytes_per_token = (512 + 64) * 2;
    } else {
      layer.state_bytes_per_request = 96LL * 128 * 128 * 4;
    }
    if (i == 0) {
      layer.linears.push_back(MakeLinear("gate_up", 7168, 2 * 33792, Sharding::kColumn));
      layer.linears.push_back(MakeLinear("down", 33792, 7168, Sharding::kRow));
    } else {
      layer.linears.push_back(MakeLinear("gate", 7168, 896, Sharding::kReplicated));
      layer.linears.push_back(MakeLinear("experts", 3584, 3 * 3072, Sharding::kExpert,
                                         model::OpRole::kRoutedExpert, model::DType::kMxfp4, 896,
                                         16));
    }
    layer.norm_params = 2 * 7168;
    m.layers.push_back(layer);
  }
  m.embedding = MakeLinear("embed_tokens", 163840, 7168, Sharding::kVocab);
  m.lm_head = MakeLinear("lm_head", 7168, 163840, Sharding::kVocab);
  m.final_norm_params = 7168;
  return m;
}

// Four GQA layers with round sizes, for hand-worked memory numbers. Per layer
// and TP rank at TP2: qkv 6 MiB/2, o 2 MiB/2, router 0.125 MiB, experts
// 64 x 1024 x 2048 MXFP4 = 68 MiB/2, norms 4 KiB.
inline model::ModelDesc TinyGqaModel() {
  using model::Sharding;
  model::ModelDesc m;
  m.name = "tiny";
  m.family = "qwen3_moe";
  m.hidden = 1024;
  m.vocab = 32768;
  m.num_layers = 4;
  m.num_attention_heads = 16;
  m.gqa = {16, 4, 64};
  m.moe = {64, 4, 0, 1024, 1024, model::DType::kMxfp4};
  for (int i = 0; i < m.num_layers; ++i) {
    model::LayerDesc layer;
    layer.index = i;
    layer.attention = model::AttentionKind::kGqa;
    layer.ffn = model::FfnKind::kMoe;
    layer.linears.push_back(MakeLinear("qkv", 1024, 3072, Sharding::kColumn));
    layer.linears.push_back(MakeLinear("o_proj", 1024, 1024, Sharding::kRow));
    layer.linears.push_back(MakeLinear("gate", 1024, 64, Sharding::kReplicated));
    layer.linears.push_back(MakeLinear("experts", 1024, 2048, Sharding::kExpert,
                                       model::OpRole::kRoutedExpert, model::DType::kMxfp4, 64, 4));
    layer.norm_params = 2048;
    layer.kv_bytes_per_token = 4 * 64 * 2 * 2;  // 4 KV heads x head_dim x (K, V) x bf16
    m.layers.push_back(layer);
  }
  m.embedding = MakeLinear("embed_tokens", 32768, 1024, Sharding::kVocab);
  m.lm_head = MakeLinear("lm_head", 1024, 32768, Sharding::kVocab);
  m.final_norm_params = 1024;
  return m;
}

inline hardware::HardwareProfile Rtx6000d() {
  hardware::HardwareProfile hw;
  hw.name = "rtx-6000d";
  hw.gpu_name = "NVIDIA RTX 6000D";
  hw.memory_mib = 85651;
  hw.gpus_per_node = 8;
  return hw;
}

inline SourceLoc Loc(int line, int col, const std::string& key) {
  return SourceLoc{"examples/x.toml", line, col, key};
}

inline spec::LayoutSpec Layout(int pp, int tp, int ep, int index = 0) {
  spec::LayoutSpec l;
  l.pp = pp;
  l.tp = tp;
  l.ep = ep;
  l.origin = Loc(31, 10, "sweep.layouts[" + std::to_string(index) + "]");
  return l;
}

// A bare switch written `flag = true`.
inline spec::ArgValue SwitchArg(SourceLoc origin) {
  spec::ArgValue a;
  a.kind = spec::ArgValue::Kind::kBool;
  a.text = "true";
  a.bool_value = true;
  a.origin = std::move(origin);
  return a;
}

// The mission's cluster (hosts 601-604, 8 GPUs each) and workload (16K fixed
// prompts, 40 requests, C = 8 and 16), radix cache off, no warmup.
inline spec::Spec MissionSpec() {
  spec::Spec s;
  s.path = "examples/x.toml";
  for (const char* name : {"601", "602", "603", "604"}) {
    spec::HostSpec host;
    host.name = name;
    s.cluster.hosts.push_back(host);
  }
  s.cluster.gpus_per_node = 8;
  s.engine.version = "0.5.18";
  s.engine.args.push_back(
      {"disable-radix-cache", SwitchArg(Loc(18, 1, "engine.args.disable-radix-cache"))});
  s.sweep.layouts = {Layout(1, 32, 4, 0), Layout(2, 16, 4, 1), Layout(4, 8, 4, 2),
                     Layout(8, 4, 4, 3)};
  s.sweep.concurrency = {8, 16};
  s.workload.input_tokens = 16000;
  s.workload.requests = 48;
  s.workload.origin = Loc(40, 1, "workload");
  return s;
}

inline void SetArg(spec::Spec& s, const std::string& flag, spec::ArgValue value) {
  for (auto& [name, existing] : s.engine.args) {
    if (name == flag) {
      existing = value;
      return;
    }
  }
  s.engine.args.push_back({flag, value});
}

inline spec::ArgValue IntArg(int64_t v, SourceLoc origin) {
  spec::ArgValue a;
  a.kind = spec::ArgValue::Kind::kInt;
  a.text = std::to_string(v);
  a.int_value = v;
  a.origin = origin;
  return a;
}

inline spec::ArgValue StringArg(const std::string& v, SourceLoc origin) {
  spec::ArgValue a;
  a.kind = spec::ArgValue::Kind::kString;
  a.text = v;
  a.origin = origin;
  return a;
}

}  // namespace ppsearch::plan::testing
