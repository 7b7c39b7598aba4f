#include "util/host_name.h"

#include <arpa/inet.h>

#include <cctype>
#include <string>

#include "util/safe_name.h"

namespace ppsearch {
namespace {

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool IsDnsName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('.', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view label = name.substr(start, end - start);
    if (label.empty() || label.size() > 63) return false;
    if (label.front() == '-' || label.back() == '-') return false;
    for (char c : label)
      if (!IsAlnum(c) && c != '-') return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

bool IsValidHostName(std::string_view name) { return IsSafeName(name); }

bool IsValidHostAddress(std::string_view address) {
  const std::string text(address);
  unsigned char buf[sizeof(struct in6_addr)];
  if (text.find(':') != std::string::npos) return inet_pton(AF_INET6, text.c_str(), buf) == 1;
  if (inet_pton(AF_INET, text.c_str(), buf) == 1) return true;
  // Dotted digits that are not a valid IPv4 address (999.1.1.1) are a typo;
  // a bare number ("601") is a name an ssh config or /etc/hosts resolves.
  bool numeric = true;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') numeric = false;
  if (numeric && text.find('.') != std::string::npos) return false;
  return IsDnsName(address);
}

std::string HostNameRule() { return "a host name: " + SafeNameRule(); }

std::string HostAddressRule() { return "a host name, an IPv4 address or an IPv6 address"; }

}  // namespace ppsearch
