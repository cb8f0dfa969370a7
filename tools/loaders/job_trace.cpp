#include "tools/loaders/job_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <ostream>

#include "sim/check.hpp"
#include "sim/quantity.hpp"
#include "tools/loaders/csv_reader.hpp"
#include "tools/loaders/input_kinds.hpp"
#include "tools/loaders/k8s_fields.hpp"

namespace capsim {

namespace {

constexpr const char* kJobLabel = "capsim.io/job";
constexpr const char* kPriorityClassLabel = "kueue.x-k8s.io/priority-class";
constexpr CsvOptions kCsv{'#', true};

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return std::string(s);
}

bool parse_int(std::string_view s, std::int64_t& out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && !s.empty();
}

// Days since 1970-01-01 of a proleptic Gregorian date (the civil-calendar arithmetic: shift the
// year to start in March so the leap day is last, then count 400-year eras of 146097 days).
std::int64_t days_from_civil(std::int64_t y, std::int64_t m, std::int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;                                   // [0, 399]
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;  // [0, 365]
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           // [0, 146096]
  return era * 146097 + doe - 719468;
}

// "YYYY-MM-DD HH:MM:SS" (or with 'T'), as seconds since the epoch; nullopt otherwise.
std::optional<std::int64_t> parse_datetime(std::string_view s) {
  if (s.size() < 19 || (s[10] != ' ' && s[10] != 'T') || s[4] != '-' || s[7] != '-' ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  std::int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (!parse_int(s.substr(0, 4), y) || !parse_int(s.substr(5, 2), mo) ||
      !parse_int(s.substr(8, 2), d) || !parse_int(s.substr(11, 2), h) ||
      !parse_int(s.substr(14, 2), mi) || !parse_int(s.substr(17, 2), se)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return std::nullopt;
  const std::string_view rest = s.substr(19);
  // A trailing time zone name (" PDT") is accepted and ignored: only differences matter.
  if (!rest.empty() && rest.front() != ' ' && rest.front() != '.') return std::nullopt;
  return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
}

// A time cell: a date-time, or a number of seconds up to 1e11 (3,000 years, the span of the
// dates a cell can hold), so that differences of cells in microseconds stay in range.
std::optional<std::int64_t> parse_time_cell(std::string_view s) {
  if (auto t = parse_datetime(s)) return t;
  double v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end || s.empty() || !std::isfinite(v)) return std::nullopt;
  if (std::fabs(v) > 1e11) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(v));
}

class Cells {
 public:
  Cells(const CsvFile& f, const CsvRow& row) : f_(f), row_(row) {}
  std::string get(std::string_view column) const {
    const auto c = f_.column(column);
    return c ? trim(row_.fields[*c]) : std::string();
  }
  [[noreturn]] void fail(std::string_view column, const std::string& message) const {
    f_.fail(row_, column, message);
  }
  InputLocation where(std::string_view column) const { return f_.where(row_, column); }
  std::int64_t whole(std::string_view column, std::int64_t dflt, std::int64_t min,
                     std::int64_t max) const {
    const std::string v = get(column);
    if (v.empty()) return dflt;
    std::int64_t n = 0;
    if (!parse_int(v, n)) fail(column, fmt::format("'{}' is not a whole number", v));
    if (n < min || n > max) fail(column, fmt::format("{} must be between {} and {}", n, min, max));
    return n;
  }
  SimDuration duration(std::string_view column) const {
    const std::string v = get(column);
    if (v.empty()) fail(column, "a value is required (seconds, or a duration such as 1h30m)");
    auto d = parse_duration(v);
    if (!d) fail(column, d.error());
    return *d;
  }
  std::int64_t quantity(std::string_view column, std::string_view resource) const {
    const std::string v = get(column);
    if (v.empty()) return 0;
    auto q = resource_quantity(resource, v);
    if (!q) fail(column, q.error());
    return *q;
  }

