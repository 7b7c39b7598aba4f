#pragma once
// One loop over independent work items on a few threads, the calling one
// included. Each index is claimed once, so a body that writes only its own
// slot of a pre-sized vector gives the same result on any number of threads:
// the simulation stays deterministic however it is spread.

#include <cstddef>
#include <functional>

namespace ppsearch {

// Runs body(i) for every i in [0, n) on up to `threads` threads (at least
// one: this one). `done(i, k)`, when given, is told after item i that k
// items are finished, one call at a time (it may print or count without a
// lock of its own). Returns when all are done.
void ParallelFor(size_t n, int threads, const std::function<void(size_t)>& body,
                 const std::function<void(size_t, size_t)>& done = nullptr);

}  // namespace ppsearch
