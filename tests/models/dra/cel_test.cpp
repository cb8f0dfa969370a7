// The CEL subset of DRA device selectors: the expressions Kubernetes' and NVIDIA's documentation
// use, CEL's error absorption in && and ||, the quantity and semver libraries, and compile errors
// that name the line, column and construct. Table-driven: each case carries its expression, the
// device it runs on and the verdict or error wanted.
#include "models/dra/cel.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace capsim;
using capsim::dra::AttrValue;

namespace {

AttrValue s(std::string v) {
  AttrValue a;
  a.kind = AttrValue::Kind::kString;
  a.s = std::move(v);
  return a;
}
AttrValue ver(std::string v) {
  AttrValue a;
  a.kind = AttrValue::Kind::kVersion;
  a.s = std::move(v);
  return a;
}
AttrValue i(std::int64_t v) {
  AttrValue a;
  a.kind = AttrValue::Kind::kInt;
  a.i = v;
  return a;
}

constexpr std::int64_t kMiB = 1024 * 1024;

// A full A100-80GB as the NVIDIA driver publishes it (docs' resourceslice-attributes page).
dra::Device a100() {
  dra::Device d;
  d.name = "gpu-0";
  const std::string n = "gpu.nvidia.com";
  d.attributes = {{n, "type", s("gpu")},
                  {n, "productName", s("NVIDIA A100-SXM4-80GB")},
                  {n, "architecture", s("Ampere")},
                  {n, "brand", s("Nvidia")},
                  {n, "cudaComputeCapability", ver("8.0.0")},
                  {n, "driverVersion", ver("580.126.20")},
                  {"resource.kubernetes.io", "pcieRoot", s("pci0000:10")},
                  {"resource.kubernetes.io", "numaNode", i(0)}};
  d.capacity = {{n, "memory", 81920 * kMiB * 1000}, {n, "multiprocessors", 108 * 1000}};
  return d;
}
dra::Device h100() {
  dra::Device d = a100();
  d.attributes[1].value = s("NVIDIA H100 80GB HBM3");
  d.attributes[2].value = s("Hopper");
  d.capacity[0].milli = 81559 * kMiB * 1000;  // what NVML reports: less than 80 GiB
  return d;
}
dra::Device b200() {
  dra::Device d = a100();
  d.attributes[1].value = s("NVIDIA B200");
  d.attributes[2].value = s("Blackwell");
  d.attributes[4].value = ver("10.0.0");
  d.capacity[0].milli = 183359 * kMiB * 1000;
  return d;
}
dra::Device mig() {
  dra::Device d = a100();
  d.name = "gpu-0-mig-1g10gb-19-0";
  d.attributes[0].value = s("mig");
  d.attributes.push_back({"gpu.nvidia.com", "profile", s("1g.10gb")});
  d.capacity[0].milli = 9728 * kMiB * 1000;
  return d;
}
// A device of the documentation's example driver.
dra::Device example() {
  dra::Device d;
  d.name = "gpu-1";
  d.attributes = {{"driver.example.com", "type", s("gpu")}};
  d.capacity = {{"driver.example.com", "memory", std::int64_t{64} * 1024 * kMiB * 1000}};
  return d;
}

struct Case {
  const char* name;
  const char* expr;
  dra::Device device;
  const char* driver;
  int want;  // 1 true, 0 false, -1 runtime error
  const char* want_error = "";
};

void run(const Case& c) {
  CAPTURE(c.name);
  CAPTURE(c.expr);
  auto p = cel::Program::compile(c.expr);
  REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : p.error()));
  const cel::SliceDeviceView view(c.device, c.driver);
  const cel::EvalResult r = p->eval(view);
  if (c.want < 0) {
    CHECK_FALSE(r.ok);
    CHECK(r.error.find(c.want_error) != std::string::npos);
  } else {
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(r.value == (c.want == 1));
  }
}

}  // namespace

