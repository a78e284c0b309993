#include "bulk/record_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"

namespace warden::bulk {
namespace {

ReaderOptions with_format(InputFormat format) {
  ReaderOptions o;
  o.format = format;
  return o;
}

std::vector<Record> read_all(std::string_view data, ReaderOptions options, ReaderPosition start = {}) {
  RecordReader reader(data, "input", std::move(options), start);
  std::vector<Record> out;
  Record r;
  while (reader.next(r)) out.push_back(r);
  return out;
}

// The message of the Error(InvalidInput) reading `data` throws.
std::string error_of(std::string_view data, ReaderOptions options) {
  try {
    (void)read_all(data, std::move(options));
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << data;
  return {};
}

TEST(RecordReader, DetectsFormatsByExtension) {
  EXPECT_EQ(detect_input_format("a/b.jsonl"), InputFormat::Jsonl);
  EXPECT_EQ(detect_input_format("b.ndjson"), InputFormat::Jsonl);
  EXPECT_EQ(detect_input_format("b.csv"), InputFormat::Csv);
  EXPECT_EQ(detect_input_format("b.tsv"), InputFormat::Tsv);
  EXPECT_EQ(detect_input_format("b.txt"), InputFormat::Lines);
  EXPECT_EQ(detect_input_format("b"), InputFormat::Lines);
  EXPECT_EQ(parse_input_format("csv"), InputFormat::Csv);
  EXPECT_FALSE(parse_input_format("xml"));
}

TEST(RecordReader, LinesStripCrlfAndBomAndNumberTheIds) {
  const std::string data = "\xEF\xBB\xBFone\r\ntwo\n\nlast";
  const auto records = read_all(data, with_format(InputFormat::Lines));
  ASSERT_EQ(records.size(), 4U);
  EXPECT_EQ(records[0].text, "one");
  EXPECT_EQ(records[0].id, "0");
  EXPECT_EQ(records[0].end_offset, 3U + 5U);
  EXPECT_EQ(records[1].text, "two");
  EXPECT_EQ(records[2].text, "");
  EXPECT_EQ(records[3].text, "last");
  EXPECT_EQ(records[3].id, "3");
  EXPECT_EQ(records[3].end_offset, data.size());
  EXPECT_EQ(records[3].line, 4U);
}

TEST(RecordReader, JsonlCarriesIdsAsTheirJson) {
  const std::string data =
      "{\"id\": \"a\\\"b\", \"text\": \"hello\"}\n"
      "\n"
      "{\"text\": \"no id\"}\n"
      "{\"id\": 42, \"text\": \"int\", \"other\": [1, 2]}\n"
      "{\"id\": 1.5, \"text\": \"double\"}\n";
  const auto records = read_all(data, with_format(InputFormat::Jsonl));
  ASSERT_EQ(records.size(), 4U);
  EXPECT_EQ(records[0].id, "\"a\\\"b\"");
  EXPECT_EQ(records[0].text, "hello");
  EXPECT_EQ(records[1].id, "1");  // no id: the record index
  EXPECT_EQ(records[1].line, 3U);
  EXPECT_EQ(records[2].id, "42");
  EXPECT_EQ(records[3].id, "1.5");
}

TEST(RecordReader, JsonlCustomFieldsAndPairs) {
  ReaderOptions o = with_format(InputFormat::Jsonl);
  o.text_field = "passage";
  o.id_field = "doc";
  o.pair_field = "q";
  o.pair_id_field = "qid";
  const auto records = read_all("{\"doc\": 7, \"passage\": \"p\", \"q\": \"why\", \"qid\": \"q1\"}\n", o);
  ASSERT_EQ(records.size(), 1U);
  EXPECT_EQ(records[0].id, "7");
  EXPECT_EQ(records[0].text, "p");
  EXPECT_EQ(records[0].pair, "why");
  EXPECT_EQ(records[0].pair_id, "\"q1\"");
}

TEST(RecordReader, JsonlErrorsNameTheLineAndTheProblem) {
  const ReaderOptions o = with_format(InputFormat::Jsonl);
  EXPECT_NE(error_of("{\"text\": \"a\"}\n{\"text\": \n", o).find("input: line 2: invalid JSON"),
            std::string::npos);
  EXPECT_NE(error_of("{\"text\": \"a\"}\n\n{\"txt\": \"b\"}\n", o).find("line 3: no \"text\" field"),
            std::string::npos);
  EXPECT_NE(error_of("{\"text\": 5}\n", o).find("line 1: \"text\" is not a string"), std::string::npos);
  EXPECT_NE(error_of("[1]\n", o).find("line 1: not a JSON object"), std::string::npos);
  EXPECT_NE(error_of("{\"text\": \"a\", \"id\": null}\n", o).find("neither a string nor a number"),
            std::string::npos);
  ReaderOptions required = o;
  required.id_field = "key";
  required.id_required = true;
  EXPECT_NE(error_of("{\"text\": \"a\"}\n", required).find("no \"key\" field"), std::string::npos);
}

TEST(RecordReader, CsvFollowsRfc4180) {
  const std::string data =
      "id,text,extra\r\n"
      "1,plain,x\r\n"
      "2,\"with, comma and \"\"quotes\"\"\",y\r\n"
      "3,\"two\nlines\",z\n"
      "\n"
      "4,,\"\"\n";
  const auto records = read_all(data, with_format(InputFormat::Csv));
  ASSERT_EQ(records.size(), 4U);
  EXPECT_EQ(records[0].id, "\"1\"");
  EXPECT_EQ(records[0].text, "plain");
  EXPECT_EQ(records[1].text, "with, comma and \"quotes\"");
  EXPECT_EQ(records[2].text, "two\nlines");
  EXPECT_EQ(records[2].line, 4U);
  EXPECT_EQ(records[3].line, 7U);
  EXPECT_EQ(records[3].text, "");
  EXPECT_EQ(records[3].end_offset, data.size());
}

TEST(RecordReader, TsvIsTheSameParserWithTabs) {
  const auto records =
      read_all("text\tid\nhello \"world\"\tk1\n\"a\tb\"\tk2\n", with_format(InputFormat::Tsv));
  ASSERT_EQ(records.size(), 2U);
  EXPECT_EQ(records[0].text, "hello \"world\"");
  EXPECT_EQ(records[0].id, "\"k1\"");
  EXPECT_EQ(records[1].text, "a\tb");
}

TEST(RecordReader, CsvWithoutIdColumnNumbersTheRecords) {
  const auto records = read_all("text\na\nb\n", with_format(InputFormat::Csv));
  ASSERT_EQ(records.size(), 2U);
  EXPECT_EQ(records[1].id, "1");
}

TEST(RecordReader, CsvErrorsNameTheLine) {
  const ReaderOptions o = with_format(InputFormat::Csv);
  EXPECT_NE(error_of("text,id\na,1\nb\n", o).find("input: line 3: 1 fields where the header has 2"),
            std::string::npos);
  EXPECT_NE(error_of("text,id\na,1\n\"open,2\n", o).find("line 3: unterminated quoted field"),
            std::string::npos);
  EXPECT_NE(error_of("text\n\"a\"b\n", o).find("line 2: unexpected character after a closing quote"),
            std::string::npos);
  EXPECT_NE(error_of("", o).find("line 1: no header row"), std::string::npos);
  EXPECT_NE(error_of("body,id\na,1\n", o).find("line 1: the header has no 'text' column"), std::string::npos);
}

TEST(RecordReader, InvalidUtf8IsAnErrorWithTheLine) {
  EXPECT_NE(error_of("ok\nbad \xC0\xAF\n", with_format(InputFormat::Lines)).find("line 2"),
            std::string::npos);
  EXPECT_NE(error_of("text\nok\n\xFF\n", with_format(InputFormat::Csv)).find("line 3"), std::string::npos);
}

TEST(RecordReader, RecordsLongerThanTheBoundAreRefused) {
  ReaderOptions o = with_format(InputFormat::Lines);
  o.max_record_bytes = 8;
  EXPECT_EQ(read_all("12345678\n", o).size(), 1U);
  EXPECT_NE(error_of("ok\n123456789\n", o).find("line 2: the line is longer than 8 bytes"),
            std::string::npos);
  o.format = InputFormat::Csv;
  EXPECT_NE(error_of("text\n\"12345\n6789\"\n", o).find("line 2: the record is longer than 8 bytes"),
            std::string::npos);
}

TEST(RecordReader, ResumesFromAPosition) {
  const std::string data = "text,id\na,1\n\"b\nb\",2\nc,3\n";
  const auto all = read_all(data, with_format(InputFormat::Csv));
  ASSERT_EQ(all.size(), 3U);
  const ReaderPosition after_first{all[0].end_offset, all[0].index + 1, all[0].next_line};
  const auto rest = read_all(data, with_format(InputFormat::Csv), after_first);
  ASSERT_EQ(rest.size(), 2U);
  EXPECT_EQ(rest[0].text, "b\nb");
  EXPECT_EQ(rest[0].index, 1U);
  EXPECT_EQ(rest[0].line, 3U);
  EXPECT_EQ(rest[1].line, 5U);
  EXPECT_EQ(rest[1].id, "\"3\"");
}

TEST(RecordReader, ReadsFilesInSmallPiecesTheSameAsMemory) {
  // Longer than one read buffer, with a record straddling the boundary.
  std::string data;
  for (int i = 0; i < 20000; ++i) data += "{\"text\": \"line " + std::to_string(i) + "\"}\n";
  const auto path =
      std::filesystem::temp_directory_path() / ("warden-reader-" + std::to_string(::getpid()) + ".jsonl");
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(data.data(), 1, data.size(), f);
    std::fclose(f);
  }
  RecordReader reader(path.string(), with_format(InputFormat::Jsonl));
  EXPECT_EQ(reader.size(), data.size());
  Record r;
  std::size_t n = 0;
  while (reader.next(r)) {
    ASSERT_EQ(r.text, "line " + std::to_string(n));
    ++n;
  }
  EXPECT_EQ(n, 20000U);
  EXPECT_EQ(r.end_offset, data.size());
  std::filesystem::remove(path);
}

TEST(RecordReader, MissingFileIsNotFound) {
  try {
    RecordReader reader(std::string("/nonexistent/input.txt"), ReaderOptions{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotFound);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/input.txt"), std::string::npos);
  }
}

}  // namespace
}  // namespace warden::bulk
