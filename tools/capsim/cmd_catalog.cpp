// `capsim catalog [MODEL] [--json]`: the GPU catalog, or one model in detail.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "models/gpu_catalog.hpp"
#include "models/mig_layout.hpp"
#include "models/yaml_reader.hpp"
#include "reports/catalog_text.hpp"
#include "tools/capsim/cli.hpp"
#include "tools/capsim/commands.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

int cmd_catalog(const std::vector<std::string>& args) {
  return guarded("catalog", [&]() -> int {
    po::options_description opts("Usage: capsim catalog [MODEL] [options]\n\nOptions");
    std::string model;
    opts.add_options()("help,h", "show this help")("json", "print JSON")(
        "layouts", "list every maximal MIG layout of MODEL (valid by placement, not slice counts)")(
        "media-extensions", "with --layouts: include +me profiles");
    const po::variables_map vm = parse_command_line(opts, args, {{"model", po::value(&model), 1}});
    if (vm.count("help")) {
      std::cout << opts;
      return kOk;
    }
    const GpuCatalog& cat = GpuCatalog::builtin();
    const bool json = vm.count("json") > 0;
    if (model.empty()) {
      std::cout << (json ? render_catalog_json(cat) : render_catalog_table(cat));
      return kOk;
    }
    const GpuModel* m = cat.find(model);
    if (m == nullptr) {
      throw UsageError(fmt::format("unknown GPU model '{}'{}", model,
                                   did_you_mean(model, cat.suggestions(model))));
    }
    if (vm.count("layouts")) {
      if (!m->mig_capable()) throw UsageError(fmt::format("{} does not support MIG", m->name));
      const GpuModelInfo info = to_model_info(*m);
      const auto layouts = maximal_layouts(info, vm.count("media-extensions") > 0);
      if (json) {
        std::string out = "[";
        for (std::size_t i = 0; i < layouts.size(); ++i) {
          const auto placed = place_profiles(info, layouts[i]);
          out += fmt::format("{}\n  {{\"layout\": \"{}\", \"compute_slices\": {}, \"instances\": [",
                             i ? "," : "", json_escape(describe(info, layouts[i])),
                             compute_slices(info, layouts[i]));
          for (std::size_t k = 0; k < placed->instances.size(); ++k) {
            const auto& inst = placed->instances[k];
            out += fmt::format("{}{{\"profile\": \"{}\", \"start\": {}, \"size\": {}}}",
                               k ? ", " : "", json_escape(info.mig_profiles[inst.profile].name),
                               static_cast<int>(inst.start), static_cast<int>(inst.size));
          }
          out += "]}";
        }
        std::cout << out << "\n]\n";
        return kOk;
      }
      std::cout << fmt::format("Maximal MIG layouts of {} ({} memory slots, {} compute slots){}:\n",
                               m->name, info.mig_memory_slots, info.mig_compute_slots,
                               vm.count("media-extensions") ? "" : ", without +me profiles");
      std::cout << fmt::format("  {:<44} {:>7}  {}\n", "LAYOUT", "COMPUTE",
                               "PLACEMENT (profile@start slot)");
      std::size_t full = 0;
      for (const auto& l : layouts) {
        const auto placed = place_profiles(info, l);
        std::string where;
        for (const auto& inst : placed->instances) {
          where += fmt::format("{}{}@{}", where.empty() ? "" : " ",
                               info.mig_profiles[inst.profile].name, static_cast<int>(inst.start));
        }
        const auto c = compute_slices(info, l);
        if (c == info.mig_compute_slots) ++full;
        std::cout << fmt::format("  {:<44} {:>5}/{}  {}\n", describe(info, l), c,
                                 info.mig_compute_slots, where);
      }
      std::cout << fmt::format("{} maximal layouts, {} of them use every compute slice.\n",
                               layouts.size(), full);
      return kOk;
    }
    std::cout << (json ? render_model_json(*m) : render_model_detail(*m));
    return kOk;
  });
}

}  // namespace capsim::cli
