#include "report/html.h"

#include <gtest/gtest.h>

#include "report/document.h"

namespace ppsearch::report {
namespace {

TEST(InlineHtml, BoldAndCodeBecomeElementsAndTextIsEscaped) {
  EXPECT_EQ(InlineHtml("**Primary: PP8**: `a<b` & \"c\""),
            "<strong>Primary: PP8</strong>: <code>a&lt;b</code> &amp; &quot;c&quot;");
  // Marks inside code are literal; an unpaired ** stays text.
  EXPECT_EQ(InlineHtml("`**x**` 2 ** 3"), "<code>**x**</code> 2 ** 3");
  EXPECT_EQ(EscapeHtml("<'>"), "&lt;&#39;&gt;");
}

Document Sample() {
  Document doc;
  doc.title = "ppsearch report: r1";
  doc.intro.push_back(Block::Paragraph("Intro with **bold**."));
  table::Table t;
  t.header = {"Layout", "TPS"};
  t.left = {true, false};
  t.rows = {{"1 / 32 / 4", "3,257.96"}, {"8 / 4 / 4", "12,556.79"}};
  doc.sections.push_back(
      {"Results", {Block::TableBlock(t), Block::Figure("tps"), Block::Figure("absent")}});
  doc.sections.push_back({"How to reproduce", {Block::Code("ppsearch report r1\n")}});
  doc.sections.push_back({"Checks", {Block::Bullets({"one", "two <3>"})}});
  return doc;
}

TEST(RenderMarkdown, BlocksAreSeparatedByABlankLineAndFiguresLeftOut) {
  EXPECT_EQ(RenderMarkdown(Sample()),
            "# ppsearch report: r1\n\nIntro with **bold**.\n\n## Results\n\n"
            "| Layout     |       TPS |\n| :--------- | --------: |\n"
            "| 1 / 32 / 4 |  3,257.96 |\n| 8 / 4 / 4  | 12,556.79 |\n"
            "\n## How to reproduce\n\n```sh\nppsearch report r1\n```\n"
            "\n## Checks\n\n- one\n- two <3>\n");
}

TEST(RenderHtml, OnePageWithNoScriptAndNothingToFetch) {
  const std::string html =
      RenderHtml(Sample(), {{"tps", "<svg class=\"chart\" id=\"tps\"></svg>"}});
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("content=\"default-src 'none'; style-src 'unsafe-inline'\""),
            std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"how-to-reproduce\"><h2>How to reproduce</h2>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>8 / 4 / 4</td><td class=\"num\">12,556.79</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<figure><svg class=\"chart\" id=\"tps\"></svg></figure>"),
            std::string::npos);
  EXPECT_EQ(html.find("absent"), std::string::npos);
  EXPECT_NE(html.find("<li>two &lt;3&gt;</li>"), std::string::npos);
  EXPECT_NE(html.find("<pre><code>ppsearch report r1\n</code></pre>"), std::string::npos);
  EXPECT_NE(html.find("<p>Intro with <strong>bold</strong>.</p>"), std::string::npos);
}

}  // namespace
}  // namespace ppsearch::report
