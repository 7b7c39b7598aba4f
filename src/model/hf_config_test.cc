// LoadModel's inputs: path resolution, the exact messages for common
// mistakes, family detection and quantization rules.

#include "model/hf_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "util/files.h"

namespace ppsearch::model {
namespace {

constexpr char kPath[] = "data/models/x/config.json";

std::string ParseError(const std::string& json_text) {
  Result<ModelDesc> model = ParseModelConfig(json_text, kPath, "x");
  return model.ok() ? "(no error)" : model.error().message;
}

// The smallest valid dense config, to edit one key at a time.
nlohmann::json TinyDense() {
  return {{"model_type", "llama"},   {"hidden_size", 64},  {"intermediate_size", 160},
          {"num_hidden_layers", 2},  {"vocab_size", 1000}, {"num_attention_heads", 4},
          {"num_key_value_heads", 2}};
}

// A 4-layer Kimi Linear: layers 1-3 KDA, layer 4 MLA (1-based), MoE from layer 1 (0-based).
nlohmann::json TinyKimiLinear() {
  nlohmann::json text = {{"model_type", "kimi_linear"}, {"hidden_size", 64},
                         {"vocab_size", 100},           {"num_hidden_layers", 4},
                         {"intermediate_size", 128},    {"num_attention_heads", 2},
                         {"first_k_dense_replace", 1},  {"num_experts", 8},
                         {"num_experts_per_token", 2},  {"num_shared_experts", 1},
                         {"moe_intermediate_size", 32}, {"q_lora_rank", nullptr},
                         {"kv_lora_rank", 16},          {"qk_nope_head_dim", 8},
                         {"qk_rope_head_dim", 4},       {"v_head_dim", 8}};
  text["linear_attn_config"] = {{"full_attn_layers", {4}},
                                {"kda_layers", {1, 2, 3}},
                                {"num_heads", 2},
                                {"head_dim", 8},
                                {"short_conv_kernel_size", 4}};
  return {{"model_type", "kimi_k3"}, {"text_config", text}};
}

TEST(LoadModelTest, MissingPath) {
  Result<ModelDesc> model = LoadModel("/nonexistent/kimi");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().message,
            "/nonexistent/kimi: no such file or directory (expected a config.json file or a "
            "model directory containing one)");
}

TEST(LoadModelTest, DirectoryWithoutConfig) {
  std::string dir = testing::TempDir() + "/empty-model-dir";
  std::filesystem::create_directories(dir);
  Result<ModelDesc> model = LoadModel(dir);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().message,
            dir +
                ": directory has no config.json (expected a config.json file or a model "
                "directory containing one)");
}

TEST(LoadModelTest, AcceptsFileOrDirectory) {
  Result<ModelDesc> from_file = LoadModel(DataDir() + "/models/kimi-k2/config.json");
  Result<ModelDesc> from_dir = LoadModel(DataDir() + "/models/kimi-k2");
  ASSERT_TRUE(from_file.ok()) << from_file.error().message;
  ASSERT_TRUE(from_dir.ok()) << from_dir.error().message;
  EXPECT_EQ(from_file->name, "kimi-k2");
  EXPECT_EQ(from_dir->name, "kimi-k2");
  EXPECT_EQ(from_dir->source_path, DataDir() + "/models/kimi-k2/config.json");
  EXPECT_EQ(from_file->total_params(), from_dir->total_params());
}

TEST(ModelNameTest, HuggingFaceCacheSnapshot) {
  EXPECT_EQ(ModelNameFromPath("/hf/hub/models--moonshotai--Kimi-K3/snapshots/f831ab66/config.json"),
            "moonshotai/Kimi-K3");
  EXPECT_EQ(ModelNameFromPath("/models/deepseek-v3/config.json"), "deepseek-v3");
}

TEST(ConfigErrorTest, InvalidJsonPointsAtLineAndColumn) {
  EXPECT_EQ(ParseError("{\n  \"hidden_size\": 64,\n  \"vocab_size\": ,\n}"),
            "data/models/x/config.json:3:17: invalid JSON: syntax error while parsing value - "
            "unexpected ','; expected '[', '{', or a literal");
}

// The parser quotes the token it stopped in: a megabyte string is cut.
TEST(ConfigErrorTest, InvalidJsonQuotesAnExcerptOfALongToken) {
  const std::string message = ParseError("{\"name\": \"" + std::string(1 << 20, 'x') + "\x01\"}");
  EXPECT_EQ(message.rfind("data/models/x/config.json:1:", 0), 0u) << message.substr(0, 200);
  EXPECT_LT(message.size(), 400u) << message.substr(0, 400);
  EXPECT_NE(message.find(" bytes)"), std::string::npos) << message.substr(0, 400);
}

