// Tests for the GPU catalog (models/gpu_catalog.cpp), its built-in data
// (models/catalog/gpus.yaml) and its text/JSON renderings (reports/catalog_text.cpp). The wanted
// numbers come from the project fact sheet (hardware-facts.md sections 1 and 6).
#include "models/gpu_catalog.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/yaml_reader.hpp"
#include "reports/catalog_text.hpp"
#include "reports/text/json.hpp"
#include "sim/input_error.hpp"

namespace capsim {
namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

const GpuModel& model(const GpuCatalog& c, const std::string& name) {
  const GpuModel* m = c.find(name);
  REQUIRE_MESSAGE(m != nullptr, "model " << name << " is missing");
  return *m;
}

const MigProfile& profile(const GpuModel& g, const std::string& name) {
  const MigProfile* p = g.find_profile(name);
  REQUIRE_MESSAGE(p != nullptr, "profile " << name << " is missing on " << g.name);
  return *p;
}

const MigLayoutPreset* preset(const GpuModel& g, const std::string& name) {
  for (const auto& p : g.mig_presets) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

GpuCatalog merged(const std::string& yaml) {
  GpuCatalog c = GpuCatalog::builtin();
  c.merge_yaml(YamlNode::load_string(yaml, "scenario.yaml"));
  return c;
}

// The InputError text of merging `yaml` into the built-in catalog, or "" if it loads.
std::string merge_error(const std::string& yaml) {
  GpuCatalog c = GpuCatalog::builtin();
  try {
    c.merge_yaml(YamlNode::load_string(yaml, "bad.yaml"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A strict JSON validator (RFC 8259 grammar), so that the JSON test can actually fail.
class JsonChecker {
 public:
  explicit JsonChecker(std::string_view s) : s_(s) {}
  bool valid() {
    ws();
    if (!value()) return false;
    ws();
    return i_ == s_.size();
  }

 private:
  bool value() {
    if (i_ >= s_.size()) return false;
    switch (s_[i_]) {
      case '{':
        return object();
      case '[':
        return array();
      case '"':
        return string();
      case 't':
        return word("true");
      case 'f':
        return word("false");
      case 'n':
        return word("null");
      default:
        return number();
    }
  }
  bool object() {
    ++i_;
    ws();
    if (peek('}')) return ++i_, true;
    for (;;) {
      ws();
      if (!peek('"') || !string()) return false;
      ws();
      if (!peek(':')) return false;
      ++i_;
      ws();
      if (!value()) return false;
      ws();
      if (peek('}')) return ++i_, true;
      if (!peek(',')) return false;
      ++i_;
    }
  }
  bool array() {
    ++i_;
    ws();
    if (peek(']')) return ++i_, true;
    for (;;) {
      ws();
      if (!value()) return false;
      ws();
      if (peek(']')) return ++i_, true;
      if (!peek(',')) return false;
      ++i_;
    }
  }
  bool string() {
    ++i_;
    while (i_ < s_.size()) {
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') return ++i_, true;
      if (c < 0x20) return false;
      if (c == '\\') {
        ++i_;
        if (i_ >= s_.size()) return false;
        const char e = s_[i_];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k) {
            ++i_;
            if (i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) return false;
          }
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return false;
        }
      }
      ++i_;
    }
    return false;
  }
  bool number() {
    const std::size_t start = i_;
    if (peek('-')) ++i_;
    if (peek('0')) {
      ++i_;
    } else if (!digits()) {
      return false;
    }
    if (peek('.')) {
      ++i_;
      if (!digits()) return false;
    }
    if (peek('e') || peek('E')) {
      ++i_;
      if (peek('+') || peek('-')) ++i_;
      if (!digits()) return false;
    }
    return i_ > start;
  }
  bool digits() {
    const std::size_t start = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])))
      ++i_;
    return i_ > start;
  }
  bool word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  bool peek(char c) const { return i_ < s_.size() && s_[i_] == c; }
  void ws() {
    while (i_ < s_.size() && std::string_view(" \t\r\n").find(s_[i_]) != std::string_view::npos)
      ++i_;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

bool valid_json(std::string_view s) {
  return JsonChecker(s).valid();
}

const std::vector<std::string> kMigModels = {
    "A100-40GB", "A100-80GB", "H100-80GB", "H100-NVL-94GB", "H200-141GB", "B200", "GB200"};
const std::vector<std::string> kTraceModels = {"P100", "T4", "V100M16", "V100M32",
                                               "A10",  "G2", "G3"};
// Data-center parts without a MIG table (GB300: profile names known, sizes not).
const std::vector<std::string> kWholeModels = {"GB300"};

}  // namespace

TEST_CASE("The built-in catalog loads and holds every required model") {
  const GpuCatalog& c = GpuCatalog::builtin();
  CHECK(c.models().size() == kMigModels.size() + kTraceModels.size() + kWholeModels.size());
  for (const auto& name : kWholeModels) {
    INFO(name);
    CHECK_FALSE(model(c, name).trace_model);
  }
  for (const auto& name : kMigModels) {
    INFO(name);
    const GpuModel& g = model(c, name);
    CHECK(g.name == name);
    CHECK(g.mig_capable());
    CHECK_FALSE(g.trace_model);
  }
  for (const auto& name : kTraceModels) {
    INFO(name);
    const GpuModel& g = model(c, name);
    CHECK_FALSE(g.mig_capable());
    CHECK(g.trace_model);
    CHECK(g.mig_presets.empty());
  }
  // The same object every time: parsed once.
  CHECK(&GpuCatalog::builtin() == &c);
  CHECK(contains(model(c, "B200").source, "models/catalog/gpus.yaml:"));
}

TEST_CASE("Every model carries the fact-sheet identity, memory, power and price") {
  struct Case {
    std::string name;
    std::string want_arch;
    std::string want_cc;
    std::string want_pci;  // one of its device IDs
    std::int64_t want_memory_mib;
    std::int32_t want_sms;
    double want_tdp_w;
    double want_price;  // fact sheet 6.3 "suggested defaults"; guesses for the others
  };
  const std::vector<Case> cases = {
      {"A100-40GB", "Ampere", "8.0", "0x20B0", 40960, 108, 400, 1.30},
      {"A100-80GB", "Ampere", "8.0", "0x20B2", 81920, 108, 400, 1.60},
      {"H100-80GB", "Hopper", "9.0", "0x2330", 81559, 132, 700, 2.80},
      {"H100-NVL-94GB", "Hopper", "9.0", "0x2321", 95830, 132, 400, 2.80},
      {"H200-141GB", "Hopper", "9.0", "0x2335", 143771, 132, 700, 3.80},
      {"B200", "Blackwell", "10.0", "0x2901", 183359, 148, 1000, 5.50},
      {"GB200", "Blackwell", "10.0", "0x2941", 189471, 152, 1200, 6.00},
      {"T4", "Turing", "7.5", "0x1EB8", 15360, 40, 70, 0.35},
      {"A10", "Ampere", "8.6", "0x2236", 23028, 72, 150, 0.75},
  };
  const GpuCatalog& c = GpuCatalog::builtin();
  for (const auto& tc : cases) {
    INFO(tc.name);
    const GpuModel& g = model(c, tc.name);
    CHECK(g.architecture == tc.want_arch);
    CHECK(g.compute_capability == tc.want_cc);
    CHECK(std::find(g.pci_device_ids.begin(), g.pci_device_ids.end(), tc.want_pci) !=
          g.pci_device_ids.end());
    CHECK(g.memory_mib == tc.want_memory_mib);
    CHECK(g.sms == tc.want_sms);
    CHECK(g.tdp_w == doctest::Approx(tc.want_tdp_w));
    CHECK(g.price_per_hour == doctest::Approx(tc.want_price));
  }
}

TEST_CASE("Every model's numbers obey the catalog's own rules") {
  for (const auto& g : GpuCatalog::builtin().models()) {
    INFO(g.name);
    // relative_speed = sqrt(FP16 TFLOPS / 312 x bandwidth / 2039), the geometric mean of the
    // compute and bandwidth ratios to the A100-80GB, rounded to two decimals.
    CHECK(g.relative_speed ==
          doctest::Approx(std::sqrt(g.fp16_dense_tflops / 312.0 * g.memory_bandwidth_gbs / 2039.0))
              .epsilon(0.01));
    // Idle power 5-25 % of TDP (fact sheet 6.2: ~10-15 % cold, ~20 % with a context).
    CHECK(g.idle_w >= 0.05 * g.tdp_w);
    CHECK(g.idle_w <= 0.25 * g.tdp_w);
    CHECK(g.price_per_hour > 0);
    for (const char* group : {"identity", "memory", "sms", "power", "price", "performance"}) {
      INFO(group);
      REQUIRE(g.confidence.count(group) == 1);
      const std::string tag = g.confidence.at(group).substr(0, 3);
      CHECK((tag == "[V]" || tag == "[S]" || tag == "[U]" || tag == "[D]"));
    }
  }
  // G2 and G3 are undisclosed: every group is a placeholder.
  for (const char* name : {"G2", "G3"}) {
    for (const auto& [group, tag] : model(GpuCatalog::builtin(), name).confidence) {
      CHECK(tag.substr(0, 3) == "[U]");
    }
  }
}

TEST_CASE("MIG profiles carry the fact-sheet memory, SMs and placements") {
  struct Case {
    std::string model;
    std::string profile;
    std::int32_t want_id;
    std::int32_t want_compute;
    std::int32_t want_memory_slices;
    std::int64_t want_memory_mib;  // nvidia-smi GiB x 1024
    std::int32_t want_sms;
    std::vector<std::int32_t> want_starts;
    std::int32_t want_max;
    bool want_me;
  };
  const std::vector<Case> cases = {
      // A100-40GB guide table: 4864 MiB and 14 SMs per 1g; 7g gets 98 of 108 SMs.
      {"A100-40GB", "1g.5gb", 19, 1, 1, 4864, 14, {0, 1, 2, 3, 4, 5, 6}, 7, false},
      {"A100-40GB", "1g.5gb+me", 20, 1, 1, 4864, 14, {0, 1, 2, 3, 4, 5, 6}, 1, true},
      {"A100-40GB", "1g.10gb", 15, 1, 2, 9856, 14, {0, 2, 4, 6}, 4, false},
      {"A100-40GB", "7g.40gb", 0, 7, 8, 40192, 98, {0}, 1, false},
      // A100-80GB 2g.20gb: 19968 MiB, 28 SMs (nvitop PR #8).
      {"A100-80GB", "2g.20gb", 14, 2, 2, 19968, 28, {0, 2, 4}, 3, false},
      // H100 3g.40gb: 60 SMs (not 3 x 16), 4 memory slices, placed at 0 or 4; 39.50 GiB.
      {"H100-80GB", "3g.40gb", 9, 3, 4, 40448, 60, {0, 4}, 2, false},
      {"H100-80GB", "1g.20gb", 15, 1, 2, 20096, 26, {0, 2, 4, 6}, 4, false},
      // H100 NVL 1g.12gb: 10.75 GiB = 11008 MiB, the GFD gpu.memory label value.
      {"H100-NVL-94GB", "1g.12gb", 19, 1, 1, 11008, 16, {0, 1, 2, 3, 4, 5, 6}, 7, false},
      {"H100-NVL-94GB", "3g.47gb", 9, 3, 4, 47488, 60, {0, 4}, 2, false},  // 46.375 GiB
      // H200: 2g.35gb = 32.25 GiB and 32 SMs; 7g.141gb = 139.75 GiB and 132 SMs.
      {"H200-141GB", "2g.35gb", 14, 2, 2, 33024, 32, {0, 2, 4}, 3, false},
      {"H200-141GB", "4g.71gb", 5, 4, 4, 71168, 64, {0}, 1, false},
      {"H200-141GB", "7g.141gb", 0, 7, 8, 143104, 132, {0}, 1, false},
      // B200 1g.45gb: 44.25 GiB, 30 SMs, starts {0,2,4,6}; 1g.23gb 22.00 GiB, 18 SMs.
      {"B200", "1g.45gb", 15, 1, 2, 45312, 30, {0, 2, 4, 6}, 4, false},
      {"B200", "1g.23gb+me", 20, 1, 1, 22528, 18, {0, 1, 2, 3, 4, 5, 6}, 1, true},
      {"B200", "2g.45gb", 14, 2, 2, 45312, 36, {0, 2, 4}, 3, false},
      // GB200 2g.47gb: 45.50 GiB, 38 SMs.
      {"GB200", "2g.47gb", 14, 2, 2, 46592, 38, {0, 2, 4}, 3, false},
  };
  const GpuCatalog& c = GpuCatalog::builtin();
  for (const auto& tc : cases) {
    INFO(tc.model << " " << tc.profile);
    const MigProfile& p = profile(model(c, tc.model), tc.profile);
    CHECK(p.name == tc.profile);
    CHECK(p.profile_id == tc.want_id);
    CHECK(p.compute_slices == tc.want_compute);
    CHECK(p.memory_slices == tc.want_memory_slices);
    CHECK(p.memory_mib == tc.want_memory_mib);
    CHECK(p.sms == tc.want_sms);
    CHECK(p.start_slots == tc.want_starts);
    CHECK(p.max_instances == tc.want_max);
    CHECK(p.media_extensions == tc.want_me);
  }
}

TEST_CASE("Every MIG model follows the 7-GI placement table") {
  // Fact sheet 1.1: profile ID -> memory slices, compute slices, start slots, max instances.
  struct Rule {
    std::int32_t memory_slices, compute, max;
    std::vector<std::int32_t> starts;
  };
  const std::map<std::int32_t, Rule> rules = {
      {19, {1, 1, 7, {0, 1, 2, 3, 4, 5, 6}}},
      {20, {1, 1, 1, {0, 1, 2, 3, 4, 5, 6}}},
      {15, {2, 1, 4, {0, 2, 4, 6}}},
      {14, {2, 2, 3, {0, 2, 4}}},
      {9, {4, 3, 2, {0, 4}}},
      {5, {4, 4, 1, {0}}},
      {0, {8, 7, 1, {0}}},
  };
  for (const auto& name : kMigModels) {
    INFO(name);
    const GpuModel& g = model(GpuCatalog::builtin(), name);
    CHECK(g.mig_memory_slots == 8);
    CHECK(g.mig_compute_slots == 7);
    CHECK(g.mig_max_instances == 7);
    REQUIRE(g.mig_profiles.size() == rules.size());
    std::int64_t prev_mib = 0;
    for (const auto& p : g.mig_profiles) {
      INFO(p.name);
      REQUIRE(rules.count(p.profile_id) == 1);
      const Rule& r = rules.at(p.profile_id);
      CHECK(p.memory_slices == r.memory_slices);
      CHECK(p.compute_slices == r.compute);
      CHECK(p.start_slots == r.starts);
      CHECK(p.max_instances == r.max);
      CHECK(p.media_extensions == (p.profile_id == 20));
      // The name starts with "<compute slices>g.".
      CHECK(p.name.starts_with(fmt::format("{}g.", p.compute_slices)));
      // Profiles are listed smallest first; memory never shrinks down the table.
      CHECK(p.memory_mib >= prev_mib);
      prev_mib = p.memory_mib;
      CHECK(p.memory_mib <= g.memory_mib);
      CHECK(p.sms <= g.sms);
    }
  }
}

TEST_CASE("Presets follow mig-parted: all-balanced, all-<profile> at the maximum, all-disabled") {
  const GpuCatalog& c = GpuCatalog::builtin();
  using Devices = std::vector<std::pair<std::string, std::int32_t>>;
  struct Case {
    std::string model, preset;
    Devices want;
  };
  const std::vector<Case> cases = {
      {"A100-40GB", "all-balanced", {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}},
      {"A100-80GB", "all-balanced", {{"1g.10gb", 2}, {"2g.20gb", 1}, {"3g.40gb", 1}}},
      {"H100-80GB", "all-balanced", {{"1g.10gb", 2}, {"2g.20gb", 1}, {"3g.40gb", 1}}},
      {"H100-NVL-94GB", "all-balanced", {{"1g.12gb", 2}, {"2g.24gb", 1}, {"3g.47gb", 1}}},
      {"H200-141GB", "all-balanced", {{"1g.18gb", 2}, {"2g.35gb", 1}, {"3g.71gb", 1}}},
      {"B200", "all-balanced", {{"1g.23gb", 2}, {"2g.45gb", 1}, {"3g.90gb", 1}}},
      {"GB200", "all-balanced", {{"1g.23gb", 2}, {"2g.47gb", 1}, {"3g.93gb", 1}}},
      // 1g.10gb is the double-memory 1g on the A100-40GB (4 fit) but the plain 1g on 80 GB parts.
      {"A100-40GB", "all-1g.10gb", {{"1g.10gb", 4}}},
      {"A100-80GB", "all-1g.10gb", {{"1g.10gb", 7}}},
      {"H100-80GB", "all-1g.10gb", {{"1g.10gb", 7}}},
      {"A100-40GB", "all-1g.5gb.me", {{"1g.5gb+me", 1}}},
      {"H200-141GB", "all-3g.71gb", {{"3g.71gb", 2}}},
      {"B200", "all-7g.180gb", {{"7g.180gb", 1}}},
      {"A100-80GB", "all-enabled", {}},
  };
  for (const auto& tc : cases) {
    INFO(tc.model << " " << tc.preset);
    const MigLayoutPreset* p = preset(model(c, tc.model), tc.preset);
    REQUIRE(p != nullptr);
    CHECK(p->mig_enabled);
    CHECK(p->devices == tc.want);
  }
  for (const auto& name : kMigModels) {
    INFO(name);
    const GpuModel& g = model(c, name);
    const MigLayoutPreset* off = preset(g, "all-disabled");
    REQUIRE(off != nullptr);
    CHECK_FALSE(off->mig_enabled);
    CHECK(off->devices.empty());
    CHECK_FALSE(preset(g, "all-balanced")->generated);
    CHECK(preset(g, "all-disabled")->generated);
  }
}

TEST_CASE("Lookup is case-insensitive on names, aliases and GPU Feature Discovery labels") {
  const GpuCatalog& c = GpuCatalog::builtin();
  struct Case {
    std::string query, want;
  };
  const std::vector<Case> cases = {
      {"A100-80GB", "A100-80GB"},
      {"a100-80gb", "A100-80GB"},
      {"NVIDIA-A100-SXM4-80GB", "A100-80GB"},
      {"nvidia-a100-sxm4-80gb", "A100-80GB"},
      {"NVIDIA-A100-SXM4-40GB", "A100-40GB"},
      {"NVIDIA-H100-80GB-HBM3", "H100-80GB"},
      {"H100-PCIe", "H100-80GB"},
      {"NVIDIA-H100-NVL", "H100-NVL-94GB"},
      {"NVIDIA-H200", "H200-141GB"},
      {"B200-180GB", "B200"},
      {"NVIDIA-B200", "B200"},
      {"Tesla-T4", "T4"},
  };
  for (const auto& tc : cases) {
    INFO(tc.query);
    const GpuModel* g = c.find(tc.query);
    REQUIRE(g != nullptr);
    CHECK(g->name == tc.want);
    REQUIRE(c.index_of(tc.query).has_value());
    CHECK(&c.at(*c.index_of(tc.query)) == g);
  }
  CHECK(c.find("A100") == nullptr);  // ambiguous: 40 GB or 80 GB
  CHECK(c.find("") == nullptr);
  CHECK_FALSE(c.index_of("K80").has_value());

  // MIG profile aliases: names older or newer drivers print.
  const GpuModel& a100 = model(c, "A100-80GB");
  CHECK(profile(a100, "3g.39gb").name == "3g.40gb");
  CHECK(profile(a100, "3G.40GB").name == "3g.40gb");
  const GpuModel& gb200 = model(c, "GB200");
  CHECK(profile(gb200, "1g.24gb").name == "1g.23gb");
  CHECK(profile(gb200, "1g.24gb+me").name == "1g.23gb+me");
  CHECK(a100.find_profile("3g.41gb") == nullptr);
}

TEST_CASE("Suggestions name the close models for an unknown one") {
  const GpuCatalog& c = GpuCatalog::builtin();
  const auto a100 = c.suggestions("A100");
  CHECK(std::find(a100.begin(), a100.end(), "A100-80GB") != a100.end());
  CHECK(std::find(a100.begin(), a100.end(), "A100-40GB") != a100.end());
  const auto b = c.suggestions("B20O");  // typo for B200
  REQUIRE_FALSE(b.empty());
  CHECK(b.front() == "B200");
  CHECK(c.suggestions("completely-different-gpu").empty());
}

TEST_CASE("A price override through merge_yaml keeps the MIG table") {
  const GpuModel& before = model(GpuCatalog::builtin(), "B200");
  const GpuCatalog c = merged("models:\n- {name: B200, price_per_hour: 4.2}\n");
  const GpuModel& b = model(c, "B200");
  CHECK(b.price_per_hour == doctest::Approx(4.2));
  CHECK(b.tdp_w == before.tdp_w);
  CHECK(b.aliases == before.aliases);
  REQUIRE(b.mig_profiles.size() == before.mig_profiles.size());
  CHECK(profile(b, "1g.45gb").sms == 30);
  CHECK(b.mig_presets.size() == before.mig_presets.size());
  CHECK(contains(b.source, "overridden at scenario.yaml:2"));
  CHECK(c.models().size() == GpuCatalog::builtin().models().size());
  // The built-in catalog itself is untouched.
  CHECK(before.price_per_hour == doctest::Approx(5.50));

  // An alias, in any case, names the same model.
  const GpuCatalog d = merged("models:\n- {name: nvidia-b200, price_per_hour: 3.9}\n");
  CHECK(model(d, "B200").price_per_hour == doctest::Approx(3.9));
}

TEST_CASE("A MIG profile override changes only the fields it sets") {
  // The March 2025 B200 driver reports 1g.23gb at 20.50 GiB = 20992 MiB. GB200 is addressed
  // through its profile alias 1g.24gb.
  const GpuCatalog c = merged(R"(models:
- name: B200
  mig:
    profiles:
    - {name: 1g.23gb, memory_mib: 20992, confidence: "[V] March 2025 driver"}
- name: GB200
  mig:
    profiles:
    - {name: 1g.24gb, memory_mib: 20480}
)");
  const GpuModel& b = model(c, "B200");
  REQUIRE(b.mig_profiles.size() == 7);
  const MigProfile& p = profile(b, "1g.23gb");
  CHECK(p.memory_mib == 20992);
  CHECK(p.confidence == "[V] March 2025 driver");
  CHECK(p.sms == 18);
  CHECK(p.profile_id == 19);
  CHECK(p.start_slots == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6});
  CHECK(profile(b, "1g.23gb+me").memory_mib == 22528);
  const GpuModel& gb = model(c, "GB200");
  REQUIRE(gb.mig_profiles.size() == 7);
  CHECK(profile(gb, "1g.23gb").memory_mib == 20480);
  CHECK(profile(gb, "1g.23gb").aliases == std::vector<std::string>{"1g.24gb"});
}

