#include "evidence/csv_cells.h"

#include <fmt/format.h>

#include <cmath>

#include "spec/layout_text.h"
#include "util/excerpt.h"

namespace ppsearch::evidence {

std::string CsvAt(const CsvTable& t, size_t r) {
  return t.path + ":" + std::to_string(t.row_lines[r]);
}

std::string CsvCell(const CsvTable& t, size_t r, const std::string& column) {
  const int c = t.Column(column);
  return c >= 0 && static_cast<size_t>(c) < t.rows[r].size() ? t.rows[r][c] : "";
}

Result<int> CsvPositiveInt(const CsvTable& t, size_t r, const std::string& column) {
  PPS_ASSIGN_OR_RETURN(double v, CsvNumber(t, r, column));
  if (!(v >= 1 && v <= 1e9 && v == std::floor(v)))
    return MakeError(CsvAt(t, r) + ": column '" + column + "': expected a positive integer, got " +
                     Excerpt(CsvCell(t, r, column)));
  return static_cast<int>(v);
}

Result<std::optional<double>> CsvOptional(const CsvTable& t, size_t r, const std::string& column) {
  if (CsvCell(t, r, column).empty()) return std::optional<double>();
  PPS_ASSIGN_OR_RETURN(double v, CsvNumber(t, r, column));
  return std::optional<double>(v);
}

Result<std::optional<double>> CsvOptionalFigure(const CsvTable& t, size_t r,
                                                const std::string& column, double min) {
  PPS_ASSIGN_OR_RETURN(std::optional<double> v, CsvOptional(t, r, column));
  if (v && !(*v >= min && *v <= kMaxCsvFigure))
    return MakeError(fmt::format("{}: column '{}': expected a number in [{:g}, {:g}], got {}",
                                 CsvAt(t, r), column, min, kMaxCsvFigure,
                                 Excerpt(CsvCell(t, r, column))));
  return v;
}

Result<std::optional<int>> CsvOptionalCount(const CsvTable& t, size_t r,
                                            const std::string& column) {
  PPS_ASSIGN_OR_RETURN(std::optional<double> v, CsvOptional(t, r, column));
  if (!v) return std::optional<int>();
  if (!(*v >= 0 && *v <= 1e9 && *v == std::floor(*v)))
    return MakeError(CsvAt(t, r) + ": column '" + column + "': expected a count, got " +
                     Excerpt(CsvCell(t, r, column)));
  return std::optional<int>(static_cast<int>(*v));
}

CsvLayoutCells LayoutCells(const spec::LayoutSpec& l) {
  if (l.disaggregated()) return {"", "", "", "", "", l.Slug()};
  return {std::to_string(l.pp), std::to_string(l.tp),        std::to_string(l.ep),
          std::to_string(l.dp), std::to_string(l.instances), ""};
}

Result<spec::LayoutSpec> CsvLayout(const CsvTable& t, size_t r) {
  if (const std::string pools = CsvCell(t, r, "pools"); !pools.empty()) {
    const auto read = spec::ParseSlugPrefix(pools);
    if (!read || read->second != pools.size() || !read->first.disaggregated())
      return MakeError(CsvAt(t, r) +
                       ": column 'pools': expected a disaggregated deployment's name, e.g. "
                       "1p3d-pp1-tp8-ep8+3x-pp1-tp8-ep8-dp8, got " +
                       Excerpt(pools));
    spec::LayoutSpec layout = read->first;
    layout.origin.file = t.path;
    layout.origin.line = t.row_lines[r];
    return layout;
  }
  spec::LayoutSpec layout;
  PPS_ASSIGN_OR_RETURN(layout.pp, CsvPositiveInt(t, r, "pp"));
  PPS_ASSIGN_OR_RETURN(layout.tp, CsvPositiveInt(t, r, "tp"));
  PPS_ASSIGN_OR_RETURN(layout.ep, CsvPositiveInt(t, r, "ep"));
  if (t.Column("dp") >= 0) {
    PPS_ASSIGN_OR_RETURN(layout.dp, CsvPositiveInt(t, r, "dp"));
  }
  // Files written before the column have one instance per layout.
  if (t.Column("instances") >= 0) {
    PPS_ASSIGN_OR_RETURN(layout.instances, CsvPositiveInt(t, r, "instances"));
  }
  layout.origin.file = t.path;
  layout.origin.line = t.row_lines[r];
  return layout;
}

std::optional<bool> CsvBool(const CsvTable& t, size_t r, const std::string& column) {
  const std::string cell = CsvCell(t, r, column);
  if (cell == "true" || cell == "false") return cell == "true";
  return std::nullopt;
}

std::string CsvFixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string CsvFixed(const std::optional<double>& v, int decimals) {
  return v ? CsvFixed(*v, decimals) : std::string();
}

}  // namespace ppsearch::evidence
