#pragma once
// A server's --url as bench takes it: checked once, before any request, and
// shown without the user and password it may carry in every output and
// message.

#include <string>

#include "util/result.h"

namespace ppsearch::loadgen {

// `url` without the user and password it may carry (http://user:pw@host):
// what the outputs and messages show of it.
std::string ShownUrl(const std::string& url);

// An http:// or https:// URL libcurl can send to: a host, a port in
// 1..65535 if any, no spaces. Errors name the flag and show the URL
// without its password.
Status CheckServerUrl(const std::string& url);

}  // namespace ppsearch::loadgen
