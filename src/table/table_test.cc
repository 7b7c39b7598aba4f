#include "table/table.h"

#include <gtest/gtest.h>

namespace ppsearch::table {
namespace {

Table Sample() {
  Table t;
  t.header = {"layout", "C", "input TPS"};
  t.rows = {{"PP8/TP4/EP4", "8", "2,702.5"}, {"PP1/TP32/EP4", "16", "910.0"}};
  t.left = {true, false, false};
  return t;
}

TEST(RenderTextTable, ColumnsThreeSpacesApartLabelsLeftNumbersRight) {
  EXPECT_EQ(RenderTextTable(Sample()),
            "layout          C   input TPS\n"
            "PP8/TP4/EP4     8     2,702.5\n"
            "PP1/TP32/EP4   16       910.0\n");
}

TEST(RenderTextTable, APaddedLastLabelColumnIsTrimmed) {
  Table t;
  t.header = {"n", "name"};
  t.rows = {{"1", "a"}, {"22", "longer"}};
  t.left = {false, true};
  EXPECT_EQ(RenderTextTable(t),
            " n   name\n"
            " 1   a\n"
            "22   longer\n");
}

TEST(RenderTextTable, NoHeaderListsKeyValueRows) {
  Table t;
  t.rows = {{"model", "kimi-k3"}, {"kv cache", "27,648 B/token"}};
  t.left = {true, true};
  EXPECT_EQ(RenderTextTable(t),
            "model      kimi-k3\n"
            "kv cache   27,648 B/token\n");
}

TEST(RenderTextTable, NcclTestsStyleUnitsLineAndCommentedHeader) {
  Table t;
  t.header = {"requests", "ttft_p50"};
  t.units = {"", "(ms)"};
  t.rows = {{"80", "200.00"}};
  t.commented_header = true;
  EXPECT_EQ(RenderTextTable(t),
            "# requests   ttft_p50\n"
            "#                (ms)\n"
            "        80     200.00\n");
}

TEST(RenderTextTable, AWideTableMayTakeTwoSpacesBetweenColumns) {
  Table t = Sample();
  t.gap = 2;
  EXPECT_EQ(RenderTextTable(t),
            "layout         C  input TPS\n"
            "PP8/TP4/EP4    8    2,702.5\n"
            "PP1/TP32/EP4  16      910.0\n");
}

TEST(RenderTextTable, ShortRowsReadAsEmptyCells) {
  Table t;
  t.header = {"a", "b", "c"};
  t.rows = {{"1"}};
  t.left = {true, true, true};
  EXPECT_EQ(RenderTextTable(t), "a   b   c\n1\n");
}

TEST(RenderMarkdownTable, DelimiterRowCarriesTheAlignment) {
  EXPECT_EQ(RenderMarkdownTable(Sample()),
            "| layout       |   C | input TPS |\n"
            "| :----------- | --: | --------: |\n"
            "| PP8/TP4/EP4  |   8 |   2,702.5 |\n"
            "| PP1/TP32/EP4 |  16 |     910.0 |\n");
}

TEST(RenderMarkdownTable, UnitsFollowTheirNames) {
  Table t;
  t.header = {"layer", "kv_cache"};
  t.units = {"", "(B/token)"};
  t.rows = {{"3", "27,648"}};
  EXPECT_EQ(RenderMarkdownTable(t),
            "| layer | kv_cache (B/token) |\n"
            "| ----: | -----------------: |\n"
            "|     3 |             27,648 |\n");
}

TEST(RenderTable, PicksTheRenderer) {
  EXPECT_EQ(RenderTable(Sample(), true), RenderMarkdownTable(Sample()));
  EXPECT_EQ(RenderTable(Sample(), false), RenderTextTable(Sample()));
}

TEST(Indent, PadsEveryNonEmptyLine) {
  EXPECT_EQ(Indent("a\n\nb\n", 2), "  a\n\n  b\n");
  EXPECT_EQ(Indent("a", 2), "  a");
  EXPECT_EQ(Indent("", 2), "");
}

}  // namespace
}  // namespace ppsearch::table
