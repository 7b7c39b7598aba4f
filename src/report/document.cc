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

std::string RenderMarkdownTable(const Table& t) {
  // A GFM delimiter cell needs a hyphen besides its colon: width 3 at least.
  std::vector<size_t> width(t.header.size(), 3);
  for (size_t i = 0; i < t.header.size(); ++i) {
    width[i] = std::max(width[i], t.header[i].size());
    for (const auto& row : t.rows) width[i] = std::max(width[i], row[i].size());
  }
  auto left = [&](size_t i) { return i < t.left.size() && t.left[i]; };
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = "|";
    for (size_t i = 0; i < row.size(); ++i)
      s += left(i) ? fmt::format(" {:<{}} |", row[i], width[i])
                   : fmt::format(" {:>{}} |", row[i], width[i]);
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
