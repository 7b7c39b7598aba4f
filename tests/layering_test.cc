// The source map is a test: src/README.md states the folders in floors, and
// every #include between folders must point to a lower floor. An arrow
// sideways or upwards (which is how a folder cycle starts) fails here, the
// way configure fails on a source that is in no list.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ppsearch_source_dir.h"

namespace ppsearch {
namespace {

namespace fs = std::filesystem;

// Test support (tests, benchmarks and the helpers they share) may include
// this top folder; product code may not.
constexpr const char* kTestKit = "testkit";

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// "floor 3: cost plan" lines of README.md -> folder -> floor. A folder named
// twice is reported through `problems`.
std::map<std::string, int> ReadFloors(const fs::path& readme, std::vector<std::string>& problems) {
  std::map<std::string, int> floors;
  std::istringstream in(Slurp(readme));
  const std::regex line_re(R"(^\s*floor\s+(\d+):\s*(.*)$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) continue;
    std::istringstream names(m[2].str());
    for (std::string name; names >> name;) {
      if (floors.count(name))
        problems.push_back(readme.string() + ": folder " + name + " is on two floors");
      floors[name] = std::stoi(m[1].str());
    }
  }
  return floors;
}

// Tests, benchmarks and the helpers only they use, by src/README.md's naming
// scheme: foo_test.cc, foo_bench.cc, foo_testing.{h,cc}.
bool IsTestSupport(const fs::path& file) {
  const std::string stem = file.stem().string();
  return stem.ends_with("_test") || stem.ends_with("_bench") || stem.ends_with("_testing");
}

// A line without its trailing // comment (one outside a string literal).
std::string CodeOf(const std::string& line) {
  bool quoted = false;
  for (size_t i = 0; i + 1 < line.size(); ++i) {
    if (line[i] == '\\') {
      ++i;
      continue;
    }
    if (line[i] == '"') quoted = !quoted;
    if (!quoted && line[i] == '/' && line[i + 1] == '/') return line.substr(0, i);
  }
  return line;
}

// Every arrow that breaks the floors under `src`, as "FILE:LINE: A (floor
// a) includes B (floor b): ..."; empty when the map holds.
std::vector<std::string> LayeringViolations(const fs::path& src) {
  std::vector<std::string> out;
  const std::map<std::string, int> floors = ReadFloors(src / "README.md", out);
  if (floors.empty()) return {(src / "README.md").string() + ": no 'floor N: folders' lines"};
  const std::regex include_re(R"re(^\s*#\s*include\s+"([^/"]+)/[^"]+")re");
  for (const fs::directory_entry& dir : fs::directory_iterator(src)) {
    if (!dir.is_directory()) continue;
    const std::string from = dir.path().filename().string();
    const auto from_floor = floors.find(from);
    if (from_floor == floors.end()) {
      out.push_back(dir.path().string() + ": folder " + from +
                    " is on no floor of src/README.md's map");
      continue;
    }
    for (const fs::directory_entry& file : fs::directory_iterator(dir.path())) {
      const std::string ext = file.path().extension().string();
      if (ext != ".cc" && ext != ".h") continue;
      std::istringstream text(Slurp(file.path()));
      int line_no = 0;
      for (std::string line; std::getline(text, line);) {
        ++line_no;
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        const std::string to = m[1].str();
        if (to == from || !fs::is_directory(src / to)) continue;
        if (to == kTestKit && (from == kTestKit || IsTestSupport(file.path()))) continue;
        const auto to_floor = floors.find(to);
        const std::string where = file.path().string() + ":" + std::to_string(line_no) + ": ";
        if (to == kTestKit) {
          out.push_back(where + "product code includes " + to + "/ (test support only)");
        } else if (to_floor == floors.end()) {
          out.push_back(where + "includes " + to + "/, which is on no floor");
        } else if (to_floor->second >= from_floor->second) {
          out.push_back(where + from + " (floor " + std::to_string(from_floor->second) +
                        ") includes " + to + " (floor " + std::to_string(to_floor->second) +
                        "): a folder may include only folders on lower floors");
        }
      }
    }
  }
  return out;
}

// Two seals over the floors, as "FILE:LINE: ..." lines; empty when they hold:
//  - a header named *_parts.h is its folder's own: the pieces a sealed
//    function assembles (predict/point_parts.h behind BuildPointModel), which
//    no other folder may include, so no caller can assemble them without one;
//  - an engine argument is read by name (EngineSpec::ArgInt, ArgString,
//    ArgTrue) only where the spec becomes typed settings: spec/ itself, the
//    loader's plan/engine_config.cc and plan/spec_hardware.cc, and sglang/,
//    which launches SGLang with the spec's own flags. Everything else reads
//    plan::EngineConfig, so no setting has a second default;
//  - an objective is decide::Objective's own: outside decide/ no line that
//    speaks of an objective compares it with a string literal, names one
//    by its Objective::Kind (ask the Objective: lower_is_better(),
//    adaptive(), Of(...)), and only spec/ parses a name (FromName);
//  - "did you mean" has one rule: only util/ measures an edit distance;
//    everyone else asks util/did_you_mean.h.
// Tests and test support are free to name objectives and distances.
std::vector<std::string> SealViolations(const fs::path& src) {
  std::vector<std::string> out;
  const std::regex include_re(R"re(^\s*#\s*include\s+"([^/"]+)/([^"]+_parts\.h)")re");
  const std::regex arg_re(R"re(\.\s*(?:Arg(Int|String|True)|(FindArg))\s*\()re");
  const std::set<std::string> arg_readers = {"plan/engine_config.cc", "plan/spec_hardware.cc"};
  // Writing one: spec/ (the loader, --set) and serve-sim, whose command line
  // is SGLang's own flags turned into a spec; a search's knobs are typed.
  const std::regex arg_write_re(R"re(\.\s*args\s*\.\s*(push_back|emplace_back|insert)\s*\()re");
  const std::set<std::string> arg_writers = {"serve_sim/deployment.cc"};
  const std::regex objective_line_re(R"re(objective)re", std::regex::icase);
  const std::regex literal_compare_re(R"re([!=]=\s*"|"\s*[!=]=)re");
  const std::regex kind_re(R"re(Objective::Kind::)re");
  const std::regex from_name_re(R"re(Objective::FromName\s*\()re");
  const std::regex distance_re(R"re(\bEditDistance\s*\()re");
  // A run directory's places are named once, by evidence::RunPaths.
  const std::regex run_place_re(
      R"re("(raw|bench|gpu|service|metadata|profile|live|state|interrupted)/)re");
  for (const fs::directory_entry& dir : fs::directory_iterator(src)) {
    if (!dir.is_directory()) continue;
    const std::string from = dir.path().filename().string();
    for (const fs::directory_entry& file : fs::directory_iterator(dir.path())) {
      const std::string ext = file.path().extension().string();
      if (ext != ".cc" && ext != ".h") continue;
      const std::string rel = from + "/" + file.path().filename().string();
      const bool may_read_args = from == "spec" || from == "sglang" || arg_readers.count(rel) ||
                                 IsTestSupport(file.path());
      std::istringstream text(Slurp(file.path()));
      int line_no = 0;
      for (std::string line; std::getline(text, line);) {
        ++line_no;
        const std::string where = file.path().string() + ":" + std::to_string(line_no) + ": ";
        std::smatch m;
        if (std::regex_search(line, m, include_re) && m[1].str() != from)
          out.push_back(where + from + " includes " + m[1].str() + "/" + m[2].str() +
                        ", which is private to " + m[1].str() + "/");
        if (!may_read_args && std::regex_search(line, m, arg_re))
          out.push_back(where + "reads an engine argument by name (" +
                        (m[2].matched ? m[2].str() : "Arg" + m[1].str()) +
                        "); read plan::EngineConfig, which ResolveEngineConfig fills");
        if (!may_read_args && !arg_writers.count(rel) && std::regex_search(line, arg_write_re))
          out.push_back(where +
                        "writes an engine argument by name; set plan::EngineKnobs (typed, "
                        "over the resolved plan::EngineConfig) instead");
        const std::string code = CodeOf(line);
        if (from != "evidence" && !IsTestSupport(file.path()) &&
            std::regex_search(code, m, run_place_re))
          out.push_back(where + "names a place in the run directory (\"" + m[1].str() +
                        "/...\"); ask evidence::RunPaths (with an empty root for the place "
                        "alone)");
        if (from == "decide" || IsTestSupport(file.path())) continue;
        if (std::regex_search(line, objective_line_re) &&
            std::regex_search(line, literal_compare_re))
          out.push_back(where +
                        "compares an objective with a string; ask decide::Objective "
                        "(parsed once by spec/)");
        if (std::regex_search(line, kind_re))
          out.push_back(where +
                        "names an objective by its kind; ask decide::Objective "
                        "(lower_is_better, adaptive, Of, ...)");
        if (from != "spec" && std::regex_search(line, from_name_re))
          out.push_back(where + "parses an objective name; only spec/ does (decide::Objective)");
        if (from != "util" && std::regex_search(line, distance_re))
          out.push_back(where +
                        "measures an edit distance; suggest names with util/did_you_mean.h's "
                        "DidYouMean or ClosestName (one rule)");
      }
    }
  }
  return out;
}

// Every source file's name is unique across src/: a name in a stack trace,
// a compiler message or a unity batch then says which file it is, and a
// folder's files need no path to tell them from another's. "A/x.h and B/x.h"
// for each name used twice.
std::vector<std::string> DuplicateNames(const fs::path& src) {
  std::map<std::string, std::vector<std::string>> where;
  for (const fs::directory_entry& dir : fs::directory_iterator(src)) {
    if (!dir.is_directory()) continue;
    for (const fs::directory_entry& file : fs::directory_iterator(dir.path())) {
      const std::string ext = file.path().extension().string();
      if (ext != ".cc" && ext != ".h" && ext != ".py") continue;
      where[file.path().filename().string()].push_back(dir.path().filename().string() + "/" +
                                                       file.path().filename().string());
    }
  }
  std::vector<std::string> out;
  for (auto& [name, paths] : where) {
    if (paths.size() < 2) continue;
    std::sort(paths.begin(), paths.end());
    std::string line = "src/" + paths[0];
    for (size_t i = 1; i < paths.size(); ++i) line += " and src/" + paths[i];
    out.push_back(line + " share the file name " + name + "; name one by its subject");
  }
  return out;
}

class LayeringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() /
        ("ppsearch_layering_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    Write("README.md", "    floor 2: run\n    floor 1: plan sim\n    floor 0: util\n");
    Write("util/result.h", "#pragma once\n");
    Write("plan/plan.cc", "#include \"plan/plan.h\"\n#include \"util/result.h\"\n");
    Write("sim/engine.cc", "#include <vector>\n#include \"util/result.h\"\n");
    Write("run/runner.cc", "#include \"plan/plan.h\"\n#include \"sim/engine.h\"\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  fs::path root_;
};

TEST(Layering, TheSourceTreeKeepsItsMap) {
  const std::vector<std::string> v = LayeringViolations(fs::path(PPSEARCH_SOURCE_DIR) / "src");
  std::string all;
  for (const std::string& s : v) all += s + "\n";
  EXPECT_TRUE(v.empty()) << all;
}

TEST(Layering, TheSealsHold) {
  const std::vector<std::string> v = SealViolations(fs::path(PPSEARCH_SOURCE_DIR) / "src");
  std::string all;
  for (const std::string& s : v) all += s + "\n";
  EXPECT_TRUE(v.empty()) << all;
}

TEST(Layering, EveryFileNameIsUnique) {
  const std::vector<std::string> v = DuplicateNames(fs::path(PPSEARCH_SOURCE_DIR) / "src");
  std::string all;
  for (const std::string& s : v) all += s + "\n";
  EXPECT_TRUE(v.empty()) << all;
}

TEST_F(LayeringTest, AFileNameInTwoFoldersFails) {
  EXPECT_TRUE(DuplicateNames(root_).empty());
  Write("run/engine.cc", "#include \"plan/plan.h\"\n");
  const std::vector<std::string> v = DuplicateNames(root_);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0],
            "src/run/engine.cc and src/sim/engine.cc share the file name engine.cc; "
            "name one by its subject");
}

TEST_F(LayeringTest, APrivatePartsHeaderIsItsFoldersOwn) {
  Write("plan/plan.cc", "#include \"plan/plan_parts.h\"\n");
  EXPECT_TRUE(SealViolations(root_).empty());
  Write("run/runner.cc", "#include \"plan/plan.h\"\n#include \"plan/plan_parts.h\"\n");
  const std::vector<std::string> v = SealViolations(root_);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], (root_ / "run/runner.cc").string() +
                      ":2: run includes plan/plan_parts.h, which is private to plan/");
}

