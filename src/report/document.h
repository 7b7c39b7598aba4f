#pragma once
// A report as blocks (paragraphs, bullet lists, tables, code, figures) before
// it is written out: report.md and report.html are two renderings of one
// Document, so both carry the same sentences and the same numbers. Text may
// hold the two inline marks report.md uses, **bold** and `code`; a figure is
// a named slot that only the HTML renderer fills (with a chart).

#include <string>
#include <vector>

#include "table/table.h"

namespace ppsearch::report {

struct Block {
  enum class Kind { kParagraph, kBullets, kTable, kCode, kFigure };
  Kind kind = Kind::kParagraph;
  std::string text;                // paragraph; code; the figure's name
  std::vector<std::string> items;  // bullets
  table::Table table;

  static Block Paragraph(std::string text);
  static Block Bullets(std::vector<std::string> items);
  static Block TableBlock(table::Table table);
  static Block Code(std::string text);
  static Block Figure(std::string name);
};

struct Section {
  std::string title;
  std::vector<Block> blocks;
};

struct Document {
  std::string title;
  std::vector<Block> intro;  // under the title, before the first section
  std::vector<Section> sections;
};

// report.md's text: "# title", the intro, then "## section" per section;
// blocks are separated by a blank line and figures are left out.
std::string RenderMarkdown(const Document& doc);

}  // namespace ppsearch::report