TEST(ConfigErrorTest, TopLevelMustBeObject) {
  EXPECT_EQ(ParseError("[1]"),
            "data/models/x/config.json: expected a JSON object at the top level, got [1]");
}

TEST(ConfigErrorTest, WrongType) {
  nlohmann::json config = TinyDense();
  config["hidden_size"] = "abc";
  EXPECT_EQ(ParseError(config.dump()),
            "data/models/x/config.json: key 'hidden_size': expected a positive integer, got "
            "\"abc\"");
}

TEST(ConfigErrorTest, NotPositive) {
  nlohmann::json config = TinyDense();
  config["num_hidden_layers"] = 0;
  EXPECT_EQ(ParseError(config.dump()),
            "data/models/x/config.json: key 'num_hidden_layers': expected a positive integer up "
            "to 4096, got 0");
}

// A billion layers was planned one by one until memory ran out (killed, or
// bad_alloc): a count past any model is an error naming the key.
TEST(ConfigErrorTest, LayersPastAnyModel) {
  nlohmann::json config = TinyDense();
  config["num_hidden_layers"] = 1000000000;
  EXPECT_EQ(ParseError(config.dump()),
            "data/models/x/config.json: key 'num_hidden_layers': expected a positive integer up "
            "to 4096, got 1000000000");
}

// KV heads that do not divide the query heads describe no attention.
TEST(ConfigErrorTest, KvHeadsMustDivideTheQueryHeads) {
  for (int kv : {3, 8}) {
    nlohmann::json config = TinyDense();
    config["num_key_value_heads"] = kv;
    EXPECT_EQ(ParseError(config.dump()),
              "data/models/x/config.json: key 'num_key_value_heads': expected a divisor of "
              "num_attention_heads 4 (each KV head serves a whole group of query heads), got " +
                  std::to_string(kv));
  }
}

TEST(ConfigErrorTest, MissingNestedKeyNamesTextConfig) {
  nlohmann::json config = TinyKimiLinear();
  config["text_config"].erase("hidden_size");
  EXPECT_EQ(ParseError(config.dump()),
            "data/models/x/config.json: missing key 'text_config.hidden_size' (expected a "
            "positive integer)");
}

TEST(ConfigErrorTest, MissingModelType) {
  nlohmann::json config = TinyDense();
  config.erase("model_type");
  EXPECT_EQ(ParseError(config.dump()),
            "data/models/x/config.json: missing key 'model_type' (expected a string)");
}

TEST(ConfigErrorTest, UnknownMoeModelType) {
  nlohmann::json config = TinyDense();
  config["model_type"] = "mixtral";
  config["num_local_experts"] = 8;
  EXPECT_EQ(ParseError(config.dump()),
            "data/models/x/config.json: key 'model_type': unknown MoE model type \"mixtral\" "
            "(supported: kimi_k3, kimi_linear, deepseek_v3, kimi_k2, qwen3_moe, and dense "
            "Llama-style models)");
}

TEST(ConfigErrorTest, ZeroBasedLayerListIsRejected) {
  nlohmann::json config = TinyKimiLinear();
  config["text_config"]["linear_attn_config"]["kda_layers"] = {0, 1, 2};
  config["text_config"]["linear_attn_config"]["full_attn_layers"] = {3};
  EXPECT_EQ(ParseError(config.dump()),
            "data/models/x/config.json: key 'text_config.linear_attn_config.kda_layers': "
            "expected 1-based layer numbers from 1 to 4, got 0 at index 0");
}

TEST(ConfigErrorTest, LayerListsMustCoverEveryLayer) {
  nlohmann::json config = TinyKimiLinear();
  config["text_config"]["linear_attn_config"]["kda_layers"] = {1, 2};
  EXPECT_EQ(ParseError(config.dump()),
            "data/models/x/config.json: key 'text_config.linear_attn_config.kda_layers': layer 3 "
            "(1-based) is in neither kda_layers nor full_attn_layers");
}

TEST(ConfigErrorTest, TopKAboveExpertCount) {
  nlohmann::json config = TinyKimiLinear();
  config["text_config"]["num_experts_per_token"] = 9;
  EXPECT_EQ(ParseError(config.dump()),
            "data/models/x/config.json: key 'text_config.num_experts_per_token': expected at most "
            "num_experts (8) experts per token, got 9");
}

