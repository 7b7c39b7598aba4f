#include "report/document.h"

#include <fmt/format.h>

#include <algorithm>

namespace ppsearch::report {

Block Block::Paragraph(std::string text) {
  Block b;
  b.text = std::move(text);
  return b;
}

Block Block::Bullets(std::vector<std::string> items) {
  Block b;
  b.kind = Kind::kBullets;
  b.items = std::move(items);
  return b;
}

Block Block::TableBlock(Table table) {
  Block b;
  b.kind = Kind::kTable;
  b.table = std::move(table);
  return b;
}

Block Block::Code(std::string text) {
  Block b;
  b.kind = Kind::kCode;
  b.text = std::move(text);
  return b;
}

Block Block::Figure(std::string name) {
  Block b;
  b.kind = Kind::kFigure;
  b.text = std::move(name);
  return b;
}

namespace {

// Each column's width: its widest cell, at least `min_width`.
std::vector<size_t> ColumnWidths(const Table& t, size_t min_width) {
  std::vector<size_t> width(t.header.size(), min_width);
  for (size_t i = 0; i < t.header.size(); ++i) {
    width[i] = std::max(width[i], t.header[i].size());
    for (const auto& row : t.rows) width[i] = std::max(width[i], row[i].size());
  }
  return width;
}

// Labels left-aligned, numbers right-aligned.
std::string Cell(const Table& t, size_t i, const std::string& text, size_t width) {
  const bool left = i < t.left.size() && t.left[i];
  return left ? fmt::format("{:<{}}", text, width) : fmt::format("{:>{}}", text, width);
}

}  // namespace

std::string RenderTextTable(const Table& t) {
  const std::vector<size_t> width = ColumnWidths(t, 1);
  auto line = [&](const std::vector<std::string>& row) {
    std::string s;
    // Appended piece by piece: g++ 12 at -O3 flags `"..." + std::string` (-Wrestrict).
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) s += "   ";
      s += Cell(t, i, row[i], width[i]);
    }
    s.erase(s.find_last_not_of(' ') + 1);  // a padded last label column
    return s + "\n";
  };
  std::string out = line(t.header);
  for (const auto& row : t.rows) out += line(row);
  return out;
}

std::string RenderTable(const Table& t, bool markdown) {
  return markdown ? RenderMarkdownTable(t) : RenderTextTable(t);
}

std::string RenderMarkdownTable(const Table& t) {
  // A GFM delimiter cell needs a hyphen besides its colon: width 3 at least.
  const std::vector<size_t> width = ColumnWidths(t, 3);
  auto left = [&](size_t i) { return i < t.left.size() && t.left[i]; };
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = "|";
    for (size_t i = 0; i < row.size(); ++i) {
      s += ' ';
      s += Cell(t, i, row[i], width[i]);
      s += " |";
    }
    return s + "\n";
  };
  std::string out = line(t.header) + "|";
  for (size_t i = 0; i < width.size(); ++i) {
    const std::string dashes(width[i] - 1, '-');
    out += left(i) ? fmt::format(" :{} |", dashes) : fmt::format(" {}: |", dashes);
  }
  out += "\n";
  for (const auto& row : t.rows) out += line(row);
  return out;
}

namespace {

std::string BlockMarkdown(const Block& b) {
  switch (b.kind) {
    case Block::Kind::kParagraph:
      return b.text + "\n";
    case Block::Kind::kBullets: {
      std::string out;
      for (const std::string& item : b.items) out += "- " + item + "\n";
      return out;
    }
    case Block::Kind::kTable:
      return RenderMarkdownTable(b.table);
    case Block::Kind::kCode:
      return "```sh\n" + b.text + "```\n";
    case Block::Kind::kFigure:
      break;
  }
  return "";
}

std::string BlocksMarkdown(const std::vector<Block>& blocks) {
  std::string out;
  for (const Block& b : blocks) {
    if (b.kind == Block::Kind::kFigure) continue;
    if (!out.empty()) out += "\n";
    out += BlockMarkdown(b);
  }
  return out;
}

}  // namespace

std::string RenderMarkdown(const Document& doc) {
  std::string out = "# " + doc.title + "\n\n" + BlocksMarkdown(doc.intro);
  for (const Section& s : doc.sections)
    out += "\n## " + s.title + "\n\n" + BlocksMarkdown(s.blocks);
  return out;
}

}  // namespace ppsearch::report
