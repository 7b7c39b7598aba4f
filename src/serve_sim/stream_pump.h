#pragma once
// A request's progress turned into its HTTP answer. The engine reports
// progress (tokens released, the finish) from inside RunDue, on the HTTP
// loop (or from another thread: FailAll); the observer posts each report to
// the loop (http_front.h), which writes the stream's events or the final
// answer in order once the engine's callback returns (the observer runs
// under the engine's locks). A client that goes away first has its request
// aborted, as SGLang aborts it.

#include <functional>
#include <memory>
#include <string>

#include "serve_sim/http_front.h"
#include "serve_sim/realtime_engine.h"

namespace ppsearch::serve_sim {

// What a stream writes for one progress report beyond what it wrote before:
// `text` (SSE events, possibly empty) and whether the stream is complete
// (its last event, [DONE] included, is in `text`).
struct StreamEvents {
  std::string text;
  bool last = false;
};

// Called in order on the loop thread; it keeps its own count of what it
// has written.
using StreamRenderer = std::function<StreamEvents(const RequestProgress&)>;

// Hands `handle`'s progress reports to `on_progress` on `front`'s loop, in
// order, until it returns true (the answer is complete), or `call` closes
// first: then `on_abort` runs once and no report follows. Call on the loop
// thread; the current progress is the first report.
void FollowOnLoop(HttpFront& front, std::shared_ptr<HttpCall> call,
                  std::shared_ptr<RequestHandle> handle,
                  std::function<bool(const RequestProgress&)> on_progress,
                  std::function<void()> on_abort);

// Answers `call` with a stream of `render`'s events (text/event-stream),
// ending it after the last; `on_complete` runs then.
void PumpStream(HttpFront& front, std::shared_ptr<HttpCall> call,
                std::shared_ptr<RequestHandle> handle, StreamRenderer render,
                std::function<void()> on_abort, std::function<void()> on_complete);

}  // namespace ppsearch::serve_sim