TEST(ConfigErrorTest, UnknownQuantMethod) {
  nlohmann::json config = TinyDense();
  config["quantization_config"] = {{"quant_method", "awq"}};
  EXPECT_EQ(ParseError(config.dump()),
            "data/models/x/config.json: key 'quantization_config.quant_method': expected "
            "\"fp8\", \"compressed-tensors\" or \"mxfp4\", got \"awq\"");
}

TEST(QuantizationTest, Fp8WeightBlockSize) {
  // DeepSeek-V3's block FP8: one scale per 128 x 128 block.
  Result<ModelDesc> deepseek = LoadModel(DataDir() + "/models/deepseek-v3");
  ASSERT_TRUE(deepseek.ok()) << deepseek.error().message;
  EXPECT_EQ(deepseek->fp8_block.n, 128);
  EXPECT_EQ(deepseek->fp8_block.k, 128);
  // Per-tensor FP8 (no weight_block_size) and unquantized checkpoints have none.
  nlohmann::json config = TinyDense();
  config["quantization_config"] = {{"quant_method", "fp8"}};
  Result<ModelDesc> per_tensor = ParseModelConfig(config.dump(), kPath, "x");
  ASSERT_TRUE(per_tensor.ok()) << per_tensor.error().message;
  EXPECT_FALSE(per_tensor->fp8_block.any());
  Result<ModelDesc> plain = ParseModelConfig(TinyDense().dump(), kPath, "x");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_FALSE(plain->fp8_block.any());
}

TEST(QuantizationTest, CompressedTensorsBlockFp8) {
  nlohmann::json config = TinyDense();
  nlohmann::json weights = {
      {"num_bits", 8}, {"type", "float"}, {"strategy", "block"}, {"block_structure", {128, 64}}};
  config["quantization_config"] = {
      {"quant_method", "compressed-tensors"},
      {"config_groups", {{"group_0", {{"targets", {"Linear"}}, {"weights", weights}}}}},
      {"ignore", {"lm_head"}}};
  Result<ModelDesc> model = ParseModelConfig(config.dump(), kPath, "x");
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(model->fp8_block.n, 128);
  EXPECT_EQ(model->fp8_block.k, 64);
  EXPECT_EQ(model->layers[0].linears[0].dtype, DType::kFp8);
  // Channel-wise FP8 has no blocks; a block strategy needs its structure.
  weights["strategy"] = "channel";
  config["quantization_config"]["config_groups"]["group_0"]["weights"] = weights;
  Result<ModelDesc> channel = ParseModelConfig(config.dump(), kPath, "x");
  ASSERT_TRUE(channel.ok()) << channel.error().message;
  EXPECT_FALSE(channel->fp8_block.any());
  weights["strategy"] = "block";
  weights.erase("block_structure");
  config["quantization_config"]["config_groups"]["group_0"]["weights"] = weights;
  EXPECT_EQ(ParseError(config.dump()),
            "data/models/x/config.json: key "
            "'quantization_config.config_groups.group_0.weights.block_structure': expected two "
            "positive integers [block_n, block_k], e.g. [128, 128]");
}

