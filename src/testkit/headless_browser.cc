#include "testkit/headless_browser.h"

#include <fcntl.h>
#include <png.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "launch/process.h"
#include "util/files.h"

namespace ppsearch::testkit {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string Base64Decode(const std::string& in) {
  std::string out;
  unsigned value = 0;
  int bits = 0;
  for (char ch : in) {
    int v;
    if (ch >= 'A' && ch <= 'Z')
      v = ch - 'A';
    else if (ch >= 'a' && ch <= 'z')
      v = ch - 'a' + 26;
    else if (ch >= '0' && ch <= '9')
      v = ch - '0' + 52;
    else if (ch == '+')
      v = 62;
    else if (ch == '/')
      v = 63;
    else
      continue;  // padding
    value = (value << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((value >> bits) & 0xff);
    }
  }
  return out;
}

// Luminance standard deviation and the share of non-white pixels of a PNG.
Status PixelStats(const std::string& png, RenderedChart& chart) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, png.data(), png.size()))
    return MakeError(std::string("screenshot is not a PNG: ") + image.message,
                     ErrorKind::kInternal);
  image.format = PNG_FORMAT_GRAY;
  std::vector<png_byte> pixels(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr))
    return MakeError(std::string("cannot decode the screenshot: ") + image.message,
                     ErrorKind::kInternal);
  double sum = 0, sum2 = 0, ink = 0;
  for (png_byte p : pixels) {
    sum += p;
    sum2 += static_cast<double>(p) * p;
    ink += p < 250 ? 1 : 0;
  }
  const double n = std::max<double>(static_cast<double>(pixels.size()), 1);
  chart.pixel_stddev = std::sqrt(std::max(0.0, sum2 / n - (sum / n) * (sum / n)));
  chart.ink_fraction = ink / n;
  return Status::Ok();
}

// Reads every chart and mark back from the page, with its load timing.
constexpr const char* kReadBack = R"JS(JSON.stringify((() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const charts = [...document.querySelectorAll('svg.chart')].map(s => {
    const r = s.getBoundingClientRect();
    const t = s.querySelector('.title');
    return {id: s.id, title: t ? t.textContent : '', x: r.left + window.scrollX,
            y: r.top + window.scrollY, w: r.width, h: r.height,
            marks: s.querySelectorAll('.mark').length,
            legend: s.querySelectorAll('.legend > g').length,
            labels: s.querySelectorAll('.label').length};
  });
  const marks = [...document.querySelectorAll('svg.chart .mark')].map(m => ({
    chart: m.closest('svg').id, key: m.getAttribute('data-key'),
    value: parseFloat(m.getAttribute('data-value'))}));
  return {load_ms: nav ? nav.loadEventEnd - nav.startTime : -1, charts, marks};
})()))JS";

}  // namespace

std::string FindChromium() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    size_t start = 0;
    while (start <= dirs.size()) {
      const size_t end = std::min(dirs.find(':', start), dirs.size());
      const std::string candidate = dirs.substr(start, end - start) + "/" + name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
      start = end + 1;
    }
  }
  return "";
}

Result<std::unique_ptr<HeadlessBrowser>> HeadlessBrowser::Start(const std::string& chromium,
                                                                const std::string& profile_dir) {
  PPS_RETURN_IF_ERROR(MakeDirs(profile_dir));
  const std::string log_path = profile_dir + "/chromium.log";
  int to[2], from[2];
  if (::pipe2(to, O_CLOEXEC) != 0 || ::pipe2(from, O_CLOEXEC) != 0)
    return IoError(std::string("pipe: ") + std::strerror(errno));
  const std::vector<std::string> args = {
      chromium,
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-extensions",
      "--disable-features=MediaRouter,OptimizationHints,Translate",
      "--metrics-recording-only",
      "--hide-scrollbars",
      "--remote-debugging-pipe",
      "--user-data-dir=" + profile_dir,
      "about:blank"};
  const pid_t pid = ::fork();
  if (pid < 0) return IoError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // The child: the protocol pipes on fds 3 and 4, output to the log.
    const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_RDONLY);
    if (log < 0 || null < 0) ::_exit(127);
    ::dup2(null, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    const int in = ::dup(to[0]), out = ::dup(from[1]);  // above 4 before placing them
    ::dup2(in, 3);
    ::dup2(out, 4);
    ::setsid();
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(to[0]);
  ::close(from[1]);
  return std::unique_ptr<HeadlessBrowser>(new HeadlessBrowser(pid, to[1], from[0], log_path));
}

