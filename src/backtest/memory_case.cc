#include "backtest/memory_case.h"

#include <string>
#include <utility>

#include "inputs/search_inputs.h"
#include "memory/memory_model.h"
#include "plan/plan.h"
#include "spec/sections.h"
#include "spec/spec_parser.h"

namespace ppsearch::backtest {
namespace {

using spec::Need;
using spec::TableReader;

constexpr double kMibPerGib = 1024;

Result<MemoryReference> ReadOne(const TableReader& parent, const std::string& name,
                                const toml::node& node) {
  const SourceLoc loc = parent.KeyLoc(name);
  PPS_ASSIGN_OR_RETURN(
      const toml::table* table,
      spec::ToTable(node, loc, "{layout = {pp = 1, tp = 8}, set = [...], kv_tokens = ...}"));
  TableReader t(parent.source(), *table, loc.key);
  PPS_RETURN_IF_ERROR(
      t.CheckKeys({"layout", "set", "stage", "gpu", "gpu_memory_mib", "weight_gib", "kv_tokens",
                   "source", "what", "weight_miss", "kv_tokens_miss"}));
  MemoryReference m;
  m.name = name;
  m.origin = loc;
  const toml::node* layout = t.Find("layout");
  if (layout == nullptr) return t.Missing("layout", " (e.g. layout = {pp = 1, tp = 8})");
  PPS_ASSIGN_OR_RETURN(m.layout,
                       spec::ReadLayoutTuple(parent.source(), *layout, t.KeyLoc("layout")));
  PPS_RETURN_IF_ERROR(t.StringList("set", &m.overrides, false));
  PPS_RETURN_IF_ERROR(t.Int("stage", &m.stage, Need::kOptional, 0, m.layout.pp - 1));
  PPS_RETURN_IF_ERROR(t.String("gpu", &m.gpu, Need::kOptional));
  PPS_RETURN_IF_ERROR(t.Number("gpu_memory_mib", &m.gpu_memory_mib, 1024, 1e7));
  PPS_RETURN_IF_ERROR(t.Number("weight_gib", &m.weight_gib, 1e-3, 1e6));
  PPS_RETURN_IF_ERROR(t.Int("kv_tokens", &m.kv_tokens, Need::kOptional, 1, INT64_MAX));
  if (m.weight_gib == 0 && m.kv_tokens == 0)
    return spec::PositionError(
        loc, "memory reference '" + loc.key + "': expected weight_gib, kv_tokens or both");
  PPS_RETURN_IF_ERROR(t.String("source", &m.source, Need::kRequired));
  PPS_RETURN_IF_ERROR(t.String("what", &m.what, Need::kOptional));
  PPS_RETURN_IF_ERROR(t.String("weight_miss", &m.weight_miss, Need::kOptional));
  PPS_RETURN_IF_ERROR(t.String("kv_tokens_miss", &m.kv_tokens_miss, Need::kOptional));
  if (!m.weight_miss.empty() && m.weight_gib == 0)
    return spec::KeyError(t.KeyLoc("weight_miss"), "a reason for a weight_gib that is not given");
  if (!m.kv_tokens_miss.empty() && m.kv_tokens == 0)
    return spec::KeyError(t.KeyLoc("kv_tokens_miss"), "a reason for a kv_tokens that is not given");
  return m;
}

}  // namespace

Result<std::vector<MemoryReference>> ReadMemoryReferences(const TableReader& top) {
  std::vector<MemoryReference> out;
  PPS_ASSIGN_OR_RETURN(const toml::table* table,
                       top.Table("memory", Need::kOptional,
                                 "[memory.tp4-h100] layout = {pp = 1, tp = 4}, kv_tokens = ..."));
  if (table == nullptr) return out;
  TableReader memory(top.source(), *table, "memory");
  for (const auto& [key, node] : spec::InWrittenOrder(memory)) {
    PPS_ASSIGN_OR_RETURN(MemoryReference m, ReadOne(memory, std::string(key->str()), *node));
    out.push_back(std::move(m));
  }
  return out;
}

Result<std::vector<FigureResult>> MemoryFigures(const Case& c) {
  std::vector<FigureResult> out;
  for (const MemoryReference& m : c.memory) {
    auto at = [&](const std::string& message) {
      return MakeError(m.origin.Where() + ": " + message);
    };
    Result<spec::Spec> spec = spec::LoadSpec(c.spec_path, m.overrides);
    if (!spec.ok()) return at(spec.error().message);
    Result<inputs::SearchInputs> in =
        inputs::LoadSearchInputs(std::move(spec).value(), {m.layout}, {1});
    if (!in.ok()) return at(in.error().message);
    hardware::HardwareProfile hw = in->hardware;
    if (m.gpu_memory_mib > 0) hw.memory_mib = m.gpu_memory_mib;
    // Planned on the logged GPU's memory: SGLang's defaults (the chunk) follow it.
    const plan::LayoutPlan plan = plan::PlanLayout(m.layout, in->spec, in->model, hw);
    const memory::MemoryPlan memory =
        memory::PlanMemory(plan::StageMemoryInputs(plan, in->spec, in->model, hw));
    if (memory.stages.size() <= static_cast<size_t>(m.stage))
      return at(m.layout.Label() + " has no stage " + std::to_string(m.stage));
    const std::string label = m.name + " (" + m.layout.Label() +
                              (m.gpu.empty() ? "" : ", " + m.gpu) + ", stage " +
                              std::to_string(m.stage) + ")";
    if (m.weight_gib > 0) {
      FigureResult f = MakeFigure(label + " weights per GPU", "GiB", m.weight_gib,
                                  memory.stages[m.stage].weight_mib / kMibPerGib, kWeightTolerance);
      f.what = m.source;
      f.known_miss = m.weight_miss;
      f.memory = true;
      out.push_back(std::move(f));
    }
    if (m.kv_tokens > 0) {
      FigureResult f =
          MakeFigure(label + " KV pool tokens", "tokens", static_cast<double>(m.kv_tokens),
                     static_cast<double>(memory.max_total_tokens), kKvTokenTolerance);
      f.what = m.source;
      f.known_miss = m.kv_tokens_miss;
      f.memory = true;
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace ppsearch::backtest
