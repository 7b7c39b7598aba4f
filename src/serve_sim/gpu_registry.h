#pragma once
// A stand-in for the GPU driver's view of memory, so a rehearsal on a
// machine without GPUs exercises GPU snapshots, preflight and the
// memory-release wait as a real cluster would. serve-sim registers the
// memory its node's GPUs hold in `<state dir>/serve-sim-<pid>.json` from the
// moment its weights load until it exits; `ppsearch smi-sim` answers
// nvidia-smi's queries from the live registrations.
//
// A registration is live while its process is alive (or a zombie is not: a
// dead process frees its GPU memory) or until `held_until_unix_s`
// (--fault-leak-gpu-s: "memory not released after stop"). Parsing and
// answering are pure; the I/O is GpuRegistry and ReadRegistrations.

#include <functional>
#include <string>
#include <vector>

#include "nvidia_smi/gpu_memory.h"
#include "util/result.h"

namespace ppsearch::serve_sim {

struct GpuRegistration {
  int pid = 0;
  // The process's start time (launch::ProcessStartTicks; 0: unknown). A pid
  // alone comes back: pid_max is often 32,768, and /proc/<pid> answers for
  // any thread id too, so a dead server's pid soon names a new server's
  // thread and its memory would count twice.
  uint64_t start_ticks = 0;
  std::string process_name;  // what nvidia-smi's process_name shows
  int node_rank = 0;
  double held_until_unix_s = 0;             // 0: none; else live until then even after exit
  std::vector<nvidia_smi::GpuMemory> gpus;  // per local GPU: index, uuid, name, used_mib, total_mib
};

// The file's JSON: {"pid", "start_ticks" (optional), "process_name", "node_rank",
// "held_until_unix_s" (null when none), "gpus": [{"index", "uuid", "name", "used_mib",
// "total_mib"}]}.
std::string FormatRegistration(const GpuRegistration& r);
// Errors read "<source>: <what>".
Result<GpuRegistration> ParseRegistration(const std::string& text, const std::string& source);

// `pid_alive(pid, start_ticks)` says whether that very process still runs.
bool IsLive(const GpuRegistration& r, double now_unix_s,
            const std::function<bool(int, uint64_t)>& pid_alive);

// GPU indices a registration or smi-sim may name: 0 .. kMaxSmiGpus - 1.
inline constexpr int kMaxSmiGpus = 1024;

// The GPUs smi-sim lists: indices 0..count-1 (and any index a live
// registration holds beyond them). A GPU a live registration holds is
// described by it (uuid, name, total: serve-sim's hardware profile); these
// describe the others, and the driver version ("smi-sim" unless told: no
// real driver is behind it).
struct SmiGpus {
  int count = 8;
  double total_mib = 85651;
  std::string name = "NVIDIA RTX 6000D";
  std::string driver_version = "smi-sim";
  std::string uuid_seed;  // GpuUuidSeed(state directory): uuids are stable per directory
};

// One nvidia-smi query: --query-gpu=... or --query-compute-apps=... with
// --format=csv[,noheader][,nounits].
struct SmiQuery {
  bool compute_apps = false;
  std::vector<std::string> fields;
  bool header = true;
  bool units = true;
};

// Parses nvidia-smi's flags. Errors are nvidia-smi's texts, e.g.
// `Field "foo" is not a valid field to query.`
Result<SmiQuery> ParseSmiArgs(const std::vector<std::string>& args);

// The CSV nvidia-smi prints: one line per GPU (memory.used = the sum of the
// live registrations on that index, never capped: more than the total is
// evidence to show, not to hide; no baseline), or one line per live
// registration and GPU it holds memory on.
std::string AnswerSmiQuery(const SmiQuery& q, const SmiGpus& gpus,
                           const std::vector<GpuRegistration>& live);

// "GPU-xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx" from a seed and index.
std::string SimGpuUuid(const std::string& seed, int index);
// The seed of a state directory's GPU uuids: its absolute, normal path, so
// serve-sim (which registers them) and smi-sim (which lists the GPUs no
// registration holds) give a GPU one uuid however each names the directory.
std::string GpuUuidSeed(const std::string& state_dir);

// I/O: the process's own registration file.
class GpuRegistry {
 public:
  // `dir` empty: every call does nothing.
  explicit GpuRegistry(std::string dir, int pid);
  const std::string& path() const { return path_; }
  // Writes the file atomically (temp + rename).
  Status Register(const GpuRegistration& r);
  // Keeps the registration until `until_unix_s` (rewritten), or removes it when 0.
  Status Release(double until_unix_s);

 private:
  std::string dir_;
  std::string path_;
  GpuRegistration last_;
  bool registered_ = false;
};

// True when `pid` runs (kill(pid, 0) is 0 or EPERM), is not a zombie and,
// when `start_ticks` is not 0, started then: not a later process or thread
// that was given the same number.
bool PidAlive(int pid, uint64_t start_ticks = 0);

// Every serve-sim-*.json in `dir` that parses (others are skipped: a file
// being replaced, a stray file), live ones only.
std::vector<GpuRegistration> ReadLiveRegistrations(const std::string& dir, double now_unix_s);

}  // namespace ppsearch::serve_sim
