#pragma once
// File I/O at the edge. Writes are atomic (temp file + fsync + rename) so an
// interrupted run never leaves a half-written file where evidence belongs.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "util/result.h"

namespace ppsearch {

// The most a read takes in unless told otherwise. ppsearch's inputs (specs,
// model configs, CSVs, calibrations, evidence) are kilobytes to a few hundred
// megabytes; /dev/zero or a multi-gigabyte file named by mistake must fail
// with an error, not exhaust memory.
inline constexpr uint64_t kDefaultReadLimitBytes = uint64_t{512} << 20;

struct ReadOptions {
  uint64_t max_bytes = kDefaultReadLimitBytes;
  // Evidence readers pass false: a symbolic link inside a run directory is not
  // evidence the run wrote, and following it would quote another file.
  bool follow_links = true;
};

// Reads a regular file whole. A directory, FIFO, device or socket, a link
// when `follow_links` is false, or a file over `max_bytes` is an error that
// names the path and what it is; a FIFO never blocks the read.
Result<std::string> ReadFile(const std::string& path, const ReadOptions& options = {});

// Writes `contents` to `path` atomically: a reader sees the old file or the
// new one, never a prefix. Creates missing parent directories. The temporary
// file is created exclusively and never through a link, so whatever sits at
// the temporary path (a symbolic link planted there, say) is replaced, not
// written through. An existing `path` that is neither a regular file nor a
// symbolic link (a device such as /dev/null, a FIFO, a directory, a socket)
// is refused, a config error: the rename would replace it.
Status WriteFileAtomic(const std::string& path, const std::string& contents);

// A command's output file checked before any work: `flag` ("-o", "--html")
// names it in the error. Refused: an existing path that WriteFileAtomic
// would refuse, a path whose directory cannot be created or written in (a
// file in the way: `-o f/x.toml` where f is a file), and a path that is the
// same file as one of `inputs` (pairs
// of what the input is and its path, e.g. {"the spec", "run.toml"}; another
// output of the same command counts as one). Empty paths are skipped. A
// directory that cannot hold the file is an I/O error, as failing to write
// it would be; the others are the arguments' (a configuration error).
struct NamedPath {
  std::string what;
  std::string path;
};
Status CheckOutputPath(const std::string& flag, const std::string& path,
                       const std::vector<NamedPath>& inputs);

// Appends one line (a '\n' is added) and fsyncs, for append-only logs.
// Never through a symbolic link: the file (and, with OpenBelow, every
// directory under the root) is opened with O_NOFOLLOW.
Status AppendLine(const std::string& path, const std::string& line);

// Opens `relative` under the directory `root` with `flags` (O_NOFOLLOW and
// O_CLOEXEC added) and `mode`, walking every directory between them by
// descriptor with O_NOFOLLOW, so no symbolic link under `root` (a file or
// a directory planted while a run goes on) is followed; `root` itself may
// be one (the user's choice). With `create_dirs`, missing directories are
// made (0755). Returns the descriptor, which the caller closes.
Result<int> OpenBelow(const std::string& root, const std::string& relative, int flags,
                      unsigned mode, bool create_dirs);

// AppendLine for a file under `root`, never through a link under it.
Status AppendLineBelow(const std::string& root, const std::string& relative,
                       const std::string& line);

Status MakeDirs(const std::string& path);

// An exclusive advisory lock (flock) on a directory itself, held until
// destroyed. Locking the directory, not a file in it, means that deleting a
// file cannot release the lock for a second process; a pid file beside it
// names the owner in the second process's error.
class DirLock {
 public:
  DirLock(int fd, std::string dir) : fd_(fd), dir_(std::move(dir)) {}
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

  // Ok while the locked directory is still the one at its path; an I/O error
  // once it was deleted, moved away or replaced (writing on would recreate
  // an empty copy and scatter the evidence).
  Status StillThere() const;

 private:
  int fd_;
  std::string dir_;
};

// Creates `dir` if needed and locks it without waiting, writing this
// process's pid to `pid_file`. `what` names the locked thing in the error:
// "<what> is in use by another ppsearch process (pid N)".
Result<std::unique_ptr<DirLock>> LockDirectory(const std::string& dir, const std::string& pid_file,
                                               const std::string& what);

// Removes the temporary files an interrupted WriteFileAtomic left under
// `dir` ("<name>.tmp.<pid>"); returns how many.
int RemoveStrayTempFiles(const std::string& dir);

// Directory of `path` ("" for a bare file name).
std::string DirName(const std::string& path);
// `path` if absolute, else `base_dir`/`path`.
std::string ResolvePath(const std::string& base_dir, const std::string& path);
// `path` made absolute against the working directory, normalised.
std::string AbsolutePath(const std::string& path);

// The project's data directory (hardware profiles, model configs, baseline),
// the first of: the PPSEARCH_DATA_DIR environment variable; the installed
// tree beside the executable, <exe dir>/../share/ppsearch/data (found via
// /proc/self/exe, so a moved install still works); the source tree's data/
// when it exists (a development build). With none of them, the installed
// location, so errors name where the data was expected.
std::string DataDir();

// This process's executable (/proc/self/exe), "" when it cannot be read.
std::string ExecutablePath();

// The current UTC time as `strftime_format` writes it ("%Y%m%d-%H%M%S").
std::string UtcNow(const char* strftime_format);

// DataDir()'s choice from its inputs: `env_dir` ("" when unset), the
// executable's path ("" when unknown) and the source tree's data directory.
std::string ChooseDataDir(const std::string& env_dir, const std::string& exe_path,
                          const std::string& source_data_dir);

}  // namespace ppsearch
