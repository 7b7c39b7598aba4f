#include "util/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "ppsearch_source_dir.h"

namespace ppsearch {
namespace {

std::string ErrnoText() { return std::strerror(errno); }

Status WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write " + path + ": " + ErrnoText());
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

namespace {

// What a non-regular file is, for the error that refuses it.
const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

std::string LimitText(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

Result<std::string> ReadFile(const std::string& path, const ReadOptions& options) {
  // O_NONBLOCK so that opening a FIFO does not wait for a writer; fstat then
  // refuses it before any read.
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
  if (!options.follow_links) flags |= O_NOFOLLOW;
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    if (errno == ELOOP && !options.follow_links)
      return MakeError("cannot read " + path + ": is a symbolic link, expected a regular file");
    return MakeError("cannot read " + path + ": " + ErrnoText());
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string message = "cannot read " + path + ": " + ErrnoText();
    ::close(fd);
    return MakeError(message);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return MakeError("cannot read " + path + ": is " + FileKind(st.st_mode) +
                     ", expected a regular file");
  }
  const auto too_big = [&] {
    return MakeError("cannot read " + path + ": larger than " + LimitText(options.max_bytes) +
                     ", the most ppsearch reads from one file");
  };
  if (static_cast<uint64_t>(st.st_size) > options.max_bytes) {
    ::close(fd);
    return too_big();
  }
  // The file may grow while it is read: stop one byte past the limit.
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string message = "cannot read " + path + ": " + ErrnoText();
      ::close(fd);
      return MakeError(message);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > options.max_bytes) {
      ::close(fd);
      return too_big();
    }
  }
  ::close(fd);
  return text;
}

Status MakeDirs(const std::string& path) {
  if (path.empty()) return Status::Ok();
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return IoError("cannot create directory " + path + ": " + ec.message());
  return Status::Ok();
}

namespace {

// Refuses an existing `path` that a rename would replace but that is no
// file ppsearch wrote: a device, FIFO, socket or directory. A symbolic link
// is replaced (not written through), a regular file overwritten.
Status CheckReplaceable(const std::string& label, const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return Status::Ok();
  if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) return Status::Ok();
  return MakeError(label + ": is " + FileKind(st.st_mode) +
                   ", expected a regular file or a new path; ppsearch does not replace it");
}

// The directory `path` goes in must exist or be creatable: the nearest part
// of it that exists is a directory this process may write in. Checked before
// the work (a probe of many minutes), not found when writing its result. A
// failure is the one writing the file would meet, an I/O error (exit 1 from
// every command, as a run's evidence that cannot be written).
Status CheckParentCreatable(const std::string& label, const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(path).parent_path();
  fs::path at = dir.empty() ? fs::path(".") : dir;
  std::error_code ec;
  fs::file_status st = fs::status(at, ec);
  while (st.type() == fs::file_type::not_found && at.has_parent_path() && at.parent_path() != at) {
    at = at.parent_path();
    st = fs::status(at, ec);
  }
  // A relative path's first part is missing too: it would be made in the
  // working directory.
  if (st.type() == fs::file_type::not_found && at.is_relative()) {
    at = ".";
    st = fs::status(at, ec);
  }
  if (st.type() != fs::file_type::directory)
    return IoError(label + ": " + at.string() + " is " +
                   (st.type() == fs::file_type::regular ? "a file" : "not a directory") +
                   ", so the directory " + dir.string() + " cannot be created to hold it");
  if (::access(at.c_str(), W_OK | X_OK) != 0)
    return IoError(label + ": cannot write in " + at.string() + ": " + ErrnoText());
  return Status::Ok();
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ec_a;
  std::error_code ec_b;
  const auto ca = std::filesystem::weakly_canonical(a, ec_a);
  const auto cb = std::filesystem::weakly_canonical(b, ec_b);
  return !ec_a && !ec_b && ca == cb;
}

}  // namespace

