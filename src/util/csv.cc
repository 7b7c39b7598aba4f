#include "util/csv.h"

#include <cmath>
#include <cstdlib>

#include "util/excerpt.h"
#include "util/files.h"

namespace ppsearch {

std::string CsvField(const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string CsvRow(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += CsvField(fields[i]);
  }
  return out + "\n";
}

int CsvTable::Column(const std::string& name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

Result<CsvTable> ParseCsv(const std::string& text, const std::string& path) {
  CsvTable table;
  table.path = path;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  int line = 1, row_line = 1;
  auto end_row = [&]() {
    row.push_back(field);
    field.clear();
    if (table.header.empty()) {
      table.header = row;
    } else if (!(row.size() == 1 && row[0].empty())) {
      table.rows.push_back(row);
      table.row_lines.push_back(row_line);
    }
    row.clear();
    any = false;
  };
  // A spreadsheet saves UTF-8 with a byte order mark: not part of the
  // first column's name.
  const size_t start = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  for (size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_row();
      row_line = ++line;
    } else {
      field += c;
      any = true;
    }
  }
  if (quoted)
    return MakeError(path + ":" + std::to_string(row_line) + ": unterminated quoted field");
  if (any || !field.empty()) end_row();
  if (table.header.empty()) return MakeError(path + ": empty CSV (expected a header row)");
  // A repeated name would leave which column a reader takes to its order.
  for (size_t c = 0; c < table.header.size(); ++c)
    for (size_t d = 0; d < c; ++d)
      if (table.header[c] == table.header[d])
        return MakeError(path + ":1: column '" + Excerpt(table.header[c]) + "' appears twice (" +
                         std::to_string(d + 1) + " and " + std::to_string(c + 1) +
                         "); expected each column once");
  for (size_t r = 0; r < table.rows.size(); ++r) {
    if (table.rows[r].size() != table.header.size())
      return MakeError(path + ":" + std::to_string(table.row_lines[r]) + ": expected " +
                       std::to_string(table.header.size()) + " fields as in the header, got " +
                       std::to_string(table.rows[r].size()));
  }
  return table;
}

Result<CsvTable> ReadCsv(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseCsv(text, path);
}

Result<double> CsvNumber(const CsvTable& t, size_t row, const std::string& name) {
  int col = t.Column(name);
  if (col < 0) return MakeError(t.path + ": missing column '" + name + "'");
  const std::string& s = t.rows[row][col];
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == nullptr || *end != '\0' || !std::isfinite(v))
    return MakeError(t.path + ":" + std::to_string(t.row_lines[row]) + ": column '" + name +
                     "': expected a number, got \"" + Excerpt(s) + "\"");
  return v;
}

}  // namespace ppsearch
