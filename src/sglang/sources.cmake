# Sources of src/sglang/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/sglang/commands.cc
  src/sglang/deployment_servers.cc
  src/sglang/host_check.cc
  src/sglang/node_gpus.cc
  src/sglang/nsys_profile.cc
  src/sglang/server_group.cc
  src/sglang/sglang_engine.cc)
