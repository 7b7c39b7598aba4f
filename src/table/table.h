#pragma once
// The one table of ppsearch: a header of names, rows of cells, and per column
// whether it holds labels (left-aligned) or numbers (right-aligned). Every
// table a command prints or a report holds is one of these, rendered by the
// functions below, so columns line up the same way everywhere.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ppsearch::table {

struct Table {
  std::vector<std::string> header;  // empty: no header line (a list of key/value rows)
  std::vector<std::vector<std::string>> rows;
  // Defaulted members let callers brace-initialize only the leading ones.
  std::vector<bool> left = {};  // per column: left-aligned (labels) or right-aligned (numbers)
  // nccl-tests' second header line: each column's unit, "" for none; empty: no such line.
  std::vector<std::string> units = {};
  // nccl-tests' marking: the header lines start "# " and every row "  ", so
  // tools that skip '#' lines read only the numbers.
  bool commented_header = false;
  // Spaces between columns in text; a wide table that must fit a width (the
  // plan's 100 columns) may take 2.
  size_t gap = 3;
};

// The terminal form of every ppsearch table: fixed-width columns `gap` spaces
// apart, trailing spaces trimmed.
std::string RenderTextTable(const Table& table);
// A markdown table whose columns line up in a terminal too; a column's unit
// follows its name in the header ("kv_cache (B/token)").
std::string RenderMarkdownTable(const Table& table);
// RenderMarkdownTable or RenderTextTable.
std::string RenderTable(const Table& table, bool markdown);

// `text` with `spaces` spaces before each of its non-empty lines: a table
// inside an indented block.
std::string Indent(std::string_view text, size_t spaces);

}  // namespace ppsearch::table
