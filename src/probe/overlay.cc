#include "probe/overlay.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <map>
#include <sstream>

#include "cost/gemm.h"
#include "util/format.h"

namespace ppsearch::probe {
namespace {

std::string Number(double v) { return fmt::format("{:.4g}", v); }

// A TOML basic string holding `text` whatever it holds (a quote, a
// backslash, a newline in a file name or path), as toml++ writes one.
std::string TomlString(const std::string& text) {
  std::ostringstream out;
  const toml::value<std::string> value(text);
  out << toml::toml_formatter{value, toml::format_flags::allow_unicode_strings};
  return out.str();
}

// Text from elsewhere (the command line, a path, what a node printed) on a
// comment line: a control character is shown escaped, so that no newline
// ends the comment and starts a line of TOML.
std::string Comment(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

std::string Bytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= 1024) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

std::string Nodes(const std::vector<NodeResult>& nodes) {
  std::string out;
  for (const NodeResult& n : nodes) out += (out.empty() ? "" : ", ") + n.node;
  return out;
}

std::string Spread(double spread, size_t nodes) {
  if (nodes < 2) return "one node";
  return fmt::format("median of {} nodes, spread {}", nodes, FormatPercent(spread, 1));
}

// The [[intra_*]] table of `op`: the measured group sizes, the base's for
// the others (the loader wants the largest at gpus_per_node). A base entry
// keeps the hosts' range it states (still borrowed); a measured one has none.
std::string IntraTable(const char* key, const std::string& op,
                       const std::vector<hardware::IntraCollective>& base,
                       const std::vector<CollectiveFigure>& measured) {
  std::map<int, std::pair<hardware::IntraCollective, bool>> rows;
  for (const hardware::IntraCollective& c : base) rows[c.group_size] = {c, false};
  bool any = false;
  int64_t largest = 0;
  for (const CollectiveFigure& c : measured) {
    if (c.op != op || !(c.busbw_gbps > 0) || !(c.latency_us > 0)) continue;
    rows[c.group_size] = {{c.group_size, c.busbw_gbps, c.latency_us}, true};
    largest = std::max(largest, c.largest_bytes);
    any = true;
  }
  if (!any) return "";
  std::string out = fmt::format(
      "\n# {}: nccl-tests bus bandwidth at {} and the fastest time at <= 4 KiB, measured where\n"
      "# marked; the base's entry for the other group sizes.\n",
      op, Bytes(largest));
  for (const auto& [size, row] : rows) {
    const auto& [c, is_measured] = row;
    out += fmt::format("[[{}]]\ngroup_size = {}\nbusbw_gbps = {}{}\nlatency_us = {}\n", key, size,
                       Number(c.busbw_gbps), is_measured ? "   # measured" : "   # base",
                       Number(c.latency_us));
    if (c.busbw_hi_gbps > 0)
      out += fmt::format("busbw_range_gbps = [{}, {}]   # base: the hosts it is borrowed from\n",
                         Number(c.busbw_lo_gbps), Number(c.busbw_hi_gbps));
  }
  return out;
}

// [tensor_burst] from the median node's series: each rate as a ratio to the
// series' own sustained rate, times the measured GEMM rate, so the budget
// scales the profile's bf16_tflops the way the series scaled its own.
std::string BurstTable(const BurstFigure& b, double bf16_tflops,
                       const std::vector<NodeResult>& nodes) {
  const double idle_s = nodes.empty() || !nodes.front().burst ? 0.0 : nodes.front().burst->idle_s;
  std::string out = fmt::format(
      "\n# After {:.1f} s idle, one GEMM timed call by call for {:.0f} ms: ", idle_s, b.series_ms);
  if (b.burst_tflops <= 0) {
    return out + fmt::format(
                     "no call ran 5% above the sustained rate (no burst; the same rate).\n"
                     "[tensor_burst]\nbf16_tflops = {}\nwindow_ms = {}\n",
                     Number(bf16_tflops), Number(b.series_ms));
  }
  const double ratio = b.burst_tflops / b.sustained_tflops;
  out += fmt::format("the first {:.2f} ms ran {:.3g}x the sustained rate (a burst)", b.window_ms,
                     ratio);
  std::string keys = fmt::format("bf16_tflops = {}\nwindow_ms = {}\n", Number(bf16_tflops * ratio),
                                 Number(b.window_ms));
  if (b.payback_tflops > 0) {
    const double payback = b.payback_tflops / b.sustained_tflops;
    out += fmt::format(", and the {:.2f} ms after it {:.3g}x (its payback)", b.payback_ms, payback);
    keys += fmt::format("payback_bf16_tflops = {}\npayback_ms = {}\n",
                        Number(bf16_tflops * payback), Number(b.payback_ms));
  } else {
    out += "; no call after it ran 5% below (no payback)";
  }
  out += ".\n";
  if (b.refill_ratio) {
    if (*b.refill_ratio <= 0) {
      out += fmt::format(
          "# No gap up to {:.1f} ms bought back a burst that shows (a call 5% faster): idle\n"
          "# between collectives refills nothing here.\n",
          b.longest_gap_ms);
    } else {
      out += fmt::format(
          "# Timed again after short gaps: each ms of idle bought back {}{:.3g} ms of burst{}.\n",
          b.refill_at_least ? "at least " : "", *b.refill_ratio,
          b.refill_at_least ? " (every gap refilled the whole window)" : "");
    }
    keys += fmt::format("refill_ratio = {}\n", Number(*b.refill_ratio));
  } else {
    out += "# No gap was timed: the refill ratio stays the default (as fast as it drains).\n";
  }
  return out + "[tensor_burst]\n" + keys;
}

}  // namespace

std::string OverlayToml(const std::string& name, const std::string& base_ref,
                        const hardware::HardwareProfile& base, const ProbeFigures& f,
                        const std::vector<NodeResult>& nodes, const Provenance& p) {
  const NodeResult* first = nodes.empty() ? nullptr : &nodes.front();
  const bool gpu = first != nullptr && first->on_gpu();
  std::string out = fmt::format("# Measured by `{}`\n# ({}) at {} on {}.\n", Comment(p.command),
                                Comment(p.version), Comment(p.date_utc), Comment(Nodes(nodes)));
  if (first != nullptr) {
    out += Comment(fmt::format("# Device: {}{}, torch {}{}.", first->device_name,
                               gpu ? fmt::format(" x {}", first->device_count) : "", first->torch,
                               first->cuda.empty() ? "" : ", CUDA " + first->cuda)) +
           "\n";
  }
  if (!gpu)
    out +=
        "# MEASURED ON THE CPU: these figures test the probe, they are not a GPU's. Do not\n"
        "# plan with them.\n";
  out += Comment(fmt::format("# Each measured key says how; every other key is {}'s ({}).",
                             base.name, base.source_path)) +
         "\n";
  out += fmt::format("name = {}\nbase = {}\n", TomlString(name), TomlString(base_ref));
  if (f.bf16_tflops) {
    out += fmt::format(
        "\n# Sustained BF16 GEMM rate: the median over {}'s GEMM shapes at {} tokens of the\n"
        "# measured rate over the GEMM model's tile, wave and K-loop efficiency for the shape\n"
        "# (shapes below the roofline's ridge left out); {}. The base says {}.\n"
        "bf16_tflops = {}\n",
        Comment(p.model_name), FormatThousands(p.tokens), Spread(f.bf16_spread, f.nodes.size()),
        Number(cost::ModelBf16Tflops(base)), Number(*f.bf16_tflops));
  }
  if (f.memory_bw_gbps) {
    out += fmt::format(
        "\n# DRAM: device copies measured {} GB/s (read + write; {}), over the cost model's\n"
        "# memory_bw_eff prior centre, so that the model reaches the measured rate. The base\n"
        "# says {}.\nmemory_bw_gbps = {}\n",
        Number(*f.copy_gbps), Spread(f.copy_spread, f.nodes.size()), Number(base.memory_bw_gbps),
        Number(*f.memory_bw_gbps));
  }
  if (f.p2p_gbps && f.p2p_latency_us) {
    out += fmt::format(
        "\n# Two local ranks' send/recv ping-pong, one direction: largest message, smallest.\n"
        "p2p_gbps = {}\np2p_latency_us = {}\n",
        Number(*f.p2p_gbps), Number(*f.p2p_latency_us));
  }
  if (f.nic_gbps && f.inter_latency_us) {
    out += fmt::format(
        "\n# The first two nodes' send/recv ping-pong (one process each), one direction:\n"
        "# largest message, smallest.\nnic_gbps_per_gpu = {}\ninter_latency_us = {}\n",
        Number(*f.nic_gbps), Number(*f.inter_latency_us));
  }
  // Tables last: a root key after a table header would belong to the table.
  if (f.burst && f.bf16_tflops && f.burst->sustained_tflops > 0)
    out += BurstTable(*f.burst, *f.bf16_tflops, nodes);
  out += IntraTable("intra_allreduce", "all_reduce", base.intra_allreduce, f.collectives);
  out += IntraTable("intra_alltoall", "all_to_all", base.intra_alltoall, f.collectives);
  return out;
}

}  // namespace ppsearch::probe