TEST_F(LayeringTest, OnlyEvidenceNamesThePlacesOfARunDirectory) {
  Write("evidence/paths.cc", "return At(\"raw/\" + sample + \".jsonl\");\n");
  Write("sim/engine.cc", "#include <vector>\nint x;  // e.g. \"raw/a.jsonl\"\n");
  EXPECT_TRUE(SealViolations(root_).empty());
  Write("sim/engine.cc", "#include <vector>\nconst auto f = dir + \"/\" + \"gpu/\" + name;\n");
  const std::vector<std::string> v = SealViolations(root_);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], (root_ / "sim/engine.cc").string() +
                      ":2: names a place in the run directory (\"gpu/...\"); ask "
                      "evidence::RunPaths (with an empty root for the place alone)");
}

TEST_F(LayeringTest, NoSearchWritesEngineArgumentsByName) {
  Write("spec/overrides.cc", "s.engine.args.push_back({flag, value});\n");
  EXPECT_TRUE(SealViolations(root_).empty());
  Write("sim/engine.cc",
        "#include <vector>\ns.engine.args.push_back({\"chunked-prefill-size\", v});\n");
  const std::vector<std::string> v = SealViolations(root_);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], (root_ / "sim/engine.cc").string() +
                      ":2: writes an engine argument by name; set plan::EngineKnobs (typed, over "
                      "the resolved plan::EngineConfig) instead");
}