HeadlessBrowser::~HeadlessBrowser() {
  (void)Send({{"id", next_id_++}, {"method", "Browser.close"}});
  ::close(to_);
  if (!launch::WaitExit(pid_, 10)) {
    ::kill(-pid_, SIGKILL);
    launch::WaitExit(pid_, 5);
  }
  ::close(from_);
}

std::string HeadlessBrowser::LogTail() const {
  Result<std::string> log = ReadFile(log_path_);
  return "its output: " + (log.ok() ? log->substr(0, 2000) : std::string("(none)"));
}

Status HeadlessBrowser::Send(const nlohmann::json& message) {
  const std::string text = message.dump() + std::string(1, '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(to_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError("cannot write to chromium's DevTools pipe; " + LogTail());
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<nlohmann::json> HeadlessBrowser::ReadMessage(double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (const size_t nul = buffer_.find('\0'); nul != std::string::npos) {
      nlohmann::json j = nlohmann::json::parse(buffer_.substr(0, nul), nullptr, false);
      buffer_.erase(0, nul + 1);
      if (j.is_discarded())
        return MakeError("chromium sent a message that is not JSON", ErrorKind::kInternal);
      return j;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      return MakeError("chromium did not answer within " + std::to_string(timeout_s) + " s",
                       ErrorKind::kInternal);
    pollfd pfd{from_, POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char chunk[65536];
    const ssize_t n = ::read(from_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return MakeError("chromium closed its DevTools pipe; " + LogTail(), ErrorKind::kInternal);
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

Result<nlohmann::json> HeadlessBrowser::Await(int id, double timeout_s) {
  const auto t0 = Clock::now();
  for (;;) {
    const double left = timeout_s - Since(t0) / 1000;
    PPS_ASSIGN_OR_RETURN(nlohmann::json m, ReadMessage(std::max(left, 0.0)));
    if (!m.contains("id")) {
      events_.push_back(std::move(m));
      continue;
    }
    if (m["id"] != id) continue;
    if (m.contains("error"))
      return MakeError("DevTools error: " + m["error"].dump(), ErrorKind::kInternal);
    return m.value("result", nlohmann::json::object());
  }
}

Result<nlohmann::json> HeadlessBrowser::Call(const std::string& method,
                                             const nlohmann::json& params,
                                             const std::string& session, double timeout_s) {
  const int id = next_id_++;
  nlohmann::json m = {{"id", id}, {"method", method}, {"params", params}};
  if (!session.empty()) m["sessionId"] = session;
  PPS_RETURN_IF_ERROR(Send(m));
  return Await(id, timeout_s);
}

Status HeadlessBrowser::AwaitEvent(const std::string& method, const std::string& session,
                                   double timeout_s) {
  for (const auto& e : events_)
    if (e.value("method", "") == method && e.value("sessionId", "") == session) return Status::Ok();
  const auto t0 = Clock::now();
  for (;;) {
    const double left = timeout_s - Since(t0) / 1000;
    PPS_ASSIGN_OR_RETURN(nlohmann::json m, ReadMessage(std::max(left, 0.0)));
    const bool match = m.value("method", "") == method && m.value("sessionId", "") == session;
    if (!m.contains("id")) events_.push_back(std::move(m));
    if (match) return Status::Ok();
  }
}

Result<PageReport> HeadlessBrowser::Open(const std::string& path, int width_px, double timeout_s) {
  const std::string url = "file://" + std::filesystem::absolute(path).lexically_normal().string();
  events_.clear();
  PPS_ASSIGN_OR_RETURN(nlohmann::json target,
                       Call("Target.createTarget", {{"url", "about:blank"}}, "", timeout_s));
  PPS_ASSIGN_OR_RETURN(nlohmann::json attached,
                       Call("Target.attachToTarget",
                            {{"targetId", target["targetId"]}, {"flatten", true}}, "", timeout_s));
  const std::string session = attached["sessionId"].get<std::string>();
  for (const char* domain : {"Runtime.enable", "Log.enable", "Network.enable", "Page.enable"})
    PPS_RETURN_IF_ERROR(Call(domain, nlohmann::json::object(), session, timeout_s));
  PPS_RETURN_IF_ERROR(
      Call("Emulation.setDeviceMetricsOverride",
           {{"width", width_px}, {"height", 900}, {"deviceScaleFactor", 1}, {"mobile", false}},
           session, timeout_s));
  events_.clear();  // about:blank's own events
  const auto t0 = Clock::now();
  PPS_ASSIGN_OR_RETURN(nlohmann::json nav,
                       Call("Page.navigate", {{"url", url}}, session, timeout_s));
  if (nav.contains("errorText") && !nav["errorText"].get<std::string>().empty())
    return MakeError("chromium could not open " + url + ": " + nav["errorText"].get<std::string>(),
                     ErrorKind::kInternal);
  PPS_RETURN_IF_ERROR(AwaitEvent("Page.loadEventFired", session, timeout_s));
  PageReport report;
  report.wall_ms = Since(t0);
  PPS_ASSIGN_OR_RETURN(
      nlohmann::json eval,
      Call("Runtime.evaluate", {{"expression", kReadBack}, {"returnByValue", true}}, session,
           timeout_s));
  const nlohmann::json back =
      nlohmann::json::parse(eval["result"].value("value", std::string("{}")), nullptr, false);
  if (back.is_discarded() || !back.contains("charts"))
    return MakeError("could not read the charts back: " + eval.dump(), ErrorKind::kInternal);
  report.load_ms = back.value("load_ms", -1.0);
  report.marks = back["marks"];
  for (const auto& c : back["charts"]) {
    RenderedChart chart;
    chart.id = c.value("id", "");
    chart.title = c.value("title", "");
    chart.width = c.value("w", 0.0);
    chart.height = c.value("h", 0.0);
    chart.marks = c.value("marks", 0);
    chart.legend_entries = c.value("legend", 0);
    chart.axis_labels = c.value("labels", 0);
    if (chart.width >= 1 && chart.height >= 1) {
      PPS_ASSIGN_OR_RETURN(nlohmann::json shot, Call("Page.captureScreenshot",
                                                     {{"format", "png"},
                                                      {"captureBeyondViewport", true},
                                                      {"clip",
                                                       {{"x", c.value("x", 0.0)},
                                                        {"y", c.value("y", 0.0)},
                                                        {"width", chart.width},
                                                        {"height", chart.height},
                                                        {"scale", 1}}}},
                                                     session, timeout_s));
      PPS_RETURN_IF_ERROR(PixelStats(Base64Decode(shot.value("data", "")), chart));
    }
    report.charts.push_back(std::move(chart));
  }
  // Everything the page did, from the events that arrived meanwhile.
  for (const auto& e : events_) {
    if (e.value("sessionId", "") != session) continue;
    const std::string method = e.value("method", "");
    const nlohmann::json& p = e.contains("params") ? e["params"] : nlohmann::json::object();
    if (method == "Network.requestWillBeSent") {
      const std::string req = p.contains("request") ? p["request"].value("url", "") : "";
      if (req != url) report.requests.push_back(req);
    } else if (method == "Runtime.consoleAPICalled") {
      const std::string type = p.value("type", "");
      if (type == "error" || type == "assert")
        report.errors.push_back("console." + type + ": " + p.dump());
    } else if (method == "Runtime.exceptionThrown") {
      report.errors.push_back("exception: " + p.dump());
    } else if (method == "Log.entryAdded") {
      if (p.contains("entry") && p["entry"].value("level", "") == "error")
        report.errors.push_back("log: " + p["entry"].value("text", "") + " " +
                                p["entry"].value("url", ""));
    }
  }
  (void)Call("Target.closeTarget", {{"targetId", target["targetId"]}}, "", timeout_s);
  return report;
}

}  // namespace ppsearch::testkit
