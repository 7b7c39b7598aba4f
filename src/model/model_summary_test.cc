// What `ppsearch model` prints, checked on the Kimi K3 reference config.

#include "model/model_summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "model/hf_config.h"
#include "util/files.h"

namespace ppsearch::model {
namespace {

ModelDesc LoadK3() {
  Result<ModelDesc> model = LoadModel(DataDir() + "/models/kimi-k3");
  if (!model.ok()) ADD_FAILURE() << model.error().message;
  return model.ok() ? model.value() : ModelDesc{};
}

bool HasLine(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

TEST(FormatTest, ThousandsSeparators) {
  EXPECT_EQ(FormatParams(2'785'387'506'272), "2,785.4 B");
  EXPECT_EQ(FormatParams(31'690'000'000), "31.7 B");
  EXPECT_EQ(FormatParams(528'482'304), "528.5 M");
  EXPECT_EQ(FormatGiB(1024.0 * 1024 * 1024 * 1463.84), "1,463.8 GiB");
}

TEST(DescribeModelTest, KimiK3Summary) {
  std::string text = DescribeModel(LoadK3());
  EXPECT_TRUE(HasLine(text, "family     kimi_linear (model_type kimi_k3)")) << text;
  EXPECT_TRUE(HasLine(text, "layers     93 = 24 MLA + 69 KDA; 1 dense FFN + 92 MoE")) << text;
  EXPECT_TRUE(HasLine(text,
                      "experts    896 routed, top-16, 2 shared, moe_intermediate 3,072, latent "
                      "3,584 (MXFP4)"))
      << text;
  EXPECT_TRUE(HasLine(text,
                      "params     total 2,779.5 B, active 104.2 B (active: per token, without "
                      "the embedding lookup, with lm_head)"))
      << text;
  EXPECT_TRUE(HasLine(text, "weights    1,452.8 GiB: MXFP4 1,347.1 GiB, BF16 105.7 GiB")) << text;
  EXPECT_TRUE(HasLine(text, "kv cache   27,648 B/token (bf16)")) << text;
}

TEST(DescribeLayersTest, HeaderUnitsAndRows) {
  std::string table = DescribeLayers(LoadK3());
  EXPECT_EQ(table.substr(0, table.find('\n')),
            "# layer   attention   ffn       params    active    weights    kv_cache       state");
  EXPECT_NE(table.find("\n      3   MLA         MoE     30,017.1     950.6"), std::string::npos)
      << table;
  // Two header lines and 93 rows.
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 95);
}

TEST(ModelToJsonTest, TotalsAndLayers) {
  ModelDesc k3 = LoadK3();
  nlohmann::ordered_json json = ModelToJson(k3, /*with_linears=*/true);
  EXPECT_EQ(json["total_params"].get<int64_t>(), k3.total_params());
  EXPECT_EQ(json["active_params"].get<int64_t>(), k3.active_params());
  EXPECT_DOUBLE_EQ(json["weight_bytes"].get<double>(), k3.weight_bytes());
  EXPECT_EQ(json["layer_counts"]["kda"], 69);
  ASSERT_EQ(json["layers"].size(), 93u);
  const auto& layer = json["layers"][3];
  EXPECT_EQ(layer["index"], 3);
  EXPECT_EQ(layer["attention"], "MLA");
  EXPECT_EQ(layer["ffn"], "MoE");
  EXPECT_EQ(layer["params"].get<int64_t>(), k3.layers[3].params());
  EXPECT_EQ(json["weight_bytes_by_dtype"].size(), 2u);
  bool found_experts = false;
  for (const auto& linear : layer["linears"]) {
    if (linear["name"] != "experts.gate_up_proj") continue;
    found_experts = true;
    EXPECT_EQ(linear["dtype"], "MXFP4");
    EXPECT_EQ(linear["sharding"], "expert");
    EXPECT_EQ(linear["active_count"], 16);
  }
  EXPECT_TRUE(found_experts);
  EXPECT_FALSE(ModelToJson(k3, /*with_linears=*/false)["layers"][0].contains("linears"));
}

}  // namespace
}  // namespace ppsearch::model
