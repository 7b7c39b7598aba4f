// docs/spec.md is the reference users write specs from; these tests keep it
// and the parser's key lists (spec/keys.h) the same set. In the document,
// every table whose first header cell is "key" lists keys: each row's first
// cell is one dotted key in backticks, followed by its type, default and an
// example.

#include "spec/keys.h"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ppsearch_source_dir.h"
#include "spec/spec_parser.h"
#include "spec/toml_access.h"

namespace ppsearch::spec {
namespace {

const std::string kSpecDoc = std::string(PPSEARCH_SOURCE_DIR) + "/docs/spec.md";

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// The cells of a markdown table row "| a | b |", trimmed; {} for other lines.
std::vector<std::string> Cells(const std::string& line) {
  if (line.size() < 2 || line.front() != '|') return {};
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (line[i] == '|') {
      const size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

struct DocumentedKey {
  std::string key;
  int line = 0;
  std::vector<std::string> cells;
};

// Rows of the key tables, in document order.
std::vector<DocumentedKey> DocumentedKeys(const std::string& text) {
  std::vector<DocumentedKey> out;
  std::istringstream in(text);
  std::string line;
  bool in_key_table = false;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::vector<std::string> cells = Cells(line);
    if (cells.empty()) {
      in_key_table = false;
      continue;
    }
    if (!in_key_table) {
      // A header row starts a table; only "key" tables list keys.
      in_key_table = cells[0] == "key";
      std::getline(in, line);  // the delimiter row
      ++n;
      continue;
    }
    std::string key = cells[0];
    if (key.size() >= 2 && key.front() == '`' && key.back() == '`')
      key = key.substr(1, key.size() - 2);
    else
      key = "(not one key in backticks) " + key;
    out.push_back({key, n, cells});
  }
  return out;
}

TEST(SpecKeys, AcceptedKeysSpellOutEveryTable) {
  const std::vector<std::string> keys = AcceptedKeys();
  auto has = [&](const std::string& k) {
    return std::find(keys.begin(), keys.end(), k) != keys.end();
  };
  for (const char* k :
       {"experiment.name", "cluster.hosts", "cluster.hosts.address", "cluster.ssh.user",
        "cluster.ssh.<host>", "cluster.ssh.<host>.port", "cluster.slurm.partition", "engine.args",
        "engine.env", "sweep.layouts.ep", "baseline.layout.pp", "sim.inject.sample",
        "lifecycle.flush_cache", "profile.gap_us"})
    EXPECT_TRUE(has(k)) << k;
  EXPECT_FALSE(has("engine.args.chunked-prefill-size"));  // free-form: the table is the key
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), keys.size());
}

TEST(SpecKeys, TheSpecReferenceDocumentsExactlyTheKeysTheParserAccepts) {
  const std::string text = ReadText(kSpecDoc);
  ASSERT_FALSE(text.empty()) << kSpecDoc << " is missing or empty";
  const std::vector<DocumentedKey> documented = DocumentedKeys(text);
  const std::vector<std::string> accepted = AcceptedKeys();
  std::set<std::string> seen;
  for (const DocumentedKey& d : documented) {
    EXPECT_TRUE(std::find(accepted.begin(), accepted.end(), d.key) != accepted.end())
        << "docs/spec.md:" << d.line << ": '" << d.key
        << "' is documented, but the parser accepts no such key (spec/keys.h)";
    EXPECT_TRUE(seen.insert(d.key).second)
        << "docs/spec.md:" << d.line << ": '" << d.key << "' is documented twice";
    // key | type | default | example | meaning: none of them left empty.
    EXPECT_GE(d.cells.size(), 5u) << "docs/spec.md:" << d.line;
    for (size_t i = 1; i < d.cells.size() && i < 5; ++i)
      EXPECT_FALSE(d.cells[i].empty()) << "docs/spec.md:" << d.line << ": cell " << i + 1;
  }
  for (const std::string& key : accepted)
    EXPECT_TRUE(seen.count(key))
        << "the parser accepts '" << key
        << "', but docs/spec.md does not document it (add a row to a key table)";
  // Every top-level table has its own heading, e.g. "## [cluster]".
  for (const std::string& section : kSpecSections)
    EXPECT_NE(text.find("\n## `[" + section + "]`"), std::string::npos)
        << "docs/spec.md has no heading ## `[" << section << "]`";
}

// Dotted paths of a spec as AcceptedKeys() spells them.
void CollectKeys(const toml::table& table, const std::string& path, std::set<std::string>* out) {
  for (const auto& [key, node] : table) {
    std::string dotted =
        path.empty() ? std::string(key.str()) : path + "." + std::string(key.str());
    if (path == "cluster.ssh" && node.is_table()) dotted = "cluster.ssh.<host>";
    if (!path.empty()) out->insert(dotted);
    if (dotted == "engine.args" || dotted == "engine.env" || dotted == "sweep.prefill.args" ||
        dotted == "sweep.decode.args")
      continue;
    if (const auto* t = node.as_table()) {
      CollectKeys(*t, dotted, out);
    } else if (const auto* a = node.as_array()) {
      for (const auto& element : *a)
        if (const auto* t = element.as_table()) CollectKeys(*t, dotted, out);
    }
  }
}

// The mapping from tables to dotted paths matches real specs: every key the
// shipped examples write is one AcceptedKeys() names.
TEST(SpecKeys, TheExamplesWriteOnlyAcceptedKeys) {
  const std::vector<std::string> accepted = AcceptedKeys();
  for (const char* name :
       {"kimi-k3-pp-search.toml", "kimi-k3-rehearsal.toml", "deepseek-v3-1p3d.toml"}) {
    const std::string path = std::string(PPSEARCH_SOURCE_DIR) + "/examples/" + name;
    ASSERT_TRUE(LoadSpec(path, {}).ok()) << path;
    Result<toml::table> root = ParseToml(ReadText(path), path);
    ASSERT_TRUE(root.ok()) << path;
    std::set<std::string> written;
    CollectKeys(*root, "", &written);
    EXPECT_FALSE(written.empty());
    for (const std::string& key : written)
      EXPECT_TRUE(std::find(accepted.begin(), accepted.end(), key) != accepted.end())
          << name << " writes '" << key << "'";
  }
}

}  // namespace
}  // namespace ppsearch::spec
