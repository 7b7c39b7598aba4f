#include "report/html.h"

#include <fmt/format.h>

namespace ppsearch::report {
namespace {

// No script runs and nothing is fetched: inline styles only.
constexpr const char* kCsp = "default-src 'none'; style-src 'unsafe-inline'";

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1b1b;margin:0;background:#f6f6f4}
main{max-width:1040px;margin:0 auto;padding:16px 20px 48px;background:#fff}
h1{font-size:22px;margin:8px 0 12px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
div.table{overflow-x:auto}table{border-collapse:collapse;margin:8px 0;font-size:13px;font-variant-numeric:tabular-nums}
th,td{border:1px solid #d4d4d4;padding:3px 8px;white-space:nowrap}th{background:#f0f0ee}
td.num,th.num{text-align:right}code,pre{font:12px ui-monospace,Menlo,Consolas,monospace;background:#f3f3f1}
pre{padding:8px;overflow-x:auto}ul{padding-left:22px}li{margin:2px 0}
figure{margin:12px 0}svg.chart{max-width:100%;height:auto;font:12px system-ui,sans-serif}
svg .title{font-size:15px;font-weight:600}svg .label{font-size:12px}svg .group{font-weight:600}
svg .grid{stroke:#e6e6e6}svg .axisline{stroke:#555}svg .sep{stroke:#bbb;stroke-dasharray:2 3}
svg .dot{fill:#fff;stroke:#222;stroke-width:1.2}svg .predicted{fill:#fff;stroke:#D55E00;stroke-width:2}
svg .emphasis{stroke:#111;stroke-width:2}svg rect.emphasis{fill-opacity:.85}svg .tag{font-size:11px;font-style:italic}
svg .refline{stroke-width:1.6;stroke-dasharray:6 4}svg .ring{fill:none;stroke:#111;stroke-width:1.5}
svg .shape{fill:#888}svg .point{stroke:#fff;stroke-width:.8}svg .interval{stroke:#D55E00;stroke-width:2}
)";

std::string TableHtml(const table::Table& t) {
  auto left = [&](size_t i) { return i < t.left.size() && t.left[i]; };
  std::string out = "<div class=\"table\"><table><thead><tr>";
  for (size_t i = 0; i < t.header.size(); ++i)
    out += fmt::format("<th{}>{}</th>", left(i) ? "" : " class=\"num\"", InlineHtml(t.header[i]));
  out += "</tr></thead><tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (size_t i = 0; i < row.size(); ++i)
      out += fmt::format("<td{}>{}</td>", left(i) ? "" : " class=\"num\"", InlineHtml(row[i]));
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::string BlocksHtml(const std::vector<Block>& blocks,
                       const std::map<std::string, std::string>& figures) {
  std::string out;
  for (const Block& b : blocks) {
    switch (b.kind) {
      case Block::Kind::kParagraph:
        out += "<p>" + InlineHtml(b.text) + "</p>\n";
        break;
      case Block::Kind::kBullets:
        out += "<ul>\n";
        for (const std::string& item : b.items) out += "<li>" + InlineHtml(item) + "</li>\n";
        out += "</ul>\n";
        break;
      case Block::Kind::kTable:
        out += TableHtml(b.table);
        break;
      case Block::Kind::kCode:
        out += "<pre><code>" + EscapeHtml(b.text) + "</code></pre>\n";
        break;
      case Block::Kind::kFigure:
        if (auto it = figures.find(b.text); it != figures.end())
          out += "<figure>" + it->second + "</figure>\n";
        break;
    }
  }
  return out;
}

// "Communication domains" -> "communication-domains", for section anchors.
std::string Anchor(const std::string& title) {
  std::string out;
  for (char ch : title) {
    if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'))
      out += ch;
    else if (ch >= 'A' && ch <= 'Z')
      out += static_cast<char>(ch - 'A' + 'a');
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

}  // namespace

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string InlineHtml(std::string_view text) {
  // `code` spans first (their content is literal), then **bold** outside them;
  // an unpaired mark stays as it is.
  std::string out;
  bool bold = false;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '`') {
      const size_t end = text.find('`', i + 1);
      if (end != std::string_view::npos) {
        out += "<code>" + EscapeHtml(text.substr(i + 1, end - i - 1)) + "</code>";
        i = end + 1;
        continue;
      }
    }
    if (text.compare(i, 2, "**") == 0 &&
        (bold || text.find("**", i + 2) != std::string_view::npos)) {
      out += bold ? "</strong>" : "<strong>";
      bold = !bold;
      i += 2;
      continue;
    }
    out += EscapeHtml(text.substr(i, 1));
    ++i;
  }
  if (bold) out += "</strong>";
  return out;
}

std::string RenderHtml(const Document& doc, const std::map<std::string, std::string>& figures) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style></head>\n<body><main>\n<h1>{}</h1>\n",
      kCsp, EscapeHtml(doc.title), kStyle, InlineHtml(doc.title));
  out += BlocksHtml(doc.intro, figures);
  std::string toc;
  for (const Section& s : doc.sections)
    toc += fmt::format("{}<a href=\"#{}\">{}</a>", toc.empty() ? "" : " · ", Anchor(s.title),
                       EscapeHtml(s.title));
  out += "<nav><p>" + toc + "</p></nav>\n";
  for (const Section& s : doc.sections)
    out += fmt::format("<section id=\"{}\"><h2>{}</h2>\n{}</section>\n", Anchor(s.title),
                       InlineHtml(s.title), BlocksHtml(s.blocks, figures));
  return out + "</main></body></html>\n";
}

}  // namespace ppsearch::report
