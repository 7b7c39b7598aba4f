# Sources of src/loadgen/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/loadgen/bench_client.cc
  src/loadgen/bench_report.cc
  src/loadgen/body_prefetch.cc
  src/loadgen/load_loop.cc
  src/loadgen/request_builder.cc
  src/loadgen/routing.cc
  src/loadgen/sse_parser.cc
  src/loadgen/stream_decoder.cc
  src/loadgen/url.cc)
# The scripted HTTP server that the client tests and benchmarks talk to.
list(APPEND PPSEARCH_TEST_SUPPORT_SOURCES
  src/loadgen/scripted_server_testing.cc)
list(APPEND PPSEARCH_BENCH_SOURCES
  src/loadgen/bench_client_bench.cc)
