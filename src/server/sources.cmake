# Sources of src/server/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/server/api.cc
  src/server/api_key.cc
  src/server/connection_guard.cc
  src/server/deployment.cc
  src/server/fault_plan.cc
  src/server/gpu_registry.cc
  src/server/http_front.cc
  src/server/http_routes.cc
  src/server/node_group.cc
  src/server/realtime_engine.cc
  src/server/server_args.cc
  src/server/sglang_log.cc
  src/server/sim_server.cc
  src/server/stream_pump.cc)
list(APPEND PPSEARCH_BENCH_SOURCES
  src/server/serve_sim_bench.cc)
