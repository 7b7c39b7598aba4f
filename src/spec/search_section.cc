// [search]: the bounds `ppsearch search` explores, kept with the spec. Each
// key is a list of distinct positive integers (request_rate: numbers > 0;
// moe_a2a_backend: SGLang's backend names), but disaggregated: "on" or
// "off", as --disaggregated takes;
// whether a PP or EP size suits
// the cluster and the model is left to the planner's checks, which the search
// runs on every candidate and counts by reason.

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>

#include "spec/moe_backends.h"
#include "spec/sections.h"

namespace ppsearch::spec {
namespace {

// The list at `key` when present: at most kMaxSearchValues long (ToArray
// already refuses an empty one, which would read as "the default").
Status ReadList(const TableReader& section, std::string_view key, int max,
                std::vector<int64_t>* out) {
  if (section.Find(key) == nullptr) return Status::Ok();
  PPS_ASSIGN_OR_RETURN(std::vector<LocatedInt> values, ReadPositiveList(section, key, max));
  if (values.size() > static_cast<size_t>(kMaxSearchValues))
    return KeyError(section.KeyLoc(key), fmt::format("expected at most {} values, got {}",
                                                     kMaxSearchValues, values.size()));
  for (const LocatedInt& v : values) out->push_back(v.value);
  return Status::Ok();
}

Status ReadList(const TableReader& section, std::string_view key, int max, std::vector<int>* out) {
  std::vector<int64_t> wide;
  PPS_RETURN_IF_ERROR(ReadList(section, key, max, &wide));
  out->assign(wide.begin(), wide.end());
  return Status::Ok();
}

// The request rates at `key` when present: distinct numbers > 0 (requests/s).
Status ReadRates(const TableReader& section, std::string_view key, std::vector<double>* out) {
  if (section.Find(key) == nullptr) return Status::Ok();
  PPS_ASSIGN_OR_RETURN(const toml::array* array,
                       ToArray(*section.Find(key), section.KeyLoc(key), "numbers > 0"));
  if (array->size() > static_cast<size_t>(kMaxSearchValues))
    return KeyError(section.KeyLoc(key), fmt::format("expected at most {} values, got {}",
                                                     kMaxSearchValues, array->size()));
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = *array->get(i);
    const SourceLoc loc = section.source().Locate(
        element.source(), JoinKey(section.key_path(), key) + "[" + std::to_string(i) + "]");
    PPS_ASSIGN_OR_RETURN(const double rate, ToNumber(element, loc, 0, DBL_MAX));
    if (!(rate >= kMinRequestRate))
      return KeyError(loc, fmt::format("expected requests/s >= {:g}, got {}", kMinRequestRate,
                                       FormatNumber(rate)));
    if (std::find(out->begin(), out->end(), rate) != out->end())
      return KeyError(loc, FormatNumber(rate) + " is listed twice");
    out->push_back(rate);
  }
  return Status::Ok();
}

// The backends at `key` when present: distinct names SGLang's
// --moe-a2a-backend accepts.
Status ReadBackends(const TableReader& section, std::string_view key,
                    std::vector<std::string>* out) {
  if (section.Find(key) == nullptr) return Status::Ok();
  PPS_RETURN_IF_ERROR(section.StringList(key, out, true));
  for (size_t i = 0; i < out->size(); ++i) {
    const std::string& b = (*out)[i];
    if (!IsMoeA2aBackend(b))
      return KeyError(section.KeyLoc(key), "\"" + b + "\" is not an SGLang moe-a2a-backend (" +
                                               MoeA2aBackendNames() + ")");
    if (std::find(out->begin(), out->begin() + static_cast<std::ptrdiff_t>(i), b) !=
        out->begin() + static_cast<std::ptrdiff_t>(i))
      return KeyError(section.KeyLoc(key), "\"" + b + "\" is listed twice");
  }
  return Status::Ok();
}

}  // namespace

Status ReadSearch(const TableReader& section, SearchSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys(kSearchKeys));
  out->origin = section.origin();
  PPS_RETURN_IF_ERROR(ReadList(section, "instances", kMaxParallelSize, &out->instances));
  PPS_RETURN_IF_ERROR(ReadList(section, "pp", kMaxParallelSize, &out->pp));
  PPS_RETURN_IF_ERROR(ReadList(section, "ep", kMaxParallelSize, &out->ep));
  PPS_RETURN_IF_ERROR(ReadList(section, "dp", kMaxParallelSize, &out->dp));
  PPS_RETURN_IF_ERROR(ReadList(section, "chunked_prefill_size", static_cast<int>(kMaxTokens),
                               &out->chunked_prefill_size));
  PPS_RETURN_IF_ERROR(
      ReadList(section, "max_running_requests", kMaxRunningRequests, &out->max_running_requests));
  PPS_RETURN_IF_ERROR(ReadBackends(section, "moe_a2a_backend", &out->moe_a2a_backend));
  PPS_RETURN_IF_ERROR(ReadList(section, "concurrency", kMaxConcurrency, &out->concurrency));
  PPS_RETURN_IF_ERROR(ReadRates(section, "request_rate", &out->request_rate));
  // Left out, the search's default decides (Enum would read it as ""); a
  // boolean or a number is refused with the two words the key takes.
  if (const toml::node* d = section.Find("disaggregated"); d != nullptr) {
    if (!d->is_string())
      return KeyError(section.KeyLoc("disaggregated"),
                      "expected \"on\" or \"off\", got " + DescribeType(*d));
    PPS_RETURN_IF_ERROR(section.Enum("disaggregated", &out->disaggregated, {"on", "off"}));
  }
  if (!out->request_rate.empty() && out->concurrency.size() > 1)
    return KeyError(section.KeyLoc("concurrency"),
                    fmt::format("with request_rate, concurrency is the one cap on requests in "
                                "flight; expected one value, got {}",
                                out->concurrency.size()));
  return Status::Ok();
}

}  // namespace ppsearch::spec