TEST_CASE("An explicit preset replaces the generated one of the same name") {
  const GpuCatalog c = merged(R"(models:
- name: A100-80GB
  mig:
    presets:
      all-1g.10gb: {1g.10gb: 6}
      training: {3g.39gb: 1, 4g.40gb: 1}
)");
  const GpuModel& g = model(c, "A100-80GB");
  const MigLayoutPreset* p = preset(g, "all-1g.10gb");
  REQUIRE(p != nullptr);
  CHECK_FALSE(p->generated);
  CHECK(p->devices == std::vector<std::pair<std::string, std::int32_t>>{{"1g.10gb", 6}});
  // Aliases in presets are stored under the canonical profile name.
  const MigLayoutPreset* t = preset(g, "training");
  REQUIRE(t != nullptr);
  CHECK(t->devices ==
        std::vector<std::pair<std::string, std::int32_t>>{{"3g.40gb", 1}, {"4g.40gb", 1}});
  // Exactly one preset of each name.
  std::map<std::string, int> names;
  for (const auto& q : g.mig_presets)
    ++names[q.name];
  for (const auto& [name, n] : names) {
    const std::string& preset = name;  // the message copies no structured binding (clang++ 14)
    CHECK_MESSAGE(n == 1, preset);
  }
}

TEST_CASE("A scenario can add a model, or start one from a base model") {
  const GpuCatalog c = merged(R"(models:
- name: L40S
  aliases: [NVIDIA-L40S]
  architecture: Ada
  compute_capability: "8.9"
  pci_device_ids: ["0x26b9"]
  memory_mib: 46068
  sms: 142
  tdp_w: 350
  price_per_hour: 1.10
  relative_speed: 1.17
- name: H100-80GB
  aliases: [H100-SXM5-80GB, NVIDIA-H100-80GB-HBM3]
- name: H100-PCIe-80GB
  base: H100-80GB
  aliases: [H100-PCIe, NVIDIA-H100-PCIe]
  pci_device_ids: ["0x2331"]
  tdp_w: 350
  idle_w: 45
  fp16_dense_tflops: 756
  relative_speed: 2.42
)");
  const GpuModel& l40s = model(c, "nvidia-l40s");
  CHECK(l40s.name == "L40S");
  CHECK_FALSE(l40s.mig_capable());
  CHECK(l40s.idle_w == doctest::Approx(0.125 * 350));                // default: 12.5 % of TDP
  CHECK(l40s.pci_device_ids == std::vector<std::string>{"0x26B9"});  // canonical spelling
  CHECK(contains(l40s.source, "scenario.yaml:2"));

  const GpuModel& pcie = model(c, "NVIDIA-H100-PCIe");
  CHECK(pcie.name == "H100-PCIe-80GB");
  CHECK(pcie.tdp_w == 350);
  CHECK(pcie.memory_mib == 81559);            // from the base
  CHECK(profile(pcie, "3g.40gb").sms == 60);  // MIG table copied
  CHECK(preset(pcie, "all-balanced") != nullptr);
  CHECK(pcie.pci_device_ids == std::vector<std::string>{"0x2331"});
  CHECK(model(c, "H100-80GB").name == "H100-80GB");
  CHECK(c.find("H100-PCIe")->name == "H100-PCIe-80GB");
}

