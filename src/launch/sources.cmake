# Sources of src/launch/; CMakeLists.txt includes this file. Every .cc under src/
# other than *_test.cc must be in one list, or configure fails.
list(APPEND PPSEARCH_LIB_SOURCES
  src/launch/launcher.cc
  src/launch/local_launcher.cc
  src/launch/net.cc
  src/launch/process.cc
  src/launch/server_record.cc
  src/launch/slurm_launcher.cc
  src/launch/ssh_failure.cc
  src/launch/ssh_launcher.cc
  src/launch/sudo.cc)
# The in-memory launcher that the engines' lifecycle tests script.
list(APPEND PPSEARCH_TEST_SUPPORT_SOURCES
  src/launch/fake_launcher_testing.cc)
