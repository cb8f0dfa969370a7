// libFuzzer target for the CEL selector compiler and evaluator and the regex matcher behind
// matches(). Every input is compiled as a selector and, when it compiles, evaluated against a
// full GPU, a MIG device and another driver's device; every input is also split at its first
// newline into a regex pattern and a text to search. Crashes, sanitizer reports, hangs (past
// libFuzzer's -timeout) and broken result contracts (__builtin_trap) are findings.
//   cmake --preset fuzz && cmake --build --preset fuzz --target capsim_cel_fuzz
//   build/fuzz/tests/fuzz/capsim_cel_fuzz -max_total_time=60 WORKDIR tests/fuzz/corpus/cel
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/dra/cel.hpp"

namespace {

using capsim::dra::AttrValue;
using capsim::dra::Device;

AttrValue text(const char* v) {
  AttrValue a;
  a.kind = AttrValue::Kind::kString;
  a.s = v;
  return a;
}

const Device& gpu() {
  static const Device d = [] {
    Device x;
    x.name = "gpu-0";
    const char* n = "gpu.nvidia.com";
    AttrValue ver;
    ver.kind = AttrValue::Kind::kVersion;
    ver.s = "580.126.20";
    AttrValue cc = ver;
    cc.s = "9.0.0";
    AttrValue numa;
    numa.kind = AttrValue::Kind::kInt;
    numa.i = 1;
    AttrValue flag;
    flag.kind = AttrValue::Kind::kBool;
    flag.b = true;
    x.attributes = {{n, "type", text("gpu")},
                    {n, "productName", text("NVIDIA H100 80GB HBM3")},
                    {n, "architecture", text("Hopper")},
                    {n, "driverVersion", ver},
                    {n, "cudaComputeCapability", cc},
                    {n, "bad", text("(unclosed")},
                    {n, "flag", flag},
                    {"resource.kubernetes.io", "numaNode", numa},
                    {"resource.kubernetes.io", "pcieRoot", text("pci0000:10")}};
    x.capacity = {{n, "memory", std::int64_t{81559} * 1024 * 1024 * 1000},
                  {n, "multiprocessors", 132000}};
    return x;
  }();
  return d;
}

const Device& mig() {
  static const Device d = [] {
    Device x = gpu();
    x.name = "gpu-0-mig-1g10gb-19-0";
    x.attributes[0].value = text("mig");
    x.attributes.push_back({"gpu.nvidia.com", "profile", text("1g.10gb")});
    return x;
  }();
  return d;
}

const Device& other() {
  static const Device d = [] {
    Device x;
    x.name = "nic-0";
    x.attributes = {{"dra.net", "ifName", text("eth1")}};
    return x;
  }();
  return d;
}

void check(const capsim::cel::EvalResult& r) {
  // Contract: a result is a value or an error message, and evaluation stays near its cost limit.
  if (r.ok != r.error.empty()) __builtin_trap();
  if (r.cost > capsim::cel::Limits{}.max_cost * 2 + 1000) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);

  auto program = capsim::cel::Program::compile(in);
  if (program.ok()) {
    check(program->eval(capsim::cel::SliceDeviceView(gpu(), "gpu.nvidia.com")));
    check(program->eval(capsim::cel::SliceDeviceView(mig(), "gpu.nvidia.com")));
    check(program->eval(capsim::cel::SliceDeviceView(other(), "dra.net")));
  } else if (program.error().empty()) {
    __builtin_trap();  // an error always says what is wrong
  }

  const auto nl = in.find('\n');
  const std::string_view pattern = in.substr(0, nl);
  const std::string_view subject = nl == std::string_view::npos ? in : in.substr(nl + 1);
  auto re = capsim::cel::Regex::compile(pattern);
  if (re.ok()) {
    std::uint64_t budget = 1000000;
    (void)re->search(subject, budget);
  }
  return 0;
}