TEST_CASE("Malformed catalogs are rejected with file, line and field") {
  struct Case {
    std::string name;
    std::string yaml;
    int want_line;
    std::string want_field;
    std::string want_message;
  };
  const std::vector<Case> cases = {
      {"unknown field, with a suggestion", "models:\n- name: B200\n  prise_per_hour: 4.2\n", 3,
       "models[0].prise_per_hour", "unknown field 'prise_per_hour' (did you mean 'price_per_hour'"},
      {"unknown top-level key", "model:\n- name: B200\n", 1, "model",
       "unknown field 'model' (did you mean 'models'?)"},
      {"negative price", "models:\n- name: B200\n  price_per_hour: -1\n", 3,
       "models[0].price_per_hour", "-1 is out of range: it must be at least 0"},
      {"idle power above TDP", "models:\n- name: T4\n  idle_w: 90\n", 3, "models[0].idle_w",
       "idle_w 90 W is above tdp_w 70 W"},
      {"TDP lowered below the built-in idle power", "models:\n- name: B200\n  tdp_w: 100\n", 3,
       "models[0].tdp_w", "idle_w 140 W is above tdp_w 100 W"},
      {"start slot out of range",
       "models:\n- name: H100-80GB\n  mig:\n    profiles:\n    - {name: 3g.40gb, start_slots: [0, "
       "4, 6]}\n",
       5, "models[0].mig.profiles[0].start_slots",
       "start slot 6 is out of range for profile 3g.40gb: a placement of 4 memory slices must "
       "start in [0, 4]"},
      {"start slot without enough compute slots",
       "models:\n- name: A100-80GB\n  mig:\n    profiles:\n    - {name: 2g.20gb, start_slots: [0, "
       "2, 4, 6]}\n",
       5, "models[0].mig.profiles[0].start_slots",
       "start slot 6 gives profile 2g.20gb the memory slots [6, 8), which hold 1 compute slot(s); "
       "it needs 2"},
      {"compute slices above the compute slots",
       "models:\n- name: B200\n  mig:\n    profiles:\n    - {name: 8g.180gb, compute_slices: 8, "
       "memory_slices: 8, memory_mib: 1000, sms: 100, start_slots: [0], max_instances: 1}\n",
       5, "models[0].mig.profiles[0].compute_slices",
       "profile 8g.180gb has 8 compute slices but the GPU has only 7 compute slots"},
      {"memory slices above the memory slots",
       "models:\n- name: B200\n  mig:\n    profiles:\n    - {name: 9g.200gb, compute_slices: 7, "
       "memory_slices: 9, memory_mib: 1000, sms: 100, start_slots: [0], max_instances: 1}\n",
       5, "models[0].mig.profiles[0].memory_slices",
       "profile 9g.200gb has 9 memory slices but the GPU has only 8 memory slots"},
      {"max instances more than the start slots can hold",
       "models:\n- name: A100-40GB\n  mig:\n    profiles:\n    - {name: 2g.10gb, max_instances: "
       "4}\n",
       5, "models[0].mig.profiles[0].max_instances",
       "profile 2g.10gb allows 4 instances but its start slots {0,2,4} with 2 memory slices each "
       "fit at most 3 side by side"},
      {"new profile without its required fields",
       "models:\n- name: B200\n  mig:\n    profiles:\n    - {name: 1g.24gb, memory_mib: 20992}\n",
       5, "models[0].mig.profiles[0]",
       "missing required field 'compute_slices' for the new MIG profile '1g.24gb'"},
      {"duplicate alias across models",
       "models:\n- name: MyGPU\n  aliases: [my-gpu, nvidia-b200]\n  memory_mib: 1000\n  sms: 10\n"
       "  tdp_w: 100\n  price_per_hour: 1\n  relative_speed: 0.5\n",
       3, "models[0].aliases[1]", "alias 'NVIDIA-B200' is already used by model B200"},
      {"preset with an unknown profile",
       "models:\n- name: A100-80GB\n  mig:\n    presets:\n      my-layout: {3g.40gb: 1, 4g.41gb: "
       "1}\n",
       5, "models[0].mig.presets.my-layout.4g.41gb",
       "preset my-layout uses MIG profile '4g.41gb', which A100-80GB does not have (did you mean "
       "'4g.40gb'"},
      {"preset asking for more instances than fit",
       "models:\n- name: H200\n  mig:\n    presets:\n      too-many: {3g.71gb: 3}\n", 5,
       "models[0].mig.presets.too-many.3g.71gb",
       "preset too-many asks for 3 x 3g.71gb, but at most 2 fit on one GPU"},
      {"preset over the compute slots",
       "models:\n- name: H200\n  mig:\n    presets:\n      greedy: {4g.71gb: 1, 2g.35gb: 2}\n", 5,
       "models[0].mig.presets.greedy", "preset greedy needs 8 compute slices; the GPU has 7"},
      {"preset whose sizes fit but whose placements collide",
       "models:\n- name: Toy\n  memory_mib: 8000\n  sms: 8\n  tdp_w: 100\n  price_per_hour: 1\n"
       "  relative_speed: 0.1\n  mig:\n    memory_slots: 8\n    compute_slots: 7\n"
       "    max_instances: 7\n    profiles:\n"
       "    - {name: 3g.a, compute_slices: 3, memory_slices: 4, memory_mib: 4000, sms: 3, "
       "start_slots: [2], max_instances: 1}\n"
       "    - {name: 3g.b, compute_slices: 3, memory_slices: 4, memory_mib: 4000, sms: 3, "
       "start_slots: [0, 4], max_instances: 2}\n"
       "    presets:\n      clash: {3g.a: 1, 3g.b: 1}\n",
       16, "models[0].mig.presets.clash",
       "preset clash cannot be placed: no choice of allowed start slots keeps its instances' "
       "memory ranges apart"},
      {"new model without memory",
       "models:\n- name: L40S\n  sms: 142\n  tdp_w: 350\n  price_per_hour: 1.2\n"
       "  relative_speed: 1.2\n",
       2, "models[0]", "missing required field 'memory_mib' for the new model 'L40S'"},
      {"unknown confidence group", "models:\n- name: T4\n  confidence: {prices: \"[U] guess\"}\n",
       3, "models[0].confidence.prices", "unknown confidence group 'prices' (did you mean 'price'"},
      {"confidence without a tag", "models:\n- name: T4\n  confidence: {price: \"a guess\"}\n", 3,
       "models[0].confidence.price",
       "'a guess' does not start with a confidence tag [V], [S], [U] or [D]"},
      {"base with a name that is already taken", "models:\n- name: H100-PCIe\n  base: H100-80GB\n",
       2, "models[0].name", "'H100-PCIe' already names model H100-80GB"},
      {"unknown base model", "models:\n- name: MyH100\n  base: H100-80G\n", 3, "models[0].base",
       "unknown base model 'H100-80G' (did you mean H100-80GB"},
      {"PCI device ID in the wrong form", "models:\n- name: B200\n  pci_device_ids: [\"2901\"]\n",
       3, "models[0].pci_device_ids[0]", "'2901' is not a PCI device ID such as \"0x2330\""},
      {"media-extension profile with more than one instance",
       "models:\n- name: H200\n  mig:\n    profiles:\n    - {name: 1g.18gb+me, max_instances: 2}\n",
       5, "models[0].mig.profiles[0].max_instances",
       "profile 1g.18gb+me has media extensions, which exist once per GPU: max_instances must be "
       "1, not 2"},
  };
  for (const auto& tc : cases) {
    INFO(tc.name);
    const std::string err = merge_error(tc.yaml);
    INFO("error: " << err);
    CHECK(contains(err, fmt::format("bad.yaml:{}:", tc.want_line)));
    CHECK(contains(err, ": " + tc.want_field + ": "));
    CHECK(contains(err, tc.want_message));
  }
}

