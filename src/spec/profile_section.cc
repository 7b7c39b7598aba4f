// [profile]: Nsight Systems evidence for samples.
//   nsys = true                      # real engine: `nsys profile` around each node's server
//   nsys_command = ["nsys"]          # the profiler on every node (inside the image, if any)
//   output_dir = "/tmp/ppsearch-nsys"
//   file = "profiles/pp1.sqlite"     # or: an existing export (rehearsal, simulated engine)
//   layout = "pp1-tp32-ep4"          # the layout `file` profiled; default: every layout
//   window = "nvtx:prefill"          # forward | nvtx:REGEX
//   gap_us = 1000

#include <string>
#include <vector>

#include "spec/sections.h"
#include "util/excerpt.h"
#include "util/files.h"

namespace ppsearch::spec {
namespace {

std::string LayoutId(const LayoutSpec& l) { return l.Slug(); }

}  // namespace

Status ReadProfile(const TableReader& section, const std::string& base_dir, const SweepSpec& sweep,
                   ProfileSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys(kProfileKeys));
  out->origin = section.origin();
  PPS_RETURN_IF_ERROR(section.Bool("nsys", &out->nsys));
  PPS_RETURN_IF_ERROR(section.StringList("nsys_command", &out->nsys_command, true));
  PPS_RETURN_IF_ERROR(section.String("output_dir", &out->output_dir, Need::kOptional));
  if (out->output_dir.empty() || out->output_dir[0] != '/')
    return KeyError(
        section.KeyLoc("output_dir"),
        "expected an absolute directory on every node, got \"" + Excerpt(out->output_dir) + "\"");
  PPS_RETURN_IF_ERROR(section.String("file", &out->file, Need::kOptional));
  if (!out->file.empty()) {
    out->file = ResolvePath(base_dir, out->file);
    out->file_origin = section.KeyLoc("file");
  }
  if (out->nsys && !out->file.empty())
    return KeyError(section.KeyLoc("file"),
                    "give either nsys = true (profile every sample) or file (attach an existing "
                    "export), not both");
  PPS_RETURN_IF_ERROR(section.String("layout", &out->layout, Need::kOptional));
  if (!out->layout.empty()) {
    std::vector<std::string> ids;
    for (const LayoutSpec& l : sweep.layouts) ids.push_back(LayoutId(l));
    bool found = false;
    for (const auto& id : ids) found = found || id == out->layout;
    if (!found) {
      std::string list;
      for (const auto& id : ids) list += (list.empty() ? "" : ", ") + id;
      return KeyError(section.KeyLoc("layout"), "no layout \"" + Excerpt(out->layout) +
                                                    "\" in the sweep (layouts: " + list + ")");
    }
  }
  PPS_RETURN_IF_ERROR(section.String("window", &out->window, Need::kOptional));
  if (out->window != "forward" && (out->window.rfind("nvtx:", 0) != 0 || out->window.size() == 5))
    return KeyError(section.KeyLoc("window"),
                    "expected \"forward\" or \"nvtx:REGEX\", got \"" + Excerpt(out->window) + "\"");
  PPS_RETURN_IF_ERROR(section.Int("gap_us", &out->gap_us, Need::kOptional, 1));
  return Status::Ok();
}

}  // namespace ppsearch::spec
