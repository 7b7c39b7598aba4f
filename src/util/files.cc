#include "util/files.h"

#include "ppsearch_source_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

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

Result<std::string> ReadFile(const std::string& path) {
  // An ifstream opens a directory and reads nothing; say what it is.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return MakeError("cannot read " + path + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError("cannot read " + path + ": " + ErrnoText());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Status MakeDirs(const std::string& path) {
  if (path.empty()) return Status::Ok();
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return IoError("cannot create directory " + path + ": " + ec.message());
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path, const std::string& contents) {
  PPS_RETURN_IF_ERROR(MakeDirs(DirName(path)));
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
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

Status AppendLine(const std::string& path, const std::string& line) {
  PPS_RETURN_IF_ERROR(MakeDirs(DirName(path)));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot open " + path + ": " + ErrnoText());
  Status written = WriteAll(fd, line + "\n", path);
  if (written.ok() && ::fsync(fd) != 0)
    written = IoError("cannot fsync " + path + ": " + ErrnoText());
  ::close(fd);
  return written;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<FileLock>> LockExclusive(const std::string& path, const std::string& what) {
  PPS_RETURN_IF_ERROR(MakeDirs(DirName(path)));
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot open lock file " + path + ": " + ErrnoText());
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    ::close(fd);
    if (err == EWOULDBLOCK) {
      std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "unknown";
      while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
      return MakeError(what + " is in use by another ppsearch process (pid " + pid +
                       "); wait for it to finish or stop it first");
    }
    return IoError("cannot lock " + path + ": " + std::strerror(err));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    ::close(fd);
    return IoError("cannot write lock file " + path + ": " + ErrnoText());
  }
  return std::make_unique<FileLock>(fd);
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
