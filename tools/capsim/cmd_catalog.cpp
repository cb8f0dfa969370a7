// `capsim catalog [MODEL] [--json]`: the GPU catalog, or one model in detail.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "models/catalog_text.hpp"
#include "models/gpu_catalog.hpp"
#include "models/yaml_reader.hpp"
#include "tools/capsim/cli.hpp"

namespace po = boost::program_options;

namespace capsim::cli {

int cmd_catalog(const std::vector<std::string>& args) {
  return guarded("catalog", [&]() -> int {
    po::options_description opts("Usage: capsim catalog [MODEL] [options]\n\nOptions");
    std::string model;
    opts.add_options()("help,h", "show this help")("json", "print JSON");
    po::options_description hidden;
    hidden.add_options()("model", po::value(&model));
    po::options_description all;
    all.add(opts).add(hidden);
    po::positional_options_description pos;
    pos.add("model", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
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
    std::cout << (json ? render_model_json(*m) : render_model_detail(*m));
    return kOk;
  });
}

}  // namespace capsim::cli
