// Every relative link in the project's markdown resolves: the file or folder
// it names exists, and a #fragment names a heading of the target as GitHub
// slugs it. Links inside code (fenced blocks, `spans`) are text, not links;
// absolute URLs are not followed.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ppsearch_source_dir.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = PPSEARCH_SOURCE_DIR;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Markdown inline markup GitHub drops from a heading before slugging it:
// links keep their text, emphasis and code marks go.
std::string HeadingText(std::string text) {
  static const std::regex link(R"(!?\[([^\]]*)\]\([^)]*\))");
  return std::regex_replace(text, link, "$1");
}

// GitHub's anchor for a heading: lower case; letters, digits, '_', '-' and
// non-ASCII bytes kept; spaces become '-'; everything else dropped.
std::string Slug(const std::string& heading) {
  std::string out;
  for (unsigned char c : HeadingText(heading)) {
    if (c >= 'A' && c <= 'Z') {
      out += static_cast<char>(c - 'A' + 'a');
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
               c >= 0x80) {
      out += static_cast<char>(c);
    } else if (c == ' ') {
      out += '-';
    }
  }
  return out;
}

// The lines of a markdown file outside fenced code blocks (others blanked,
// so line numbers stay).
std::vector<std::string> ProseLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  bool fenced = false;
  while (std::getline(in, line)) {
    const size_t first = line.find_first_not_of(' ');
    const bool fence = first != std::string::npos && line.compare(first, 3, "```") == 0;
    if (fence) fenced = !fenced;
    lines.push_back(fence || fenced ? "" : line);
  }
  return lines;
}

// Every heading's anchor, with GitHub's -1, -2 suffixes for repeats, and
// every anchor line (`<a id="NAME"></a>`, which marks a generated block that
// prose quotes).
std::set<std::string> Anchors(const fs::path& file) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  static const std::regex heading(R"(#{1,6}\s+(.*?)\s*#*\s*)");
  static const std::regex anchor_line(R"re(<a id="([^"]+)"></a>)re");
  for (const std::string& line : ProseLines(ReadText(file))) {
    std::smatch m;
    if (std::regex_match(line, m, anchor_line)) anchors.insert(m[1]);
    if (!std::regex_match(line, m, heading)) continue;
    const std::string slug = Slug(m[1]);
    const int n = seen[slug]++;
    anchors.insert(n == 0 ? slug : slug + "-" + std::to_string(n));
  }
  return anchors;
}

struct Link {
  int line = 0;
  std::string target;
};

// Inline links and images [text](target "title"), and reference
// definitions [name]: target, outside code.
std::vector<Link> Links(const std::string& text) {
  std::vector<Link> out;
  const std::vector<std::string> lines = ProseLines(text);
  static const std::regex inline_link(R"(\]\(\s*<?([^)\s>]*)>?(\s+"[^"]*")?\s*\))");
  static const std::regex definition(R"(^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?.*)");
  static const std::regex code_span("`[^`]*`");
  for (size_t i = 0; i < lines.size(); ++i) {
    // Code spans are text: drop them before looking for links.
    const std::string line = std::regex_replace(lines[i], code_span, "``");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), inline_link);
         it != std::sregex_iterator(); ++it)
      out.push_back({static_cast<int>(i + 1), (*it)[1]});
    std::smatch m;
    if (std::regex_match(line, m, definition)) out.push_back({static_cast<int>(i + 1), m[1]});
  }
  return out;
}

bool IsExternal(const std::string& target) {
  return target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0;
}

// What is wrong with `target` as written in `file`, or "" when it resolves.
std::string CheckLink(const fs::path& file, const std::string& target) {
  if (target.empty()) return "an empty link";
  const size_t hash = target.find('#');
  const std::string path = target.substr(0, hash);
  const std::string fragment = hash == std::string::npos ? "" : target.substr(hash + 1);
  const fs::path resolved = path.empty() ? file : (file.parent_path() / path).lexically_normal();
  if (!fs::exists(resolved)) return "no such file: " + resolved.lexically_relative(kRoot).string();
  if (hash == std::string::npos) return "";
  if (resolved.extension() != ".md") return "a #fragment on a file that is not markdown";
  static std::map<fs::path, std::set<std::string>> cache;
  if (!cache.count(resolved)) cache[resolved] = Anchors(resolved);
  const std::set<std::string>& anchors = cache[resolved];
  if (anchors.count(fragment)) return "";
  std::string known;
  for (const auto& a : anchors) known += (known.empty() ? "" : ", ") + a;
  return "no heading '#" + fragment + "' in " + resolved.lexically_relative(kRoot).string() +
         " (anchors: " + known + ")";
}

// The project's markdown: the top README and every .md under the folders
// people read (build and results folders are not the project's).
std::vector<fs::path> MarkdownFiles() {
  std::vector<fs::path> files = {kRoot / "README.md"};
  for (const char* dir : {"docs", "validation", "src", "data", "examples", "tests", "scripts"}) {
    if (!fs::exists(kRoot / dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(kRoot / dir))
      if (e.is_regular_file() && e.path().extension() == ".md") files.push_back(e.path());
  }
  return files;
}

TEST(DocsLinks, SlugsFollowGitHub) {
  EXPECT_EQ(Slug("`[engine]`"), "engine");
  EXPECT_EQ(Slug("What `report` does with damaged evidence"),
            "what-report-does-with-damaged-evidence");
  EXPECT_EQ(Slug("`gpu/<sample>/<host>.csv`"), "gpusamplehostcsv");
  EXPECT_EQ(Slug("Set-up: the two commands"), "set-up-the-two-commands");
  EXPECT_EQ(Slug("See [the spec](docs/spec.md)"), "see-the-spec");
}

TEST(DocsLinks, LinksInCodeAreNotLinks) {
  const std::vector<Link> links =
      Links("[a](x.md) `[b](y.md)`\n```\n[c](z.md)\n```\n[d]: w.md\n![e](p.png \"t\")\n");
  std::vector<std::string> targets;
  for (const Link& l : links) targets.push_back(l.target);
  EXPECT_EQ(targets, (std::vector<std::string>{"x.md", "w.md", "p.png"}));
}

TEST(DocsLinks, EveryRelativeLinkResolves) {
  const std::vector<fs::path> files = MarkdownFiles();
  int checked = 0;
  for (const fs::path& file : files) {
    for (const Link& link : Links(ReadText(file))) {
      if (IsExternal(link.target)) continue;
      ++checked;
      const std::string problem = CheckLink(file, link.target);
      EXPECT_EQ(problem, "") << file.lexically_relative(kRoot).string() << ":" << link.line
                             << ": link '" << link.target << "': " << problem;
    }
  }
  EXPECT_GT(checked, 20) << "the scan found too few links to be looking at the docs";
}

}  // namespace
}  // namespace ppsearch::testing
