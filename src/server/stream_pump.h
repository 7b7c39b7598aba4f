#pragma once
// A streaming response written on the engine's thread. The HTTP handler's
// thread registers the stream with the request and sleeps until it is
// complete; each token release then writes its event at once from the thread
// that released it, as SGLang's one event loop writes every stream. One woken
// handler thread per request (the previous design) put up to 256 runnable
// threads between a first token and its client on a 2-core machine.

#include <atomic>
#include <functional>
#include <string>

#include "server/realtime_engine.h"

namespace httplib {
class DataSink;
}

namespace ppsearch::server {

// What a stream writes for one progress report beyond what it wrote before:
// `text` (SSE events, possibly empty) and whether the stream is complete
// (its last event, [DONE] included, is in `text`).
struct StreamEvents {
  std::string text;
  bool last = false;
};

// Called in order, on whichever thread reports progress; it keeps its own
// count of what it has written.
using StreamRenderer = std::function<StreamEvents(const RequestProgress&)>;

// Writes `handle`'s stream into `sink` until the renderer says it is
// complete (true), or the client goes away or `stopping` is set (false). A
// client that stops reading with a full socket buffer holds the engine's
// thread for at most the HTTP write timeout, after which its stream ends.
bool PumpStream(RequestHandle& handle, httplib::DataSink& sink, StreamRenderer render,
                const std::atomic<bool>& stopping);

}  // namespace ppsearch::server