TEST_CASE("A failed merge leaves the catalog unchanged") {
  GpuCatalog c = GpuCatalog::builtin();
  const std::string yaml =
      "models:\n- {name: B200, price_per_hour: 4.2}\n- {name: T4, price_per_hour: -3}\n";
  CHECK_THROWS_AS(c.merge_yaml(YamlNode::load_string(yaml, "bad.yaml")), InputError);
  CHECK(model(c, "B200").price_per_hour == doctest::Approx(5.50));
}

TEST_CASE("The catalog table has a header and one row per model") {
  const GpuCatalog& c = GpuCatalog::builtin();
  const std::string table = render_catalog_table(c);
  std::vector<std::string> lines;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  REQUIRE(lines.size() == c.models().size() + 1);
  CHECK(lines[0].starts_with("MODEL"));
  CHECK(contains(lines[0], "$/GPU-H"));
  std::map<std::string, std::string> row;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string name = lines[i].substr(0, lines[i].find(' '));
    row[name] = lines[i];
    CHECK(lines[i].back() != ' ');
  }
  REQUIRE(row.count("B200") == 1);
  CHECK(contains(row["B200"], "Blackwell"));
  CHECK(contains(row["B200"], "179.1 GiB"));  // 183359 MiB / 1024
  CHECK(contains(row["B200"], " 1000 "));
  CHECK(contains(row["B200"], " 5.50 "));
  CHECK(contains(row["B200"], " yes"));
  CHECK_FALSE(contains(row["B200"], "trace"));
  REQUIRE(row.count("T4") == 1);
  CHECK(contains(row["T4"], " no "));
  CHECK(contains(row["T4"], "trace model"));
}

