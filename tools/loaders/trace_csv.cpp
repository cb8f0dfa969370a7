#include "tools/loaders/trace_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "models/yaml_reader.hpp"
#include "sim/quantity.hpp"
#include "tools/loaders/csv_reader.hpp"
#include "tools/loaders/k8s_fields.hpp"

namespace capsim {

namespace {

constexpr const char* kJobLabel = "capsim.io/job";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = s.find(sep, start);
    out.push_back(trim(s.substr(start, at == std::string_view::npos ? at : at - start)));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

bool parse_whole(std::string_view s, std::int64_t& out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && !s.empty();
}

bool parse_real(std::string_view s, double& out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && !s.empty() && std::isfinite(out);
}

// Scales a time, rounding to the nearest microsecond; false when out of range.
bool scale_time(SimDuration t, double scale, SimDuration& out) {
  if (scale == 1.0) {
    out = t;
    return true;
  }
  const double v = std::round(static_cast<double>(t) * scale);
  if (!(v >= 0) || v > 9.0e18) return false;
  out = static_cast<SimDuration>(v);
  return true;
}

class RowReader {
 public:
  RowReader(const CsvFile& f, const CsvRow& row) : f_(f), row_(row) {}

  // The trimmed cell of `column`, "" when the column is absent.
  std::string cell(std::string_view column) const {
    const auto c = f_.column(column);
    return c ? std::string(trim(row_.fields[*c])) : std::string();
  }
  [[noreturn]] void fail(std::string_view column, const std::string& message) const {
    f_.fail(row_, column, message);
  }
  InputLocation where(std::string_view column) const { return f_.where(row_, column); }

  SimDuration duration(std::string_view column) const {
    const std::string v = cell(column);
    if (v.empty()) fail(column, "a value is required (seconds, or a duration such as 1h30m)");
    auto d = parse_duration(v);
    if (!d) fail(column, d.error());
    return *d;
  }
  std::int64_t whole(std::string_view column, std::int64_t min, std::int64_t max,
                     const char* fraction_hint = "") const {
    const std::string v = cell(column);
    std::int64_t n = 0;
    if (!parse_whole(v, n)) {
      double d = 0;
      const bool fraction = parse_real(v, d);
      fail(column, fmt::format("'{}' is not a whole number{}", v, fraction ? fraction_hint : ""));
    }
    if (n < min || n > max) {
      fail(column, fmt::format("{} is out of range: it must be between {} and {}", n, min, max));
    }
    return n;
  }
  double real(std::string_view column, double min, double max) const {
    const std::string v = cell(column);
    double d = 0;
    if (!parse_real(v, d)) fail(column, fmt::format("'{}' is not a number", v));
    if (d < min || d > max) {
      fail(column, fmt::format("{} is out of range: it must be between {} and {}", v, min, max));
    }
    return d;
  }
  std::int64_t quantity(std::string_view column, std::string_view resource) const {
    auto q = resource_quantity(resource, cell(column));
    if (!q) fail(column, q.error());
    return *q;
  }

