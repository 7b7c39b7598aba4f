#include "loadgen/sse_parser.h"

namespace ppsearch::loadgen {

bool SseParser::Feed(std::string_view bytes, std::vector<std::string>& events) {
  if (failed()) return false;
  size_t pos = 0;
  if (after_cr_ && !bytes.empty()) {
    after_cr_ = false;
    if (bytes[0] == '\n') pos = 1;
  }
  while (pos < bytes.size()) {
    const size_t eol = bytes.find_first_of("\r\n", pos);
    if (eol == std::string_view::npos) {
      line_.append(bytes.substr(pos));
      break;
    }
    line_.append(bytes.substr(pos, eol - pos));
    pos = eol + 1;
    if (bytes[eol] == '\r') {
      if (pos < bytes.size()) {
        if (bytes[pos] == '\n') ++pos;
      } else {
        after_cr_ = true;
      }
    }
    ProcessLine(events);
    if (failed()) return false;
  }
  if (line_.size() + data_.size() > max_event_bytes_) {
    error_ = "server-sent event larger than " + std::to_string(max_event_bytes_) + " bytes";
    return false;
  }
  return true;
}

void SseParser::ProcessLine(std::vector<std::string>& events) {
  std::string_view line = line_;
  if (line.empty()) {
    if (has_data_) {
      data_.pop_back();  // the '\n' after the last data line
      events.push_back(std::move(data_));
      data_.clear();
      has_data_ = false;
    }
    return;
  }
  if (line[0] != ':') {
    const size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    if (field == "data") {
      std::string_view value =
          colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
      if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
      if (data_.size() + value.size() + 1 > max_event_bytes_) {
        error_ = "server-sent event larger than " + std::to_string(max_event_bytes_) + " bytes";
      } else {
        data_.append(value);
        data_.push_back('\n');
        has_data_ = true;
      }
    }
  }
  line_.clear();
}

}  // namespace ppsearch::loadgen
