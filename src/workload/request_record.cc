#include "workload/request_record.h"

namespace ppsearch::workload {

const char* RequestStatusName(RequestStatus status) {
  switch (status) {
    case RequestStatus::kOk:
      return "ok";
    case RequestStatus::kHttpError:
      return "http_error";
    case RequestStatus::kTimeout:
      return "timeout";
    case RequestStatus::kStreamError:
      return "stream_error";
    case RequestStatus::kNotSent:
      return "not_sent";
  }
  return "unknown";
}

}  // namespace ppsearch::workload
