#include "workload/lengths_file.h"

#include <cmath>

#include "util/csv.h"
#include "util/files.h"

namespace ppsearch::workload {
namespace {

Result<int64_t> Length(const CsvTable& t, size_t row, const char* column, int64_t max_tokens) {
  PPS_ASSIGN_OR_RETURN(double v, CsvNumber(t, row, column));
  if (v != std::floor(v) || v < 1 || v > static_cast<double>(max_tokens))
    return MakeError(t.path + ":" + std::to_string(t.row_lines[row]) + ": column '" + column +
                     "': expected a whole number of tokens in [1, " + std::to_string(max_tokens) +
                     "], got " + t.rows[row][t.Column(column)]);
  return static_cast<int64_t>(v);
}

}  // namespace

Result<std::vector<LengthPair>> ParseLengthsCsv(const std::string& text, const std::string& path,
                                                int64_t max_tokens) {
  PPS_ASSIGN_OR_RETURN(CsvTable t, ParseCsv(text, path));
  for (const char* column : {"input_tokens", "output_tokens"})
    if (t.Column(column) < 0)
      return MakeError(path + ":1: no column '" + std::string(column) +
                       "' (expected a header row 'input_tokens,output_tokens')");
  if (t.rows.empty()) return MakeError(path + ": no rows after the header (expected length pairs)");
  std::vector<LengthPair> out;
  out.reserve(t.rows.size());
  for (size_t r = 0; r < t.rows.size(); ++r) {
    LengthPair p;
    PPS_ASSIGN_OR_RETURN(p.input_tokens, Length(t, r, "input_tokens", max_tokens));
    PPS_ASSIGN_OR_RETURN(p.output_tokens, Length(t, r, "output_tokens", max_tokens));
    out.push_back(p);
  }
  return out;
}

Result<std::vector<LengthPair>> ReadLengthsFile(const std::string& path, int64_t max_tokens) {
  PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseLengthsCsv(text, path, max_tokens);
}

}  // namespace ppsearch::workload
