#include "probe/request.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace ppsearch::probe {
namespace {

bool RunsFewRows(const model::Linear& l) {
  // The LM head and the embedding run on a few rows or none: not GEMMs a
  // forward spends its time in.
  return l.role == model::OpRole::kEmbedding || l.role == model::OpRole::kLmHead;
}

}  // namespace

std::vector<GemmShape> ModelGemmShapes(const model::ModelDesc& model,
                                       const std::vector<spec::LayoutSpec>& layouts, int64_t tokens,
                                       size_t limit) {
  std::map<std::tuple<int64_t, int64_t, int64_t>, GemmShape> shapes;
  for (const spec::LayoutSpec& layout : layouts) {
    const int tp = std::max(layout.tp, 1);
    const int attn_tp = layout.dp > 1 && tp % layout.dp == 0 ? tp / layout.dp : tp;
    const int moe_tp = std::max(tp / std::max(layout.ep, 1), 1);
    for (size_t i = 0; i < model.layers.size(); ++i) {
      // One GEMM per fused group: the merged projections share its input.
      std::map<std::string, GemmShape> fused;
      bool first_expert = true;
      for (const model::Linear& l : model.layers[i].linears) {
        if (RunsFewRows(l)) continue;
        GemmShape g;
        g.m = tokens;
        g.k = l.in_features;
        g.n = l.out_features;
        const int split = l.role == model::OpRole::kAttention ? attn_tp : tp;
        if (l.role == model::OpRole::kRoutedExpert) {
          // Each expert sees its share of the routed pairs; the first expert
          // GEMM splits its output over MoE-TP, the next its input.
          g.m = std::max<int64_t>(1, tokens * l.active_count / std::max<int64_t>(l.count, 1));
          (first_expert ? g.n : g.k) /= moe_tp;
          first_expert = false;
        } else if (l.sharding == model::Sharding::kColumn) {
          g.n /= split;
        } else if (l.sharding == model::Sharding::kRow) {
          g.k /= split;
        }
        g.what = fmt::format("layer {} {} at TP {}", i,
                             l.fused_gemm.empty() ? l.name : l.fused_gemm, tp);
        if (!l.fused_gemm.empty()) {
          auto [it, inserted] = fused.emplace(l.fused_gemm, g);
          if (!inserted) it->second.n += g.n;
          continue;
        }
        if (g.m > 0 && g.n > 0 && g.k > 0) shapes.emplace(std::tuple(g.m, g.n, g.k), g);
      }
      for (const auto& [name, g] : fused)
        if (g.m > 0 && g.n > 0 && g.k > 0) shapes.emplace(std::tuple(g.m, g.n, g.k), g);
    }
  }
  std::vector<GemmShape> out;
  for (const auto& [key, g] : shapes) out.push_back(g);
  std::stable_sort(out.begin(), out.end(),
                   [](const GemmShape& a, const GemmShape& b) { return a.flops() > b.flops(); });
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::vector<int> GroupSizes(int gpus_per_node) {
  std::vector<int> sizes;
  for (int g = 2; g < gpus_per_node; g *= 2) sizes.push_back(g);
  if (gpus_per_node >= 2) sizes.push_back(gpus_per_node);
  return sizes;
}

std::vector<int64_t> MessageSizes(int64_t smallest, int64_t largest) {
  std::vector<int64_t> sizes;
  for (int64_t s = smallest; s < largest; s *= 16) sizes.push_back(s);
  sizes.push_back(largest);
  return sizes;
}

nlohmann::json RequestJson(const ProbeRequest& r) {
  nlohmann::json shapes = nlohmann::json::array();
  for (const GemmShape& g : r.gemm_shapes)
    shapes.push_back({{"m", g.m}, {"n", g.n}, {"k", g.k}, {"dtype", g.dtype}});
  nlohmann::json j = {{"gemm_shapes", shapes},
                      {"seconds", r.seconds},
                      {"max_iterations", r.max_iterations},
                      {"idle_s", r.idle_s},
                      {"burst_s", r.burst_s},
                      {"refill_gaps_s", r.refill_gaps_s},
                      {"refill_s", r.refill_s},
                      {"copy_bytes", r.copy_bytes},
                      {"collective_ops", r.collective_ops},
                      {"collective_bytes", r.collective_bytes},
                      {"collective_seconds", r.collective_seconds},
                      {"group_sizes", r.group_sizes},
                      {"group_timeout_s", r.group_timeout_s},
                      {"cpu", r.cpu},
                      {"cpu_threads", r.cpu_threads}};
  // The burst runs the largest GEMM: the longest calls resolve the window best.
  if (!r.gemm_shapes.empty()) j["burst_shape"] = shapes.front();
  return j;
}

nlohmann::json CrossRequestJson(const ProbeRequest& request, const std::string& master, int port,
                                int rank, int world, double timeout_s) {
  nlohmann::json j = RequestJson(request);
  j["cross"] = {{"master", master},
                {"port", port},
                {"rank", rank},
                {"world", world},
                {"timeout_s", timeout_s}};
  return j;
}

}  // namespace ppsearch::probe
