// The scenario's `cost:` section (docs/scenario-format.md): how each node's hourly price is made
// (on-demand or reserved GPU-hour prices, or a purchase price amortised over a life in years) and
// what energy costs (price per kWh, PUE). The loader asks node_price_per_hour() for every node it
// adds; the energy part goes to the simulation's CostLedger. Parsing reports file:line:field.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "sim/cost_ledger.hpp"
#include "sim/input_error.hpp"

namespace capsim {

class YamlNode;

enum class Pricing { kOnDemand, kReserved, kPurchase };

// "on_demand", "reserved", "purchase".
std::string_view pricing_name(Pricing p);

inline constexpr double kHoursPerYear = 8760.0;  // 365 days; amortisation ignores leap days

struct ModelPrices {
  std::optional<double> on_demand;  // per GPU-hour
  std::optional<double> reserved;   // per GPU-hour
  std::optional<double> purchase;   // per GPU
  InputLocation where;
};

struct PoolPricing {
  std::optional<Pricing> pricing;
  std::optional<double> purchase_price;  // per node
  // A rack's own infrastructure (NVLink switch trays, power shelves, cooling, top-of-rack
  // network), on top of its nodes' prices: per rack-hour, or a purchase price amortised over
  // amortization_years. For pools with a `topology:` only.
  std::optional<double> rack_price_per_hour;
  std::optional<double> rack_purchase_price;
  InputLocation where;
};

struct CostConfig {
  Pricing pricing = Pricing::kOnDemand;
  std::optional<double> reserved_discount;  // 0..1
  double amortization_years = 4;
  EnergyPricing energy;
  std::map<std::string, ModelPrices> models;  // by canonical catalog name
  std::map<std::string, PoolPricing> pools;   // by pool name
  InputLocation location;                     // of the `cost:` section

  // Reads a `cost:` mapping. Model names are checked against `catalog`.
  static CostConfig parse(const YamlNode& node, const GpuCatalog& catalog);

  // A node's hourly price under its pool's pricing. `input_price` is the price_per_hour the
  // cluster section or a manifest gave for the node; it counts as the node's on-demand price.
  //   on_demand: input_price, else gpus x (cost.models on_demand, else the catalog price)
  //   reserved:  gpus x cost.models reserved, else the on-demand price x (1 - reserved_discount)
  //   purchase:  (cost.pools purchase_price, else gpus x cost.models purchase) / (years x 8760)
  // Throws InputError at `where` when the pricing needs a price nobody gave.
  double node_price_per_hour(const std::string& pool, const GpuModel* model, std::int32_t gpus,
                             std::optional<double> input_price, const InputLocation& where) const;

  // The hourly price of one rack of `pool` beyond its nodes' prices (0 when none is given):
  // rack_price_per_hour, or rack_purchase_price / (amortization_years x 8760).
  double rack_price_per_hour(const std::string& pool) const;

  // Fails at the entry's location when cost.pools names a pool the cluster does not have, or
  // prices racks of a pool that has no `topology:` (`racked_pools` are those that have one).
  void check_pools(const std::vector<std::string>& pool_names,
                   const std::vector<std::string>& racked_pools) const;
};

}  // namespace capsim