TEST_CASE("The model detail lists every field, profile and preset") {
  const GpuCatalog& c = GpuCatalog::builtin();
  const std::string a100 = render_model_detail(model(c, "A100-80GB"));
  for (const char* want :
       {"A100-80GB", "NVIDIA-A100-SXM4-80GB", "0x20B2", "81920 MiB (80.00 GiB)",
        "TDP 400 W, idle 50 W", "1.60 USD per GPU-hour", "2039 GB/s",
        "Relative speed:", "8 memory slots, 7 compute slots", "3g.39gb", "0,1,2,3,4,5,6",
        "all-balanced", "2 x 1g.10gb + 1 x 2g.20gb + 1 x 3g.40gb", "all-disabled", "MIG disabled",
        "models/catalog/gpus.yaml:"}) {
    CHECK_MESSAGE(contains(a100, want), want);
  }
  // The 3g.40gb row: ID 9, 3 compute, 4 memory slices, 40192 MiB, 42 SMs, starts 0,4, max 2.
  std::istringstream in(a100);
  bool found = false;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("  3g.40gb ")) continue;
    found = true;
    std::istringstream cols(line);
    std::vector<std::string> f;
    for (std::string w; cols >> w;)
      f.push_back(w);
    REQUIRE(f.size() >= 9);
    CHECK(f[1] == "9");
    CHECK(f[2] == "3");
    CHECK(f[3] == "4");
    CHECK(f[4] == "40192");
    CHECK(f[5] == "39.25");
    CHECK(f[6] == "42");
    CHECK(f[7] == "0,4");
    CHECK(f[8] == "2");
  }
  CHECK(found);
  const std::string t4 = render_model_detail(model(c, "T4"));
  CHECK(contains(t4, "MIG: not supported"));
  CHECK(contains(t4, "Trace model:"));
}

