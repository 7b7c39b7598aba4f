#include "loadgen/url.h"

#include <curl/curl.h>

#include <memory>

namespace ppsearch::loadgen {

std::string ShownUrl(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const size_t host = scheme + 3;
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> parsed(curl_url(), &curl_url_cleanup);
  size_t at = std::string::npos;
  if (parsed && curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
    // A URL libcurl reads: its authority ends at the first '/', '?' or
    // '#', and an '@' past it is the path's.
    at = url.find('@', host);
    if (at != std::string::npos && at > url.find_first_of("/?#", host)) at = std::string::npos;
  } else {
    // One it refuses, whose error quotes it: a password may hold a '/', so
    // everything up to the last '@' before a query or fragment is hidden.
    at = url.substr(0, url.find_first_of("?#", host)).rfind('@');
    if (at != std::string::npos && at < host) at = std::string::npos;
  }
  if (at == std::string::npos) return url;
  return url.substr(0, host) + "<redacted>@" + url.substr(at + 1);
}

Status CheckServerUrl(const std::string& url) {
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    return MakeError(
        "--url must start with http:// or https://, e.g. http://127.0.0.1:30000 (got '" +
        ShownUrl(url) + "')");
  // libcurl's own parser: what it refuses here it would refuse at the first
  // request, after the server had been waited for.
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> parsed(curl_url(), &curl_url_cleanup);
  if (!parsed) return MakeError("out of memory parsing --url");
  const CURLUcode code = curl_url_set(parsed.get(), CURLUPART_URL, url.c_str(), 0);
  if (code != CURLUE_OK)
    return MakeError("--url '" + ShownUrl(url) + "' is not a URL: " + curl_url_strerror(code) +
                     " (expected http://HOST[:PORT][/PATH], e.g. http://127.0.0.1:30000)");
  return Status::Ok();
}

}  // namespace ppsearch::loadgen
