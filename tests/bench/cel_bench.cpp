// DRA selector cost: compiling a selector, and evaluating the documentation's selectors against a
// published GPU device (the allocator caches verdicts per device, so evaluation runs once per
// selector and device in a run).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "models/dra/cel.hpp"

using namespace capsim;

namespace {

dra::Device h100() {
  auto text = [](const char* v) {
    dra::AttrValue a;
    a.s = v;
    return a;
  };
  dra::AttrValue ver;
  ver.kind = dra::AttrValue::Kind::kVersion;
  ver.s = "580.126.20";
  dra::Device d;
  d.name = "gpu-0";
  const std::string n = "gpu.nvidia.com";
  d.attributes = {{n, "type", text("gpu")},
                  {n, "productName", text("NVIDIA H100 80GB HBM3")},
                  {n, "architecture", text("Hopper")},
                  {n, "brand", text("Nvidia")},
                  {n, "driverVersion", ver},
                  {"resource.kubernetes.io", "pcieRoot", text("pci0000:10")}};
  d.capacity = {{n, "memory", std::int64_t{81559} * 1024 * 1024 * 1000},
                {n, "multiprocessors", 132000}};
  return d;
}

const std::vector<std::string> kSelectors = {
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
    "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*h100.*$')",
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0",
    "device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('550.0.0')) >= 0",
};

void BM_CelCompile(benchmark::State& state) {
  const std::string& expr = kSelectors[static_cast<std::size_t>(state.range(0))];
  for (auto _ : state) {
    auto p = cel::Program::compile(expr);
    benchmark::DoNotOptimize(p.ok());
  }
}
BENCHMARK(BM_CelCompile)->DenseRange(0, 3);

void BM_CelEval(benchmark::State& state) {
  const auto p = cel::Program::compile(kSelectors[static_cast<std::size_t>(state.range(0))]);
  if (!p.ok()) {
    state.SkipWithError(p.error().c_str());
    return;
  }
  const dra::Device d = h100();
  const cel::SliceDeviceView view(d, "gpu.nvidia.com");
  for (auto _ : state) {
    const cel::EvalResult r = p->eval(view);
    benchmark::DoNotOptimize(r.value);
  }
}
BENCHMARK(BM_CelEval)->DenseRange(0, 3);

}  // namespace
