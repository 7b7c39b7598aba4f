#pragma once
// Text and JSON views of a ModelDesc, for `ppsearch model` and for evidence
// files. Pure functions of the description.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "model/model.h"

namespace ppsearch::model {

// Parameter counts in billions with thousands separators: "2,785.4 B";
// below one billion in millions: "528.5 M".
std::string FormatParams(int64_t params);
// Binary gibibytes, thousands separators: "1,463.8 GiB". (Plain numbers:
// FormatThousands / FormatNumber in util/format.h.)
std::string FormatGiB(double bytes);

// Key-value summary: family, layer counts, shapes, totals, bytes by dtype,
// KV cache per token and state per request. Ends with a newline.
std::string DescribeModel(const ModelDesc& model);
// One row per layer with a header of names and a header of units.
std::string DescribeLayers(const ModelDesc& model);

// Everything DescribeModel shows, plus layers[] (index, attention, ffn,
// params, active_params, weight_bytes, cache and state); with
// `with_linears`, each layer also lists its weight matrices.
// Keys keep the order written here (summary first, layers last).
nlohmann::ordered_json ModelToJson(const ModelDesc& model, bool with_linears);

}  // namespace ppsearch::model
