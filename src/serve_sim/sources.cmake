# Sources of src/serve_sim/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/serve_sim/api_json.cc
  src/serve_sim/api_key.cc
  src/serve_sim/connection_guard.cc
  src/serve_sim/deployment.cc
  src/serve_sim/fault_plan.cc
  src/serve_sim/gpu_registry.cc
  src/serve_sim/http_fetch.cc
  src/serve_sim/http_front.cc
  src/serve_sim/http_routes.cc
  src/serve_sim/node_group.cc
  src/serve_sim/pd_router.cc
  src/serve_sim/pd_routes.cc
  src/serve_sim/realtime_engine.cc
  src/serve_sim/server_args.cc
  src/serve_sim/server_log.cc
  src/serve_sim/sim_server.cc
  src/serve_sim/stream_pump.cc)
list(APPEND PPSEARCH_BENCH_SOURCES
  src/serve_sim/serve_sim_bench.cc)