TEST_CASE("CEL selectors from the Kubernetes and NVIDIA documentation evaluate as documented") {
  const char* nv = "gpu.nvidia.com";
  const std::vector<Case> cases = {
      // NVIDIA's default DeviceClasses: type gpu vs mig; a foreign driver's device is false, not
      // an error, because && stops at the false driver comparison.
      {"gpu class on a GPU",
       "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
       a100(), nv, 1},
      {"gpu class on a MIG device",
       "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
       mig(), nv, 0},
      {"gpu class on another driver's device",
       "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
       example(), "driver.example.com", 0},
      {"mig class",
       "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
       mig(), nv, 1},
      // NVIDIA's guide: "Request only A100s by matching the productName attribute".
      {"A100 by product regex",
       "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')", a100(),
       nv, 1},
      {"A100 regex on an H100",
       "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')", h100(),
       nv, 0},
      // The B200 class: productName by regex.
      {"B200 regex", "device.attributes[\"gpu.nvidia.com\"].productName.matches(\"^NVIDIA B200$\")",
       b200(), nv, 1},
      {"B200 regex on an A100",
       "device.attributes[\"gpu.nvidia.com\"].productName.matches(\"^NVIDIA B200$\")", a100(), nv,
       0},
      // "more than 40 GiB": 80 GiB is more.
      {"more than 40Gi",
       "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity(\"40Gi\"))", a100(), nv, 1},
      {"MIG 1g.10gb is not more than 40Gi",
       "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity(\"40Gi\"))", mig(), nv, 0},
      // "at least 80Gi": 81920 MiB is exactly 80 GiB; the H100's 81559 MiB is not.
      {"at least 80Gi, A100-80GB",
       "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0", a100(), nv, 1},
      {"at least 80Gi, H100 80GB",
       "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0", h100(), nv, 0},
      // NVIDIA's Hopper example: architecture and more than 80 GiB; no H100 80GB qualifies.
      {"Hopper above 80Gi",
       "device.attributes['gpu.nvidia.com'].architecture == "
       "'Hopper'\n&&\ndevice.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity(\"80Gi\"))",
       h100(), nv, 0},
      {"driver version",
       "device.attributes[\"gpu.nvidia.com\"].driverVersion.compareTo(semver(\"550.0.0\")) >= 0",
       a100(), nv, 1},
      {"compute capability",
       "device.attributes['gpu.nvidia.com'].cudaComputeCapability.isLessThan(semver('9.0.0'))",
       a100(), nv, 1},
      {"SMs", "device.capacity['gpu.nvidia.com'].multiprocessors.isGreaterThan(quantity(\"10\"))",
       a100(), nv, 1},
      // The Kubernetes docs' example claim: the example driver's 64Gi GPU.
      {"k8s docs example",
       "device.attributes[\"driver.example.com\"].type == \"gpu\" &&\n    "
       "device.capacity[\"driver.example.com\"].memory == quantity(\"64Gi\")",
       example(), "driver.example.com", 1},
      {"quantity equality across forms", "quantity('1') == quantity('1000m')", a100(), nv, 1},
      {"in a list", "device.attributes['gpu.nvidia.com'].architecture in ['Hopper', 'Blackwell']",
       b200(), nv, 1},
      {"key in a map", "'profile' in device.attributes['gpu.nvidia.com']", mig(), nv, 1},
      {"has() of a missing attribute", "has(device.attributes['gpu.nvidia.com'].index)", a100(), nv,
       0},
      {"unknown domain is an empty map",
       "has(device.attributes['example.com'].x) || 'x' in device.attributes['example.com']", a100(),
       nv, 0},
      {"standard attributes",
       "device.attributes['resource.kubernetes.io'].numaNode == 0 && "
       "device.attributes['resource.kubernetes.io'].pcieRoot.startsWith('pci0000')",
       a100(), nv, 1},
      {"string functions",
       "device.attributes['gpu.nvidia.com'].productName.endsWith('80GB') && "
       "device.attributes['gpu.nvidia.com'].productName.contains('SXM4') && "
       "device.attributes['gpu.nvidia.com'].productName.size() == 21",
       a100(), nv, 1},
      {"ternary and negation",
       "!(device.attributes['gpu.nvidia.com'].type == 'mig') ? true : false", a100(), nv, 1},
      {"semver parts",
       "device.attributes['gpu.nvidia.com'].driverVersion.major() == 580 && "
       "device.attributes['gpu.nvidia.com'].driverVersion.minor() == 126",
       a100(), nv, 1},
      {"prerelease sorts before release", "semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))",
       a100(), nv, 1},
      {"global matches", "matches(device.attributes['gpu.nvidia.com'].productName, '(?i)b200')",
       b200(), nv, 1},
      // CEL's commutative logic: false && error is false, true || error is true.
      {"false absorbs an error", "device.attributes['gpu.nvidia.com'].missing == 1 && false",
       a100(), nv, 0},
      {"true absorbs an error", "device.attributes['gpu.nvidia.com'].missing == 1 || true", a100(),
       nv, 1},
      {"error && true is an error", "device.attributes['gpu.nvidia.com'].missing == 1 && true",
       a100(), nv, -1, "no such key: missing"},
      {"unknown attribute aborts", "device.attributes['gpu.nvidia.com'].index == 0", a100(), nv, -1,
       "no such key: index"},
      {"comparison across dynamic types is an error",
       "device.attributes['gpu.nvidia.com'].productName < 3", a100(), nv, -1, "no such overload"},
      {"equality across dynamic types is false",
       "device.attributes['gpu.nvidia.com'].productName == 3", a100(), nv, 0},
      // A pattern that is not a literal is compiled when evaluated; a bad one is a runtime error.
      {"dynamic regex",
       "'NVIDIA A100-SXM4-80GB'.matches(device.attributes['gpu.nvidia.com'].productName)", a100(),
       nv, 1},
  };
  for (const Case& c : cases)
    run(c);
}

