#pragma once
// A lengths file: the prompt and output length of each request, one pair a
// row, for workloads shaped like a real conversation trace rather than one
// fixed or uniform length. CSV with a header naming the two columns
// (other columns are ignored, so a trace's own export can be used as is):
//
//   input_tokens,output_tokens
//   812,211
//   4096,37
//
// Each request draws a row with the workload's seed (workload.h), so the
// simulator and the benchmark send the same lengths.

#include <cstdint>
#include <string>
#include <vector>

#include "util/result.h"

namespace ppsearch::workload {

struct LengthPair {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
};

// Rows with both lengths in [1, max_tokens]; an error names file:line and
// the column for a row that is not.
Result<std::vector<LengthPair>> ParseLengthsCsv(const std::string& text, const std::string& path,
                                                int64_t max_tokens);
Result<std::vector<LengthPair>> ReadLengthsFile(const std::string& path, int64_t max_tokens);

}  // namespace ppsearch::workload