 private:
  const CsvFile& f_;
  const CsvRow& row_;
};

std::vector<std::string> split_bar(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = s.find('|', start);
    out.push_back(
        trim(std::string_view(s).substr(start, at == std::string::npos ? at : at - start)));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// --- capsim's job CSV ---------------------------------------------------------------------------

JobTraceRead read_capsim_jobs(const CsvFile& f) {
  const auto& known = job_trace_columns();
  for (const std::string& h : f.header()) {
    if (std::find(known.begin(), known.end(), h) == known.end()) {
      f.fail_header(fmt::format("unknown column '{}'{}; the job trace columns are {}", h,
                                did_you_mean(h, known), fmt::join(known, ", ")));
    }
  }
  for (const char* required : {"job", "submit", "duration"}) {
    if (!f.has_column(required)) {
      f.fail_header(
          fmt::format("missing required column '{}' (a job trace needs job, submit "
                      "and duration)",
                      required));
    }
  }
  JobTraceRead out;
  for (const CsvRow& row : f.rows()) {
    const Cells c(f, row);
    JobTraceRow r;
    r.where = c.where("job");
    r.job = c.get("job");
    if (r.job.empty()) c.fail("job", "every row needs a job name");
    r.submit = c.duration("submit");
    r.duration = c.duration("duration");
    r.gpus = c.whole("gpus", 0, 0, 1'000'000);
    r.nodes = static_cast<std::int32_t>(c.whole("nodes", 1, 1, 100'000));
    if (const std::string split = c.get("node_gpus"); !split.empty()) {
      for (const std::string& part : split_bar(split)) {
        std::int64_t n = 0;
        if (!parse_int(part, n) || n < 0) {
          c.fail("node_gpus", fmt::format("'{}' is not a whole number of GPUs", part));
        }
        r.gpus_per_node.push_back(n);
      }
      if (!c.get("nodes").empty() && static_cast<std::int32_t>(r.gpus_per_node.size()) != r.nodes) {
        c.fail("node_gpus", fmt::format("lists {} nodes but column nodes says {}",
                                        r.gpus_per_node.size(), r.nodes));
      }
      r.nodes = static_cast<std::int32_t>(r.gpus_per_node.size());
      std::int64_t sum = 0;
      for (std::int64_t g : r.gpus_per_node)
        sum += g;
      if (!c.get("gpus").empty() && sum != r.gpus) {
        c.fail("node_gpus", fmt::format("adds up to {} GPUs but column gpus says {}", sum, r.gpus));
      }
      r.gpus = sum;
    }
    if (r.gpus > 0 && r.gpus < r.nodes && r.gpus_per_node.empty()) {
      c.fail("nodes", fmt::format("{} GPUs cannot be spread over {} nodes (give node_gpus to "
                                  "say which nodes have none)",
                                  r.gpus, r.nodes));
    }
    r.user = c.get("user");
    r.vc = c.get("vc");
    r.queue = c.get("queue");
    if (const std::string s = c.get("status"); !s.empty()) {
      if (s == "failed" || s == "killed" || s == "cancelled") {
        r.failed = true;
      } else if (s != "completed") {
        c.fail("status",
               fmt::format("unknown status '{}'{}; use completed, failed, killed or "
                           "cancelled",
                           s, did_you_mean(s, {"completed", "failed", "killed", "cancelled"})));
      }
    }
    if (const std::string m = c.get("gpu_model"); !m.empty()) r.gpu_models = split_bar(m);
    r.cpu_milli = c.quantity("cpu", "cpu");
    r.memory = c.quantity("memory", "memory");
    r.priority_class = c.get("priority_class");
    r.workload_priority_class = c.get("workload_priority_class");
    if (const std::string u = c.get("gpu_util"); !u.empty()) {
      double v = 0;
      const char* end = u.data() + u.size();
      auto [p, ec] = std::from_chars(u.data(), end, v);
      if (ec != std::errc() || p != end || v < 0 || v > 1) {
        c.fail("gpu_util", fmt::format("'{}' is not a number between 0 and 1", u));
      }
      r.gpu_util = v;
    }
    r.gpu_memory = c.quantity("gpu_memory", "memory");
    out.rows.push_back(std::move(r));
  }
  return out;
}

// --- Helios (SenseTime) cluster_log.csv
// ------------------------------------------------------------

JobTraceRead read_helios(const CsvFile& f) {
  // Columns: job_id, user, vc, jobname, gpu_num, cpu_num, node_num, state, submit_time,
  // start_time, end_time, duration, queue. Times are "YYYY-MM-DD HH:MM:SS" (or seconds).
  for (const char* required : {"job_id", "gpu_num", "submit_time"}) {
    if (!f.has_column(required)) {
      f.fail_header(
          fmt::format("missing column '{}': a Helios job log (cluster_log.csv) has "
                      "job_id, user, vc, gpu_num, cpu_num, node_num, state, "
                      "submit_time, start_time, end_time, duration",
                      required));
    }
  }
  if (!f.has_column("duration") && !(f.has_column("start_time") && f.has_column("end_time"))) {
    f.fail_header("a Helios job log needs a duration column or start_time and end_time");
  }
  JobTraceRead out;
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> submits;
  for (const CsvRow& row : f.rows()) {
    const Cells c(f, row);
    JobTraceRow r;
    r.where = c.where("job_id");
    r.job = c.get("job_id");
    if (r.job.empty()) c.fail("job_id", "every job needs an id");
    const std::string state = c.get("state");
    if (state == "COMPLETED" || state.empty()) {
      r.failed = false;
    } else if (state == "FAILED" || state == "CANCELLED" || state == "TIMEOUT" ||
               state == "NODE_FAIL" || state == "OUT_OF_MEMORY" || state == "PREEMPTED") {
      r.failed = true;
    } else {
      ++out.skipped[fmt::format("state {}", state)];
      continue;
    }
    const auto submit = parse_time_cell(c.get("submit_time"));
    if (!submit) {
      c.fail("submit_time",
             fmt::format("'{}' is not a time (YYYY-MM-DD HH:MM:SS or seconds, up to 1e11)",
                         c.get("submit_time")));
    }
    std::optional<std::int64_t> run;
    if (const std::string d = c.get("duration"); !d.empty()) {
      run = parse_time_cell(d);
      if (!run || *run < 0) {
        c.fail("duration", fmt::format("'{}' is not a number of seconds (0 to 1e11)", d));
      }
    } else {
      const auto start = parse_time_cell(c.get("start_time"));
      const auto end = parse_time_cell(c.get("end_time"));
      if (!start || !end) {
        ++out.skipped["no duration, start or end time"];
        continue;
      }
      if (*end < *start) c.fail("end_time", "the job ends before it starts");
      run = *end - *start;
    }
    r.duration = *run * kSecond;
    r.gpus = c.whole("gpu_num", 0, 0, 1'000'000);
    r.nodes =
        static_cast<std::int32_t>(std::max<std::int64_t>(1, c.whole("node_num", 1, 0, 100'000)));
    if (r.gpus > 0 && r.gpus < r.nodes) r.nodes = static_cast<std::int32_t>(r.gpus);
    r.cpu_milli = c.whole("cpu_num", 0, 0, 10'000'000) * 1000;
    r.user = c.get("user");
    r.vc = c.get("vc");
    origin = std::min(origin, *submit);
    submits.push_back(*submit);
    out.rows.push_back(std::move(r));
  }
  for (std::size_t i = 0; i < out.rows.size(); ++i)
    out.rows[i].submit = (submits[i] - origin) * kSecond;
  return out;
}

// --- Philly (Microsoft) cluster_job_log -------------------------------------------------------

JobTraceRead read_philly(const YamlNode& doc) {
  // A JSON list of {status: Pass|Killed|Failed, vc, jobid, user, submitted_time,
  // attempts: [{start_time, end_time, detail: [{ip, gpus: [...]}]}]}.
  if (!doc.is_seq()) doc.fail("a Philly job log is a JSON list of jobs");
  JobTraceRead out;
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> submits;
  auto text = [](const std::optional<YamlNode>& n) -> std::string {
    if (!n || n->is_null() || !n->is_scalar()) return {};
    std::string s = n->str();
    return s == "None" || s == "null" ? std::string() : s;
  };
  for (const YamlNode& job : doc.seq()) {
    MapReader m = job.map();
    JobTraceRow r;
    const YamlNode id = m.req("jobid");
    r.job = id.str();
    r.where = id.where();
    r.user = text(m.opt("user"));
    r.vc = text(m.opt("vc"));
    const std::string status = text(m.opt("status"));
    if (status == "Pass") {
      r.failed = false;
    } else if (status == "Killed" || status == "Failed") {
      r.failed = true;
    } else {
      ++out.skipped[status.empty() ? std::string("no status") : "status " + status];
      continue;
    }
    const std::optional<YamlNode> submitted = m.opt("submitted_time");
    const auto submit = parse_datetime(text(submitted));
    if (!submit) {
      ++out.skipped["no submission time"];
      continue;
    }
    // The last attempt with both times is the run that produced the job's outcome.
    std::optional<YamlNode> last;
    std::int64_t start = 0, end = 0;
    if (auto attempts = m.opt("attempts")) {
      for (const YamlNode& a : attempts->seq()) {
        MapReader am = a.map();
        const auto s = parse_datetime(text(am.opt("start_time")));
        const auto e = parse_datetime(text(am.opt("end_time")));
        if (s && e && *e >= *s) {
          last = a;
          start = *s;
          end = *e;
        }
      }
    }
    if (!last) {
      ++out.skipped["no attempt with a start and an end time"];
      continue;
    }
    if (auto detail = last->map().opt("detail")) {
      for (const YamlNode& d : detail->seq()) {
        std::int64_t g = 0;
        if (auto gpus = d.map().opt("gpus")) g = static_cast<std::int64_t>(gpus->seq().size());
        r.gpus_per_node.push_back(g);
        r.gpus += g;
      }
    }
    if (r.gpus_per_node.empty()) {
      ++out.skipped["no placement detail (GPU count unknown)"];
      continue;
    }
    r.nodes = static_cast<std::int32_t>(r.gpus_per_node.size());
    r.duration = (end - start) * kSecond;
    origin = std::min(origin, *submit);
    submits.push_back(*submit);
    out.rows.push_back(std::move(r));
  }
  for (std::size_t i = 0; i < out.rows.size(); ++i)
    out.rows[i].submit = (submits[i] - origin) * kSecond;
  return out;
}

JobTraceRead read_any(const std::string& format, const std::string& text, const std::string& name) {
  const TraceFormat* f = loader_registry().trace(format);
  CAPSIM_CHECK(f != nullptr && f->read_jobs != nullptr,
               fmt::format("'{}' is not a job-log format of the loader registry", format));
  return f->read_jobs(text, name);
}

bool scale_time(SimDuration t, double scale, SimDuration& out) {
  const double v = std::round(static_cast<double>(t) * scale);
  if (!(v >= 0) || v > 9.0e18) return false;
  out = static_cast<SimDuration>(v);
  return true;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + "\"";
}

}  // namespace

JobTraceRead read_capsim_jobs_text(const std::string& text, const std::string& name) {
  return read_capsim_jobs(CsvFile::parse(text, name, kCsv));
}

JobTraceRead read_helios_text(const std::string& text, const std::string& name) {
  return read_helios(CsvFile::parse(text, name, kCsv));
}

JobTraceRead read_philly_text(const std::string& text, const std::string& name) {
  return read_philly(YamlNode::load_string(text, name));
}

const std::vector<std::string>& job_trace_columns() {
  static const std::vector<std::string> k = {
      "job",       "submit",    "duration", "gpus",           "nodes",
      "node_gpus", "user",      "vc",       "queue",          "status",
      "gpu_model", "cpu",       "memory",   "priority_class", "workload_priority_class",
      "gpu_util",  "gpu_memory"};
  return k;
}

JobTraceRead read_job_trace(FileSource& files, const std::string& format, const std::string& path) {
  return read_any(format, files.read(path), path);
}

JobTraceRead read_job_trace_text(const std::string& format, const std::string& text,
                                 const std::string& name) {
  return read_any(format, text, name);
}

std::size_t add_job_trace(const std::vector<JobTraceRow>& rows, WorldBuilder& b,
                          const JobTraceOptions& opt) {
  World& world = b.world();
  std::size_t added = 0;
  std::size_t jobs = 0;
  for (const JobTraceRow& r : rows) {
    if (opt.max_jobs > 0 && jobs >= opt.max_jobs) break;
    ++jobs;
    auto fail = [&](const std::string& msg) {
      throw InputError(InputErrorKind::kInvalid, r.where, fmt::format("job {}: {}", r.job, msg));
    };
    // The LocalQueue: explicit, else mapped from the virtual cluster or the user.
    std::string queue = r.queue;
    if (queue.empty()) {
      if (auto it = opt.queue_map.find(r.vc); !r.vc.empty() && it != opt.queue_map.end()) {
        queue = it->second;
      } else if (auto iu = opt.queue_map.find(r.user);
                 !r.user.empty() && iu != opt.queue_map.end()) {
        queue = iu->second;
      } else if (!opt.default_queue.empty()) {
        queue = opt.default_queue;
      } else {
        queue = !r.vc.empty() ? r.vc : (!r.user.empty() ? r.user : "default");
      }
    }
    SimDuration arrival = 0, duration = 0;
    if (!scale_time(r.submit, opt.time_scale, arrival))
      fail("the scaled submit time is out of range");
    arrival += opt.time_offset;
    if (arrival < 0) fail("it would arrive before the start of the run");
    if (!scale_time(r.duration, opt.duration_scale, duration)) {
      fail("the scaled duration is out of range");
    }
    // GPUs per node: the trace's split, or as even as possible (the first nodes get the rest).
    std::vector<std::int64_t> split = r.gpus_per_node;
    if (split.empty()) {
      const std::int64_t base = r.gpus / r.nodes, rest = r.gpus % r.nodes;
      for (std::int32_t i = 0; i < r.nodes; ++i)
        split.push_back(base + (i < rest ? 1 : 0));
    }
    std::vector<GpuModelId> models;
    for (const std::string& m : r.gpu_models.empty() ? opt.gpu_models : r.gpu_models)
      models.push_back(b.use_gpu_model(b.gpu_model(m, r.where)));
    GangId gang = kNoGang;
    if (r.nodes > 1) {
      // A multi-node job starts on all its nodes or not at all.
      world.gangs.push_back(GangSpec{r.job, r.nodes, short_location(r.where)});
      gang = static_cast<GangId>(world.gangs.size() - 1);
    }
    for (std::int32_t i = 0; i < r.nodes; ++i) {
      const std::int64_t g = split[static_cast<std::size_t>(i)];
      PodSpec p;
      p.name = r.nodes > 1 ? fmt::format("{}-{}", r.job, i) : r.job;
      p.namespace_ = opt.namespace_;
      p.queue = queue;
      p.job_name = r.job;
      if (label_value_problem(r.job).empty()) p.labels.set(b.sym(kJobLabel), b.sym(r.job));
      if (!r.workload_priority_class.empty()) {
        p.labels.set(b.sym(kPriorityClassLabel), b.sym(r.workload_priority_class));
      }
      p.priority_class = r.priority_class;
      const std::int64_t cpu =
          r.cpu_milli > 0 ? (r.cpu_milli + r.nodes - 1) / r.nodes : opt.cpu_per_gpu_milli * g;
      const std::int64_t mem =
          r.memory > 0 ? (r.memory + r.nodes - 1) / r.nodes : opt.memory_per_gpu * g;
      if (cpu > 0) p.requests.set(kCpu, cpu);
      if (mem > 0) p.requests.set(kMemory, mem);
      if (g > 0) p.requests.set(kNvidiaGpu, g);
      p.gpu_models = models;
      p.arrival = arrival;
      p.duration = duration;
      if (r.gpu_util >= 0) p.gpu_util = r.gpu_util;
      p.gpu_memory_used = r.gpu_memory;
      p.fails = r.failed;
      p.gang = gang;
      p.requeue_on_preemption = true;
      p.source = short_location(r.where);
      (void)b.add_pod(std::move(p), r.where);
      ++added;
    }
  }
  return added;
}

void write_job_trace_csv(std::ostream& out, const std::vector<JobTraceRow>& rows) {
  bool cpu = false, split = false;
  for (const JobTraceRow& r : rows) {
    cpu = cpu || r.cpu_milli > 0;
    if (!r.gpus_per_node.empty()) {
      split = split || std::any_of(r.gpus_per_node.begin(), r.gpus_per_node.end(),
                                   [&](std::int64_t g) { return g != r.gpus_per_node.front(); });
    }
  }
  out << "job,submit,duration,gpus,nodes" << (split ? ",node_gpus" : "") << ",user,vc,status"
      << (cpu ? ",cpu" : "") << "\n";
  for (const JobTraceRow& r : rows) {
    out << csv_field(r.job) << ',' << format_duration(r.submit) << ','
        << format_duration(r.duration) << ',' << r.gpus << ',' << r.nodes;
    if (split) {
      std::string s;
      for (std::size_t i = 0; i < r.gpus_per_node.size(); ++i)
        s += fmt::format("{}{}", i ? "|" : "", r.gpus_per_node[i]);
      out << ',' << s;
    }
    out << ',' << csv_field(r.user) << ',' << csv_field(r.vc) << ','
        << (r.failed ? "failed" : "completed");
    if (cpu) out << ',' << (r.cpu_milli > 0 ? fmt::format("{}m", r.cpu_milli) : std::string());
    out << '\n';
  }
}

void load_job_trace_entry(FileSource& files, const std::string& format, const std::string& path,
                          MapReader& entry, WorldBuilder& b, std::vector<std::string>* warnings) {
  JobTraceOptions o;
  o.time_offset = entry.duration_or("time_offset", 0);
  o.time_scale = entry.num_or("time_scale", 1.0, 1e-9, 1e9);
  o.duration_scale = entry.num_or("duration_scale", 1.0, 1e-9, 1e9);
  o.default_queue = entry.str_or("queue", "");
  o.namespace_ = entry.str_or("namespace", "default");
  if (auto qm = entry.opt("queue_map")) {
    for (const auto& [k, v] : qm->entries())
      o.queue_map[k] = v.str();
  }
  if (auto v = entry.opt("cpu_per_gpu")) o.cpu_per_gpu_milli = v->quantity(3);
  if (auto v = entry.opt("memory_per_gpu")) o.memory_per_gpu = v->quantity(0);
  if (auto v = entry.opt("gpu_model")) {
    if (v->is_seq()) {
      for (const YamlNode& m : v->seq()) {
        (void)b.gpu_model(m.str(), m.where());
        o.gpu_models.push_back(m.str());
      }
    } else {
      (void)b.gpu_model(v->str(), v->where());
      o.gpu_models.push_back(v->str());
    }
  }
  if (auto v = entry.opt("max_jobs")) o.max_jobs = static_cast<std::size_t>(v->integer(1));
  JobTraceRead read = read_job_trace(files, format, path);
  if (!read.skipped.empty() && warnings != nullptr) {
    std::vector<std::string> parts;
    std::size_t total = 0;
    for (const auto& [why, n] : read.skipped) {
      parts.push_back(fmt::format("{} ({})", why, n));
      total += n;
    }
    warnings->push_back(
        fmt::format("{}: {} job(s) left out: {}", path, total, fmt::join(parts, ", ")));
  }
  (void)add_job_trace(read.rows, b, o);
}

}  // namespace capsim
