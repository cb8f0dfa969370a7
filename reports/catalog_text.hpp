// Text and JSON renderings of the GPU catalog for `capsim catalog [MODEL] [--json]`. Pure
// functions of the catalog (presentation, so it lives in reports/ beside the other renderers): the
// CLI prints the returned string on stdout. The JSON mirrors the YAML field names of
// models/catalog/gpus.yaml (docs/gpu-catalog.md), so a script can read both.
#pragma once

#include <string>
#include <string_view>

#include "models/gpu_catalog.hpp"

namespace capsim {

// One header line, then one line per model: name, architecture, memory (GiB), SMs, TDP (W),
// default price (USD per GPU-hour), MIG yes/no, and "trace" for trace-only models.
std::string render_catalog_table(const GpuCatalog& catalog);

// Every field of one model, its MIG geometry and profile table (profile, ID, slices, memory, SMs,
// start slots, max instances) and its presets.
std::string render_model_detail(const GpuModel& model);

// {"models": [...]} with one object per model, as render_model_json writes it.
std::string render_catalog_json(const GpuCatalog& catalog);
std::string render_model_json(const GpuModel& model);

}  // namespace capsim
