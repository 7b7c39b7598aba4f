# Sources of src/bench/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/bench/bench_client.cc
  src/bench/bench_report.cc
  src/bench/body_prefetch.cc
  src/bench/load_loop.cc
  src/bench/request_builder.cc
  src/bench/routing.cc
  src/bench/sse_parser.cc
  src/bench/stream_decoder.cc)
# The scripted HTTP server that the client tests and benchmarks talk to.
list(APPEND PPSEARCH_TEST_SUPPORT_SOURCES
  src/bench/scripted_server_testing.cc)
list(APPEND PPSEARCH_BENCH_SOURCES
  src/bench/bench_client_bench.cc)
