#include "table/table.h"

#include <fmt/format.h>

#include <algorithm>

namespace ppsearch::table {
namespace {

size_t ColumnCount(const Table& t) {
  size_t n = std::max(t.header.size(), t.units.size());
  for (const auto& row : t.rows) n = std::max(n, row.size());
  return n;
}

// A row's cell `i`; a short row reads as empty cells.
const std::string& CellText(const std::vector<std::string>& row, size_t i) {
  static const std::string kEmpty;
  return i < row.size() ? row[i] : kEmpty;
}

// Each column's width: its widest cell among `lines`, at least `min_width`.
std::vector<size_t> ColumnWidths(const std::vector<const std::vector<std::string>*>& lines,
                                 size_t columns, size_t min_width) {
  std::vector<size_t> width(columns, min_width);
  for (const auto* line : lines)
    for (size_t i = 0; i < columns; ++i) width[i] = std::max(width[i], CellText(*line, i).size());
  return width;
}

bool Left(const Table& t, size_t i) { return i < t.left.size() && t.left[i]; }

// Labels left-aligned, numbers right-aligned.
std::string Cell(const Table& t, size_t i, const std::string& text, size_t width) {
  return Left(t, i) ? fmt::format("{:<{}}", text, width) : fmt::format("{:>{}}", text, width);
}

}  // namespace

std::string RenderTextTable(const Table& t) {
  const size_t columns = ColumnCount(t);
  std::vector<const std::vector<std::string>*> lines;
  if (!t.header.empty()) lines.push_back(&t.header);
  if (!t.units.empty()) lines.push_back(&t.units);
  const size_t header_lines = lines.size();
  for (const auto& row : t.rows) lines.push_back(&row);
  const std::vector<size_t> width = ColumnWidths(lines, columns, 1);
  std::string out;
  for (size_t l = 0; l < lines.size(); ++l) {
    std::string s(!t.commented_header ? "" : l < header_lines ? "# " : "  ");
    // Appended piece by piece: g++ 12 at -O3 flags `"..." + std::string` (-Wrestrict).
    for (size_t i = 0; i < columns; ++i) {
      if (i > 0) s.append(t.gap, ' ');
      s += Cell(t, i, CellText(*lines[l], i), width[i]);
    }
    s.erase(s.find_last_not_of(' ') + 1);  // a padded last label column
    out += s;
    out += '\n';
  }
  return out;
}

std::string RenderMarkdownTable(const Table& t) {
  const size_t columns = ColumnCount(t);
  std::vector<std::string> header(columns);
  for (size_t i = 0; i < columns; ++i) {
    header[i] = CellText(t.header, i);
    const std::string& unit = CellText(t.units, i);
    if (!unit.empty()) header[i] += header[i].empty() ? unit : " " + unit;
  }
  std::vector<const std::vector<std::string>*> lines = {&header};
  for (const auto& row : t.rows) lines.push_back(&row);
  // A GFM delimiter cell needs a hyphen besides its colon: width 3 at least.
  const std::vector<size_t> width = ColumnWidths(lines, columns, 3);
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = "|";
    for (size_t i = 0; i < columns; ++i) {
      s += ' ';
      s += Cell(t, i, CellText(row, i), width[i]);
      s += " |";
    }
    return s + "\n";
  };
  std::string out = line(header) + "|";
  for (size_t i = 0; i < columns; ++i) {
    const std::string dashes(width[i] - 1, '-');
    out += Left(t, i) ? fmt::format(" :{} |", dashes) : fmt::format(" {}: |", dashes);
  }
  out += "\n";
  for (const auto& row : t.rows) out += line(row);
  return out;
}

std::string RenderTable(const Table& t, bool markdown) {
  return markdown ? RenderMarkdownTable(t) : RenderTextTable(t);
}

std::string Indent(std::string_view text, size_t spaces) {
  const std::string pad(spaces, ' ');
  std::string out;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (!line.empty()) out += pad;
    out += line;
    if (end == std::string_view::npos) break;
    out += '\n';
    text.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace ppsearch::table
