#include "tools/loaders/alibaba_openb.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "models/yaml_reader.hpp"

namespace capsim {

namespace {

const std::vector<std::string>& node_columns() {
  static const std::vector<std::string> k = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
  return k;
}
const std::vector<std::string>& pod_columns() {
  static const std::vector<std::string> k = {
      "name", "cpu_milli", "memory_mib",    "num_gpu",       "gpu_milli",     "gpu_spec",
      "qos",  "pod_phase", "creation_time", "deletion_time", "scheduled_time"};
  return k;
}
// The five columns every pod list has (the multigpu files have only these).
constexpr std::size_t kRequiredPodColumns = 5;

void check_header(const CsvFile& f, const std::vector<std::string>& known, std::size_t required,
                  const char* what) {
  for (const std::string& h : f.header()) {
    if (std::find(known.begin(), known.end(), h) == known.end()) {
      f.fail_header(fmt::format("unknown column '{}' in an openb {}{}; its columns are {}", h, what,
                                did_you_mean(h, known), fmt::join(known, ", ")));
    }
  }
  for (std::size_t i = 0; i < required; ++i) {
    if (!f.has_column(known[i])) {
      f.fail_header(
          fmt::format("missing column '{}' (an openb {} has {})", known[i], what,
                      fmt::join(known.begin(), known.begin() + static_cast<long>(required), ", ")));
    }
  }
}

std::int64_t whole(const CsvFile& f, const CsvRow& row, std::string_view column, std::int64_t min,
                   std::int64_t max) {
  const std::string& v = f.field(row, column);
  std::int64_t n = 0;
  const char* end = v.data() + v.size();
  auto [p, ec] = std::from_chars(v.data(), end, n);
  if (v.empty()) f.fail(row, column, "a whole number is required");
  if (ec != std::errc() || p != end)
    f.fail(row, column, fmt::format("'{}' is not a whole number", v));
  if (n < min || n > max) {
    f.fail(row, column,
           fmt::format("{} is out of range: it must be between {} and {}", n, min, max));
  }
  return n;
}

std::optional<std::int64_t> optional_time(const CsvFile& f, const CsvRow& row,
                                          std::string_view column) {
  if (!f.has_column(column) || f.field(row, column).empty()) return std::nullopt;
  return whole(f, row, column, 0, std::numeric_limits<std::int64_t>::max() / 1'000'000);
}

void check_model(const CsvFile& f, const CsvRow& row, std::string_view column,
                 const std::string& name, const WorldBuilder* b) {
  if (b != nullptr) (void)b->gpu_model(name, f.where(row, column));
}

}  // namespace

bool is_openb_node_list(const CsvFile& f) {
  return f.has_column("sn") && f.has_column("model");
}

bool is_openb_pod_list(const CsvFile& f) {
  return f.has_column("name") && f.has_column("num_gpu") && f.has_column("gpu_milli");
}

std::vector<OpenbNode> read_openb_nodes(const CsvFile& f, const WorldBuilder* b) {
  check_header(f, node_columns(), node_columns().size(), "node list");
  std::vector<OpenbNode> out;
  out.reserve(f.rows().size());
  for (const CsvRow& row : f.rows()) {
    OpenbNode n;
    n.line = row.line;
    n.name = f.field(row, "sn");
    if (n.name.empty()) f.fail(row, "sn", "every node needs a name");
    n.cpu_milli = whole(f, row, "cpu_milli", 0, std::int64_t{1} << 40);
    n.memory_mib = whole(f, row, "memory_mib", 0, std::int64_t{1} << 32);
    n.gpus = static_cast<std::int32_t>(whole(f, row, "gpu", 0, 64));
    n.model = f.field(row, "model");
    if (n.gpus > 0 && n.model.empty())
      f.fail(row, "model", fmt::format("the node has {} GPUs but no GPU model", n.gpus));
    if (!n.model.empty()) check_model(f, row, "model", n.model, b);
    out.push_back(std::move(n));
  }
  return out;
}

std::vector<OpenbPod> read_openb_pods(const CsvFile& f, const WorldBuilder* b) {
  check_header(f, pod_columns(), kRequiredPodColumns, "pod list");
  std::vector<OpenbPod> out;
  out.reserve(f.rows().size());
  for (const CsvRow& row : f.rows()) {
    OpenbPod p;
    p.line = row.line;
    p.name = f.field(row, "name");
    if (p.name.empty()) f.fail(row, "name", "every pod needs a name");
    p.cpu_milli = whole(f, row, "cpu_milli", 0, std::int64_t{1} << 40);
    p.memory_mib = whole(f, row, "memory_mib", 0, std::int64_t{1} << 32);
    p.num_gpu = static_cast<std::int32_t>(whole(f, row, "num_gpu", 0, 64));
    p.gpu_milli = static_cast<std::int32_t>(whole(f, row, "gpu_milli", 0, 1000));
    // num_gpu and gpu_milli must describe one of: no GPU, a share of one GPU, whole GPUs.
    if (p.num_gpu == 0 && p.gpu_milli != 0) {
      f.fail(row, "gpu_milli",
             fmt::format("{} milli of a GPU but num_gpu is 0 (a GPU share has num_gpu 1)",
                         p.gpu_milli));
    }
    if (p.num_gpu > 0 && p.gpu_milli == 0) {
      f.fail(row, "gpu_milli",
             fmt::format("num_gpu is {} but gpu_milli is 0 (whole GPUs have gpu_milli 1000)",
                         p.num_gpu));
    }
    if (p.num_gpu > 1 && p.gpu_milli != 1000) {
      f.fail(row, "gpu_milli",
             fmt::format("{} GPUs of {} milli each: a share of a GPU cannot span GPUs (num_gpu "
                         "> 1 needs gpu_milli 1000)",
                         p.num_gpu, p.gpu_milli));
    }
    if (f.has_column("gpu_spec")) {
      const std::string& spec = f.field(row, "gpu_spec");
      if (!spec.empty()) {
        std::size_t start = 0;
        for (;;) {
          const std::size_t at = spec.find('|', start);
          std::string name = spec.substr(start, at == std::string::npos ? at : at - start);
          if (name.empty()) f.fail(row, "gpu_spec", "an empty model name in a '|'-separated list");
          check_model(f, row, "gpu_spec", name, b);
          p.gpu_spec.push_back(std::move(name));
          if (at == std::string::npos) break;
          start = at + 1;
        }
        if (p.num_gpu == 0) {
          f.fail(row, "gpu_spec", "a pod without GPUs lists allowed GPU models");
        }
      }
    }
    if (f.has_column("qos")) p.qos = f.field(row, "qos");
    if (f.has_column("pod_phase")) {
      p.phase = f.field(row, "pod_phase");
      static const std::vector<std::string> phases = {"Running", "Failed", "Pending", "Succeeded"};
      if (!p.phase.empty() && std::find(phases.begin(), phases.end(), p.phase) == phases.end()) {
        f.fail(row, "pod_phase",
               fmt::format("unknown pod phase '{}'{}; the trace's phases are {}", p.phase,
                           did_you_mean(p.phase, phases), fmt::join(phases, ", ")));
      }
    }
    p.creation = optional_time(f, row, "creation_time");
    p.deletion = optional_time(f, row, "deletion_time");
    p.scheduled = optional_time(f, row, "scheduled_time");
    if (p.creation && p.deletion && *p.deletion < *p.creation) {
      f.fail(
          row, "deletion_time",
          fmt::format("deleted at {} s, before it was created ({} s)", *p.deletion, *p.creation));
    }
    if (p.scheduled && p.deletion && *p.deletion < *p.scheduled) {
      f.fail(row, "deletion_time",
             fmt::format("deleted at {} s, before it was scheduled ({} s)", *p.deletion,
                         *p.scheduled));
    }
    if (p.creation && !p.deletion) {
      f.fail(row, "deletion_time", "a pod with a creation time needs a deletion time");
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::size_t load_openb_nodes(FileSource& files, const std::string& path, WorldBuilder& b,
                             const OpenbNodeOptions& opt) {
  const CsvFile f = files.csv(path);
  const std::vector<OpenbNode> nodes = read_openb_nodes(f, &b);
  for (const OpenbNode& n : nodes) {
    const InputLocation where{f.name(), n.line, 0, "column sn"};
    NodeSpec spec;
    spec.name = n.name;
    spec.pool = n.gpus > 0 ? n.model : "cpu";
    spec.capacity[kCpu] = n.cpu_milli;
    spec.capacity[kMemory] = n.memory_mib * 1024 * 1024;
    spec.capacity[kPods] = opt.pods;
    spec.allocatable = spec.capacity;
    const GpuModel* model = n.gpus > 0 ? &b.gpu_model(n.model, where) : nullptr;
    b.add_node(std::move(spec), model, n.gpus, std::nullopt, where);
  }
  return nodes.size();
}

std::size_t load_openb_pods(FileSource& files, const std::string& path, WorldBuilder& b,
                            const OpenbPodOptions& opt) {
  const CsvFile f = files.csv(path);
  const std::vector<OpenbPod> pods = read_openb_pods(f, &b);
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  for (const OpenbPod& p : pods) {
    if (p.creation) first = std::min(first, *p.creation);
  }
  for (const OpenbPod& p : pods) {
    const InputLocation where{f.name(), p.line, 0, "column name"};
    PodSpec s;
    s.name = p.name;
    s.namespace_ = opt.namespace_;
    s.requests.set(kCpu, p.cpu_milli);
    s.requests.set(kMemory, p.memory_mib * 1024 * 1024);
    if (p.num_gpu > 0 && !p.is_share()) s.requests.set(kNvidiaGpu, p.num_gpu);
    if (p.is_share()) s.gpu_milli = p.gpu_milli;
    for (const std::string& m : p.gpu_spec)
      s.gpu_models.push_back(b.use_gpu_model(b.gpu_model(m, where)));
    s.queue = p.qos.empty() ? "default" : p.qos;
    if (p.creation) {
      s.arrival = (*p.creation - first) * kSecond;
      const std::int64_t from = p.scheduled ? *p.scheduled : *p.creation;
      s.duration = (*p.deletion - from) * kSecond;
    } else {
      s.arrival = 0;
      s.duration = kEndOfTime;
    }
    s.fails = p.phase == "Failed";
    b.add_pod(std::move(s), where);
  }
  return pods.size();
}

}  // namespace capsim
