// CSV quoting, parsing and the messages for malformed files.

#include "util/csv.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "util/files.h"

namespace ppsearch {
namespace {

using Row = std::vector<std::string>;

TEST(CsvField, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("PP2/TP16/EP4"), "PP2/TP16/EP4");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
}

TEST(CsvRow, JoinsWithCommasAndEndsTheLine) {
  EXPECT_EQ(CsvRow({"pp", "tp", "note"}), "pp,tp,note\n");
  EXPECT_EQ(CsvRow({"1", "x,y", ""}), "1,\"x,y\",\n");
  EXPECT_EQ(CsvRow({}), "\n");
}

TEST(Csv, QuotingRoundTrips) {
  const Row header = {"name", "value", "note"};
  const std::vector<Row> rows = {
      {"commas", "a,b,c", ",leading and trailing,"},
      {"quotes", "\"quoted\"", "a \"\" pair"},
      {"newlines", "line 1\nline 2", "\n"},
      {"crlf", "windows\r\nline", "\r"},
      {"empty", "", ""},
      {"mixed", "\",\n\"", "plain"},
  };
  std::string text = CsvRow(header);
  for (const Row& r : rows) text += CsvRow(r);
  Result<CsvTable> t = ParseCsv(text, "round.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->path, "round.csv");
  EXPECT_EQ(t->header, header);
  EXPECT_EQ(t->rows, rows);
}

TEST(ParseCsv, RowLinesCountPhysicalLines) {
  // Row 1 starts on line 2 and spans line 3 (a quoted newline); a blank line 4
  // is skipped; row 2 is on line 5.
  Result<CsvTable> t = ParseCsv("a,b\n1,\"x\ny\"\n\n2,3\n", "t.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0], (Row{"1", "x\ny"}));
  EXPECT_EQ(t->rows[1], (Row{"2", "3"}));
  EXPECT_EQ(t->row_lines, (std::vector<int>{2, 5}));
}

TEST(ParseCsv, CrLfLineEndsAndNoFinalNewline) {
  Result<CsvTable> t = ParseCsv("a,b\r\n1,2\r\n3,4", "t.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->header, (Row{"a", "b"}));
  EXPECT_EQ(t->rows, (std::vector<Row>{{"1", "2"}, {"3", "4"}}));
  EXPECT_EQ(t->row_lines, (std::vector<int>{2, 3}));
}

// As a spreadsheet saves "CSV UTF-8": the byte order mark is no part of
// the first column's name.
TEST(ParseCsv, AByteOrderMarkIsNotPartOfTheHeader) {
  Result<CsvTable> t = ParseCsv("\xEF\xBB\xBFpp,tp\r\n1,32\r\n", "t.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->header, (Row{"pp", "tp"}));
  EXPECT_EQ(t->Column("pp"), 0);
  EXPECT_EQ(t->row_lines, (std::vector<int>{2}));
}

TEST(ParseCsv, EmptyLastFieldIsKept) {
  Result<CsvTable> t = ParseCsv("a,b\n1,\n2,\"\"", "t.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->rows, (std::vector<Row>{{"1", ""}, {"2", ""}}));
}

TEST(ParseCsv, WrongFieldCountNamesTheLine) {
  Result<CsvTable> t = ParseCsv("a,b\n1,2\n1,2,3\n", "data/m.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "data/m.csv:3: expected 2 fields as in the header, got 3");
  Result<CsvTable> short_row = ParseCsv("a,b,c\n1,\"2\n2\"\n4\n", "data/m.csv");
  ASSERT_FALSE(short_row.ok());
  EXPECT_EQ(short_row.error().message, "data/m.csv:2: expected 3 fields as in the header, got 2");
}

TEST(ParseCsv, UnterminatedQuoteNamesTheLineItStarts) {
  Result<CsvTable> t = ParseCsv("a,b\n1,2\n3,\"open\nstill open\n", "data/m.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "data/m.csv:3: unterminated quoted field");
}

TEST(ParseCsv, EmptyText) {
  Result<CsvTable> t = ParseCsv("", "data/m.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "data/m.csv: empty CSV (expected a header row)");
}

TEST(ParseCsv, HeaderOnlyHasNoRows) {
  Result<CsvTable> t = ParseCsv("a,b\n", "t.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(t->rows.empty());
  EXPECT_EQ(t->Column("b"), 1);
  EXPECT_EQ(t->Column("c"), -1);
}

// A column named twice would be read from whichever copy Column() meets
// first; the file is refused instead.
TEST(ParseCsv, ARepeatedColumnNameIsRefused) {
  Result<CsvTable> t =
      ParseCsv("pp,tp,input_tps_median,ep,input_tps_median\n1,32,3000,4,9000\n", "data/m.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message,
            "data/m.csv:1: column 'input_tps_median' appears twice (3 and 5); expected each "
            "column once");
}

// A cell pasted with a whole file in it is quoted in part, with its size.
TEST(CsvNumber, AHugeCellIsQuotedInPart) {
  Result<CsvTable> t = ParseCsv("tps\n" + std::string(1 << 20, 'x') + "\n", "data/m.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  Result<double> v = CsvNumber(*t, 0, "tps");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message, "data/m.csv:2: column 'tps': expected a number, got \"" +
                                   std::string(80, 'x') + "... (1048576 bytes)\"");
}

TEST(CsvNumber, ParsesNumbers) {
  Result<CsvTable> t = ParseCsv("pp,tps\n1,3257.96\n2,1.5e3\n", "m.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  Result<double> a = CsvNumber(*t, 0, "tps");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_DOUBLE_EQ(*a, 3257.96);
  Result<double> b = CsvNumber(*t, 1, "tps");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_DOUBLE_EQ(*b, 1500);
}

TEST(CsvNumber, NonNumberNamesFileLineAndColumn) {
  Result<CsvTable> t = ParseCsv("pp,tps\n1,3257.96\n2,fast\n3,\n4,12x\n", "data/m.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  Result<double> word = CsvNumber(*t, 1, "tps");
  ASSERT_FALSE(word.ok());
  EXPECT_EQ(word.error().message, "data/m.csv:3: column 'tps': expected a number, got \"fast\"");
  Result<double> empty = CsvNumber(*t, 2, "tps");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "data/m.csv:4: column 'tps': expected a number, got \"\"");
  Result<double> suffix = CsvNumber(*t, 3, "tps");
  ASSERT_FALSE(suffix.ok());
  EXPECT_EQ(suffix.error().message, "data/m.csv:5: column 'tps': expected a number, got \"12x\"");
}

TEST(CsvNumber, NonFiniteIsNotANumber) {
  Result<CsvTable> t = ParseCsv("pp,tps\n1,nan\n2,inf\n", "data/m.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  Result<double> nan = CsvNumber(*t, 0, "tps");
  ASSERT_FALSE(nan.ok());
  EXPECT_EQ(nan.error().message, "data/m.csv:2: column 'tps': expected a number, got \"nan\"");
  EXPECT_FALSE(CsvNumber(*t, 1, "tps").ok());
}

TEST(CsvNumber, MissingColumn) {
  Result<CsvTable> t = ParseCsv("pp,tps\n1,2\n", "data/m.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  Result<double> v = CsvNumber(*t, 0, "ep");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message, "data/m.csv: missing column 'ep'");
}

TEST(ReadCsv, ReadsAFileAndReportsItsPath) {
  std::string pattern = (std::filesystem::temp_directory_path() / "ppsearch_csv_XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const std::string path = pattern + "/m.csv";
  ASSERT_TRUE(WriteFileAtomic(path, "a,b\n1,2\n1\n").ok());
  Result<CsvTable> t = ReadCsv(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, path + ":3: expected 2 fields as in the header, got 1");
  Result<CsvTable> missing = ReadCsv(pattern + "/absent.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(pattern + "/absent.csv"), std::string::npos);
  std::filesystem::remove_all(pattern);
}

}  // namespace
}  // namespace ppsearch
