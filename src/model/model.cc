#include "model/model.h"

namespace ppsearch::model {

double BytesPerParam(DType dtype) {
  switch (dtype) {
    case DType::kBf16:
      return 2.0;
    case DType::kFp8:
      return 1.0 + 4.0 / (128.0 * 128.0);  // e4m3 value + fp32 scale per 128x128 block
    case DType::kMxfp4:
      return 17.0 / 32.0;  // 32 x 4-bit E2M1 + one 8-bit E8M0 scale
    case DType::kInt4:
      return 18.0 / 32.0;  // 32 x 4-bit + one bf16 scale
  }
  return 2.0;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kBf16:
      return "BF16";
    case DType::kFp8:
      return "FP8";
    case DType::kMxfp4:
      return "MXFP4";
    case DType::kInt4:
      return "INT4";
  }
  return "?";
}

const char* AttentionKindName(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::kMla:
      return "MLA";
    case AttentionKind::kKda:
      return "KDA";
    case AttentionKind::kGqa:
      return "GQA";
    case AttentionKind::kNone:
      return "none";
  }
  return "?";
}

const char* FfnKindName(FfnKind kind) { return kind == FfnKind::kMoe ? "MoE" : "dense"; }

const char* ShardingName(Sharding sharding) {
  switch (sharding) {
    case Sharding::kReplicated:
      return "replicated";
    case Sharding::kColumn:
      return "column";
    case Sharding::kRow:
      return "row";
    case Sharding::kVocab:
      return "vocab";
    case Sharding::kExpert:
      return "expert";
  }
  return "?";
}

const char* OpRoleName(OpRole role) {
  switch (role) {
    case OpRole::kAttention:
      return "attention";
    case OpRole::kRouter:
      return "router";
    case OpRole::kRoutedExpert:
      return "routed_expert";
    case OpRole::kSharedExpert:
      return "shared_expert";
    case OpRole::kLatentProj:
      return "latent_proj";
    case OpRole::kDenseMlp:
      return "dense_mlp";
    case OpRole::kEmbedding:
      return "embedding";
    case OpRole::kLmHead:
      return "lm_head";
  }
  return "?";
}

namespace {

// Norms and other small vectors are stored in bf16 in every checkpoint we read.
constexpr double kSmallParamBytes = 2.0;

double LinearBytes(const Linear& linear) {
  return static_cast<double>(linear.params()) * BytesPerParam(linear.dtype);
}

}  // namespace

int64_t LayerDesc::params() const {
  int64_t total = norm_params;
  for (const Linear& linear : linears) total += linear.params();
  return total;
}

// Norms are on every token's path, so they count as active too.
int64_t LayerDesc::active_params() const {
  int64_t total = norm_params;
  for (const Linear& linear : linears) total += linear.active_params();
  return total;
}

double LayerDesc::weight_bytes() const {
  double total = static_cast<double>(norm_params) * kSmallParamBytes;
  for (const Linear& linear : linears) total += LinearBytes(linear);
  return total;
}

int ModelDesc::CountLayers(AttentionKind kind) const {
  int n = 0;
  for (const LayerDesc& layer : layers) n += layer.attention == kind ? 1 : 0;
  return n;
}

int ModelDesc::CountLayers(FfnKind kind) const {
  int n = 0;
  for (const LayerDesc& layer : layers) n += layer.ffn == kind ? 1 : 0;
  return n;
}

int64_t ModelDesc::total_params() const {
  int64_t total = embedding.params() + final_norm_params;
  if (!tie_word_embeddings) total += lm_head.params();
  for (const LayerDesc& layer : layers) total += layer.params();
  return total;
}

int64_t ModelDesc::active_params() const {
  int64_t total = lm_head.active_params() + final_norm_params;
  for (const LayerDesc& layer : layers) total += layer.active_params();
  return total;
}

std::map<DType, double> ModelDesc::weight_bytes_by_dtype() const {
  std::map<DType, double> bytes;
  auto add_linear = [&bytes](const Linear& linear) {
    if (linear.params() > 0) bytes[linear.dtype] += LinearBytes(linear);
  };
  add_linear(embedding);
  if (!tie_word_embeddings) add_linear(lm_head);
  int64_t small_params = final_norm_params;
  for (const LayerDesc& layer : layers) {
    small_params += layer.norm_params;
    for (const Linear& linear : layer.linears) add_linear(linear);
  }
  if (small_params > 0) bytes[DType::kBf16] += static_cast<double>(small_params) * kSmallParamBytes;
  return bytes;
}

double ModelDesc::weight_bytes() const {
  double total = 0;
  for (const auto& [dtype, bytes] : weight_bytes_by_dtype()) total += bytes;
  return total;
}

int64_t ModelDesc::kv_bytes_per_token() const {
  int64_t total = 0;
  for (const LayerDesc& layer : layers) total += layer.kv_bytes_per_token;
  return total;
}

int64_t ModelDesc::state_bytes_per_request() const {
  int64_t total = 0;
  for (const LayerDesc& layer : layers) total += layer.state_bytes_per_request;
  return total;
}

int ModelDesc::ResidualVectorsAt(int layer) const {
  if (attn_res_block_size <= 0) return 1;
  return layer / attn_res_block_size + 1;
}

}  // namespace ppsearch::model
