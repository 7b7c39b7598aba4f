#pragma once
// Typed, located reads of a parsed TOML tree, shared by the section readers.
// Every failure becomes a message that starts with file:line:col and names the
// dotted key, so a user can jump to the mistake; the formats are:
//   <pos>: key '<dotted.key>': expected <what>, got <actual>
//   <pos>: unknown key '<dotted.key>' (did you mean '<leaf>'?)
//   <section pos>: missing required key '<dotted.key>'
// where <pos> is file:line:col, or the override's text ("--set k=v") for a
// value that came from the command line.

#include <toml++/toml.h>

#include <climits>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "util/result.h"
#include "util/source_loc.h"

namespace ppsearch::spec {

// Where nodes came from. The spec file is parsed with its path as the source
// path; each --set override is parsed as a one-line document whose source path
// is the override's own text, so its nodes keep that label after being moved
// into the spec's tree and messages can name the override instead of a line.
class SpecSource {
 public:
  SpecSource(std::string path, std::vector<std::string> override_labels)
      : path_(std::move(path)), override_labels_(std::move(override_labels)) {}

  const std::string& path() const { return path_; }
  SourceLoc Locate(const toml::source_region& region, std::string key) const;
  // Orders nodes as the user wrote them: the file top to bottom, then the
  // overrides left to right (toml++ tables iterate alphabetically).
  std::tuple<int, int, int> WrittenOrder(const toml::source_region& region) const;

 private:
  std::string path_;
  std::vector<std::string> override_labels_;
};

// "a string", "an integer", "an array", ... for "expected X, got Y".
std::string DescribeType(const toml::node& node);
// Shortest text that reads back as the same double ("0.05", "2048").
std::string FormatNumber(double value);
std::string JoinKey(std::string_view prefix, std::string_view key);

// "<pos>: key '<k>': <what>" for a value that is present but wrong.
Error KeyError(const SourceLoc& loc, const std::string& what);
// "<pos>: <what>" for messages that name the key themselves.
Error PositionError(const SourceLoc& loc, const std::string& what);

// Parses `text` as the TOML file `path`; a syntax error reads "path:line:col: ...".
Result<toml::table> ParseToml(const std::string& text, const std::string& path);

// Checked conversions of one node; `loc` names it in messages.
Result<int64_t> ToInt(const toml::node& node, const SourceLoc& loc, int64_t min, int64_t max);
Result<double> ToNumber(const toml::node& node, const SourceLoc& loc, double min, double max);
// A TOML float as written (nan and inf are TOML floats too), refused unless
// finite: the one check for values that take no range (engine args and env).
Result<double> ToFiniteFloat(const toml::node& node, const SourceLoc& loc);
Result<std::string> ToString(const toml::node& node, const SourceLoc& loc);
Result<const toml::table*> ToTable(const toml::node& node, const SourceLoc& loc,
                                   const std::string& example = "");
// A non-empty array; `what` describes its elements ("integers").
Result<const toml::array*> ToArray(const toml::node& node, const SourceLoc& loc,
                                   const std::string& what);

enum class Need { kOptional, kRequired };

class TableReader;
// toml++ tables iterate alphabetically; this lists a table's entries in the
// order written (flags, variables, named configurations).
std::vector<std::pair<const toml::key*, const toml::node*>> InWrittenOrder(
    const TableReader& table);

// One TOML table read as one spec section, or a sub-table such as a layout
// tuple. Getters leave `out` untouched when an optional key is absent, so the
// spec struct's defaults stand.
class TableReader {
 public:
  TableReader(const SpecSource& source, const toml::table& table, std::string key_path)
      : source_(source), table_(table), key_path_(std::move(key_path)) {}

  const toml::table& table() const { return table_; }
  const std::string& key_path() const { return key_path_; }
  const SpecSource& source() const { return source_; }
  SourceLoc origin() const;
  // Location of the value at `key` (the table's when absent), keyed by its dotted path.
  SourceLoc KeyLoc(std::string_view key) const;
  const toml::node* Find(std::string_view key) const;

  // Rejects keys outside `known`, suggesting the closest one.
  Status CheckKeys(const std::vector<std::string>& known) const;
  Error Missing(std::string_view key, const std::string& hint = "") const;

  Status Int(std::string_view key, int64_t* out, Need need, int64_t min,
             int64_t max = INT64_MAX) const;
  Status Int(std::string_view key, int* out, Need need, int min, int max = INT_MAX) const;
  Status Number(std::string_view key, double* out, double min, double max) const;
  // Required strings must also be non-empty.
  Status String(std::string_view key, std::string* out, Need need) const;
  Status Bool(std::string_view key, bool* out) const;
  // An array of strings (a command, a list of names); `non_empty` rejects [].
  Status StringList(std::string_view key, std::vector<std::string>* out, bool non_empty) const;
  Status Enum(std::string_view key, std::string* out,
              const std::vector<std::string>& allowed) const;
  // The sub-table at `key`, or nullptr when it is absent and optional.
  Result<const toml::table*> Table(std::string_view key, Need need,
                                   const std::string& example = "") const;

 private:
  const SpecSource& source_;
  const toml::table& table_;
  std::string key_path_;
};

}  // namespace ppsearch::spec