Status CheckOutputPath(const std::string& flag, const std::string& path,
                       const std::vector<NamedPath>& inputs) {
  if (path.empty()) return Status::Ok();
  PPS_RETURN_IF_ERROR(CheckReplaceable(flag + " " + path, path));
  PPS_RETURN_IF_ERROR(CheckParentCreatable(flag + " " + path, path));
  for (const NamedPath& in : inputs) {
    if (in.path.empty() || !SameFile(path, in.path)) continue;
    return MakeError(flag + " " + path + ": is " + in.what + " (" + in.path +
                     "); an output must not replace one of the command's own inputs");
  }
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path, const std::string& contents) {
  PPS_RETURN_IF_ERROR(CheckReplaceable("cannot write " + path, path));
  PPS_RETURN_IF_ERROR(MakeDirs(DirName(path)));
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int create = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(tmp.c_str(), create, 0644);
  if (fd < 0 && errno == EEXIST) {
    // A temporary file left by a killed process with this pid, or anything
    // planted at the path: remove the entry (a link, not its target), retry.
    ::unlink(tmp.c_str());
    fd = ::open(tmp.c_str(), create, 0644);
  }
  if (fd < 0) return IoError("cannot create " + tmp + ": " + ErrnoText());
  Status written = WriteAll(fd, contents, tmp);
  if (written.ok() && ::fsync(fd) != 0)
    written = IoError("cannot fsync " + tmp + ": " + ErrnoText());
  ::close(fd);
  if (!written.ok()) {
    ::unlink(tmp.c_str());
    return written;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string message = "cannot rename " + tmp + " to " + path + ": " + ErrnoText();
    ::unlink(tmp.c_str());
    return IoError(message);
  }
  return Status::Ok();
}

Result<int> OpenBelow(const std::string& root, const std::string& relative, int flags,
                      unsigned mode, bool create_dirs) {
  std::vector<std::string> parts;
  for (const auto& part : std::filesystem::path(relative)) {
    const std::string name = part.string();
    if (name.empty() || name == "." || name == "/") continue;
    if (name == "..") return MakeError("cannot open " + relative + " under " + root + ": has ..");
    parts.push_back(name);
  }
  const std::string path = root + "/" + relative;
  if (parts.empty()) return MakeError("cannot open " + path + ": no file name");
  int dir = ::open(root.empty() ? "." : root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return IoError("cannot open " + root + ": " + ErrnoText());
  std::string walked = root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    walked += "/" + parts[i];
    const int dir_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int next = ::openat(dir, parts[i].c_str(), dir_flags);
    if (next < 0 && errno == ENOENT && create_dirs) {
      if (::mkdirat(dir, parts[i].c_str(), 0755) != 0 && errno != EEXIST) {
        const std::string message = "cannot create directory " + walked + ": " + ErrnoText();
        ::close(dir);
        return IoError(message);
      }
      next = ::openat(dir, parts[i].c_str(), dir_flags);
    }
    const int err = errno;
    ::close(dir);
    if (next < 0) {
      if (err == ELOOP || err == ENOTDIR)
        return MakeError("cannot open " + path + ": " + walked +
                         " is a symbolic link or not a directory; refusing to write through it");
      return IoError("cannot open " + walked + ": " + std::strerror(err));
    }
    dir = next;
  }
  // O_NONBLOCK: a FIFO planted at the path fails the open (or fstat below)
  // instead of blocking.
  const int fd = ::openat(dir, parts.back().c_str(), flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
                          static_cast<mode_t>(mode));
  const int err = errno;
  ::close(dir);
  if (fd < 0) {
    if (err == ELOOP)
      return MakeError("cannot open " + path +
                       ": is a symbolic link, expected a regular file; refusing to follow it");
    return IoError("cannot open " + path + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string kind = FileKind(st.st_mode);
    ::close(fd);
    return MakeError("cannot open " + path + ": is " + kind + ", expected a regular file");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

Status AppendLineBelow(const std::string& root, const std::string& relative,
                       const std::string& line) {
  PPS_ASSIGN_OR_RETURN(const int fd,
                       OpenBelow(root, relative, O_WRONLY | O_CREAT | O_APPEND, 0644, true));
  const std::string path = root + "/" + relative;
  Status written = WriteAll(fd, line + "\n", path);
  if (written.ok() && ::fsync(fd) != 0)
    written = IoError("cannot fsync " + path + ": " + ErrnoText());
  ::close(fd);
  return written;
}

Status AppendLine(const std::string& path, const std::string& line) {
  const std::string dir = DirName(path);
  PPS_RETURN_IF_ERROR(MakeDirs(dir));
  return AppendLineBelow(dir.empty() ? "." : dir, std::filesystem::path(path).filename().string(),
                         line);
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);
}

Status DirLock::StillThere() const {
  struct stat held {};
  struct stat now {};
  if (::fstat(fd_, &held) != 0)
    return IoError("cannot stat the locked " + dir_ + ": " + ErrnoText());
  if (::stat(dir_.c_str(), &now) != 0 || now.st_ino != held.st_ino || now.st_dev != held.st_dev ||
      held.st_nlink == 0)
    return IoError(dir_ +
                   " was deleted or replaced while this process was using it; stopping "
                   "without writing further");
  return Status::Ok();
}

Result<std::unique_ptr<DirLock>> LockDirectory(const std::string& dir, const std::string& pid_file,
                                               const std::string& what) {
  PPS_RETURN_IF_ERROR(MakeDirs(dir));
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open " + dir + " to lock it: " + ErrnoText());
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      ReadOptions small;
      small.max_bytes = 64;
      small.follow_links = false;
      Result<std::string> text = ReadFile(pid_file, small);
      std::string pid = text.ok() && !text->empty() ? *text : "unknown";
      while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
      return MakeError(what + " is in use by another ppsearch process (pid " + pid +
                       "); wait for it to finish or stop it first");
    }
    return IoError("cannot lock " + dir + ": " + std::strerror(err));
  }
  auto lock = std::make_unique<DirLock>(fd, dir);
  PPS_RETURN_IF_ERROR(WriteFileAtomic(pid_file, std::to_string(::getpid()) + "\n"));
  return lock;
}

