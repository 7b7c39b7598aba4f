#include "serve_sim/stream_pump.h"

#include <utility>

namespace ppsearch::serve_sim {
namespace {

// One request followed; lives while the handle's observer or a posted
// report holds it. `done` and everything else is touched only on the loop.
struct Follow {
  std::shared_ptr<HttpCall> call;
  std::shared_ptr<RequestHandle> handle;
  std::function<bool(const RequestProgress&)> on_progress;
  bool done = false;

  // No report follows: the observer (which holds this) is let go.
  void Finish() {
    done = true;
    handle->ClearObserver();
  }
};

}  // namespace

void FollowOnLoop(HttpFront& front, std::shared_ptr<HttpCall> call,
                  std::shared_ptr<RequestHandle> handle,
                  std::function<bool(const RequestProgress&)> on_progress,
                  std::function<void()> on_abort) {
  auto f = std::make_shared<Follow>();
  f->call = std::move(call);
  f->handle = std::move(handle);
  f->on_progress = std::move(on_progress);
  f->call->OnClose([f, on_abort = std::move(on_abort)] {
    if (f->done) return;
    f->Finish();
    if (on_abort) on_abort();
  });
  // The observer runs under the engine's and the handle's locks (inside
  // RunDue, and here at once): it only posts the report, which the loop
  // handles once they are let go.
  f->handle->SetObserver([&front, f](const RequestProgress& p) {
    front.Post([f, p] {
      if (f->done || !f->call->open()) return;
      if (f->on_progress(p)) f->Finish();
    });
  });
}

void PumpStream(HttpFront& front, std::shared_ptr<HttpCall> call,
                std::shared_ptr<RequestHandle> handle, StreamRenderer render,
                std::function<void()> on_abort, std::function<void()> on_complete) {
  call->StartStream("text/event-stream");
  HttpCall* raw = call.get();  // the Follow keeps the call alive
  FollowOnLoop(
      front, std::move(call), std::move(handle),
      [raw, render = std::move(render),
       on_complete = std::move(on_complete)](const RequestProgress& p) mutable {
        const StreamEvents e = render(p);
        raw->Write(e.text);
        if (!e.last) return false;
        raw->EndStream();
        if (on_complete) on_complete();
        return true;
      },
      std::move(on_abort));
}

}  // namespace ppsearch::serve_sim
