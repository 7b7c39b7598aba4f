// The plan as people read it, in the spirit of nccl-tests: `#` header lines
// with the model and cluster, then one block per layout whose tables have a
// row of names and fit in 100 columns.

#include <fmt/format.h>

#include <algorithm>

#include "plan/plan_internal.h"
#include "table/table.h"

namespace ppsearch::plan {
namespace {

// "1 layout", "4 layouts".
std::string Counted(size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// first..last inclusive: "3" or "0-7".
std::string SpanOf(int first, int last) {
  return first == last ? std::to_string(first) : fmt::format("{}-{}", first, last);
}

// {0,1,2,3} -> "0-3"; {0,4,8} -> "0,4,8".
std::string RangeText(const std::vector<int>& values) {
  if (values.empty()) return "-";
  bool contiguous = true;
  for (size_t i = 1; i < values.size(); ++i) contiguous &= values[i] == values[i - 1] + 1;
  if (values.size() == 1) return std::to_string(values[0]);
  if (contiguous) return fmt::format("{}-{}", values.front(), values.back());
  std::string out;
  for (int v : values) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

std::string NodeNames(const Plan& plan, const std::vector<int>& nodes) {
  std::string out;
  for (int node : nodes) {
    if (!out.empty()) out += ' ';
    out += HostName(plan.cluster, node);
  }
  return out;
}

std::string SpanText(const Plan& plan, const std::vector<int>& nodes) {
  if (nodes.size() <= 1) return "node-local (" + NodeNames(plan, nodes) + ")";
  return fmt::format("spans {} nodes: {}", nodes.size(), NodeNames(plan, nodes));
}

std::string JoinHosts(const std::vector<std::string>& hosts) {
  std::string out;
  for (const std::string& host : hosts) out += (out.empty() ? "" : " ") + host;
  return out;
}

// Every line of a layout's block starts with a 16-column gutter that names
// its part ("  rank map        ..."); a table sits right of the gutter, its
// header on the named line.
constexpr size_t kGutter = 18;

// The plan's tables are two spaces apart, so a layout's block fits in 100 columns.
table::Table PlanTable(std::vector<std::string> header, std::vector<bool> left) {
  table::Table t{std::move(header), {}, std::move(left)};
  t.gap = 2;
  return t;
}

void AppendSection(const std::string& name, const table::Table& table, std::string& out) {
  const std::string lines = table::Indent(table::RenderTextTable(table), kGutter);
  out += "  " + name + lines.substr(2 + name.size());
}

void RenderHeader(const Plan& plan, std::string& out) {
  const ModelSummary& m = plan.model;
  const ClusterSummary& c = plan.cluster;
  out += fmt::format("# ppsearch plan {}\n", plan.spec_path);
  out += fmt::format("# model    {} ({}): {} layers, hidden {}, vocab {}\n", m.name, m.family,
                     m.num_layers, FormatThousands(m.hidden), FormatThousands(m.vocab));
  out += fmt::format("#          {} params total, {} active; {} MiB of weights in all\n",
                     FormatParams(m.total_params), FormatParams(m.active_params),
                     FormatMib(m.weight_mib));
  out += fmt::format("# cluster  {} hosts x {} GPUs = {}: {}\n", c.hosts.size(), c.gpus_per_node,
                     c.gpus, JoinHosts(c.hosts));
  out += fmt::format("#          {} ({}), {} MiB per GPU\n", c.gpu_name, c.hardware,
                     FormatMib(c.gpu_memory_mib));
  out += fmt::format("# moe-a2a-backend {}\n", plan.moe_a2a_backend);
  for (const Diagnostic& w : plan.warnings) out += "warning: " + w.message + "\n";
}

// One line per run of consecutive GPUs on a node that belong to one stage.
void RenderRankMap(const Plan& plan, const LayoutPlan& layout, std::string& out) {
  table::Table t =
      PlanTable({"node", "GPUs", "ranks", "stage", "TP ranks"}, std::vector<bool>(5, true));
  size_t i = 0;
  int last_node = -1;
  while (i < layout.ranks.size()) {
    size_t j = i;
    while (j + 1 < layout.ranks.size() && layout.ranks[j + 1].node == layout.ranks[i].node &&
           layout.ranks[j + 1].pp_rank == layout.ranks[i].pp_rank) {
      ++j;
    }
    const RankPlacement& a = layout.ranks[i];
    const RankPlacement& b = layout.ranks[j];
    const std::string node = a.node == last_node ? "" : NodeNames(plan, {a.node});
    t.rows.push_back({node, SpanOf(a.local_gpu, b.local_gpu), SpanOf(a.rank, b.rank),
                      std::to_string(a.pp_rank), SpanOf(a.tp_rank, b.tp_rank)});
    last_node = a.node;
    i = j + 1;
  }
  AppendSection("rank map", t, out);
}

void RenderTpGroups(const Plan& plan, const LayoutPlan& layout, std::string& out) {
  table::Table t = PlanTable({"stage", "ranks", "nodes"}, {true, true, true});
  for (const TpGroup& group : layout.tp_groups)
    t.rows.push_back(
        {std::to_string(group.pp_rank), RangeText(group.ranks), SpanText(plan, group.nodes)});
  AppendSection("TP groups", t, out);
}

// With DP attention: which ranks run attention together (and hold a KV
// pool), dp groups of attention TP tp / dp per stage.
void RenderAttentionGroups(const Plan& plan, const LayoutPlan& layout, std::string& out) {
  if (layout.attention_groups.empty()) return;
  table::Table t = PlanTable({"stage", "DP rank", "ranks", "nodes"}, {true, true, true, true});
  for (const AttentionGroup& g : layout.attention_groups)
    t.rows.push_back({std::to_string(g.pp_rank), std::to_string(g.dp_rank), RangeText(g.ranks),
                      SpanText(plan, g.nodes)});
  AppendSection("attn groups", t, out);
}

void RenderStages(const Plan& plan, const LayoutPlan& layout, std::string& out) {
  table::Table t =
      PlanTable({"stage", "layers", "count", "MLA", "KDA", "GQA", "dense", "MoE", "holds", "nodes"},
                std::vector<bool>(10, true));
  for (const StagePlan& s : layout.stages) {
    std::string holds = s.has_embedding ? "embed" : "";
    if (s.holds_lm_head_weights) holds += holds.empty() ? "lm_head" : "+lm_head";
    t.rows.push_back({std::to_string(s.pp_rank), fmt::format("[{},{})", s.first_layer, s.end_layer),
                      std::to_string(s.num_layers()), std::to_string(s.mla_layers),
                      std::to_string(s.kda_layers), std::to_string(s.gqa_layers),
                      std::to_string(s.dense_layers), std::to_string(s.moe_layers),
                      holds.empty() ? "-" : holds, NodeNames(plan, s.nodes)});
  }
  AppendSection("stages", t, out);
}

void RenderMemory(const LayoutPlan& layout, std::string& out) {
  table::Table per_rank =
      PlanTable({"stage", "weights MiB", "KV cache B/token", "KDA state B/request"},
                {true, false, false, false});
  for (const StagePlan& s : layout.stages) {
    per_rank.rows.push_back({std::to_string(s.pp_rank), FormatMib(s.weight_mib_per_rank),
                             FormatThousands(s.kv_bytes_per_token_per_rank),
                             FormatThousands(s.state_bytes_per_request_per_rank)});
  }
  AppendSection("memory/rank", per_rank, out);
  const memory::MemoryPlan& m = layout.memory;
  if (m.stages.empty()) return;
  // SGLang's sizing: the static pools fill mem_fraction_static; activations
  // (this stage's largest live set for one chunk) and graphs sit outside it.
  out += fmt::format(
      "  memory plan     mem_fraction_static {:g}; KV pool {} tokens; max_running_requests {}\n",
      m.mem_fraction_static, FormatThousands(m.max_total_tokens), m.max_running_requests);
  if (m.state_slots_per_request > 0)
    out += fmt::format("                  state pool {} request states, {} per running request\n",
                       FormatThousands(m.state_slots), m.state_slots_per_request);
  // reqs: the request-to-token table, a row of the context per running request.
  table::Table mib = PlanTable(
      {"stage", "KV", "state", "reqs", "activations", "peak", "headroom", "activations peak at"},
      {true, false, false, false, false, false, false, true});
  for (size_t i = 0; i < m.stages.size(); ++i) {
    const memory::StageMemory& s = m.stages[i];
    mib.rows.push_back({std::to_string(i), FormatMib(s.kv_pool_mib), FormatMib(s.state_pool_mib),
                        FormatMib(s.request_table_mib), FormatMib(s.activation_mib),
                        FormatMib(s.peak_mib), FormatMib(s.headroom_mib), s.activation_peak});
  }
  AppendSection("memory MiB", mib, out);
  out += fmt::format("                  tightest: stage {} ({})\n", m.tightest_stage,
                     m.tightest_reason);
  // The plan has no calibration: say which workspace its peaks carry, since
  // a calibrated prediction's headroom differs by the fitted value.
  if (const double workspace = m.stages.front().workspace_mib; workspace > 0)
    out += fmt::format(
        "                  peaks include {} MiB per GPU of runtime workspace, the prior of\n"
        "                  runtime_workspace_mib; simulate and search with --calibration use its\n"
        "                  fitted value, so their headroom can differ\n",
        FormatMib(workspace));
}

void RenderBoundaries(const Plan& plan, const LayoutPlan& layout, std::string& out) {
  if (layout.boundaries.empty()) {
    out += "  stage hops      none (one stage)\n";
    return;
  }
  const StageBoundary& first = layout.boundaries.front();
  // With block attention residuals each hop carries the blocks done so far,
  // so the bytes grow with depth and each hop says its own.
  bool uniform = true;  // two hidden-size tensors on every hop
  for (const StageBoundary& hop : layout.boundaries)
    uniform &= hop.bytes_per_token == 2 * int64_t{plan.model.hidden} * kBf16Bytes;
  if (uniform) {
    out += fmt::format(
        "  stage hops      hidden_states + residual, bf16: {} B/token, {} B/token "
        "per TP rank\n",
        FormatThousands(first.bytes_per_token), FormatThousands(first.bytes_per_token_per_rank));
  } else {
    out +=
        "  stage hops      hidden_states + block attention residuals, bf16 (B/token, per TP "
        "rank)\n";
  }
  for (const StageBoundary& hop : layout.boundaries) {
    std::string where;
    for (const auto& [from, to] : hop.node_pairs) {
      if (from == to) continue;
      where += (where.empty() ? "" : ", ") + NodeNames(plan, {from}) + "->" + NodeNames(plan, {to});
    }
    const std::string text =
        hop.crosses_nodes() ? "crosses nodes " + where
                            : "intra-node (" + NodeNames(plan, {hop.node_pairs[0].first}) + ")";
    const std::string bytes = uniform
                                  ? ""
                                  : fmt::format("  {} / {}", FormatThousands(hop.bytes_per_token),
                                                FormatThousands(hop.bytes_per_token_per_rank));
    out += fmt::format("                  {} -> {}   {}{}\n", hop.from_stage, hop.from_stage + 1,
                       text, bytes);
  }
}

void RenderCollectives(const Plan& plan, const LayoutPlan& layout, std::string& out) {
  const int64_t ar_bytes =
      layout.stages.empty() ? 0 : layout.stages.front().collectives.allreduce_bytes_per_token;
  out += fmt::format(
      "  collectives     per forward pass, moe-a2a-backend {}; all-reduce {} "
      "B/token\n",
      plan.moe_a2a_backend, FormatThousands(ar_bytes));
  const bool a2a = std::any_of(layout.stages.begin(), layout.stages.end(),
                               [](const StagePlan& s) { return s.collectives.alltoall_count > 0; });
  std::vector<std::string> header = {"stage", "all-reduce", "all-gather", "crosses nodes"};
  if (a2a) header.insert(header.begin() + 3, "all-to-all");
  table::Table t = PlanTable(header, std::vector<bool>(header.size(), true));
  for (const StagePlan& s : layout.stages) {
    const StageCollectives& c = s.collectives;
    std::vector<std::string> row = {std::to_string(s.pp_rank), std::to_string(c.allreduce_count),
                                    std::to_string(c.allgather_count),
                                    c.allreduce_count == 0 ? "-"
                                    : c.crosses_nodes()
                                        ? fmt::format("yes ({} nodes)", c.nodes_spanned)
                                        : "no"};
    if (a2a) row.insert(row.begin() + 3, std::to_string(c.alltoall_count));
    t.rows.push_back(std::move(row));
  }
  out += table::Indent(table::RenderTextTable(t), kGutter);
  out += fmt::format(
      "                  total  {} all-reduce ({} across nodes), {} logits "
      "all-gather\n",
      layout.allreduce_per_forward, layout.cross_node_allreduce_per_forward,
      layout.allgather_per_forward);
}

void RenderLayout(const Plan& plan, const LayoutPlan& layout, std::string& out) {
  const spec::LayoutSpec& l = layout.layout;
  out += fmt::format("\n== {}  {}  ({})\n", l.Label(), layout.valid ? "valid" : "INVALID",
                     l.origin.Where());
  for (const Diagnostic& e : layout.errors) out += "error: " + e.message + "\n";
  for (const Diagnostic& w : layout.warnings) out += "warning: " + w.message + "\n";
  if (layout.ranks.empty()) return;
  out += fmt::format(
      "  summary         {} ranks; MoE-TP {} (TP {} / EP {}); max weights {} MiB "
      "per rank\n",
      layout.world_size, layout.moe_tp, l.tp, l.ep, FormatMib(layout.weight_mib_per_rank_max));
  if (l.instances > 1) {
    std::vector<std::string> sets;
    for (const std::vector<int>& nodes : layout.instance_nodes) {
      std::vector<std::string> names;
      for (int n : nodes)
        if (n < static_cast<int>(plan.cluster.hosts.size())) names.push_back(plan.cluster.hosts[n]);
      sets.push_back(fmt::format("[{}]", fmt::join(names, ", ")));
    }
    out += fmt::format(
        "                  {} instances, each a whole deployment on its own nodes: {}; the "
        "ranks below are one instance's, on its first node onwards\n",
        l.instances, fmt::join(sets, " "));
  }
  if (!layout.attention_groups.empty())
    out += fmt::format(
        "                  DP attention: {} attention groups of {} ranks per stage, each with "
        "its own attention weights and KV pool\n",
        l.dp, layout.attn_tp);
  out += fmt::format(
      "                  {} of {} stage hops cross nodes; {} of {} all-reduces "
      "per forward cross nodes\n",
      layout.cross_node_stage_boundaries, layout.boundaries.size(),
      layout.cross_node_allreduce_per_forward, layout.allreduce_per_forward);
  RenderRankMap(plan, layout, out);
  RenderTpGroups(plan, layout, out);
  RenderAttentionGroups(plan, layout, out);
  RenderStages(plan, layout, out);
  RenderMemory(layout, out);
  RenderBoundaries(plan, layout, out);
  RenderCollectives(plan, layout, out);
}

}  // namespace

std::string RenderPlanText(const Plan& plan) {
  std::string out;
  RenderHeader(plan, out);
  for (const LayoutPlan& layout : plan.layouts) RenderLayout(plan, layout, out);
  int invalid = 0;
  for (const LayoutPlan& layout : plan.layouts) invalid += layout.valid ? 0 : 1;
  out += fmt::format("\n# {}, {} valid, {} invalid; {}\n", Counted(plan.layouts.size(), "layout"),
                     plan.layouts.size() - invalid, invalid,
                     Counted(plan.warnings.size(), "spec warning"));
  return out;
}

}  // namespace ppsearch::plan
