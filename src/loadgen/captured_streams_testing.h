#pragma once
// Stream bodies in the exact shapes SGLang v0.5.x writes (orjson, compact):
// /generate yields b"data: " + dumps_json(out) + b"\n\n" per scheduler output
// and b"data: [DONE]\n\n"; /v1/completions yields text_completion chunks,
// a usage chunk with "choices": [] (stream_options.include_usage), then
// [DONE]. Shared by the parser, decoder and client tests.

namespace ppsearch::loadgen::testdata {

// 4 prompt tokens, 3 generated, cumulative text/output_ids (the default).
inline constexpr const char kNativeCumulative[] =
    "data: {\"text\":\" The\",\"output_ids\":[578],\"meta_info\":{\"id\":\"5b1f0c\","
    "\"finish_reason\":null,\"prompt_tokens\":4,\"weight_version\":\"default\","
    "\"total_retractions\":0,\"completion_tokens\":1,\"cached_tokens\":0}}\n\n"
    "data: {\"text\":\" The capital\",\"output_ids\":[578,6864],\"meta_info\":{\"id\":\"5b1f0c\","
    "\"finish_reason\":null,\"prompt_tokens\":4,\"weight_version\":\"default\","
    "\"total_retractions\":0,\"completion_tokens\":2,\"cached_tokens\":0}}\n\n"
    "data: {\"text\":\" The capital of\",\"output_ids\":[578,6864,315],\"meta_info\":{\"id\":"
    "\"5b1f0c\",\"finish_reason\":{\"type\":\"length\",\"length\":3},\"prompt_tokens\":4,"
    "\"weight_version\":\"default\",\"total_retractions\":0,\"completion_tokens\":3,"
    "\"cached_tokens\":0,\"e2e_latency\":0.0421}}\n\n"
    "data: [DONE]\n\n";

// --incremental-streaming-output: deltas; completion_tokens stays cumulative.
inline constexpr const char kNativeIncremental[] =
    "data: {\"text\":\" The\",\"output_ids\":[578],\"meta_info\":{\"id\":\"7a\","
    "\"finish_reason\":null,\"prompt_tokens\":4,\"completion_tokens\":1,\"cached_tokens\":0}}\n\n"
    "data: {\"text\":\" capital\",\"output_ids\":[6864],\"meta_info\":{\"id\":\"7a\","
    "\"finish_reason\":{\"type\":\"length\",\"length\":2},\"prompt_tokens\":4,"
    "\"completion_tokens\":2,\"cached_tokens\":0}}\n\n"
    "data: [DONE]\n\n";

// An OpenAI stream whose first chunk carries no text (must not count for TTFT).
inline constexpr const char kOpenAiCompletion[] =
    "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1732860000,\"model\":"
    "\"default\",\"choices\":[{\"index\":0,\"text\":\"\",\"logprobs\":null,\"finish_reason\":null,"
    "\"matched_stop\":null}],\"usage\":null}\n\n"
    "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1732860000,\"model\":"
    "\"default\",\"choices\":[{\"index\":0,\"text\":\" The\",\"logprobs\":null,\"finish_reason\":"
    "null,\"matched_stop\":null}],\"usage\":null}\n\n"
    "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1732860000,\"model\":"
    "\"default\",\"choices\":[{\"index\":0,\"text\":\" capital\",\"logprobs\":null,"
    "\"finish_reason\":\"length\",\"matched_stop\":null}],\"usage\":null}\n\n"
    "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1732860000,\"model\":"
    "\"default\",\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"total_tokens\":6,"
    "\"completion_tokens\":2,\"prompt_tokens_details\":null,\"reasoning_tokens\":0}}\n\n"
    "data: [DONE]\n\n";

// A mid-stream error (http_server.py's generate_request except-branch).
inline constexpr const char kNativeError[] =
    "data: {\"error\":{\"message\":\"The input (40000 tokens) is longer than the model's context "
    "length (32768 tokens).\",\"type\":\"invalid_request_error\",\"code\":400,\"retryable\":false}}"
    "\n\n"
    "data: [DONE]\n\n";

}  // namespace ppsearch::loadgen::testdata
