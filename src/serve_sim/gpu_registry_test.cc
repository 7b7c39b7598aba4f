#include "serve_sim/gpu_registry.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "launch/process.h"
#include "util/files.h"

namespace ppsearch::serve_sim {
namespace {

GpuRegistration Reg(int pid, std::vector<double> used) {
  GpuRegistration r;
  r.pid = pid;
  r.process_name = "ppsearch serve-sim";
  for (size_t i = 0; i < used.size(); ++i) {
    nvidia_smi::GpuMemory g;
    g.index = static_cast<int>(i);
    g.uuid = "GPU-x-" + std::to_string(i);
    g.name = "NVIDIA H20";
    g.used_mib = used[i];
    g.total_mib = 97871;
    r.gpus.push_back(g);
  }
  return r;
}

SmiQuery Query(std::vector<std::string> args) {
  auto q = ParseSmiArgs(args);
  EXPECT_TRUE(q.ok()) << q.error().message;
  return *q;
}

TEST(GpuRegistrationTest, RoundTripsThroughItsJson) {
  GpuRegistration r = Reg(4242, {70000.4, 69000});
  r.node_rank = 2;
  r.held_until_unix_s = 1700000000.5;
  auto back = ParseRegistration(FormatRegistration(r), "f.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->pid, 4242);
  EXPECT_EQ(back->process_name, "ppsearch serve-sim");
  EXPECT_EQ(back->node_rank, 2);
  EXPECT_DOUBLE_EQ(back->held_until_unix_s, 1700000000.5);
  ASSERT_EQ(back->gpus.size(), 2u);
  EXPECT_EQ(back->gpus[1].uuid, "GPU-x-1");
  EXPECT_DOUBLE_EQ(*back->gpus[0].used_mib, 70000.4);
  EXPECT_EQ(ParseRegistration("[]", "f.json").error().message, "f.json: not a JSON object");
  EXPECT_EQ(ParseRegistration(R"({"pid": 1})", "f.json").error().message,
            "f.json: \"gpus\" must be a list");
  EXPECT_EQ(ParseRegistration(R"({"pid": 1, "gpus": [{"index": 5000, "used_mib": 1}]})", "f.json")
                .error()
                .message,
            "f.json: GPU index 5000 is not between 0 and 1023");
}

TEST(GpuRegistrationTest, LiveWhileThePidLivesOrUntilHeld) {
  GpuRegistration r = Reg(10, {1});
  auto alive = [](int, uint64_t) { return true; };
  auto dead = [](int, uint64_t) { return false; };
  EXPECT_TRUE(IsLive(r, 100, alive));
  EXPECT_FALSE(IsLive(r, 100, dead));
  r.held_until_unix_s = 150;
  EXPECT_TRUE(IsLive(r, 100, dead));
  EXPECT_FALSE(IsLive(r, 150, dead));
  EXPECT_TRUE(PidAlive(::getpid()));
  EXPECT_FALSE(PidAlive(0));
}

// pid_max is often 32,768 and serve-sim runs a thousand threads: a server
// killed without removing its file soon has its pid given to a thread of
// another, and /proc answers for thread ids. Only the same start time is the
// same process.
TEST(GpuRegistrationTest, APidGivenToALaterProcessOrThreadIsNotTheRegisteredOne) {
  const uint64_t mine = *launch::ProcessStartTicks(::getpid());
  EXPECT_TRUE(PidAlive(::getpid(), mine));
  EXPECT_FALSE(PidAlive(::getpid(), mine + 1));
  // A thread's id reaches /proc/<tid>/stat like a pid, with the thread's start.
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  std::thread t([&] {
    tid = static_cast<pid_t>(::syscall(SYS_gettid));
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (tid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(PidAlive(tid, 0)) << "a thread id looks alive without the start time";
  EXPECT_FALSE(PidAlive(tid, mine)) << "the thread started after the registered process";
  done = true;
  t.join();

  GpuRegistration r = Reg(::getpid(), {1});
  r.start_ticks = mine + 7;
  EXPECT_FALSE(IsLive(r, 100, PidAlive));
  r.start_ticks = mine;
  EXPECT_TRUE(IsLive(r, 100, PidAlive));
  auto back = ParseRegistration(FormatRegistration(r), "f.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->start_ticks, mine);
  EXPECT_EQ(
      ParseRegistration(R"({"pid": 1, "start_ticks": -4, "gpus": []})", "f.json").error().message,
      "f.json: \"start_ticks\" must be a non-negative integer");
}

TEST(SmiQueryTest, GpuQuerySumsLiveRegistrations) {
  SmiGpus gpus;
  gpus.count = 3;
  gpus.total_mib = 97871;
  gpus.name = "NVIDIA H20";
  gpus.uuid_seed = "/tmp/x";
  const SmiQuery q = Query(
      {"--query-gpu=index,uuid,name,memory.used,memory.total", "--format=csv,noheader,nounits"});
  const std::string out = AnswerSmiQuery(q, gpus, {Reg(1, {100, 200}), Reg(2, {1000})});
  const std::string u2 = SimGpuUuid("/tmp/x", 2);
  EXPECT_EQ(out, "0, GPU-x-0, NVIDIA H20, 1100, 97871\n1, GPU-x-1, NVIDIA H20, 200, 97871\n2, " +
                     u2 + ", NVIDIA H20, 0, 97871\n");
  // Parsed back by the snapshot parser as nvidia-smi's output is.
  auto parsed = nvidia_smi::ParseGpuMemoryCsv(out, "smi-sim");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->size(), 3u);
  EXPECT_NE(SimGpuUuid("/tmp/x", 0), SimGpuUuid("/tmp/x", 1));
  EXPECT_EQ(u2.size(), std::string("GPU-5151a000-0000-4000-8000-000000000000").size());
}

// serve-sim registers its hardware profile's GPUs (an H200 here): smi-sim
// answers with the registration's name, total and uuid, not its own
// defaults, and sums the memory used without capping it at the total, so
// the run's evidence check sees a GPU holding more than it has.
TEST(SmiQueryTest, ARegisteredGpuIsListedAsRegisteredAndItsUseIsNotCapped) {
  SmiGpus gpus;  // the defaults: 8 x NVIDIA RTX 6000D, 85651 MiB
  gpus.uuid_seed = "/tmp/x";
  GpuRegistration h200 = Reg(4242, {135419.6, 135419.6});
  for (auto& g : h200.gpus) {
    g.name = "NVIDIA H200";
    g.total_mib = 143771;
  }
  const SmiQuery q = Query({"--query-gpu=index,uuid,name,memory.used,memory.total,memory.free",
                            "--format=csv,noheader,nounits"});
  const std::string out = AnswerSmiQuery(q, gpus, {h200});
  const std::string line_2 =
      "2, " + SimGpuUuid("/tmp/x", 2) + ", NVIDIA RTX 6000D, 0, 85651, 85651";
  EXPECT_EQ(out.substr(0, out.find('\n', out.find('\n', out.find('\n') + 1) + 1) + 1),
            "0, GPU-x-0, NVIDIA H200, 135420, 143771, 8351\n"
            "1, GPU-x-1, NVIDIA H200, 135420, 143771, 8351\n" +
                line_2 + "\n")
      << out;
  const SmiQuery apps = Query(
      {"--query-compute-apps=pid,used_memory,gpu_uuid,gpu_name", "--format=csv,noheader,nounits"});
  EXPECT_EQ(AnswerSmiQuery(apps, gpus, {h200}),
            "4242, 135420, GPU-x-0, NVIDIA H200\n4242, 135420, GPU-x-1, NVIDIA H200\n");

  // Memory a dead server left held beside a new server's: more than the GPU has.
  GpuRegistration leaked = h200;
  leaked.pid = 4000;
  const std::string both = AnswerSmiQuery(q, gpus, {leaked, h200});
  EXPECT_EQ(both.substr(0, both.find('\n')), "0, GPU-x-0, NVIDIA H200, 270839, 143771, 0");
  // The snapshot a run takes (nvidia_smi::kGpuQueryFields) keeps the excess.
  const SmiQuery snapshot = Query(
      {std::string("--query-gpu=") + nvidia_smi::kGpuQueryFields, "--format=csv,noheader,nounits"});
  auto parsed = nvidia_smi::ParseGpuMemoryCsv(AnswerSmiQuery(snapshot, gpus, {leaked, h200}));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_GT(*(*parsed)[0].used_mib, *(*parsed)[0].total_mib);

  // A registration on an index beyond --gpus is listed, not hidden.
  GpuRegistration far = Reg(7, {});
  nvidia_smi::GpuMemory g9;
  g9.index = 9;
  g9.uuid = "GPU-x-9";
  g9.used_mib = 5;
  far.gpus = {g9};
  const std::string ten = AnswerSmiQuery(
      Query({"--query-gpu=index,uuid,memory.used,count", "--format=csv,noheader,nounits"}), gpus,
      {far});
  EXPECT_EQ(ten.substr(ten.rfind("\n9, ") + 1), "9, GPU-x-9, 5, 10\n") << ten;
}

// A state directory's GPUs have one uuid however the directory is named, so
// a GPU's uuid is the same with or without a registration describing it.
TEST(SmiQueryTest, UuidsAreStablePerStateDirectory) {
  const std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(GpuUuidSeed("state/n0/"), cwd + "/state/n0");
  EXPECT_EQ(GpuUuidSeed(cwd + "/state/./n0"), cwd + "/state/n0");
  EXPECT_EQ(SimGpuUuid(GpuUuidSeed("d"), 3), SimGpuUuid(GpuUuidSeed(cwd + "/d/"), 3));
  EXPECT_NE(SimGpuUuid(GpuUuidSeed("d"), 3), SimGpuUuid(GpuUuidSeed("e"), 3));
}

TEST(SmiQueryTest, AnswersTheDriverVersion) {
  SmiGpus gpus;
  gpus.count = 1;
  gpus.driver_version = "580.65.06";
  const SmiQuery q = Query({"--query-gpu=index,driver_version", "--format=csv,noheader"});
  EXPECT_EQ(AnswerSmiQuery(q, gpus, {}), "0, 580.65.06\n");
}

TEST(SmiQueryTest, HeaderUnitsAndFieldOrder) {
  SmiGpus gpus;
  gpus.count = 1;
  const SmiQuery q = Query({"--query-gpu=memory.total,index", "--format=csv"});
  EXPECT_EQ(AnswerSmiQuery(q, gpus, {}), "memory.total [MiB], index\n85651 MiB, 0\n");
}

TEST(SmiQueryTest, ComputeAppsOneLinePerProcessAndGpu) {
  SmiGpus gpus;
  gpus.count = 2;
  gpus.uuid_seed = "d";
  const SmiQuery q = Query({"--query-compute-apps=gpu_uuid,pid,process_name,used_memory",
                            "--format=csv,noheader,nounits"});
  const std::string out = AnswerSmiQuery(q, gpus, {Reg(7, {100, 0}), Reg(9, {50, 60})});
  EXPECT_EQ(out,
            "GPU-x-0, 7, ppsearch serve-sim, 100\nGPU-x-0, 9, ppsearch serve-sim, 50\n"
            "GPU-x-1, 9, ppsearch serve-sim, 60\n");
  EXPECT_EQ(AnswerSmiQuery(q, gpus, {}), "");
}

TEST(SmiQueryTest, UnsupportedFieldsReadLikeNvidiaSmi) {
  EXPECT_EQ(ParseSmiArgs({"--query-gpu=index,power.draw", "--format=csv"}).error().message,
            "Field \"power.draw\" is not a valid field to query.\n\nSee 'nvidia-smi "
            "--help-query-gpu' for more information.");
  EXPECT_FALSE(ParseSmiArgs({"--query-gpu=index"}).ok());
  EXPECT_FALSE(ParseSmiArgs({"--query-gpu=index", "--format=json"}).ok());
  EXPECT_FALSE(ParseSmiArgs({"-L"}).ok());
}

TEST(GpuRegistryTest, RegisterHoldAndRemoveAFile) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("gpu_registry_test_" + std::to_string(::getpid())))
          .string();
  std::filesystem::create_directories(dir);
  GpuRegistry reg(dir, ::getpid());
  ASSERT_TRUE(reg.Register(Reg(::getpid(), {500})).ok());
  auto live = ReadLiveRegistrations(dir, 0);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].pid, ::getpid());
  ASSERT_TRUE(reg.Release(1e12).ok());  // held: the file stays
  auto held = ParseRegistration(*ReadFile(reg.path()), reg.path());
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->held_until_unix_s, 1e12);
  ASSERT_TRUE(reg.Release(0).ok());
  EXPECT_FALSE(std::filesystem::exists(reg.path()));
  // A dead pid's file is ignored.
  ASSERT_TRUE(WriteFileAtomic(dir + "/serve-sim-1.json", FormatRegistration(Reg(-5, {1}))).ok());
  EXPECT_TRUE(ReadLiveRegistrations(dir, 0).empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ppsearch::serve_sim