TEST_F(LayeringTest, OnlyTheLoaderReadsEngineArgumentsByName) {
  Write("plan/engine_config.cc", "c.chunk = engine.ArgInt(\"chunked-prefill-size\");\n");
  Write("sim/engine_test.cc", "spec.engine.ArgTrue(\"x\");\n");
  EXPECT_TRUE(SealViolations(root_).empty());
  Write("sim/engine.cc", "#include <vector>\nconst auto c = spec.engine.ArgInt(\"page-size\");\n");
  const std::vector<std::string> v = SealViolations(root_);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], (root_ / "sim/engine.cc").string() +
                      ":2: reads an engine argument by name (ArgInt); read plan::EngineConfig, "
                      "which ResolveEngineConfig fills");
}

TEST_F(LayeringTest, OnlyDecideKnowsTheObjectivesByName) {
  Write("decide/objective.cc", "if (name == \"ttft_p50\") return kTtft;\n");
  Write("spec/decision.cc", "out->objective = *decide::Objective::FromName(name);\n");
  Write("run/runner_test.cc",
        "Objective o(Objective::Kind::kGoodput);\nif (objective.name() == \"goodput\") {}\n");
  Write("run/runner.cc", "if (spec.decision.objective.lower_is_better()) {}\n");
  EXPECT_TRUE(SealViolations(root_).empty());
  Write("run/runner.cc",
        "#include <vector>\nif (spec.decision.objective.name() == \"ttft_p50\") {}\n"
        "const bool ttft = o.kind() == decide::Objective::Kind::kTtftP50;\n"
        "auto o = decide::Objective::FromName(\"goodput\");\n");
  const std::vector<std::string> v = SealViolations(root_);
  ASSERT_EQ(v.size(), 3u);
  const std::string file = (root_ / "run/runner.cc").string();
  EXPECT_EQ(v[0], file +
                      ":2: compares an objective with a string; ask decide::Objective (parsed "
                      "once by spec/)");
  EXPECT_EQ(v[1], file +
                      ":3: names an objective by its kind; ask decide::Objective "
                      "(lower_is_better, adaptive, Of, ...)");
  EXPECT_EQ(v[2], file + ":4: parses an objective name; only spec/ does (decide::Objective)");
}

