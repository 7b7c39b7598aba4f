#pragma once
// What may name or address a cluster host. Host names become file names in
// the evidence directory and words of remote commands, so only the
// characters of DNS names are allowed; addresses are a DNS name, an IPv4
// address or an IPv6 address, nothing else.

#include <string>
#include <string_view>

namespace ppsearch {

// A safe name (util/safe_name.h: letters, digits, '.', '_' and '-', starting
// with a letter or digit, short enough for the suffixes evidence file names
// add): "601", "gpu-node.1". A longer DNS name is a host's address, not its
// name.
bool IsValidHostName(std::string_view name);

// A DNS name (labels of letters, digits and '-', separated by '.'), a dotted
// IPv4 address, or an IPv6 address (hex digits, ':' and '.'; no brackets).
bool IsValidHostAddress(std::string_view address);

// "expected a host name (letters, digits, '.', '_', '-')" style text for errors.
std::string HostNameRule();
std::string HostAddressRule();

}  // namespace ppsearch
