#include "serve_sim/fault_plan.h"

#include <fmt/format.h>

#include <sstream>

namespace ppsearch::serve_sim {

Result<FaultPlanLine> FindFaultPlanLine(const std::string& text, const std::string& file,
                                        const std::string& key) {
  std::istringstream in(text);
  std::string raw;
  FaultPlanLine found;
  for (int n = 1; std::getline(in, raw); ++n) {
    const std::string body = raw.substr(0, raw.find('#'));
    std::istringstream words_in(body);
    std::vector<std::string> words;
    for (std::string w; words_in >> w;) words.push_back(w);
    if (words.empty()) continue;
    auto bad = [&](const std::string& what) {
      return MakeError(fmt::format("{}:{}: {}", file, n, what));
    };
    if (words[0].rfind("--", 0) == 0)
      return bad("a line starts with its key (e.g. pp2-tp16-ep4_c8_r1/n2), not a flag: '" +
                 words[0] + "'");
    if (words.size() == 1) return bad("key '" + words[0] + "' has no --fault-* flags");
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string& w = words[i];
      if (w.rfind("--", 0) == 0) {
        if (w.rfind("--fault-", 0) != 0)
          return bad("only --fault-* flags may appear in a fault plan, not '" + w + "'");
      } else if (words[i - 1].rfind("--", 0) != 0 || i == 1) {
        return bad("'" + w + "' is not a --fault-* flag or the value of one");
      }
    }
    if (words[0] != key) continue;
    if (found.line != 0) return bad(fmt::format("key '{}' is also on line {}", key, found.line));
    found.line = n;
    found.words.assign(words.begin() + 1, words.end());
  }
  return found;
}

}  // namespace ppsearch::serve_sim
