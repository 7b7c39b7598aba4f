#include "report/document.h"

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

Block Block::TableBlock(table::Table table) {
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
      return table::RenderMarkdownTable(b.table);
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
