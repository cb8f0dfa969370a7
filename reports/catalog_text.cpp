#include "reports/catalog_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "reports/text/json.hpp"

namespace capsim {

namespace {

// ---------------------------------------------------------------------------------------------
// Plain-text tables.

using Row = std::vector<std::string>;

// Aligns `rows` (the first is the header) into columns two spaces apart; columns in
// `right` are right-aligned. The last column is not padded, so lines carry no trailing blanks.
std::string format_table(const std::vector<Row>& rows, const std::set<std::size_t>& right,
                         const std::string& indent) {
  std::vector<std::size_t> width;
  for (const Row& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (std::size_t c = 0; c < r.size(); ++c)
      width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const Row& r : rows) {
    std::string line = indent;
    for (std::size_t c = 0; c < r.size(); ++c) {
      const bool last = c + 1 == r.size();
      const std::size_t pad = width[c] - r[c].size();
      if (right.count(c) != 0) {
        line.append(pad, ' ');
        line += r[c];
      } else {
        line += r[c];
        if (!last) line.append(pad, ' ');
      }
      if (!last) line += "  ";
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

std::string gib(std::int64_t mib, int decimals) {
  return fmt::format("{:.{}f}", static_cast<double>(mib) / 1024.0, decimals);
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  return fmt::format("{}", fmt::join(v, sep));
}

std::string join_slots(const std::vector<std::int32_t>& v) {
  return fmt::format("{}", fmt::join(v, ","));
}

std::string preset_text(const MigLayoutPreset& p) {
  if (!p.mig_enabled) return "MIG disabled (the GPU is used whole)";
  if (p.devices.empty()) return "MIG enabled, no instances";
  std::vector<std::string> parts;
  for (const auto& [profile, n] : p.devices)
    parts.push_back(fmt::format("{} x {}", n, profile));
  return join(parts, " + ");
}

// ---------------------------------------------------------------------------------------------
// JSON.

// A small pretty-printing JSON writer. Arrays opened with `inline_items` keep their elements on
// one line ([0, 2, 4]); everything else gets one member per line, indented by two spaces.
class JsonWriter {
 public:
  JsonWriter& begin_object() { return open('{', false); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array(bool inline_items = false) { return open('[', inline_items); }
  JsonWriter& end_array() { return close(']'); }

  JsonWriter& key(std::string_view k) {
    Level& top = stack_.back();
    if (!top.empty) out_ += ',';
    newline();
    out_ += json_quote(k);
    out_ += ": ";
    top.empty = false;
    pending_key_ = true;
    return *this;
  }
  JsonWriter& value(std::string_view s) { return raw(json_quote(s)); }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b) { return raw(b ? "true" : "false"); }
  JsonWriter& value(std::int64_t v) { return raw(fmt::format("{}", v)); }
  JsonWriter& value(std::int32_t v) { return raw(fmt::format("{}", v)); }
  JsonWriter& value(double v) { return raw(json_number(v)); }
  JsonWriter& null() { return raw("null"); }

  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }
  JsonWriter& string_array(std::string_view k, const std::vector<std::string>& v) {
    key(k).begin_array(true);
    for (const auto& s : v)
      value(s);
    return end_array();
  }

  std::string take() {
    out_ += '\n';
    return std::move(out_);
  }

 private:
  struct Level {
    bool inline_items = false;
    bool empty = true;
  };

  void newline() {
    out_ += '\n';
    out_.append(2 * stack_.size(), ' ');
  }
  void before_item() {
    if (pending_key_) {
      pending_key_ = false;
      return;
    }
    if (stack_.empty()) return;
    Level& top = stack_.back();
    if (!top.empty) out_ += top.inline_items ? ", " : ",";
    if (!top.inline_items) newline();
    top.empty = false;
  }
  JsonWriter& raw(const std::string& text) {
    before_item();
    out_ += text;
    return *this;
  }
  JsonWriter& open(char c, bool inline_items) {
    before_item();
    out_ += c;
    stack_.push_back(Level{inline_items, true});
    return *this;
  }
  JsonWriter& close(char c) {
    const Level top = stack_.back();
    stack_.pop_back();
    if (!top.empty && !top.inline_items) newline();
    out_ += c;
    return *this;
  }

  std::string out_;
  std::vector<Level> stack_;
  bool pending_key_ = false;
};

void write_model(JsonWriter& w, const GpuModel& g) {
  w.begin_object();
  w.field("name", g.name);
  w.string_array("aliases", g.aliases);
  w.field("architecture", g.architecture);
  w.field("compute_capability", g.compute_capability);
  w.string_array("pci_device_ids", g.pci_device_ids);
  w.field("memory_mib", g.memory_mib);
  w.field("sms", g.sms);
  w.field("tdp_w", g.tdp_w);
  w.field("idle_w", g.idle_w);
  w.field("price_per_hour", g.price_per_hour);
  w.field("fp16_dense_tflops", g.fp16_dense_tflops);
  w.field("memory_bandwidth_gbs", g.memory_bandwidth_gbs);
  w.field("relative_speed", g.relative_speed);
  w.field("trace_model", g.trace_model);
  w.key("confidence").begin_object();
  for (const auto& [group, tag] : g.confidence)
    w.field(group, tag);
  w.end_object();
  w.field("notes", g.notes);
  w.field("source", g.source);
  w.key("mig");
  if (!g.mig_capable()) {
    w.null();
  } else {
    w.begin_object();
    w.field("memory_slots", g.mig_memory_slots);
    w.field("compute_slots", g.mig_compute_slots);
    w.field("max_instances", g.mig_max_instances);
    w.key("profiles").begin_array();
    for (const auto& p : g.mig_profiles) {
      w.begin_object();
      w.field("name", p.name);
      w.string_array("aliases", p.aliases);
      w.field("profile_id", p.profile_id);
      w.field("compute_slices", p.compute_slices);
      w.field("memory_slices", p.memory_slices);
      w.field("memory_mib", p.memory_mib);
      w.field("sms", p.sms);
      w.key("start_slots").begin_array(true);
      for (const std::int32_t s : p.start_slots)
        w.value(s);
      w.end_array();
      w.field("max_instances", p.max_instances);
      w.field("media_extensions", p.media_extensions);
      w.field("confidence", p.confidence);
      w.end_object();
    }
    w.end_array();
    w.key("presets").begin_array();
    for (const auto& preset : g.mig_presets) {
      w.begin_object();
      w.field("name", preset.name);
      w.field("mig_enabled", preset.mig_enabled);
      w.field("generated", preset.generated);
      w.key("devices").begin_object();
      for (const auto& [profile, n] : preset.devices)
        w.field(profile, n);
      w.end_object();
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_object();
}

}  // namespace

std::string render_catalog_table(const GpuCatalog& catalog) {
  std::vector<Row> rows;
  rows.push_back({"MODEL", "ARCH", "MEMORY", "SMS", "TDP W", "$/GPU-H", "MIG", "NOTE"});
  for (const auto& g : catalog.models()) {
    rows.push_back({g.name, g.architecture.empty() ? "-" : g.architecture,
                    gib(g.memory_mib, 1) + " GiB", fmt::format("{}", g.sms),
                    fmt::format("{:g}", g.tdp_w), fmt::format("{:.2f}", g.price_per_hour),
                    g.mig_capable() ? "yes" : "no", g.trace_model ? "trace model" : ""});
  }
  return format_table(rows, {2, 3, 4, 5}, "");
}

std::string render_model_detail(const GpuModel& g) {
  std::vector<Row> facts;
  auto fact = [&](std::string label, std::string text) {
    facts.push_back({std::move(label) + ":", std::move(text)});
  };
  fact("Model", g.name);
  fact("Aliases", g.aliases.empty() ? "-" : join(g.aliases, ", "));
  std::string arch = g.architecture.empty() ? "-" : g.architecture;
  if (!g.compute_capability.empty()) arch += " (compute capability " + g.compute_capability + ")";
  fact("Architecture", arch);
  fact("PCI device IDs", g.pci_device_ids.empty() ? "-" : join(g.pci_device_ids, ", "));
  fact("Memory", fmt::format("{} MiB ({} GiB)", g.memory_mib, gib(g.memory_mib, 2)));
  fact("SMs", fmt::format("{}", g.sms));
  fact("Power", fmt::format("TDP {:g} W, idle {:g} W", g.tdp_w, g.idle_w));
  fact("Price", fmt::format("{:.2f} USD per GPU-hour (default; a scenario can override it)",
                            g.price_per_hour));
  fact("FP16 dense", fmt::format("{:g} TFLOPS", g.fp16_dense_tflops));
  fact("Memory bandwidth", fmt::format("{:g} GB/s", g.memory_bandwidth_gbs));
  fact("Relative speed", fmt::format("{:.2f} (A100-80GB = 1.00)", g.relative_speed));
  fact("Trace model", g.trace_model ? "yes (a GPU type from a trace)" : "no");
  // Confidence in the order of the YAML (identity first), then any other group alphabetically.
  std::vector<std::string> groups = {"identity", "memory", "sms", "power", "price", "performance"};
  for (const auto& [group, tag] : g.confidence) {
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
  }
  bool first = true;
  for (const auto& group : groups) {
    auto it = g.confidence.find(group);
    if (it == g.confidence.end()) continue;
    facts.push_back({first ? "Confidence:" : "", group + " " + it->second});
    first = false;
  }
  if (!g.notes.empty()) fact("Notes", g.notes);
  fact("Defined at", g.source.empty() ? "-" : g.source);
  std::string out = format_table(facts, {}, "");

  out += '\n';
  if (!g.mig_capable()) {
    out += "MIG: not supported\n";
    return out;
  }
  out += fmt::format("MIG: {} memory slots, {} compute slots, at most {} GPU instances\n",
                     g.mig_memory_slots, g.mig_compute_slots, g.mig_max_instances);
  std::vector<Row> rows;
  rows.push_back({"PROFILE", "ID", "COMPUTE", "MEM SLICES", "MEMORY MiB", "GiB", "SMS",
                  "START SLOTS", "MAX", "CONFIDENCE", "ALIASES"});
  for (const auto& p : g.mig_profiles) {
    rows.push_back({p.name, p.profile_id >= 0 ? fmt::format("{}", p.profile_id) : "-",
                    fmt::format("{}", p.compute_slices), fmt::format("{}", p.memory_slices),
                    fmt::format("{}", p.memory_mib), gib(p.memory_mib, 2), fmt::format("{}", p.sms),
                    join_slots(p.start_slots), fmt::format("{}", p.max_instances),
                    p.confidence.empty() ? "-" : p.confidence,
                    p.aliases.empty() ? "" : join(p.aliases, ", ")});
  }
  out += format_table(rows, {1, 2, 3, 4, 5, 6, 8}, "  ");

  out += "\nPresets (mig-parted configs):\n";
  std::vector<Row> presets;
  for (const auto& p : g.mig_presets) {
    presets.push_back({p.name, preset_text(p), p.generated ? "(generated)" : ""});
  }
  out += format_table(presets, {}, "  ");
  return out;
}

std::string render_model_json(const GpuModel& model) {
  JsonWriter w;
  write_model(w, model);
  return w.take();
}

std::string render_catalog_json(const GpuCatalog& catalog) {
  JsonWriter w;
  w.begin_object();
  w.key("models").begin_array();
  for (const auto& g : catalog.models())
    write_model(w, g);
  w.end_array();
  w.end_object();
  return w.take();
}

}  // namespace capsim
