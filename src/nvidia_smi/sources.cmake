# Sources of src/nvidia_smi/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/nvidia_smi/gpu_memory.cc)
# snapshot_testing.cc is used only by tests (serve-sim e2e); runs query GPUs
# through sglang/node_gpus.
list(APPEND PPSEARCH_TEST_SUPPORT_SOURCES
  src/nvidia_smi/snapshot_testing.cc)