TEST(ConfigErrorTest, Fp8WeightBlockSizeNeedsTwoPositiveSizes) {
  nlohmann::json config = TinyDense();
  config["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128}}};
  EXPECT_EQ(ParseError(config.dump()),
            "data/models/x/config.json: key 'quantization_config.weight_block_size': expected two "
            "positive integers [block_n, block_k], e.g. [128, 128]");
  config["quantization_config"]["weight_block_size"] = {128, 0};
  EXPECT_EQ(ParseError(config.dump()),
            "data/models/x/config.json: key 'quantization_config.weight_block_size': expected two "
            "positive integers [block_n, block_k], e.g. [128, 128]");
}

TEST(FamilyTest, UnknownDenseModelTypeLoadsAsLlama) {
  nlohmann::json config = TinyDense();
  config["model_type"] = "some_new_dense";
  Result<ModelDesc> model = ParseModelConfig(config.dump(), kPath, "x");
  ASSERT_TRUE(model.ok()) << model.error().message;
  EXPECT_EQ(model->family, "llama");
  EXPECT_EQ(model->model_type, "some_new_dense");
}

TEST(FamilyTest, TinyKimiLinearConvertsLayerNumbers) {
  Result<ModelDesc> model = ParseModelConfig(TinyKimiLinear().dump(), kPath, "x");
  ASSERT_TRUE(model.ok()) << model.error().message;
  ASSERT_EQ(model->layers.size(), 4u);
  EXPECT_EQ(model->layers[2].attention, AttentionKind::kKda);
  EXPECT_EQ(model->layers[3].attention, AttentionKind::kMla);
  EXPECT_EQ(model->layers[0].ffn, FfnKind::kDense);
  EXPECT_EQ(model->layers[3].ffn, FfnKind::kMoe);
  // No q_lora: q_proj 64 -> 2 x (8 + 4); kv_a 64 -> 16 + 4; kv_b 16 -> 2 x (8 + 8); o 16 -> 64.
  const int64_t mla = 64 * 24 + 64 * 20 + 16 * 32 + 16 * 64;
  // Router 64 x 8, experts 8 x 3 x 64 x 32, shared 3 x 64 x 32, norms 2 x 64 + kv_a norm 16.
  const int64_t moe = 64 * 8 + 8 * 3 * 64 * 32 + 3 * 64 * 32;
  EXPECT_EQ(model->layers[3].params(), mla + moe + 2 * 64 + 16);
  // Low-rank gates (no use_full_rank_gate): f_a/g_a 64 -> 8, f_b/g_b 8 -> 16.
  const int64_t kda = 4 * 64 * 16 + 2 * (64 * 8 + 8 * 16) + 64 * 2;
  const int64_t kda_small = 3 * 16 * 4 + 2 + 16 + 8;
  EXPECT_EQ(model->layers[1].params(), kda + kda_small + moe + 2 * 64);
  // Low-rank gates run as SGLang's fused_qkvbfg_a_proj and fused_fg_b_proj.
  for (const Linear& l : model->layers[1].linears) {
    if (l.role != OpRole::kAttention) continue;
    const bool b_stage = l.name == "f_b_proj" || l.name == "g_b_proj";
    const char* gemm = l.name == "o_proj" ? ""
                       : b_stage          ? "fused_fg_b_proj"
                                          : "fused_qkvbfg_a_proj";
    EXPECT_EQ(l.fused_gemm, gemm) << l.name;
  }
}

TEST(QuantizationTest, CompressedTensorsInt4Experts) {
  // Kimi K2-Thinking: INT4 group-32 routed experts, everything else BF16.
  Result<ModelDesc> base = LoadModel(DataDir() + "/models/kimi-k2");
  ASSERT_TRUE(base.ok()) << base.error().message;
  nlohmann::json config = nlohmann::json::parse(ReadFile(base->source_path).value());
  config["quantization_config"] = {
      {"quant_method", "compressed-tensors"},
      {"format", "pack-quantized"},
      {"config_groups",
       {{"group_0",
         {{"targets", {"Linear"}},
          {"weights", {{"num_bits", 4}, {"type", "int"}, {"group_size", 32}}}}}}},
      {"ignore",
       {"lm_head", "re:.*self_attn.*", "re:.*shared_experts.*",
        "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"}}};
  Result<ModelDesc> model = ParseModelConfig(config.dump(), kPath, "k2-thinking");
  ASSERT_TRUE(model.ok()) << model.error().message;
  std::map<DType, double> bytes = model->weight_bytes_by_dtype();
  ASSERT_EQ(bytes.size(), 2u);
  // 60 MoE layers x 384 experts x 3 x 7168 x 2048 at 18/32 B.
  EXPECT_DOUBLE_EQ(bytes.at(DType::kInt4), 60.0 * 384 * 3 * 7168 * 2048 * 18 / 32);
  EXPECT_EQ(model->layers[0].linears[0].dtype, DType::kBf16);  // dense layer attention
  // What a comparison of two runs records of the model.
  EXPECT_EQ(base->quantization, "fp8");
  EXPECT_EQ(model->quantization.rfind("compressed-tensors ", 0), 0u) << model->quantization;
}

TEST(QuantizationTest, Mxfp4MethodQuantisesOnlyRoutedExperts) {
  nlohmann::json config = TinyKimiLinear();
  config["text_config"]["quantization_config"] = {{"quant_method", "mxfp4"}};
  Result<ModelDesc> model = ParseModelConfig(config.dump(), kPath, "x");
  ASSERT_TRUE(model.ok()) << model.error().message;
  for (const Linear& linear : model->layers[1].linears) {
    EXPECT_EQ(linear.dtype, linear.role == OpRole::kRoutedExpert ? DType::kMxfp4 : DType::kBf16)
        << linear.name;
  }
}

}  // namespace
}  // namespace ppsearch::model
