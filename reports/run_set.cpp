#include "reports/run_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "sim/input_error.hpp"

namespace capsim {

double LoadedRun::metric(const std::string& name) const {
  for (const auto& [k, v] : summary) {
    if (k == name) return v;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

bool LoadedRun::has(const std::string& name) const {
  for (const auto& [k, v] : summary) {
    if (k == name) return true;
  }
  return false;
}

std::vector<std::uint64_t> Variant::seeds() const {
  std::vector<std::uint64_t> s;
  for (const LoadedRun& r : runs)
    s.push_back(r.row.seed);
  return s;
}

MeanCi Variant::stat(const std::string& metric) const {
  std::vector<double> values;
  for (const LoadedRun& r : runs) {
    const double v = r.metric(metric);
    if (!std::isnan(v)) values.push_back(v);
  }
  return mean_ci95(values);
}

std::vector<LoadedRun> load_runs(const std::vector<std::string>& files) {
  std::vector<LoadedRun> out;
  for (const std::string& f : files) {
    RunReader reader(f);
    const std::vector<RunRow> rows = reader.runs();
    if (rows.empty()) {
      throw InputError(InputErrorKind::kInvalid, InputLocation{f, 0, 0, ""},
                       "the report holds no runs");
    }
    for (const RunRow& row : rows) {
      reader.require_complete(row.run_id);
      LoadedRun r;
      r.file = f;
      r.row = row;
      r.summary = reader.summary(row.run_id);
      if (r.summary.empty()) {
        throw InputError(InputErrorKind::kInvalid, InputLocation{f, 0, 0, ""},
                         fmt::format("run {} has no summary", row.run_id));
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<Variant> group_variants(const std::vector<LoadedRun>& runs) {
  std::vector<Variant> out;
  std::map<std::string, std::size_t> index;
  for (const LoadedRun& r : runs) {
    const std::string sha = r.row.scenario_sha256.empty() ? r.row.scenario : r.row.scenario_sha256;
    const std::string key = sha + "\n" + r.row.profile + "\n" + r.row.overrides;
    auto [it, added] = index.emplace(key, out.size());
    if (added) {
      Variant v;
      v.key = key;
      v.scenario = r.row.scenario;
      v.profile = r.row.profile;
      v.overrides = r.row.overrides;
      v.sha256 = r.row.scenario_sha256;
      out.push_back(std::move(v));
    }
    out[it->second].runs.push_back(r);
  }
  // Labels: "scenario / profile", with the overrides or a short hash where that is ambiguous.
  std::map<std::string, int> count;
  for (const Variant& v : out)
    ++count[v.scenario + " / " + v.profile];
  for (Variant& v : out) {
    v.label = v.scenario + " / " + v.profile;
    if (count[v.label] > 1) {
      std::string o = v.overrides;
      std::replace(o.begin(), o.end(), '\n', ' ');
      while (!o.empty() && o.back() == ' ')
        o.pop_back();
      v.label += o.empty() ? fmt::format(" [{}]", v.sha256.substr(0, 8)) : " [" + o + "]";
    }
  }
  // Still ambiguous (same overrides text, different scenario bytes): add the hash.
  std::map<std::string, int> again;
  for (const Variant& v : out)
    ++again[v.label];
  for (Variant& v : out) {
    if (again[v.label] > 1) v.label += fmt::format(" #{}", v.sha256.substr(0, 8));
  }
  return out;
}

std::vector<std::string> metric_names(const std::vector<Variant>& variants) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const Variant& v : variants) {
    for (const LoadedRun& r : v.runs) {
      for (const auto& [k, value] : r.summary) {
        if (seen.insert(k).second) out.push_back(k);
      }
    }
  }
  return out;
}

std::string seed_list(std::vector<std::uint64_t> seeds) {
  std::sort(seeds.begin(), seeds.end());
  seeds.erase(std::unique(seeds.begin(), seeds.end()), seeds.end());
  std::string out;
  std::size_t i = 0;
  while (i < seeds.size()) {
    std::size_t j = i;
    while (j + 1 < seeds.size() && seeds[j + 1] == seeds[j] + 1)
      ++j;
    if (!out.empty()) out += ", ";
    if (j >= i + 2) {
      out += fmt::format("{}-{}", seeds[i], seeds[j]);
    } else {
      out += fmt::format("{}", seeds[i]);
      if (j == i + 1) out += fmt::format(", {}", seeds[j]);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace capsim
