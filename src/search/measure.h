#pragma once
// What a search says to measure: the candidates that could still be the
// best, as the sweep of a `run` spec. A spec has one set of engine flags, so
// the sweep takes the best candidate's knobs and the candidates sharing them,
// and one layer split per pipeline size (the best ranked candidate's of that
// size); tied candidates with other knobs or another split are listed for a
// second spec.

#include <string>
#include <vector>

#include "search/search.h"
#include "spec/emit.h"

namespace ppsearch::search {

struct Measurement {
  spec::DerivedSweep sweep;
  Knobs knobs;                      // the best candidate's
  std::vector<Candidate> measured;  // in the sweep, best first
  // Could be the best too, with other knobs, or with another layer split
  // for a pipeline size than the sweep's (a spec holds one per size).
  std::vector<Candidate> other_knobs;
  // Could be the best too; a disaggregated deployment is a spec of its own.
  std::vector<Candidate> disaggregated;
  // Comment lines for the head of the derived spec: what it holds and why.
  std::string header;
};

// Empty `measured` when no aggregated candidate qualifies. `requests`: the workload's
// request count, the cap that stands for none in an open loop. A search of
// several request rates gives its first (a spec holds one; `search
// --emit-spec` refuses more before it searches).
//
// When the best candidate is disaggregated, the sweep is that deployment
// (its pools on `hosts`, the cluster's host names, prefill first) and
// `measured` holds it alone: `plan`, `validate`, `simulate` and `run
// --engine sim` take such a spec. The aggregated candidates that could be the
// best are then named in the header.
// `search_args`: the search's arguments (the spec, bounds, calibration,
// overrides), quoted for the header's `ppsearch search ...` line.
Measurement WorthMeasuring(const SearchResult& result, const std::string& search_args, int requests,
                           const std::vector<std::string>& hosts = {});

}  // namespace ppsearch::search
