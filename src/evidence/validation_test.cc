// Evidence that cannot be true comes back as named problems, one per kind,
// with a count and the first record; evidence that can be true passes.

#include "evidence/validation.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <limits>

#include "evidence/evidence.h"
#include "util/files.h"

namespace ppsearch::evidence {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kSecond = 1'000'000'000;
const RecordLimits kLimits{40, 100 * kSecond};
const char* kRaw = "raw/pp4-tp8-ep4_c8_r1.jsonl";

// 40 requests sent at 0..39 ms, first token 1 s later, done 2 s later.
std::vector<workload::RequestRecord> Sent(int n = 40) {
  std::vector<workload::RequestRecord> out;
  for (int i = 0; i < n; ++i) {
    workload::RequestRecord r;
    r.id = i;
    r.send_ns = i * 1'000'000;
    r.first_token_ns = r.send_ns + kSecond;
    r.end_ns = r.send_ns + 2 * kSecond;
    r.input_tokens = 100;
    r.output_tokens = 1;
    r.http_status = 200;
    out.push_back(r);
  }
  return out;
}

std::vector<std::string> Kinds(const std::vector<EvidenceProblem>& problems) {
  std::vector<std::string> out;
  for (const EvidenceProblem& p : problems) out.push_back(p.kind);
  return out;
}

TEST(CheckRecords, RecordsThatCanBeTruePass) {
  std::vector<workload::RequestRecord> records = Sent();
  records[3].status = workload::RequestStatus::kHttpError;  // failed: no first token
  records[3].http_status = 503;
  records[3].first_token_ns = -1;
  records[4].status = workload::RequestStatus::kNotSent;  // never sent: no times at all
  records[4].first_token_ns = records[4].end_ns = -1;
  records[4].send_ns = 0;
  EXPECT_TRUE(CheckRecords(records, kLimits, kRaw).empty());
}

// The sample's spec: 40 requests at concurrency 40, prompts of at most 100
// tokens, outputs of at most 1.
const RecordLimits kSpecLimits{40, 100 * kSecond, 40, 100, 1};

TEST(CheckRecords, RecordsTheSpecAllowsPass) {
  std::vector<workload::RequestRecord> records = Sent();
  records[3].status = workload::RequestStatus::kHttpError;
  records[3].http_status = 500;
  records[3].first_token_ns = -1;
  records[3].output_tokens = 0;
  records[5].status = workload::RequestStatus::kStreamError;  // a reset after the 200
  records[6].status = workload::RequestStatus::kStreamError;  // longer than asked: flagged
  records[6].output_tokens = 50;
  EXPECT_TRUE(CheckRecords(records, kSpecLimits, kRaw).empty());
}

TEST(CheckRecords, RecordsTheSpecCannotHaveMadeAreNamed) {
  std::vector<workload::RequestRecord> records = Sent();
  records[1].input_tokens = 1'000'000'000'000;
  records[2].output_tokens = -5;
  records[3].output_tokens = 50;                            // 1 asked
  records[4].http_status = 500;                             // yet ok
  records[5].status = workload::RequestStatus::kHttpError;  // yet 200
  records[6].id = -1;
  records[7].id = 40;
  const std::vector<EvidenceProblem> problems = CheckRecords(records, kSpecLimits, kRaw);
  ASSERT_EQ(Kinds(problems), (std::vector<std::string>{kRequestIdOutOfRange, kLengthOutOfRange,
                                                       kStatusContradictsHttp}));
  EXPECT_EQ(problems[0].Text(),
            "raw/pp4-tp8-ep4_c8_r1.jsonl: request_id_out_of_range: 2 requests have an id outside "
            "[0, 40) (workload.requests) (first: record 7: id -1)");
  EXPECT_EQ(
      problems[1].Text(),
      "raw/pp4-tp8-ep4_c8_r1.jsonl: length_out_of_range: 3 requests have input_tokens "
      "outside [1, 100] or output_tokens outside [0, 1] (the longest the workload draws; an ok "
      "request's output) (first: record 2: id 1: input_tokens 1000000000000, output_tokens 1)");
  EXPECT_EQ(problems[2].Text(),
            "raw/pp4-tp8-ep4_c8_r1.jsonl: status_contradicts_http: 2 requests have a status "
            "their HTTP status denies (first: record 5: id 4: status ok with http_status 500)");
}

// Half the records copied under fresh ids: the copies overlap their
// originals in time, so more requests are in flight than the client allows.
TEST(CheckRecords, RecordsReusedUnderNewIdsExceedTheConcurrency) {
  std::vector<workload::RequestRecord> records = Sent(20);
  for (int i = 0; i < 20; ++i) {
    workload::RequestRecord copy = records[static_cast<size_t>(i)];
    copy.id = 20 + i;
    records.push_back(copy);
  }
  const RecordLimits limits{40, 100 * kSecond, 20, 100, 1};
  const std::vector<EvidenceProblem> problems = CheckRecords(records, limits, kRaw);
  ASSERT_EQ(Kinds(problems), std::vector<std::string>{kMoreInFlightThanConcurrency});
  EXPECT_EQ(problems[0].detail,
            "40 requests in flight at once, but the sample's concurrency is 20 (first: record 11: "
            "id 10)");
  // A closed loop at its limit: each send at the nanosecond the previous
  // request ended is no overlap.
  std::vector<workload::RequestRecord> chain = Sent(2);
  chain[1].send_ns = chain[0].end_ns;
  chain[1].first_token_ns = chain[1].send_ns + 1;
  chain[1].end_ns = chain[1].send_ns + 2;
  EXPECT_TRUE(CheckRecords(chain, {40, 100 * kSecond, 1, 100, 1}, kRaw).empty());
}

TEST(CheckRecords, AFileAppendedToItselfRepeatsEveryIdAndHoldsTooManyRecords) {
  std::vector<workload::RequestRecord> records = Sent();
  const std::vector<workload::RequestRecord> again = Sent();
  records.insert(records.end(), again.begin(), again.end());
  const std::vector<EvidenceProblem> problems = CheckRecords(records, kLimits, kRaw);
  ASSERT_EQ(Kinds(problems),
            (std::vector<std::string>{kDuplicateRequestId, kMoreRecordsThanRequests}));
  EXPECT_EQ(problems[0].Text(),
            "raw/pp4-tp8-ep4_c8_r1.jsonl: duplicate_request_id: 40 records repeat an earlier "
            "request id (first: record 41: id 0 again, first at record 1)");
  EXPECT_EQ(problems[1].detail, "80 records, but the sample sends 40 requests (workload.requests)");
}

TEST(CheckRecords, TwoHundredThousandCopiesAreOneProblemPerKind) {
  const std::vector<workload::RequestRecord> records(200000, Sent(1)[0]);
  const std::vector<EvidenceProblem> problems = CheckRecords(records, kLimits, kRaw);
  ASSERT_EQ(Kinds(problems),
            (std::vector<std::string>{kDuplicateRequestId, kMoreRecordsThanRequests}));
  EXPECT_EQ(problems[0].detail.substr(0, 46), "199999 records repeat an earlier request id (f");
  EXPECT_EQ(problems[1].detail.substr(0, 15), "200000 records,");
}

// A stream's chunks come between its first token and its end: gaps that
// add up to the end exactly pass, one microsecond more (a decode timing
// edited or stretched on another clock) does not, nor do chunks after a
// first token that never came.
TEST(CheckRecords, ChunksAfterTheEndAreNamed) {
  std::vector<workload::RequestRecord> records = Sent();
  for (auto& r : records) {
    r.output_tokens = 3;
    r.chunk_gaps_us = {400'000, 600'000};  // ends with the stream, 1 s after its first token
  }
  EXPECT_TRUE(CheckRecords(records, kLimits, kRaw).empty());
  records[2].chunk_gaps_us = {400'000, 600'001};
  records[9].first_token_ns = -1;
  records[9].status = workload::RequestStatus::kStreamError;
  const std::vector<EvidenceProblem> problems = CheckRecords(records, kLimits, kRaw);
  ASSERT_EQ(Kinds(problems), (std::vector<std::string>{kChunksOutsideRequest}));
  EXPECT_EQ(problems[0].detail,
            "2 requests have streamed chunks after their end (chunk_gaps_us) (first: record 3: id "
            "2: chunk_gaps_us add up to 1000001 us, but the stream ended 1000000 us after its "
            "first token)");
  // A simulated run written before chunk times were stretched with its
  // repeat: gaps of the unstretched timeline, a lost request's chunks kept.
  RecordLimits simulated = kLimits;
  simulated.simulated_stretch = 0.99;
  records[2].chunk_gaps_us = {404'040, 606'062};  // 1,010,102 us over a 1 s stream at 0.99
  EXPECT_TRUE(CheckRecords(records, simulated, kRaw).empty());
  records[2].chunk_gaps_us = {1'000'000'000};  // an edit still shows
  ASSERT_EQ(Kinds(CheckRecords(records, simulated, kRaw)),
            (std::vector<std::string>{kChunksOutsideRequest}));
}

TEST(CheckRecords, TimesOutOfOrderAreNamed) {
  std::vector<workload::RequestRecord> records = Sent();
  records[5].send_ns = records[5].end_ns + 1;  // negative latency and TTFT
  records[5].first_token_ns = records[5].end_ns;
  records[7].first_token_ns = records[7].end_ns + 1;   // a token after the end
  records[8].first_token_ns = records[8].send_ns - 1;  // a token before the send
  const std::vector<EvidenceProblem> problems = CheckRecords(records, kLimits, kRaw);
  ASSERT_EQ(Kinds(problems), (std::vector<std::string>{kEndBeforeSend, kFirstTokenOutsideRequest}));
  EXPECT_EQ(problems[0].detail,
            "1 requests end before they were sent (first: record 6: id 5: send_ns 2005000001 > "
            "end_ns 2005000000)");
  EXPECT_EQ(problems[1].detail.substr(0, 64),
            "3 requests have a first token outside [send, end] (first: record");
}

TEST(CheckRecords, TimesFarOutsideTheWindowAreNamedNotOverflowed) {
  std::vector<workload::RequestRecord> records = Sent();
  records[0].end_ns = std::numeric_limits<int64_t>::max();
  records[1].send_ns = std::numeric_limits<int64_t>::min();
  records[2].end_ns = 101 * kSecond;  // past the 100 s deadline
  records[3].first_token_ns = -5;     // -1 is "none"; nothing else below 0 is a time
  const std::vector<EvidenceProblem> problems = CheckRecords(records, kLimits, kRaw);
  ASSERT_EQ(Kinds(problems), (std::vector<std::string>{kTimeOutsideWindow}));
  EXPECT_EQ(problems[0].detail,
            "4 requests have a time below 0 or past the sample's 100 s deadline (first: record "
            "1: id 0: send_ns 0, first_token_ns 1000000000, end_ns 9223372036854775807)");
}

TEST(SampleDeadline, IsTheBenchTimeoutElseEveryWaveTimingOut) {
  spec::Spec spec;
  spec.workload.requests = 40;
  spec.workload.warmup_requests = 0;
  spec.lifecycle.request_timeout_s = 100;
  EXPECT_DOUBLE_EQ(SampleDeadlineS(spec, 8), 5 * 100 + 60);
  spec.lifecycle.bench_timeout_s = 30;
  EXPECT_DOUBLE_EQ(SampleDeadlineS(spec, 8), 30);
}

TEST(CheckGpuSnapshot, ImpossibleReadingsAreNamed) {
  const char* file = "gpu/pp4-tp8-ep4_c8_r1/601.csv";
  std::vector<nvidia_smi::GpuMemory> gpus = {
      {0, "GPU-0", "NVIDIA RTX 6000D", 61234.0, 85651.0, "575"},
      {1, "GPU-1", "NVIDIA RTX 6000D", std::nullopt, 85651.0, "575"},  // [N/A] is allowed
  };
  EXPECT_TRUE(CheckGpuSnapshot(gpus, file).empty());
  gpus.push_back({2, "GPU-2", "NVIDIA RTX 6000D", 1e308, 85651.0, "575"});
  gpus.push_back({3, "GPU-3", "NVIDIA RTX 6000D", -1.0, 85651.0, "575"});
  gpus.push_back({4, "GPU-4", "NVIDIA RTX 6000D", 90000.0, 85651.0, "575"});
  gpus.push_back({5, "GPU-5", "NVIDIA RTX 6000D", 100.0, 1e308, "575"});
  const std::vector<EvidenceProblem> problems = CheckGpuSnapshot(gpus, file);
  ASSERT_EQ(Kinds(problems),
            (std::vector<std::string>{kGpuMemoryOutOfRange, kGpuMemoryAboveTotal}));
  EXPECT_EQ(problems[0].detail,
            "3 readings are negative, not finite, not numbers or above 16777216 MiB (first: record "
            "3: GPU 2: "
            "memory.used 1e+308, memory.total 85651 MiB)");
  EXPECT_EQ(problems[1].detail,
            "1 GPUs use more memory than they have (first: record 5: GPU 4: memory.used 90000, "
            "memory.total 85651 MiB)");
}

TEST(CheckBenchSummary, NeedsAnObjectNamingTheSampleWithKeysOfTheirTypes) {
  const std::string sample = "pp4-tp8-ep4_c8_r1";
  const char* file = "bench/pp4-tp8-ep4_c8_r1.json";
  BenchSummary read;
  EXPECT_TRUE(CheckBenchSummary(R"({"sample": "pp4-tp8-ep4_c8_r1", "simulated": true,
                                   "ready_s": 2.5, "server_version": null})",
                                sample, file, &read)
                  .empty());
  ASSERT_TRUE(read.ready);
  EXPECT_EQ(read.ready->ready_s, 2.5);
  auto detail = [&](const std::string& text) {
    const std::vector<EvidenceProblem> p = CheckBenchSummary(text, sample, file);
    EXPECT_EQ(p.size(), 1u) << text;
    return p.empty() ? std::string() : p[0].kind + ": " + p[0].detail;
  };
  EXPECT_EQ(detail(R"({"sample": "pp4-tp8-e)"), "bench_summary_corrupt: not valid JSON");
  EXPECT_EQ(detail("[1, 2]"), "bench_summary_corrupt: expected a JSON object, got array");
  EXPECT_EQ(detail("{}"), "bench_summary_corrupt: key 'sample' must be a string naming the sample");
  EXPECT_EQ(detail(R"({"sample": "pp4-tp8-ep4_c8_r1", "ready_s": "soon"})"),
            "bench_summary_corrupt: key 'ready_s' must be a number, got \"soon\"");
  EXPECT_EQ(detail(R"({"sample": "pp8-tp4-ep4_c8_r1"})"),
            "bench_summary_corrupt: the summary of sample pp8-tp4-ep4_c8_r1, not of "
            "pp4-tp8-ep4_c8_r1");
}

class UnreadableEvidenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        (fs::temp_directory_path() / ("ppsearch_validation_" + std::to_string(getpid()))).string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  EvidenceProblem Read(const std::string& name) {
    const std::string path = dir_ + "/" + name;
    Result<std::string> text = ReadEvidenceFile(path);
    EXPECT_FALSE(text.ok()) << name;
    return UnreadableEvidence(path, "service/s/" + name, text.ok() ? "" : text.error().message);
  }

  std::string dir_;
};

TEST_F(UnreadableEvidenceTest, LinksDirectoriesAndFifosAreNotRegularFiles) {
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/real.log", "Traceback (most recent call last)\n").ok());
  fs::create_symlink(dir_ + "/real.log", dir_ + "/link.log");
  fs::create_directory(dir_ + "/dir.log");
  ASSERT_EQ(::mkfifo((dir_ + "/fifo.log").c_str(), 0600), 0);
  const EvidenceProblem link = Read("link.log");
  EXPECT_EQ(link.kind, kNotARegularFile);
  EXPECT_EQ(link.Text(),
            "service/s/link.log: not_a_regular_file: is a symbolic link, expected a regular file; "
            "a run writes only regular files, so it is not read");
  EXPECT_EQ(Read("dir.log").kind, kNotARegularFile);
  EXPECT_EQ(Read("fifo.log").kind, kNotARegularFile);
  EXPECT_EQ(Read("absent.log").kind, kUnreadableFile);
}

}  // namespace
}  // namespace ppsearch::evidence