TEST_CASE("a regex that only an attribute supplies is checked when the selector runs") {
  dra::Device d = a100();
  d.attributes.push_back({"gpu.nvidia.com", "pattern", s("(unclosed")});
  auto p = cel::Program::compile("'x'.matches(device.attributes['gpu.nvidia.com'].pattern)");
  REQUIRE(p.ok());
  const cel::EvalResult r = p->eval(cel::SliceDeviceView(d, "gpu.nvidia.com"));
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("invalid regular expression") != std::string::npos);
}

TEST_CASE("CEL compile errors name the line, column and construct") {
  struct ErrCase {
    const char* expr;
    const char* want;  // a substring of the error, starting with the position
  };
  const std::vector<ErrCase> cases = {
      {"device.foo == 1", "1:8: undefined field 'foo' of device"},
      {"dev.driver == 'x'", "1:1: undeclared reference to 'dev'"},
      {"device.driver == 'a' && size(device.driver) + 1 > 2",
       "1:45: arithmetic ('+') is not supported"},
      {"device.capacity['a'].memory > 1.5", "1:31: floating-point literals are not supported"},
      {"device.capacity['a'].memory < quantity('1')",
       "1:29: '<' is not defined on quantity values; use compareTo()"},
      {"device.driver.foo('x')", "1:15: unsupported function 'foo'"},
      {"device.driver.matches('(a')",
       "1:23: invalid regular expression: offset 0: missing closing )"},
      {"device.driver.matches('a\\\\1')", "invalid regular expression: offset 1: backreferences"},
      {"quantity('12Q').isGreaterThan(quantity('1'))", "1:10: invalid quantity '12Q'"},
      {"semver('1.0') == semver('1.0.0')", "1:8: invalid semver '1.0'"},
      {"device.driver == 1", "1:15: no matching overload for '==' applied to (string, int)"},
      {"device.driver", "1:8: a selector must be a boolean expression, not string"},
      {"'abc", "1:1: unterminated string literal"},
      {"device.driver = 'x'", "1:15: unexpected '=' (use == to compare)"},
      {"1u == 1u", "1:1: unsigned integer literals are not supported"},
      {"{'a': 1}['a'] == 1", "1:1: map literals are not supported"},
      {"null == device.driver", "1:1: null is not supported"},
      {"b'x' == b'x'", "1:1: bytes literals are not supported"},
      {"device.driver == 'x'\n  && device.attributes['d'].x.lowerAscii(1)",
       "2:31: no overload of .lowerAscii() takes 1 argument(s)"},
      {"", "1:1: the expression is empty"},
      {"(device.driver == 'x'", "1:22: expected ')', found end of expression"},
      {"has(device)", "1:1: has() takes one field selection"},
      {"-device.driver == 'x'", "1:1: unary minus is only supported before an integer literal"},
      {"device.driver == 'x' ||", "1:24: unexpected end of expression"},
  };
  for (const ErrCase& c : cases) {
    CAPTURE(c.expr);
    auto p = cel::Program::compile(c.expr);
    REQUIRE_FALSE(p.ok());
    CHECK_MESSAGE(p.error().find(c.want) != std::string::npos, p.error());
  }
}

