#pragma once
// What a search says to measure: the candidates that could still be the
// best, as the sweep of a `run` spec. A spec has one set of engine flags, so
// the sweep takes the best candidate's knobs and the candidates sharing them;
// tied candidates with other knobs are listed for a second spec.

#include <string>
#include <vector>

#include "search/search.h"
#include "spec/emit.h"

namespace ppsearch::search {

struct Measurement {
  spec::DerivedSweep sweep;
  Knobs knobs;                         // the best candidate's
  std::vector<Candidate> measured;     // in the sweep, best first
  std::vector<Candidate> other_knobs;  // could be the best too, with other knobs
  // Comment lines for the head of the derived spec: what it holds and why.
  std::string header;
};

// Empty `measured` when no candidate qualifies. `requests`: the workload's
// request count, the cap that stands for none in an open loop. A search of
// several request rates gives its first (a spec holds one; EmitSpec refuses
// more).
Measurement WorthMeasuring(const SearchResult& result, const std::string& source_spec,
                           int requests);

}  // namespace ppsearch::search