TEST_CASE("The JSON renderings are valid JSON and carry the catalog") {
  // The checker itself rejects what it should.
  CHECK(valid_json(R"({"a": [1, -2.5e3, true, null, "x\u00e9"]})"));
  CHECK_FALSE(valid_json(R"({"a": 1,})"));
  CHECK_FALSE(valid_json("[1 2]"));
  CHECK_FALSE(valid_json("{\"a\": \"tab\there\"}"));
  CHECK_FALSE(valid_json("[01]"));

  const GpuCatalog& c = GpuCatalog::builtin();
  const std::string json = render_catalog_json(c);
  REQUIRE(valid_json(json));
  const YAML::Node root = YAML::Load(json);  // JSON is YAML
  REQUIRE(root["models"].IsSequence());
  REQUIRE(root["models"].size() == c.models().size());
  YAML::Node b200;
  for (std::size_t i = 0; i < root["models"].size(); ++i) {
    // reset(), not operator=: yaml-cpp's assignment copies content into the existing node.
    if (root["models"][i]["name"].as<std::string>() == "B200") b200.reset(root["models"][i]);
  }
  REQUIRE(b200.IsMap());
  CHECK(b200["memory_mib"].as<std::int64_t>() == 183359);
  CHECK(b200["price_per_hour"].as<double>() == doctest::Approx(5.5));
  CHECK(b200["trace_model"].as<bool>() == false);
  CHECK(b200["aliases"][1].as<std::string>() == "NVIDIA-B200");
  const YAML::Node p = b200["mig"]["profiles"][2];
  CHECK(p["name"].as<std::string>() == "1g.45gb");
  CHECK(p["sms"].as<int>() == 30);
  CHECK(p["start_slots"].as<std::vector<int>>() == std::vector<int>{0, 2, 4, 6});
  CHECK(b200["mig"]["presets"][0]["name"].as<std::string>() == "all-balanced");
  CHECK(b200["mig"]["presets"][0]["devices"]["1g.23gb"].as<int>() == 2);

  const std::string t4 = render_model_json(model(c, "T4"));
  REQUIRE(valid_json(t4));
  const YAML::Node t = YAML::Load(t4);
  CHECK(t["mig"].IsNull());
  CHECK(t["trace_model"].as<bool>());

  // A model whose text needs escaping still renders valid JSON.
  const GpuCatalog odd = merged(
      "models:\n- {name: Odd, memory_mib: 1, sms: 1, tdp_w: 1, price_per_hour: 0, "
      "relative_speed: 1, notes: \"quote \\\" backslash \\\\ tab \\t bell \\a end\"}\n");
  const std::string odd_json = render_model_json(model(odd, "Odd"));
  CHECK(valid_json(odd_json));
  CHECK(YAML::Load(odd_json)["notes"].as<std::string>() ==
        "quote \" backslash \\ tab \t bell \a end");
}

