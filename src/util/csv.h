#pragma once
// CSV in and out (RFC 4180 quoting): fields with commas, quotes or newlines
// are quoted, quotes doubled. Reading reports file:line for malformed rows.

#include <map>
#include <string>
#include <vector>

#include "util/result.h"

namespace ppsearch {

std::string CsvField(const std::string& value);
std::string CsvRow(const std::vector<std::string>& fields);

struct CsvTable {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> row_lines;  // 1-based line of each row in the file

  int Column(const std::string& name) const;  // -1 when absent
};

Result<CsvTable> ParseCsv(const std::string& text, const std::string& path);
Result<CsvTable> ReadCsv(const std::string& path);

// The number in row `row`, column `name`, or an error naming file:line and column.
Result<double> CsvNumber(const CsvTable& table, size_t row, const std::string& name);

}  // namespace ppsearch