TEST_CASE("CEL refuses oversized and over-nested expressions and stops at its cost limit") {
  // 200 nested parentheses: an error, not a stack overflow.
  std::string deep(200, '(');
  deep += "true";
  deep += std::string(200, ')');
  auto p = cel::Program::compile(deep);
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().find("nests deeper than 100 levels") != std::string::npos);

  // 300 chained comparisons nest as deep as they are long.
  std::string chain = "true";
  for (int k = 0; k < 300; ++k)
    chain += " == true";
  p = cel::Program::compile(chain);
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().find("nests deeper") != std::string::npos);

  // A long || chain is flat (n-ary), so it compiles.
  std::string wide = "false";
  for (int k = 0; k < 500; ++k)
    wide += " || false";
  wide += " || true";
  p = cel::Program::compile(wide);
  REQUIRE(p.ok());
  const dra::Device d = a100();
  CHECK(p->eval(cel::SliceDeviceView(d, "gpu.nvidia.com")).value);

  // 10 KiB is the upstream limit on an expression's length.
  std::string huge = "device.driver == '" + std::string(10 * 1024, 'x') + "'";
  p = cel::Program::compile(huge);
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().find("at most 10240 are allowed") != std::string::npos);

  // The same 502-term expression costs more than a limit of 100: the evaluation stops.
  cel::Limits small;
  small.max_cost = 100;
  p = cel::Program::compile(wide, small);
  REQUIRE(p.ok());
  const cel::EvalResult r = p->eval(cel::SliceDeviceView(d, "gpu.nvidia.com"));
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("cost limit of 100") != std::string::npos);
}

TEST_CASE("semver parsing and precedence follow semver 2.0.0") {
  struct SvCase {
    const char* a;
    const char* b;
    int want;
  };
  for (const SvCase& c : std::vector<SvCase>{{"1.0.0", "2.0.0", -1},
                                             {"2.1.0", "2.0.9", 1},
                                             {"1.0.0-alpha", "1.0.0", -1},
                                             {"1.0.0-alpha.1", "1.0.0-alpha.beta", -1},
                                             {"1.0.0-2", "1.0.0-11", -1},
                                             {"1.0.0+build.1", "1.0.0+build.2", 0},
                                             {"580.126.20", "550.0.0", 1}}) {
    CAPTURE(c.a);
    CAPTURE(c.b);
    auto a = cel::parse_semver(c.a);
    auto b = cel::parse_semver(c.b);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(cel::compare_semver(*a, *b) == c.want);
  }
  for (const char* bad : {"1.0", "01.0.0", "1.0.0-", "1.0.0-01", "a.b.c", "1..0"}) {
    CAPTURE(bad);
    CHECK_FALSE(cel::parse_semver(bad).ok());
  }
}
