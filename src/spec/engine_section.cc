// [engine]: what runs on every node, and the server flags every layout shares.

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spec/engine_env.h"
#include "spec/limits.h"
#include "spec/moe_backends.h"
#include "spec/sections.h"
#include "util/excerpt.h"
#include "util/files.h"

namespace ppsearch::spec {
namespace {

struct OwnedFlag {
  const char* flag;
  const char* owner;
};

// Flags that differ per layout or per node. Each sample sets them itself; a
// fixed value in [engine.args] would silently contradict the layout under test.
constexpr OwnedFlag kOwnedFlags[] = {
    {"tp-size", "the sweep sets it from [sweep] (pp/tp/ep or layouts)"},
    {"tensor-parallel-size", "the sweep sets it from [sweep] (pp/tp/ep or layouts)"},
    {"tp", "the sweep sets it from [sweep] (pp/tp/ep or layouts)"},
    {"pp-size", "the sweep sets it from [sweep] (pp/tp/ep or layouts)"},
    {"pipeline-parallel-size", "the sweep sets it from [sweep] (pp/tp/ep or layouts)"},
    {"pp", "the sweep sets it from [sweep] (pp/tp/ep or layouts)"},
    {"ep-size", "the sweep sets it from [sweep] (pp/tp/ep or layouts)"},
    {"expert-parallel-size", "the sweep sets it from [sweep] (pp/tp/ep or layouts)"},
    {"ep", "the sweep sets it from [sweep] (pp/tp/ep or layouts)"},
    {"dp-size", "the sweep sets it from [sweep] (dp, or dp in layouts)"},
    {"data-parallel-size", "the sweep sets it from [sweep] (dp, or dp in layouts)"},
    {"dp", "the sweep sets it from [sweep] (dp, or dp in layouts)"},
    {"enable-dp-attention", "the sweep sets it from [sweep] (dp > 1 turns it on)"},
    {"nnodes", "the launcher sets it from [cluster]"},
    {"node-rank", "the launcher sets it from [cluster]"},
    {"dist-init-addr", "the launcher sets it from [cluster]"},
    {"nccl-init-addr", "the launcher sets it from [cluster]"},
    {"host", "the launcher sets it from [cluster]"},
    {"port", "the launcher sets it from [cluster]"},
    {"model-path", "the launcher sets it from engine.model_path"},
    {"disaggregation-mode", "the pools set it ([sweep.prefill], [sweep.decode])"},
    {"disaggregation-transfer-backend", "[engine.disaggregation] sets it (transfer_backend)"},
    {"disaggregation-bootstrap-port", "[engine.disaggregation] sets it (bootstrap_port)"},
    {"disaggregation-ib-device", "[engine.disaggregation] sets it (ib_device)"},
};

Status CheckFlagName(const std::string& name, const SourceLoc& loc, const std::string& table) {
  if (!name.empty() && name.front() == '-') {
    size_t first = name.find_first_not_of('-');
    std::string bare = first == std::string::npos ? "" : name.substr(first);
    return KeyError(loc, "write the flag without leading dashes ('" + Excerpt(bare) + "')");
  }
  if (name.find('_') != std::string::npos) {
    std::string dashed = name;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    return KeyError(loc, "SGLang flags are spelled with dashes ('" + Excerpt(dashed) + "')");
  }
  for (const auto& owned : kOwnedFlags) {
    if (name == owned.flag) {
      return KeyError(loc, std::string(owned.owner) + "; remove it from [" + table + "]");
    }
  }
  return Status::Ok();
}

Result<ArgValue> ToArgValue(const toml::node& node, const SourceLoc& loc) {
  ArgValue arg;
  arg.origin = loc;
  if (const auto* s = node.as_string()) {
    arg.kind = ArgValue::Kind::kString;
    arg.text = s->get();
  } else if (const auto* i = node.as_integer()) {
    arg.kind = ArgValue::Kind::kInt;
    arg.int_value = i->get();
    arg.text = std::to_string(arg.int_value);
  } else if (node.is_floating_point()) {
    arg.kind = ArgValue::Kind::kFloat;
    PPS_ASSIGN_OR_RETURN(arg.float_value, ToFiniteFloat(node, loc));
    arg.text = FormatNumber(arg.float_value);
  } else if (const auto* b = node.as_boolean()) {
    arg.kind = ArgValue::Kind::kBool;
    arg.bool_value = b->get();
    arg.text = arg.bool_value ? "true" : "false";
  } else {
    return KeyError(loc, "expected a string, number or boolean, got " + DescribeType(node));
  }
  return arg;
}

// A float, an integer or a string that is wholly a finite number ("0.85"),
// as SGLang's argparse reads it; nullopt otherwise.
std::optional<double> ArgNumber(const ArgValue& arg) {
  if (arg.kind == ArgValue::Kind::kFloat) return arg.float_value;
  if (arg.kind == ArgValue::Kind::kInt) return static_cast<double>(arg.int_value);
  if (arg.kind != ArgValue::Kind::kString) return std::nullopt;
  double parsed = 0;
  const char* begin = arg.text.data();
  const char* end = begin + arg.text.size();
  auto [ptr, ec] = std::from_chars(begin, end, parsed);
  if (ec != std::errc() || ptr != end || begin == end || !std::isfinite(parsed))
    return std::nullopt;
  return parsed;
}

// A flag the planner reads as a number, with the range SGLang gives it
// meaning in; written as a float, an integer or a numeric string.
struct NumericFlag {
  const char* flag;
  double low = 0;
  bool low_open = false;  // low itself is out of range
  double high = 0;
  bool high_open = false;
  bool whole = false;
  std::string expected;  // what the error says it expects
};

const std::vector<NumericFlag>& NumericFlags() {
  static const std::vector<NumericFlag> flags = {
      {"mem-fraction-static", 0, true, 1, true, false,
       "a number in (0, 1) (the share of each GPU's memory SGLang takes for weights and the KV "
       "cache)"},
      // 0 or a negative cap admits nothing (the simulator would predict a
      // server that never runs a request).
      {"max-running-requests", kMinRunningRequests, false, kMaxRunningRequests, false, true,
       "a whole number in [" + std::to_string(kMinRunningRequests) + ", " +
           std::to_string(kMaxRunningRequests) + "] (requests a scheduler runs at once)"},
      // A context of no token admits no request; the request table and the
      // default request count divide by it.
      {"context-length", 1, false, 1e9, false, true,
       "a whole number of tokens of at least 1 (the longest request SGLang admits)"},
      // -1 runs prefills whole; 0 is refused below, as search and serve-sim
      // refuse it (SGLang reads it as -1: say what is meant).
      {"chunked-prefill-size", -1, false, static_cast<double>(kMaxTokens), false, true,
       "a whole number of tokens from 1 to " + std::to_string(kMaxTokens) +
           ", or -1 to prefill each request whole (the scheduler's prefill chunk)"},
      {"pp-max-micro-batch-size", 1, false, kMaxConcurrency, false, true,
       "a whole number in [1, " + std::to_string(kMaxConcurrency) +
           "] (requests in one pipeline micro-batch)"},
      {"max-prefill-tokens", 1, false, static_cast<double>(kMaxTokens), false, true,
       "a whole number of tokens in [1, " + std::to_string(kMaxTokens) +
           "] (tokens one prefill batch takes)"},
      {"max-total-tokens", 1, false, 1e12, false, true,
       "a whole number of tokens of at least 1 (the KV pool's size)"},
      {"mamba-full-memory-ratio", 0, true, 1e6, false, false,
       "a positive number (the linear-attention state pool's budget over the KV pool's)"},
      {"max-mamba-cache-size", 1, false, 1e9, false, true,
       "a whole number of at least 1 (linear-attention request states the server keeps)"},
  };
  return flags;
}

// An integer as argparse's type=int reads it: 64 or "64", not 64.0 or "1e3".
bool IntegerSpelling(const ArgValue& arg) {
  if (arg.kind == ArgValue::Kind::kInt) return true;
  if (arg.kind != ArgValue::Kind::kString) return false;
  int64_t parsed = 0;
  const char* begin = arg.text.data();
  const char* end = begin + arg.text.size();
  auto [ptr, ec] = std::from_chars(begin, end, parsed);
  return ec == std::errc() && ptr == end && begin != end;
}

Status CheckNumericArgs(const EngineSpec& engine) {
  for (const NumericFlag& f : NumericFlags()) {
    const ArgValue* arg = engine.FindArg(f.flag);
    if (arg == nullptr) continue;
    const std::optional<double> v = ArgNumber(*arg);
    const bool in_range = v && (f.low_open ? *v > f.low : *v >= f.low) &&
                          (f.high_open ? *v < f.high : *v <= f.high) &&
                          (!f.whole || (*v == std::floor(*v) && IntegerSpelling(*arg))) &&
                          !(*v == 0 && std::string_view(f.flag) == "chunked-prefill-size");
    // A whole float prints without its point ("64" for 64.0): say how it
    // was written, or the error would read as refusing a whole number.
    const bool whole_float = f.whole && arg->kind == ArgValue::Kind::kFloat &&
                             arg->text.find_first_of(".eE") == std::string::npos;
    if (!in_range)
      return KeyError(arg->origin, "expected " + f.expected + ", got " + Excerpt(arg->text) +
                                       (whole_float ? " (written as a float)" : ""));
  }
  const ArgValue* strategy = nullptr;
  for (const char* flag : {"mamba-radix-cache-strategy", "mamba-scheduler-strategy"}) {
    const ArgValue* v = engine.FindArg(flag);
    if (v == nullptr) continue;
    if (strategy != nullptr)
      return KeyError(v->origin,
                      "mamba-scheduler-strategy is SGLang's older name of "
                      "mamba-radix-cache-strategy; give one of them");
    strategy = v;
    static const std::vector<std::string> kStrategies = {"auto", "no_buffer", "extra_buffer",
                                                         "extra_buffer_lazy"};
    if (v->kind != ArgValue::Kind::kString ||
        std::find(kStrategies.begin(), kStrategies.end(), v->text) == kStrategies.end())
      return KeyError(v->origin, "\"" + Excerpt(v->text) + "\" is not an SGLang " + flag +
                                     " (auto, no_buffer, extra_buffer, extra_buffer_lazy)");
  }
  if (const ArgValue* backend = engine.FindArg("moe-a2a-backend")) {
    if (backend->kind != ArgValue::Kind::kString || !IsMoeA2aBackend(backend->text))
      return KeyError(backend->origin, "\"" + Excerpt(backend->text) +
                                           "\" is not an SGLang moe-a2a-backend (" +
                                           MoeA2aBackendNames() + ")");
  }
  return Status::Ok();
}

}  // namespace

Status ReadEngineArgs(const TableReader& args, EngineSpec* out) {
  for (const auto& [key, node] : InWrittenOrder(args)) {
    const std::string name(key->str());
    const std::string dotted = JoinKey(args.key_path(), name);
    PPS_RETURN_IF_ERROR(
        CheckFlagName(name, args.source().Locate(key->source(), dotted), args.key_path()));
    PPS_ASSIGN_OR_RETURN(ArgValue value,
                         ToArgValue(*node, args.source().Locate(node->source(), dotted)));
    out->args.emplace_back(name, std::move(value));
  }
  return CheckNumericArgs(*out);
}

Status CheckPlaceholders(const std::vector<std::string>& words, const SourceLoc& loc) {
  static const std::vector<std::string> known = {"{host}", "{node_rank}", "{sample}",
                                                 "{port}", "{spec_dir}",  "{ppsearch}"};
  for (const std::string& w : words) {
    for (size_t open = w.find('{'); open != std::string::npos; open = w.find('{', open + 1)) {
      const size_t close = w.find('}', open);
      if (close == std::string::npos) continue;
      const std::string p = w.substr(open, close - open + 1);
      if (std::find(known.begin(), known.end(), p) == known.end())
        return KeyError(
            loc, "unknown placeholder '" + p +
                     "' (known: {host}, {node_rank}, {sample}, {port}, {spec_dir}, {ppsearch})");
    }
  }
  return Status::Ok();
}

namespace {

bool IsEnvName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

Status ReadEnv(const TableReader& env, EngineSpec* out) {
  for (const auto& [key, node] : InWrittenOrder(env)) {
    const std::string name(key->str());
    SourceLoc loc = env.source().Locate(node->source(), JoinKey(env.key_path(), name));
    if (!IsEnvName(name))
      return PositionError(loc, std::string("'").append(JoinKey(env.key_path(), name)) +
                                    "' is not an environment variable name (letters, digits "
                                    "and '_', not starting with a digit)");
    // A variable holds text, but numbers and booleans are common in them
    // (NCCL_IB_DISABLE = 1, SGLANG_ENABLE_TORCH_COMPILE = true): a scalar is
    // its text as in [engine.args], so `--set engine.env.X=1` and `=true` are alike.
    // A date, an array or a table is no variable's text: the value, quoted, is.
    if (!node->is_string() && !node->is_number() && !node->is_boolean())
      return KeyError(
          loc, "expected a string (quote it), a number or a boolean, got " + DescribeType(*node));
    PPS_ASSIGN_OR_RETURN(ArgValue scalar, ToArgValue(*node, loc));
    std::string value = std::move(scalar.text);
    if (const char* expected = ModelledEnvExpected(name, value))
      return PositionError(loc, std::string("key '").append(JoinKey(env.key_path(), name)) +
                                    "': expected " + expected + ", got \"" + Excerpt(value) + "\"");
    out->env.emplace_back(name, std::move(value));
  }
  return Status::Ok();
}

// [engine.pp_layer_partition]: `8 = [12, 12, 12, 12, 12, 11, 11, 11]`, a PP
// degree (2 or more) and one layer count (at least 1) per stage. Whether the
// counts sum to the model's layers is the planner's check.
Status ReadPpLayerPartitions(const TableReader& table, EngineSpec* out) {
  for (const auto& [key, node] : InWrittenOrder(table)) {
    const std::string name(key->str());
    const SourceLoc loc = table.source().Locate(node->source(), JoinKey(table.key_path(), name));
    int pp = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pp);
    if (name.empty() || ec != std::errc() || end != name.data() + name.size() || pp < 2 ||
        pp > kMaxParallelSize || name.front() == '0')
      return PositionError(
          loc, "key '" + JoinKey(table.key_path(), name) +
                   fmt::format("': expected a pipeline size from 2 to {} as the key (8 = "
                               "[12, 12, 12, 12, 12, 11, 11, 11])",
                               kMaxParallelSize));
    PPS_ASSIGN_OR_RETURN(const toml::array* array,
                         ToArray(*node, loc, "one layer count per pipeline stage"));
    std::vector<int> partition;
    for (size_t i = 0; i < array->size(); ++i) {
      const toml::node& element = *array->get(i);
      const SourceLoc at =
          table.source().Locate(element.source(), loc.key + "[" + std::to_string(i) + "]");
      PPS_ASSIGN_OR_RETURN(const int64_t layers, ToInt(element, at, 1, INT_MAX));
      partition.push_back(static_cast<int>(layers));
    }
    if (static_cast<int>(partition.size()) != pp)
      return KeyError(loc, fmt::format("expected {} layer counts, one per stage of PP{}, got {}",
                                       pp, pp, partition.size()));
    out->pp_layer_partitions[pp] = std::move(partition);
  }
  return Status::Ok();
}

// engine.patches: non-empty paths, each named once. Whether the files exist
// is checked when a run hashes them (run.json), not here: an old run's
// metadata/spec.toml must still parse after its patch files moved.
Status ReadPatches(const TableReader& section, const std::string& base_dir, EngineSpec* out) {
  std::vector<std::string> paths;
  PPS_RETURN_IF_ERROR(section.StringList("patches", &paths, false));
  if (paths.empty()) return Status::Ok();
  const toml::array& array = *section.Find("patches")->as_array();
  for (size_t i = 0; i < paths.size(); ++i) {
    const SourceLoc loc =
        section.source().Locate(array.get(i)->source(), JoinKey(section.key_path(), "patches") +
                                                            "[" + std::to_string(i) + "]");
    if (paths[i].empty())
      return KeyError(loc, "expected the path of a patch or extra file, got \"\"");
    const std::string resolved = ResolvePath(base_dir, paths[i]);
    if (std::find(out->patches.begin(), out->patches.end(), resolved) != out->patches.end())
      return KeyError(loc, "'" + paths[i] + "' is named twice");
    out->patches.push_back(resolved);
  }
  return Status::Ok();
}

}  // namespace

