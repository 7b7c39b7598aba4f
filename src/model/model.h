#pragma once
// A model as the planner and the cost model see it: per-layer operators with
// shapes, parameter counts, bytes by dtype, and cache/state sizes. Built from
// a Hugging Face config.json by LoadModel (model/hf_config.h); pure data.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ppsearch::model {

enum class DType { kBf16, kFp8, kMxfp4, kInt4 };

// Storage bytes per parameter, scales included: MXFP4 packs 32 4-bit values
// with one 8-bit E8M0 scale, so 17 bytes per 32 weights; INT4 group-32 with a
// bf16 scale is 18 bytes per 32; FP8 block-quantised (DeepSeek style) adds one
// fp32 scale per 128x128 block, 1 + 4/16384 bytes.
double BytesPerParam(DType dtype);
const char* DTypeName(DType dtype);  // "BF16", "FP8", "MXFP4", "INT4"

// How a weight is split across the ranks of one pipeline stage.
enum class Sharding {
  kReplicated,  // every TP rank holds it all (norms, MLA's q_a/kv_a, router)
  kColumn,      // output features split over TP (q_b, kv_b, gate_up)
  kRow,         // input features split over TP, output all-reduced (o_proj, down)
  kVocab,       // vocabulary split over TP (embedding, lm_head)
  kExpert,      // routed experts: EP splits experts, MoE-TP (tp/ep) splits each
                // expert's intermediate; one rank holds 1/tp of the total
};

// What a linear operator belongs to; the cost model and the breakdown group by it.
enum class OpRole {
  kAttention,     // attention projections (MLA, KDA, GQA)
  kRouter,        // MoE gate
  kRoutedExpert,  // routed expert GEMMs (only top_k of num_experts run per token)
  kSharedExpert,
  kLatentProj,  // latent-MoE down/up projections around the routed experts
  kDenseMlp,
  kEmbedding,
  kLmHead,
};

// One weight matrix (or `count` identical ones, e.g. routed experts).
// Per token it costs 2 * in * out FLOPs per active copy.
struct Linear {
  std::string name;
  int64_t in_features = 0;
  int64_t out_features = 0;
  int64_t count = 1;         // identical copies (experts)
  int64_t active_count = 1;  // copies a token passes through (top_k for experts)
  DType dtype = DType::kBf16;
  Sharding sharding = Sharding::kReplicated;
  OpRole role = OpRole::kAttention;
  // The one GEMM this projection runs in with others on the same input
  // (SGLang's merged linears, e.g. "qkv_proj"); empty: a GEMM of its own.
  std::string fused_gemm;

  int64_t params() const { return in_features * out_features * count; }
  int64_t active_params() const { return in_features * out_features * active_count; }
};

enum class AttentionKind { kMla, kKda, kGqa, kNone };
enum class FfnKind { kDense, kMoe };

// Short display names: "MLA", "KDA", "GQA", "none"; "dense", "MoE"; "column", ...
const char* AttentionKindName(AttentionKind kind);
const char* FfnKindName(FfnKind kind);
const char* ShardingName(Sharding sharding);
const char* OpRoleName(OpRole role);  // "attention", "router", "routed_expert", ...

struct MlaShape {
  int num_heads = 0;
  int q_lora_rank = 0;  // 0: q is projected directly from hidden
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
};

struct KdaShape {
  int num_heads = 0;
  int head_dim = 0;
  int conv_kernel = 0;
};

struct GqaShape {
  int num_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
};

struct MoeShape {
  int num_experts = 0;
  int top_k = 0;
  int num_shared_experts = 0;
  int moe_intermediate = 0;
  int expert_hidden = 0;  // width the routed experts run on (latent), = hidden when not latent
  DType expert_dtype = DType::kBf16;
};

