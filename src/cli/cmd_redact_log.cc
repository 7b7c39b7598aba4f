// `ppsearch redact-log`: copies its standard input to its standard output a
// line at a time with the secrets of PPSEARCH_REDACT_SECRETS redacted
// (run/redact.h). A server's output passes through it on its way to
// live/<sample>/<host>.log, so a key the server prints never reaches the
// disk; it ends at its input's end. Not listed in --help: the runner starts
// it.

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "cli/command.h"
#include "run/redact.h"

namespace ppsearch::cli {
namespace {

// A line longer than this is written as it stands so far (a server that
// never ends its line cannot grow this process without bound).
constexpr size_t kMaxLineBytes = 1 << 20;

bool WriteAll(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

Result<ExitCode> RunRedactLog() {
  const char* secrets = std::getenv(run::kRedactSecretsVariable);
  if (secrets == nullptr)
    return MakeError(std::string(run::kRedactSecretsVariable) + " is not set", ErrorKind::kConfig);
  PPS_ASSIGN_OR_RETURN(const run::Redactor redact, run::Redactor::FromJsonText(secrets));
  std::string pending;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    const size_t end = pending.rfind('\n');
    if (end == std::string::npos && pending.size() < kMaxLineBytes) continue;
    const size_t cut = end == std::string::npos ? pending.size() : end + 1;
    if (!WriteAll(redact.Apply(pending.substr(0, cut)))) return kExitFailure;
    pending.erase(0, cut);
  }
  if (!pending.empty() && !WriteAll(redact.Apply(pending))) return kExitFailure;
  return kExitOk;
}

}  // namespace

Runner AddRedactLogCommand(CLI::App& app) {
  CLI::App* c = app.add_subcommand("redact-log", "");
  c->group("");  // hidden: the runner's
  return [] { return RunRedactLog(); };
}

}  // namespace ppsearch::cli
