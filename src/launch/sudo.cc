#include "launch/sudo.h"

#include <algorithm>
#include <cstdlib>

#include "util/files.h"

namespace ppsearch::launch {
namespace {

constexpr SudoStep kSteps[] = {SudoStep::kContainer, SudoStep::kStop};

// What sudo prints when it refuses, before running anything.
struct RefusalText {
  const char* text;
  const char* meaning;
};
constexpr RefusalText kRefusals[] = {
    {"incorrect password attempt", "refused the password"},
    {"Sorry, try again", "refused the password"},
    {"no password was provided", "refused the password"},
    {"a password is required", "needs a password"},
    {"is not in the sudoers file", "has no sudoers rule for the login user"},
    {"is not allowed to execute", "has no sudoers rule for this command"},
    {"a terminal is required", "needs a password"},
};

}  // namespace

const char* SudoStepName(SudoStep step) {
  switch (step) {
    case SudoStep::kContainer:
      return "container";
    case SudoStep::kStop:
      return "stop";
    case SudoStep::kNone:
      break;
  }
  return "";
}

Result<Sudo> Sudo::FromSpec(const spec::SudoSpec& spec) {
  Sudo out;
  for (SudoStep step : kSteps)
    if (spec.Runs(SudoStepName(step))) out.steps_.push_back(step);
  out.password_file_ = spec.password_file;
  std::string origin = "cluster.sudo.password_file";
  if (out.password_file_.empty()) {
    const char* env = std::getenv(kSudoPasswordFileEnv);
    if (env == nullptr || *env == '\0') return out;
    out.password_file_ = env;
    origin = kSudoPasswordFileEnv;
  }
  // No step through sudo: a password file named for nothing is not read.
  if (out.steps_.empty()) {
    out.password_file_.clear();
    return out;
  }
  ReadOptions options;
  options.max_bytes = kSudoPasswordFileMaxBytes;
  Result<std::string> text = ReadFile(out.password_file_, options);
  if (!text.ok())
    return MakeError("cannot read the sudo password file (" + origin +
                     "): " + text.error().message);
  std::string password = *text;
  if (!password.empty() && password.back() == '\n') password.pop_back();
  if (password.empty())
    return MakeError("the sudo password file " + out.password_file_ + " (" + origin +
                     ") holds no password");
  // sudo reads one line: a second one would reach the command's standard input.
  if (password.find('\n') != std::string::npos || password.find('\0') != std::string::npos)
    return MakeError("the sudo password file " + out.password_file_ + " (" + origin +
                     ") holds more than one line; it must hold the password alone");
  out.input_ = password + "\n";
  return out;
}

bool Sudo::Runs(SudoStep step) const {
  return std::find(steps_.begin(), steps_.end(), step) != steps_.end();
}

std::vector<std::string> Sudo::Wrap(const std::vector<std::string>& argv,
                                    const std::vector<std::string>& keep_env) const {
  std::vector<std::string> out = has_password()
                                     ? std::vector<std::string>{"sudo", "-k", "-S", "-p", ""}
                                     : std::vector<std::string>{"sudo", "-n"};
  std::string names;
  for (const auto& name : keep_env) names += (names.empty() ? "" : ",") + name;
  if (!names.empty()) out.push_back("--preserve-env=" + names);
  out.push_back("--");
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::optional<std::string> Sudo::Refusal(const std::string& err) const {
  for (const RefusalText& r : kRefusals) {
    if (err.find(r.text) == std::string::npos) continue;
    std::string out = std::string("sudo ") + r.meaning;
    if (has_password()) {
      out += " (the password from " + password_file_ + ")";
    } else if (std::string(r.meaning) == "needs a password") {
      out += std::string(": give [cluster.sudo] password_file or ") + kSudoPasswordFileEnv +
             ", or a NOPASSWD sudoers rule";
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace ppsearch::launch