Status ReadEngine(const TableReader& section, const std::string& base_dir, EngineSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys(kEngineKeys));
  out->origin = section.origin();
  PPS_RETURN_IF_ERROR(section.Enum("kind", &out->kind, {"sglang"}));
  PPS_RETURN_IF_ERROR(section.StringList("command", &out->command, true));
  PPS_RETURN_IF_ERROR(CheckPlaceholders(out->command, section.KeyLoc("command")));
  PPS_RETURN_IF_ERROR(section.String("image", &out->image, Need::kOptional));
  PPS_RETURN_IF_ERROR(
      section.Enum("container", &out->container, {"docker", "podman", "apptainer", "enroot"}));
  PPS_RETURN_IF_ERROR(section.StringList("container_args", &out->container_args, false));
  PPS_RETURN_IF_ERROR(section.StringList("secret_env", &out->secret_env, false));
  PPS_RETURN_IF_ERROR(section.String("model_path", &out->model_path, Need::kOptional));
  PPS_RETURN_IF_ERROR(section.String("model_config", &out->model_config, Need::kRequired));
  out->model_config = ResolvePath(base_dir, out->model_config);
  PPS_RETURN_IF_ERROR(section.String("version", &out->version, Need::kOptional));
  if (!out->version.empty() && !ParseVersion(out->version))
    return KeyError(
        section.KeyLoc("version"),
        "expected an SGLang version such as \"0.5.18\", got '" + Excerpt(out->version) + "'");

  PPS_RETURN_IF_ERROR(ReadPatches(section, base_dir, out));

  PPS_ASSIGN_OR_RETURN(const toml::table* args, section.Table("args", Need::kOptional));
  if (args != nullptr) {
    PPS_RETURN_IF_ERROR(ReadEngineArgs(
        TableReader(section.source(), *args, JoinKey(section.key_path(), "args")), out));
  }
  PPS_ASSIGN_OR_RETURN(const toml::table* env, section.Table("env", Need::kOptional));
  if (env != nullptr) {
    PPS_RETURN_IF_ERROR(
        ReadEnv(TableReader(section.source(), *env, JoinKey(section.key_path(), "env")), out));
  }
  PPS_ASSIGN_OR_RETURN(const toml::table* partitions,
                       section.Table("pp_layer_partition", Need::kOptional));
  if (partitions != nullptr) {
    // One variable, one writer: a split for every layout and one per PP
    // degree would leave a reader to guess which the servers ran with.
    if (FindEnv(*out, kPpLayerPartitionEnv) != nullptr)
      return KeyError(section.KeyLoc("pp_layer_partition"),
                      std::string("set the layer split either in [engine.env] ") +
                          kPpLayerPartitionEnv +
                          " (every layout) or here (per pipeline size), not in both");
    PPS_RETURN_IF_ERROR(
        ReadPpLayerPartitions(TableReader(section.source(), *partitions,
                                          JoinKey(section.key_path(), "pp_layer_partition")),
                              out));
  }
  // [engine.disaggregation] is read with the pools (ReadDisaggregation).
  return Status::Ok();
}

}  // namespace ppsearch::spec
