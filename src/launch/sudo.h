#pragma once
// Privileged steps: which of ppsearch's own commands on a node run through
// sudo ([cluster.sudo]), and how the password reaches sudo. With a password,
// a step runs as `sudo -k -S -p '' -- COMMAND...` and the password is the one
// line written to sudo's standard input, which is then closed: it never
// appears on a command line, in the run's evidence or in a log. `-k` makes
// sudo ask every time, so the line is never left unread for COMMAND to see
// (a cached credential would skip the read). Without a password the step runs
// as `sudo -n -- COMMAND...`, which fails at once where sudo would prompt.

#include <optional>
#include <string>
#include <vector>

#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::launch {

enum class SudoStep {
  kNone,       // not a privileged step: runs as the login user
  kContainer,  // the container runtime that starts a server, and its `rm -f`
  kStop,       // signalling a server's process tree
};

// "container", "stop" (as [cluster.sudo] steps names them); "" for kNone.
const char* SudoStepName(SudoStep step);

// The variable that may name the password file when the spec does not.
inline constexpr const char* kSudoPasswordFileEnv = "PPSEARCH_SUDO_PASSWORD_FILE";
// The largest password file read.
inline constexpr uint64_t kSudoPasswordFileMaxBytes = 1024;

class Sudo {
 public:
  Sudo() = default;  // no step through sudo

  // The spec's steps and password: the password file (the spec's, or
  // PPSEARCH_SUDO_PASSWORD_FILE's) is read here, once; its one trailing
  // newline is not part of the password. Errors name the file.
  static Result<Sudo> FromSpec(const spec::SudoSpec& spec);

  bool Runs(SudoStep step) const;
  bool empty() const { return steps_.empty(); }
  bool has_password() const { return !input_.empty(); }
  const std::string& password_file() const { return password_file_; }

  // `sudo -k -S -p '' -- argv` with a password, `sudo -n -- argv` without;
  // `--preserve-env=A,B` before `--` passes those variables of sudo's
  // environment through (sudo resets the rest).
  std::vector<std::string> Wrap(const std::vector<std::string>& argv,
                                const std::vector<std::string>& keep_env = {}) const;
  // What sudo reads on its standard input: the password and a newline; empty
  // without a password (the command's stdin is then /dev/null).
  const std::string& input() const { return input_; }

  // When `err` (a command's standard error) shows that sudo itself refused
  // (a wrong password, no password given where one is needed, no sudoers
  // rule), a sentence saying so and what to do; nullopt otherwise.
  std::optional<std::string> Refusal(const std::string& err) const;

 private:
  std::vector<SudoStep> steps_;
  std::string password_file_;
  std::string input_;
};

}  // namespace ppsearch::launch