int RemoveStrayTempFiles(const std::string& dir) {
  int removed = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string name = it->path().filename().string();
    const size_t at = name.rfind(".tmp.");
    if (at == std::string::npos || at + 5 >= name.size()) continue;
    if (name.find_first_not_of("0123456789", at + 5) != std::string::npos) continue;
    std::error_code rm_ec;
    if (std::filesystem::remove(it->path(), rm_ec)) ++removed;
  }
  return removed;
}

std::string DirName(const std::string& path) {
  return std::filesystem::path(path).parent_path().string();
}

std::string ResolvePath(const std::string& base_dir, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute() || base_dir.empty()) return p.lexically_normal().string();
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

std::string AbsolutePath(const std::string& path) {
  return std::filesystem::absolute(path).lexically_normal().string();
}

std::string ChooseDataDir(const std::string& env_dir, const std::string& exe_path,
                          const std::string& source_data_dir) {
  if (!env_dir.empty()) return env_dir;
  std::error_code ec;
  std::string installed;
  if (!exe_path.empty()) {
    installed = (std::filesystem::path(exe_path).parent_path() / PPSEARCH_DATA_DIR_FROM_BIN)
                    .lexically_normal()
                    .string();
    if (std::filesystem::is_directory(installed, ec)) return installed;
  }
  if (std::filesystem::is_directory(source_data_dir, ec) || installed.empty()) {
    return source_data_dir;
  }
  return installed;
}

std::string ExecutablePath() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "" : exe.string();
}

std::string UtcNow(const char* strftime_format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), strftime_format, &tm);
  return buf;
}

std::string DataDir() {
  const char* env = std::getenv("PPSEARCH_DATA_DIR");
  return ChooseDataDir(env != nullptr ? env : "", ExecutablePath(),
                       std::string(PPSEARCH_SOURCE_DIR) + "/data");
}

}  // namespace ppsearch
