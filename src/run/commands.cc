#include "run/commands.h"

namespace ppsearch::run {
namespace {

// Shell-quotes a word when it holds anything but safe characters.
std::string Quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789-_./:=,@%+") == std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string HostAddress(const spec::ClusterSpec& cluster, int node) {
  const auto& h = cluster.hosts[node];
  return h.address.empty() ? h.name : h.address;
}

}  // namespace

std::string LaunchCommand(const spec::Spec& spec, const spec::LayoutSpec& layout, int node) {
  const int nnodes = static_cast<int>(spec.cluster.hosts.size());
  std::string cmd;
  if (!spec.engine.image.empty()) {
    cmd = "docker run --rm --gpus all --network host --ipc host --shm-size 32g";
    for (const auto& [k, v] : spec.engine.env) cmd += " -e " + Quote(k + "=" + v);
    cmd += " -v " + Quote(spec.engine.model_path + ":" + spec.engine.model_path) + " " +
           Quote(spec.engine.image) + " ";
  } else {
    for (const auto& [k, v] : spec.engine.env) cmd += Quote(k + "=" + v) + " ";
  }
  cmd += "python3 -m sglang.launch_server --model-path " + Quote(spec.engine.model_path) +
         " --tp-size " + std::to_string(layout.tp) + " --pp-size " + std::to_string(layout.pp) +
         " --ep-size " + std::to_string(layout.ep);
  if (nnodes > 1) {
    cmd += " --nnodes " + std::to_string(nnodes) + " --node-rank " + std::to_string(node) +
           " --dist-init-addr " +
           Quote(HostAddress(spec.cluster, 0) + ":" + std::to_string(kDistInitPort));
  }
  cmd += " --host 0.0.0.0 --port " + std::to_string(kServerPort);
  for (const auto& [flag, value] : spec.engine.args) {
    if (value.kind == spec::ArgValue::Kind::kBool) {
      if (value.bool_value) cmd += " --" + flag;
    } else {
      cmd += " --" + flag + " " + Quote(value.text);
    }
  }
  return cmd;
}

std::string BenchCommand(const spec::Spec& spec, const evidence::SampleId& s, uint64_t seed) {
  const auto& w = spec.workload;
  std::string cmd = "ppsearch bench --url http://" + HostAddress(spec.cluster, 0) + ":" +
                    std::to_string(kServerPort) + " --concurrency " +
                    std::to_string(s.concurrency) + " --requests " + std::to_string(w.requests) +
                    " --input-tokens " + std::to_string(w.input_tokens) + " --output-tokens " +
                    std::to_string(w.output_tokens) + " --seed " + std::to_string(seed);
  if (w.warmup_requests > 0) cmd += " --warmup " + std::to_string(w.warmup_requests);
  if (w.request_rate > 0) cmd += " --request-rate " + std::to_string(w.request_rate);
  return cmd + " --flush-cache";
}

std::vector<std::string> SampleCommands(const spec::Spec& spec, const evidence::SampleId& sample,
                                        uint64_t seed) {
  std::vector<std::string> out;
  for (size_t n = 0; n < spec.cluster.hosts.size(); ++n)
    out.push_back(spec.cluster.hosts[n].name + ": " +
                  LaunchCommand(spec, sample.layout, static_cast<int>(n)));
  out.push_back(spec.cluster.hosts[0].name + ": " + BenchCommand(spec, sample, seed));
  return out;
}

uint64_t SampleSeed(const spec::Spec& spec, const evidence::SampleId& sample) {
  return spec.workload.seed + 1000003ull * static_cast<uint64_t>(sample.repeat - 1);
}

}  // namespace ppsearch::run
