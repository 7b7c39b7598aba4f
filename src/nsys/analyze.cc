#include "nsys/analyze.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "nsys/export_reader.h"

namespace ppsearch::nsys {
namespace {

constexpr const char* kNvtxPrefix = "nvtx:";

struct LabelledWindow {
  Interval span;
  std::string label;
};

// NVTX windows per device: a range applies to the GPUs its process launched
// kernels on, or to every GPU when that is unknown.
struct NvtxWindows {
  std::map<int, std::vector<LabelledWindow>> by_device;
  std::vector<LabelledWindow> every_device;

  std::vector<LabelledWindow> For(int device) const {
    std::vector<LabelledWindow> w = every_device;
    if (auto it = by_device.find(device); it != by_device.end())
      w.insert(w.end(), it->second.begin(), it->second.end());
    std::stable_sort(w.begin(), w.end(), [](const LabelledWindow& a, const LabelledWindow& b) {
      return a.span.start_ns < b.span.start_ns;
    });
    return w;
  }
};

// Rows a scan skipped go to the analysis and, described, to its notes.
void Note(const RowScan& scan, ExportAnalysis& analysis) {
  for (const SkippedRows& s : scan.skipped) {
    analysis.skipped.push_back(s);
    analysis.notes.push_back(analysis.path + ": " + s.Describe());
  }
}

// A few range names for a message: the first distinct ones, each cut short.
class SomeNames {
 public:
  void Add(const std::string& name) {
    std::string shown = name.size() > kChars ? name.substr(0, kChars) + "..." : name;
    if (names_.size() < kNames) {
      names_.insert(std::move(shown));
    } else if (names_.count(shown) == 0) {
      more_ = true;
    }
  }
  std::string Text() const {
    std::string out;
    for (const auto& n : names_) out += (out.empty() ? "'" : ", '") + n + "'";
    return out + (more_ ? ", ..." : "");
  }

 private:
  static constexpr size_t kNames = 5, kChars = 60;
  std::set<std::string> names_;
  bool more_ = false;
};

// Streams the NVTX ranges and keeps those the pattern finds: the texts of
// the others are never held, however many or long they are.
Result<NvtxWindows> ChooseNvtxWindows(const ExportReader& reader, const WindowChoice& choice,
                                      ExportAnalysis& analysis) {
  PPS_ASSIGN_OR_RETURN(const auto devices_of, reader.ProcessDevices());
  NvtxWindows out;
  int64_t ranges = 0, matched = 0, unattributed = 0;
  SomeNames names;
  PPS_ASSIGN_OR_RETURN(RowScan scan, reader.ForEachNvtxRange([&](NvtxRange&& r) {
    ++ranges;
    if (!choice.nvtx.Search(r.text)) {
      names.Add(r.text);
      return;
    }
    ++matched;
    const LabelledWindow w{r.span, std::move(r.text)};
    auto it = devices_of.find(r.global_pid);
    if (it == devices_of.end()) {
      ++unattributed;
      out.every_device.push_back(w);
      return;
    }
    for (int d : it->second) out.by_device[d].push_back(w);
  }));
  Note(scan, analysis);
  if (ranges == 0)
    return MakeError(reader.path() +
                     ": no NVTX ranges (table NVTX_EVENTS absent or empty): profile with "
                     "`--trace=cuda,nvtx` and annotate the prefill, or use --window forward");
  if (matched == 0)
    return MakeError(fmt::format("{}: no NVTX range matches '{}' ({} ranges, named {})",
                                 reader.path(), choice.pattern, ranges, names.Text()));
  if (unattributed > 0)
    analysis.notes.push_back(fmt::format(
        "{} of {} matching NVTX ranges come from processes that launched no kernel; they "
        "apply to every GPU",
        unattributed, matched));
  return out;
}

// One device's windows as the analyzer takes them.
class DeviceSweep {
 public:
  virtual ~DeviceSweep() = default;
  virtual void Add(const Kernel& k) = 0;
  virtual GpuWindows Finish() = 0;
};

class NvtxDeviceSweep : public DeviceSweep {
 public:
  explicit NvtxDeviceSweep(std::vector<LabelledWindow> windows)
      : windows_(std::move(windows)), analyzer_(Spans(windows_)) {}
  void Add(const Kernel& k) override { analyzer_.AddKernel(k); }
  GpuWindows Finish() override {
    GpuWindows g;
    g.windows = analyzer_.Finish();
    for (const auto& w : windows_) g.labels.push_back(w.label);
    return g;
  }

 private:
  static std::vector<Interval> Spans(const std::vector<LabelledWindow>& w) {
    std::vector<Interval> out;
    for (const auto& x : w) out.push_back(x.span);
    return out;
  }
  std::vector<LabelledWindow> windows_;
  GpuWindowAnalyzer analyzer_;
};

class ForwardDeviceSweep : public DeviceSweep {
 public:
  explicit ForwardDeviceSweep(int64_t gap_ns) : splitter_(gap_ns) {}
  void Add(const Kernel& k) override {
    if (auto w = splitter_.AddKernel(k)) Keep(*w);
  }
  GpuWindows Finish() override {
    if (auto w = splitter_.Finish()) Keep(*w);
    return std::move(out_);
  }

