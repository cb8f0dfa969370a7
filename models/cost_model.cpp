#include "models/cost_model.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/yaml_reader.hpp"

namespace capsim {

namespace {

Pricing parse_pricing(const YamlNode& n) {
  const std::string s = n.str();
  if (s == "on_demand") return Pricing::kOnDemand;
  if (s == "reserved") return Pricing::kReserved;
  if (s == "purchase") return Pricing::kPurchase;
  n.fail(fmt::format("unknown pricing '{}' (use on_demand, reserved or purchase){}", s,
                     did_you_mean(s, {"on_demand", "reserved", "purchase"})));
}

[[noreturn]] void fail_at(const InputLocation& where, const std::string& message) {
  throw InputError(InputErrorKind::kInvalid, where, message);
}

}  // namespace

std::string_view pricing_name(Pricing p) {
  switch (p) {
    case Pricing::kOnDemand:
      return "on_demand";
    case Pricing::kReserved:
      return "reserved";
    case Pricing::kPurchase:
      return "purchase";
  }
  return "?";
}

CostConfig CostConfig::parse(const YamlNode& node, const GpuCatalog& catalog) {
  CostConfig c;
  c.location = node.where();
  MapReader m = node.map();
  if (auto v = m.opt("pricing")) c.pricing = parse_pricing(*v);
  if (auto v = m.opt("reserved_discount")) c.reserved_discount = v->number(0, 1);
  c.amortization_years = m.num_or("amortization_years", 4, 0.01, 100);
  if (auto e = m.opt("energy")) {
    MapReader em = e->map();
    c.energy.price_per_kwh = em.num_or("price_per_kwh", 0, 0, 1e6);
    c.energy.pue = em.num_or("pue", 1.0, 1.0, 10.0);
    em.finish();
  }
  if (auto models = m.opt("models")) {
    if (!models->is_map()) models->fail("models must map GPU model names to prices");
    for (const auto& [name, v] : models->entries()) {
      const GpuModel* model = catalog.find(name);
      if (model == nullptr) {
        std::vector<std::string> names;
        for (const GpuModel& g : catalog.models())
          names.push_back(g.name);
        v.fail(fmt::format("unknown GPU model '{}'{}", name, did_you_mean(name, names)));
      }
      if (c.models.count(model->name)) {
        v.fail(fmt::format("prices for {} are given twice", model->name));
      }
      MapReader pm = v.map();
      ModelPrices p;
      p.where = v.where();
      if (auto x = pm.opt("on_demand")) p.on_demand = x->number(0, 1e9);
      if (auto x = pm.opt("reserved")) p.reserved = x->number(0, 1e9);
      if (auto x = pm.opt("purchase")) p.purchase = x->number(0, 1e12);
      pm.finish();
      c.models.emplace(model->name, p);
    }
  }
  if (auto pools = m.opt("pools")) {
    if (!pools->is_map()) pools->fail("pools must map pool names to their pricing");
    for (const auto& [name, v] : pools->entries()) {
      MapReader pm = v.map();
      PoolPricing p;
      p.where = v.where();
      if (auto x = pm.opt("pricing")) p.pricing = parse_pricing(*x);
      if (auto x = pm.opt("purchase_price")) p.purchase_price = x->number(0, 1e12);
      if (auto x = pm.opt("rack_price_per_hour")) p.rack_price_per_hour = x->number(0, 1e9);
      if (auto x = pm.opt("rack_purchase_price")) {
        if (p.rack_price_per_hour) {
          x->fail("give a rack either rack_price_per_hour or rack_purchase_price, not both");
        }
        p.rack_purchase_price = x->number(0, 1e12);
      }
      pm.finish();
      c.pools.emplace(name, p);
    }
  }
  m.finish();
  return c;
}

double CostConfig::node_price_per_hour(const std::string& pool, const GpuModel* model,
                                       std::int32_t gpus, std::optional<double> input_price,
                                       const InputLocation& where) const {
  Pricing p = pricing;
  const PoolPricing* pp = nullptr;
  if (auto it = pools.find(pool); it != pools.end()) {
    pp = &it->second;
    if (pp->pricing) p = *pp->pricing;
  }
  const ModelPrices* mp = nullptr;
  if (model != nullptr) {
    if (auto it = models.find(model->name); it != models.end()) mp = &it->second;
  }
  const bool has_gpus = model != nullptr && gpus > 0;
  const std::string what = pool.empty() ? "this node" : fmt::format("pool '{}'", pool);

  auto on_demand = [&]() -> double {
    if (input_price) return *input_price;
    if (!has_gpus) return 0.0;
    if (mp && mp->on_demand) return gpus * *mp->on_demand;
    return gpus * model->price_per_hour;
  };

  switch (p) {
    case Pricing::kOnDemand:
      return on_demand();
    case Pricing::kReserved:
      if (has_gpus && !input_price && mp && mp->reserved) return gpus * *mp->reserved;
      if (!reserved_discount) {
        fail_at(where, fmt::format("{} uses reserved pricing but no reserved price is known{}: set "
                                   "cost.reserved_discount{}",
                                   what, has_gpus ? fmt::format(" for {}", model->name) : "",
                                   has_gpus && !input_price
                                       ? fmt::format(" or cost.models.{}.reserved", model->name)
                                       : ""));
      }
      return on_demand() * (1.0 - *reserved_discount);
    case Pricing::kPurchase: {
      double price = 0;
      if (pp && pp->purchase_price) {
        price = *pp->purchase_price;
      } else if (has_gpus && mp && mp->purchase) {
        price = gpus * *mp->purchase;
      } else {
        fail_at(where, fmt::format("{} uses purchase pricing but no purchase price is known: set {}"
                                   "cost.pools.{}.purchase_price (per node)",
                                   what,
                                   has_gpus ? fmt::format("cost.models.{}.purchase (per GPU) or ",
                                                          model->name)
                                            : "",
                                   pool.empty() ? "<pool>" : pool));
      }
      return price / (amortization_years * kHoursPerYear);
    }
  }
  return 0.0;
}

double CostConfig::rack_price_per_hour(const std::string& pool) const {
  auto it = pools.find(pool);
  if (it == pools.end()) return 0.0;
  const PoolPricing& p = it->second;
  if (p.rack_price_per_hour) return *p.rack_price_per_hour;
  if (p.rack_purchase_price) return *p.rack_purchase_price / (amortization_years * kHoursPerYear);
  return 0.0;
}

void CostConfig::check_pools(const std::vector<std::string>& pool_names,
                             const std::vector<std::string>& racked_pools) const {
  auto has = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (const auto& [name, p] : pools) {
    if (!has(pool_names, name)) {
      fail_at(p.where, fmt::format("cost.pools names pool '{}', which the cluster does not have{}",
                                   name, did_you_mean(name, pool_names)));
    }
    if ((p.rack_price_per_hour || p.rack_purchase_price) && !has(racked_pools, name)) {
      fail_at(p.where, fmt::format("cost.pools.{} prices racks, but pool '{}' has no racks: give "
                                   "it a topology: {{racks: ...}} in cluster.pools",
                                   name, name));
    }
  }
}

}  // namespace capsim