struct LayerDesc {
  int index = 0;  // 0-based position in the decoder stack
  AttentionKind attention = AttentionKind::kNone;
  FfnKind ffn = FfnKind::kDense;
  std::vector<Linear> linears;  // every weight matrix of the layer
  int64_t norm_params = 0;      // RMSNorm weights and other small vectors (bf16)
  // Cache per token of context for this layer (MLA latent, GQA K+V), bf16.
  int64_t kv_bytes_per_token = 0;
  // Fixed recurrent state per request for linear attention (KDA), bytes.
  int64_t state_bytes_per_request = 0;

  int64_t params() const;
  int64_t active_params() const;
  double weight_bytes() const;
};

// quantization_config.weight_block_size of a block-FP8 checkpoint: one scale
// per block_n output x block_k input features. SGLang needs every TP shard of
// such a weight to hold whole blocks.
struct WeightBlock {
  int n = 0;  // 0: not block-quantized
  int k = 0;
  bool any() const { return n > 0 && k > 0; }
};

struct ModelDesc {
  std::string name;                   // e.g. "kimi-k3" (from the directory or config)
  std::string family;                 // "kimi_linear", "deepseek_v3", "qwen3_moe", "llama"
  std::string model_type;             // as written in the config ("kimi_k3", "kimi_k2", ...)
  std::string source_path;            // config.json that was read
  std::string quantization = "none";  // quantization_config as "compressed-tensors MXFP4", ...
  WeightBlock fp8_block;              // block-FP8 weights' block, {0, 0} otherwise
  int hidden = 0;
  int vocab = 0;
  int num_layers = 0;
  int max_context = 0;
  int num_attention_heads = 0;  // heads that TP splits (for heads % TP)
  MlaShape mla;                 // zero when the model has no MLA layers
  KdaShape kda;                 // zero when the model has no KDA layers
  GqaShape gqa;                 // zero when the model has no GQA layers
  MoeShape moe;                 // num_experts == 0 for dense models
  int dense_intermediate = 0;
  // Block attention residuals (Kimi K3, attn_res_block_size): the residual
  // stream is replaced by attention over one summary per completed block of
  // this many layers plus the running sum of the current block. 0: ordinary
  // residuals.
  int attn_res_block_size = 0;
  std::vector<LayerDesc> layers;
  Linear embedding;  // vocab x hidden, kVocab
  Linear lm_head;    // hidden x vocab, kVocab
  // The LM head reuses the embedding matrix: it still runs as a GEMM (active,
  // FLOPs) but its weights are stored and counted once.
  bool tie_word_embeddings = false;
  int64_t final_norm_params = 0;

  bool is_moe() const { return moe.num_experts > 0; }
  int CountLayers(AttentionKind kind) const;
  int CountLayers(FfnKind kind) const;
  int64_t total_params() const;
  // Parameters one token passes through, excluding the embedding lookup (a
  // gather, not a GEMM) and including the LM head: the usual "activated" figure.
  int64_t active_params() const;
  double weight_bytes() const;
  // Stored bytes per dtype (embedding, LM head and norms included); dtypes
  // with no weights are absent.
  std::map<DType, double> weight_bytes_by_dtype() const;
  // Sums over layers: KV cache bytes per token of context (MLA, GQA) and
  // fixed recurrent state bytes per request (KDA).
  int64_t kv_bytes_per_token() const;
  int64_t state_bytes_per_request() const;
  // Hidden-size vectors per token the residual stream carries into layer
  // `layer` (0-based): 1 (the residual) for ordinary models; with block
  // attention residuals, the completed blocks' summaries plus the running
  // block sum.
  int ResidualVectorsAt(int layer) const;
  // Hidden-size vectors per token live at `layer`: the hidden states plus
  // ResidualVectorsAt(layer). What crosses a PP boundary into `layer`, and
  // what a stage keeps for the residual stream while it runs it.
  int StreamVectorsAt(int layer) const { return 1 + ResidualVectorsAt(layer); }
};

}  // namespace ppsearch::model