 private:
  void Keep(const WindowBreakdown& w) {
    out_.windows.push_back(w);
    out_.labels.push_back("forward");
  }
  ForwardWindowSplitter splitter_;
  GpuWindows out_;
};

Error EmptyKernelTable(const std::string& path) {
  return MakeError(fmt::format(
      "{}: table {} is empty: the profile caught no CUDA kernel, so there is no window to "
      "measure (profile while the server runs requests, with `nsys profile --trace=cuda,nvtx`)",
      path, kKernelTable));
}

}  // namespace

std::string WindowChoice::Describe() const {
  if (mode == Mode::kNvtx) return kNvtxPrefix + pattern;
  return fmt::format("forward (gap {} us)", gap_ns / 1000);
}

Result<WindowChoice> ParseWindowChoice(const std::string& text, int64_t gap_us) {
  WindowChoice c;
  if (gap_us <= 0 || gap_us > kMaxGapUs)
    return MakeError(fmt::format("--gap-us: expected 1 to {} microseconds (an hour), got {}",
                                 kMaxGapUs, gap_us));
  c.gap_ns = gap_us * 1000;
  if (text == "forward") return c;
  if (text.rfind(kNvtxPrefix, 0) != 0 || text.size() == std::string(kNvtxPrefix).size())
    return MakeError("--window '" + text +
                     "': expected 'forward' or 'nvtx:REGEX' (e.g. nvtx:prefill)");
  c.mode = WindowChoice::Mode::kNvtx;
  c.pattern = text.substr(std::string(kNvtxPrefix).size());
  PPS_ASSIGN_OR_RETURN(c.nvtx, NvtxPattern::Compile(c.pattern, "--window '" + text + "'"));
  return c;
}

Result<ExportAnalysis> AnalyzeExport(const std::string& path, const WindowChoice& window) {
  PPS_ASSIGN_OR_RETURN(std::unique_ptr<ExportReader> reader, ExportReader::Open(path));
  ExportAnalysis a;
  a.path = path;
  a.product_version = reader->product_version();
  a.schema_version = reader->schema_version();
  PPS_ASSIGN_OR_RETURN(const auto names, reader->GpuNames());
  NvtxWindows nvtx;
  if (window.mode == WindowChoice::Mode::kNvtx) {
    PPS_ASSIGN_OR_RETURN(nvtx, ChooseNvtxWindows(*reader, window, a));
  }
  std::unique_ptr<DeviceSweep> sweep;
  int device = -1;
  auto finish = [&] {
    if (!sweep) return;
    GpuWindows g = sweep->Finish();
    g.source = path;
    g.device_id = device;
    if (auto it = names.find(device); it != names.end()) g.gpu_name = it->second;
    a.gpus.push_back(std::move(g));
  };
  PPS_ASSIGN_OR_RETURN(const RowScan kernels, reader->ForEachKernel([&](const KernelRow& row) {
    if (!sweep || row.device_id != device) {
      finish();
      device = row.device_id;
      if (window.mode == WindowChoice::Mode::kNvtx) {
        sweep = std::make_unique<NvtxDeviceSweep>(nvtx.For(device));
      } else {
        sweep = std::make_unique<ForwardDeviceSweep>(window.gap_ns);
      }
    }
    sweep->Add(row.kernel);
    return true;
  }));
  finish();
  a.kernel_rows = kernels.rows;
  Note(kernels, a);
  // No kernel, no window: every share would be a 0 that nothing measured.
  if (a.kernel_rows == 0) return EmptyKernelTable(path);
  return a;
}

Status CheckExportHasKernels(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(std::unique_ptr<ExportReader> reader, ExportReader::Open(path));
  PPS_ASSIGN_OR_RETURN(bool any, reader->HasKernelRows());
  if (!any) return EmptyKernelTable(path);
  return Status::Ok();
}

Status CheckDistinctExports(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> seen;  // canonical path -> the path as given
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::path canonical = fs::canonical(path, ec);
    if (ec) continue;  // one that cannot be resolved fails to open, naming why
    auto [it, fresh] = seen.emplace(canonical.string(), path);
    if (!fresh)
      return MakeError(fmt::format(
          "{}: given twice{}: each export is one node's GPUs, and the same file twice would count "
          "its GPUs and windows twice",
          path, it->second == path ? "" : " (also as " + it->second + ")"));
  }
  return Status::Ok();
}

Result<ProfileAnalysis> AnalyzeProfiles(const std::vector<std::string>& paths,
                                        const WindowChoice& window) {
  PPS_RETURN_IF_ERROR(CheckDistinctExports(paths));
  ProfileAnalysis p;
  p.window = window;
  std::vector<GpuWindows> all;
  for (const std::string& path : paths) {
    PPS_ASSIGN_OR_RETURN(ExportAnalysis a, AnalyzeExport(path, window));
    all.insert(all.end(), a.gpus.begin(), a.gpus.end());
    p.exports.push_back(std::move(a));
  }
  p.summary = Summarize(all);
  // Kernels that all fell outside the NVTX windows, or all ended before they
  // started: still no window, and a median of nothing is no figure.
  if (p.summary.windows == 0) {
    std::string files;
    for (const std::string& path : paths) files += (files.empty() ? "" : ", ") + path;
    return MakeError(
        fmt::format("{}: no window ({}) on any GPU, so there is no figure to give ({})", files,
                    window.Describe(),
                    window.mode == WindowChoice::Mode::kNvtx
                        ? "the matching NVTX ranges cover no kernel of their process's GPUs"
                        : "every kernel row was skipped or spans no time"));
  }
  return p;
}

}  // namespace ppsearch::nsys