TEST_CASE("json_quote escapes quotes, backslashes, control characters and bad UTF-8") {
  struct Case {
    std::string name, in, want;
  };
  const std::vector<Case> cases = {
      {"plain", "B200", "\"B200\""},
      {"quote and backslash", "a\"b\\c", R"("a\"b\\c")"},
      {"short escapes", "\n\r\t\b\f", R"("\n\r\t\b\f")"},
      {"other control characters", std::string("\x01\x1f", 2), R"("\u0001\u001f")"},
      {"NUL", std::string("a\0b", 3), R"("a\u0000b")"},
      {"valid UTF-8 passes through", "µs – ✓ 😀", "\"µs – ✓ 😀\""},
      {"invalid byte",
       "a\xff"
       "b",
       R"("a\ufffdb")"},
      {"overlong encoding", "\xc0\xaf", R"("\ufffd\ufffd")"},
      {"truncated sequence", "\xe2\x82", R"("\ufffd\ufffd")"},
      {"surrogate half", "\xed\xa0\x80", R"("\ufffd\ufffd\ufffd")"},
  };
  for (const auto& tc : cases) {
    INFO(tc.name);
    const std::string got = json_quote(tc.in);
    CHECK(got == tc.want);
    CHECK(valid_json(got));
  }
}

TEST_CASE("GB200 and GB300 NVL72 nodes hold 4 GPUs, 18 of them to an NVLink domain") {
  // Hardware facts 10.2: 72 GPUs in one NVLink domain, 18 compute trays of 4 GPUs.
  for (const char* name : {"GB200", "GB300"}) {
    INFO(name);
    const GpuModel& g = model(GpuCatalog::builtin(), name);
    CHECK(g.node_gpus == 4);
    CHECK(g.nvlink_domain_nodes == 18);
    CHECK(g.node_gpus * g.nvlink_domain_nodes == 72);
  }
  // A part whose NVLink domain is the node has neither.
  CHECK(model(GpuCatalog::builtin(), "H100-80GB").nvlink_domain_nodes == 0);
}

TEST_CASE("A catalog entry with node_gpus but no nvlink_domain_nodes is rejected by field") {
  const std::string what = merge_error("models:\n  - name: B200\n    node_gpus: 8\n");
  CHECK(what.find("bad.yaml:3") != std::string::npos);
  CHECK(what.find("node_gpus") != std::string::npos);
  CHECK(what.find("nvlink_domain_nodes") != std::string::npos);
}

}  // namespace capsim
