#pragma once
// Opening a page in headless Chromium and reporting what happened, for the
// tests and the benchmark of report.html (test support, not product code).
// Chromium is driven over its DevTools protocol on a pipe
// (--remote-debugging-pipe: JSON messages ending in a NUL byte, commands on
// its fd 3, replies and events on its fd 4), so nothing listens on a port.
// Every request the page makes, every console error, uncaught exception and
// error log entry is recorded; each svg.chart is read back (its marks and
// their data-value) and screenshotted for pixel statistics.

#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/result.h"

namespace ppsearch::testkit {

struct RenderedChart {
  std::string id;
  std::string title;
  double width = 0, height = 0;  // CSS pixels on the page
  int marks = 0;                 // elements of class "mark"
  int legend_entries = 0;
  int axis_labels = 0;  // elements of class "label"
  // Over the chart's screenshot: standard deviation of the luminance (0-255)
  // and the fraction of pixels that are not the background white.
  double pixel_stddev = 0;
  double ink_fraction = 0;
};

struct PageReport {
  std::vector<std::string> errors;    // console errors, exceptions, error log entries
  std::vector<std::string> requests;  // every request besides the page itself
  double load_ms = 0;                 // navigation start to the end of the load event
  double wall_ms = 0;                 // Page.navigate sent to the load event received
  std::vector<RenderedChart> charts;
  nlohmann::json marks = nlohmann::json::array();  // [{chart, key, value}]
};

// The first of chromium, chromium-browser, google-chrome on PATH; "" if none.
std::string FindChromium();

class HeadlessBrowser {
 public:
  // Starts `chromium` with a fresh profile in `profile_dir` (created, must be
  // empty) and no network of its own (no background, component or sync traffic).
  static Result<std::unique_ptr<HeadlessBrowser>> Start(const std::string& chromium,
                                                        const std::string& profile_dir);
  ~HeadlessBrowser();
  HeadlessBrowser(const HeadlessBrowser&) = delete;
  HeadlessBrowser& operator=(const HeadlessBrowser&) = delete;

  // Opens `path` (a file) in a new tab of width `width_px` and reports on it;
  // each step waits at most `timeout_s`.
  Result<PageReport> Open(const std::string& path, int width_px, double timeout_s);

 private:
  HeadlessBrowser(pid_t pid, int to_browser, int from_browser, std::string log_path)
      : pid_(pid), to_(to_browser), from_(from_browser), log_path_(std::move(log_path)) {}
  Status Send(const nlohmann::json& message);
  // Reads messages until the reply to `id`; events are kept in events_.
  Result<nlohmann::json> Await(int id, double timeout_s);
  Result<nlohmann::json> Call(const std::string& method, const nlohmann::json& params,
                              const std::string& session, double timeout_s);
  // Reads messages until the event `method` of `session` arrives.
  Status AwaitEvent(const std::string& method, const std::string& session, double timeout_s);
  Result<nlohmann::json> ReadMessage(double timeout_s);
  std::string LogTail() const;  // the start of chromium's output, for errors

  pid_t pid_;
  int to_, from_;
  std::string log_path_;
  int next_id_ = 1;
  std::string buffer_;
  std::vector<nlohmann::json> events_;
};

}  // namespace ppsearch::testkit