 private:
  const CsvFile& f_;
  const CsvRow& row_;
};

void check_header(const CsvFile& f) {
  const auto& known = capsim_trace_columns();
  for (const std::string& h : f.header()) {
    if (std::find(known.begin(), known.end(), h) == known.end()) {
      f.fail_header(fmt::format("unknown column '{}'{}; the trace columns are {}", h,
                                did_you_mean(h, known), fmt::join(known, ", ")));
    }
  }
  for (const char* required : {"pod", "submit", "duration"}) {
    if (!f.has_column(required)) {
      f.fail_header(
          fmt::format("missing required column '{}' (a trace needs pod, submit and "
                      "duration)",
                      required));
    }
  }
}

PodSpec read_row(const RowReader& r, WorldBuilder& b, const TraceOptions& opt) {
  PodSpec p;
  p.name = r.cell("pod");
  if (p.name.empty()) r.fail("pod", "every row needs a pod name");
  p.namespace_ = opt.namespace_;

  // Times: arrival = submit * time_scale + time_offset; duration * duration_scale.
  const SimDuration submit = r.duration("submit");
  SimDuration scaled = 0;
  if (!scale_time(submit, opt.time_scale, scaled) ||
      scaled > std::numeric_limits<SimDuration>::max() / 2) {
    r.fail("submit", "the scaled submit time is out of range");
  }
  p.arrival = scaled + opt.time_offset;
  if (p.arrival < 0) {
    r.fail("submit", fmt::format("submits at {}, before the start of the run once the time offset "
                                 "(-{}) is applied",
                                 format_duration(scaled), format_duration(-opt.time_offset)));
  }
  if (!scale_time(r.duration("duration"), opt.duration_scale, p.duration)) {
    r.fail("duration", "the scaled duration is out of range");
  }

  // Requests.
  if (!r.cell("cpu").empty()) p.requests.set(kCpu, r.quantity("cpu", "cpu"));
  if (!r.cell("memory").empty()) p.requests.set(kMemory, r.quantity("memory", "memory"));
  std::int64_t gpus = 0;
  if (!r.cell("gpu").empty()) {
    // The upper bound is the builder's ("65 GPUs in one pod is more than any node has").
    gpus = r.whole("gpu", 0, std::numeric_limits<std::int32_t>::max(),
                   "; for a share of one GPU use the gpu_milli column");
    p.requests.set(kNvidiaGpu, gpus);
  }
  if (!r.cell("gpu_milli").empty()) {
    p.gpu_milli = static_cast<std::int32_t>(r.whole("gpu_milli", 0, 999));
    if (p.gpu_milli > 0 && gpus > 0) {
      r.fail("gpu_milli",
             "a pod asks for whole GPUs (column gpu) or a share of one GPU "
             "(gpu_milli), not both");
    }
  }
  if (const std::string models = r.cell("gpu_model"); !models.empty()) {
    for (std::string_view name : split(models, '|')) {
      if (name.empty()) r.fail("gpu_model", "an empty model name in a '|'-separated list");
      const GpuModelId id = b.use_gpu_model(b.gpu_model(std::string(name), r.where("gpu_model")));
      if (std::find(p.gpu_models.begin(), p.gpu_models.end(), id) == p.gpu_models.end()) {
        p.gpu_models.push_back(id);
      }
    }
  }

  // Grouping and priority.
  p.queue = r.cell("queue");
  if (p.queue.empty()) p.queue = opt.default_queue.empty() ? "default" : opt.default_queue;
  if (const std::string job = r.cell("job"); !job.empty()) {
    if (auto problem = label_value_problem(job); !problem.empty()) {
      r.fail("job", fmt::format("'{}' cannot be a label value ({}): {}", job, kJobLabel, problem));
    }
    p.labels.set(b.sym(kJobLabel), b.sym(job));
    p.job_name = job;
  }
  p.priority_class = std::string(r.cell("priority_class"));

  // Actual use and outcome.
  if (!r.cell("gpu_util").empty()) p.gpu_util = r.real("gpu_util", 0.0, 1.0);
  if (!r.cell("gpu_sm_fraction").empty()) p.gpu_sm_fraction = r.real("gpu_sm_fraction", 0.001, 1.0);
  if (!r.cell("gpu_memory").empty()) p.gpu_memory_used = r.quantity("gpu_memory", "memory");
  if (const std::string status = r.cell("status"); !status.empty()) {
    if (status == "failed") {
      p.fails = true;
    } else if (status != "completed") {
      r.fail("status", fmt::format("unknown status '{}'{}; use completed or failed", status,
                                   did_you_mean(status, {"completed", "failed"})));
    }
  }
  if (const std::string sel = r.cell("node_selector"); !sel.empty()) {
    for (std::string_view pair : split(sel, ';')) {
      if (pair.empty()) continue;  // a trailing ';'
      const std::size_t eq = pair.find('=');
      if (eq == std::string_view::npos) {
        r.fail("node_selector",
               fmt::format("'{}' is not key=value (pairs are separated by ';')", pair));
      }
      const std::string_view key = trim(pair.substr(0, eq));
      const std::string_view value = trim(pair.substr(eq + 1));
      if (auto problem = label_key_problem(key); !problem.empty()) {
        r.fail("node_selector", fmt::format("invalid label key '{}': {}", key, problem));
      }
      if (auto problem = label_value_problem(value); !problem.empty()) {
        r.fail("node_selector",
               fmt::format("invalid value '{}' for label '{}': {}", value, key, problem));
      }
      p.node_selector.set(b.sym(std::string(key)), b.sym(std::string(value)));
    }
  }
  p.requeue_on_preemption = opt.requeue_on_preemption;
  return p;
}

std::size_t load_rows(const CsvFile& f, WorldBuilder& b, const TraceOptions& opt) {
  const InputLocation options_at{f.name(), 0, 0, "trace options"};
  if (!(opt.time_scale > 0) || !std::isfinite(opt.time_scale)) {
    throw InputError(InputErrorKind::kInvalid, options_at, "the time scale must be above 0");
  }
  if (!(opt.duration_scale > 0) || !std::isfinite(opt.duration_scale)) {
    throw InputError(InputErrorKind::kInvalid, options_at, "the duration scale must be above 0");
  }
  check_header(f);
  std::size_t added = 0;
  for (const CsvRow& row : f.rows()) {
    const RowReader r(f, row);
    PodSpec p = read_row(r, b, opt);
    b.add_pod(std::move(p), r.where("pod"));
    ++added;
  }
  return added;
}

constexpr CsvOptions kTraceCsv{'#', true};

}  // namespace

const std::vector<std::string>& capsim_trace_columns() {
  static const std::vector<std::string> k = {
      "pod",        "submit", "duration",       "cpu",
      "memory",     "gpu",    "gpu_milli",      "gpu_model",
      "queue",      "job",    "priority_class", "gpu_util",
      "gpu_memory", "status", "node_selector",  "gpu_sm_fraction"};
  return k;
}

std::size_t load_capsim_trace(FileSource& files, const std::string& path, WorldBuilder& b,
                              const TraceOptions& opt) {
  return load_rows(files.csv(path, kTraceCsv), b, opt);
}

std::size_t load_capsim_trace_text(const std::string& text, const std::string& name,
                                   WorldBuilder& b, const TraceOptions& opt) {
  return load_rows(CsvFile::parse(text, name, kTraceCsv), b, opt);
}

}  // namespace capsim