TEST_F(LayeringTest, OnlyUtilMeasuresEditDistances) {
  Write("util/did_you_mean.cc", "const size_t d = EditDistance(word, candidate);\n");
  Write("plan/plan.cc", "message += DidYouMean(key, known);\n");
  EXPECT_TRUE(SealViolations(root_).empty());
  Write("sim/engine.cc", "if (EditDistance(word, name) < 3) best = name;\n");
  const std::vector<std::string> v = SealViolations(root_);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], (root_ / "sim/engine.cc").string() +
                      ":1: measures an edit distance; suggest names with util/did_you_mean.h's "
                      "DidYouMean or ClosestName (one rule)");
}

TEST_F(LayeringTest, DownwardArrowsPass) { EXPECT_TRUE(LayeringViolations(root_).empty()); }

TEST_F(LayeringTest, AnUpwardIncludeFailsWithFileLineAndFloors) {
  Write("plan/plan.cc", "#include \"plan/plan.h\"\n\n#include \"run/runner.h\"\n");
  const std::vector<std::string> v = LayeringViolations(root_);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], (root_ / "plan/plan.cc").string() +
                      ":3: plan (floor 1) includes run (floor 2): a folder may include only "
                      "folders on lower floors");
}

TEST_F(LayeringTest, ASidewaysIncludeFailsSoNoCycleCanForm) {
  Write("sim/engine.cc", "#include \"plan/plan.h\"\n");
  const std::vector<std::string> v = LayeringViolations(root_);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("sim (floor 1) includes plan (floor 1)"), std::string::npos) << v[0];
}

TEST_F(LayeringTest, TestsObeyTheFloorsToo) {
  Write("sim/engine_test.cc", "#include \"run/runner.h\"\n");
  EXPECT_EQ(LayeringViolations(root_).size(), 1u);
}

TEST_F(LayeringTest, TestKitIsForTestsOnly) {
  Write("README.md", "floor 3: testkit\nfloor 2: run\nfloor 1: plan sim\nfloor 0: util\n");
  Write("testkit/example.h", "#include \"run/runner.h\"\n");
  Write("plan/plan_test.cc", "#include \"testkit/example.h\"\n");
  Write("plan/plan_testing.h", "#include \"testkit/example.h\"\n");
  EXPECT_TRUE(LayeringViolations(root_).empty());
  Write("plan/plan.cc", "#include \"testkit/example.h\"\n");
  const std::vector<std::string> v = LayeringViolations(root_);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("product code includes testkit/"), std::string::npos) << v[0];
}

TEST_F(LayeringTest, AFolderOffTheMapFails) {
  Write("newthing/x.cc", "#include \"util/result.h\"\n");
  const std::vector<std::string> v = LayeringViolations(root_);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("folder newthing is on no floor"), std::string::npos) << v[0];
}

}  // namespace
}  // namespace ppsearch
