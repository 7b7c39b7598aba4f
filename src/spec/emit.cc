#include "spec/emit.h"

#include <filesystem>
#include <sstream>

#include "spec/overrides.h"
#include "spec/toml_access.h"
#include "util/files.h"

namespace ppsearch::spec {
namespace {

namespace fs = std::filesystem;

toml::table* TableAt(toml::table& root, std::initializer_list<const char*> keys) {
  toml::table* t = &root;
  for (const char* k : keys) {
    if (t == nullptr) return nullptr;
    t = (*t)[k].as_table();
  }
  return t;
}

// The string at `table[key]` (and each string of an array there) made
// absolute against `base`; with `is_path`, only a string it calls a path.
void Absolute(toml::table* table, const char* key, const std::string& base,
              bool (*is_path)(const std::string&) = nullptr) {
  if (table == nullptr) return;
  toml::node* n = table->get(key);
  if (n == nullptr) return;
  auto fix = [&](toml::node& v) {
    if (auto* s = v.as_string()) {
      const std::string value = s->get();
      if (value.empty() || (is_path != nullptr && !is_path(value))) return;
      *s = ResolvePath(base, value);
    }
  };
  if (auto* a = n->as_array()) {
    for (auto& v : *a) fix(v);
  } else {
    fix(*n);
  }
}

toml::array IntArray(const std::vector<int>& values) {
  toml::array a;
  for (int v : values) a.push_back(v);
  return a;
}

// `splits` as [engine.pp_layer_partition] entries, beside the source's own.
void SetLayerSplits(toml::table& root, const std::map<int, std::vector<int>>& splits) {
  if (TableAt(root, {"engine"}) == nullptr) root.insert_or_assign("engine", toml::table{});
  toml::table* engine = TableAt(root, {"engine"});
  toml::table table;
  if (const toml::table* source = TableAt(root, {"engine", "pp_layer_partition"})) table = *source;
  for (const auto& [pp, split] : splits)
    table.insert_or_assign(std::to_string(pp), IntArray(split));
  engine->insert_or_assign("pp_layer_partition", std::move(table));
}

}  // namespace

Result<std::string> DeriveSpecText(const std::string& text, const std::string& path,
                                   const std::vector<std::string>& overrides,
                                   const DerivedSweep& sweep, const std::string& header) {
  PPS_ASSIGN_OR_RETURN(toml::table root, ParseToml(text, path));
  for (const std::string& o : overrides) PPS_RETURN_IF_ERROR(ApplyOverride(o, &root));
  const std::string base = fs::absolute(fs::path(path)).parent_path().lexically_normal().string();

  Absolute(TableAt(root, {"experiment"}), "results_dir", base);
  Absolute(TableAt(root, {"engine"}), "model_config", base);
  Absolute(TableAt(root, {"engine"}), "patches", base);
  Absolute(TableAt(root, {"cluster"}), "hardware", base, HardwareNamesAFile);
  Absolute(TableAt(root, {"cluster", "ssh"}), "config", base);
  Absolute(TableAt(root, {"cluster", "ssh"}), "key", base);
  if (toml::table* ssh = TableAt(root, {"cluster", "ssh"}))
    for (auto&& [name, node] : *ssh)
      if (node.is_table()) Absolute(node.as_table(), "key", base);
  Absolute(TableAt(root, {"cluster", "sudo"}), "password_file", base);
  Absolute(TableAt(root, {"baseline"}), "import_csv", base);
  Absolute(TableAt(root, {"baseline"}), "import_run", base);
  Absolute(TableAt(root, {"profile"}), "file", base);
  if (toml::table* engine = TableAt(root, {"engine"}))
    if (toml::array* command = (*engine)["command"].as_array())
      for (auto& word : *command)
        if (auto* s = word.as_string()) {
          std::string w = s->get();
          for (size_t at; (at = w.find("{spec_dir}")) != std::string::npos;)
            w.replace(at, 10, base);
          *s = w;
        }

  toml::table* sweep_table = TableAt(root, {"sweep"});
  if (sweep_table == nullptr) {
    root.insert_or_assign("sweep", toml::table{});
    sweep_table = TableAt(root, {"sweep"});
  }
  for (const char* list : {"pp", "tp", "ep", "dp", "instances"}) sweep_table->erase(list);
  auto layout_table = [](const LayoutSpec& l) {
    toml::table t{{"pp", l.pp}, {"tp", l.tp}, {"ep", l.ep}};
    if (l.dp > 1) t.insert("dp", l.dp);
    if (l.instances > 1) t.insert("instances", l.instances);
    return t;
  };
  if (sweep.prefill && sweep.decode) {
    sweep_table->erase("layouts");
    for (const auto& [name, pool] :
         {std::pair{"prefill", &*sweep.prefill}, std::pair{"decode", &*sweep.decode}}) {
      toml::table t = layout_table(pool->layout);
      toml::array hosts;
      for (const std::string& h : pool->hosts) hosts.push_back(h);
      t.insert("hosts", std::move(hosts));
      sweep_table->insert_or_assign(name, std::move(t));
    }
  } else {
    toml::array layouts;
    for (const LayoutSpec& l : sweep.layouts) layouts.push_back(layout_table(l));
    sweep_table->insert_or_assign("layouts", std::move(layouts));
  }
  if (!sweep.concurrency.empty()) {
    toml::array levels;
    for (int c : sweep.concurrency) levels.push_back(c);
    sweep_table->insert_or_assign("concurrency", std::move(levels));
  }
  if (sweep.request_rate) {
    if (TableAt(root, {"workload"}) == nullptr) root.insert_or_assign("workload", toml::table{});
    TableAt(root, {"workload"})->insert_or_assign("request_rate", *sweep.request_rate);
  }
  if (!sweep.engine_args.empty()) {
    toml::table* engine = TableAt(root, {"engine"});
    if (engine != nullptr) {
      if ((*engine)["args"].as_table() == nullptr) engine->insert_or_assign("args", toml::table{});
      toml::table* args = TableAt(root, {"engine", "args"});
      for (const auto& [flag, value] : sweep.engine_args)
        std::visit([&, f = flag](const auto& v) { args->insert_or_assign(f, v); }, value);
    }
  }
  if (!sweep.pp_layer_partitions.empty()) SetLayerSplits(root, sweep.pp_layer_partitions);
  std::ostringstream out;
  // Floats at 15 significant digits (digits10): every value read from a
  // spec's text of up to 15 digits prints as written and reads back to the
  // same double ("0.3", not the 17-digit "0.29999999999999999").
  out << header
      << toml::toml_formatter{root, toml::toml_formatter::default_flags |
                                        toml::format_flags::relaxed_float_precision}
      << "\n";
  return out.str();
}

}  // namespace ppsearch::spec
