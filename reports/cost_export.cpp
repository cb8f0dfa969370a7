#include "reports/cost_export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <map>

#include "reports/text/json.hpp"

namespace capsim {

namespace {

constexpr std::string_view kIdle = "__idle__";
constexpr std::string_view kUnallocated = "__unallocated__";

double hours_of(SimTime a, SimTime b) {
  return b > a ? to_hours(b - a) : 0.0;
}

// The allocation name a charge falls under for `aggregate`.
std::string aggregate_key(const PodCharge& c, const std::string& aggregate) {
  auto or_unallocated = [](const std::string& v) {
    return v.empty() ? std::string(kUnallocated) : v;
  };
  if (aggregate == "pod") return or_unallocated(c.pod);
  if (aggregate == "queue") return or_unallocated(c.queue);
  if (aggregate == "node") return or_unallocated(c.node);
  if (aggregate == "controller") return or_unallocated(c.job);
  if (aggregate == "namespace") return or_unallocated(c.pod.empty() ? "" : c.namespace_);
  if (aggregate.rfind("label:", 0) == 0) {
    const auto it = c.labels.find(aggregate.substr(6));
    return it == c.labels.end() ? std::string(kUnallocated) : or_unallocated(it->second);
  }
  return or_unallocated(c.pod);
}

// One OpenCost allocation being summed.
struct Allocation {
  std::string name;
  SimTime first = kEndOfTime, last = 0;  // running span inside the window
  ChargeSums sums;
  // Properties: kept while every charge agrees, dropped (empty) when they differ.
  std::string node, namespace_, pod, controller, controller_kind, queue;
  std::map<std::string, std::string> labels;
  bool seen = false;

  void add(const PodCharge& c, SimTime from, SimTime to) {
    auto agree = [&](std::string& have, const std::string& v) {
      if (!seen) {
        have = v;
      } else if (have != v) {
        have.clear();
      }
    };
    agree(node, c.node);
    agree(namespace_, c.pod.empty() ? "" : c.namespace_);
    agree(pod, c.pod);
    agree(controller, c.job);
    agree(controller_kind, c.owner_kind);
    agree(queue, c.queue);
    if (!seen) {
      labels = c.labels;
    } else {
      for (auto it = labels.begin(); it != labels.end();) {
        const auto other = c.labels.find(it->first);
        it = other == c.labels.end() || other->second != it->second ? labels.erase(it)
                                                                    : std::next(it);
      }
    }
    seen = true;
    first = std::min(first, std::max(from, c.start));
    last = std::max(last, std::min(to, c.end));
    sums.add(c.sums_in(from, to));
  }
};

std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string out = "\"";
  for (char ch : v) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

// A FOCUS decimal: plain notation, up to 12 decimals, no trailing zeros.
std::string decimal(double v) {
  if (!std::isfinite(v)) return "";
  if (std::abs(v) < 5e-13) v = 0;
  std::string s = fmt::format("{:.12f}", v);
  while (!s.empty() && s.back() == '0')
    s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

}  // namespace

std::optional<SimDuration> parse_cost_window(std::string_view text) {
  if (text.size() < 2) return std::nullopt;
  SimDuration unit = 0;
  switch (text.back()) {
    case 'm':
      unit = kMinute;
      break;
    case 'h':
      unit = kHour;
      break;
    case 'd':
      unit = kDay;
      break;
    case 'w':
      unit = 7 * kDay;
      break;
    default:
      return std::nullopt;
  }
  std::int64_t n = 0;
  for (char ch : text.substr(0, text.size() - 1)) {
    if (!std::isdigit(static_cast<unsigned char>(ch))) return std::nullopt;
    n = n * 10 + (ch - '0');
    if (n > 1'000'000) return std::nullopt;
  }
  if (n <= 0) return std::nullopt;
  return n * unit;
}

bool valid_cost_aggregate(std::string_view a) {
  if (a == "pod" || a == "queue" || a == "node" || a == "namespace" || a == "controller") {
    return true;
  }
  return a.rfind("label:", 0) == 0 && a.size() > 6;
}

std::string utc_timestamp(double epoch_s) {
  const std::time_t t = static_cast<std::time_t>(std::llround(epoch_s));
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::vector<std::pair<SimTime, SimTime>> cost_windows(const CostAllocation& a, SimDuration window,
                                                      double origin) {
  std::vector<std::pair<SimTime, SimTime>> out;
  if (window <= 0) {
    out.emplace_back(0, a.end);
    return out;
  }
  // Window k covers wall-clock [k x len, (k+1) x len); simulated time t is origin + t.
  const SimTime origin_us = from_seconds(origin);
  const SimTime first = (origin_us / window) * window - origin_us;  // <= 0
  for (SimTime s = first; s < a.end || out.empty(); s += window)
    out.emplace_back(s, s + window);
  return out;
}

std::string render_opencost(const CostAllocation& a, const CostExportOptions& o) {
  const double origin = o.origin_epoch_s;
  auto stamp = [&](SimTime t) { return json_quote(utc_timestamp(origin + to_seconds(t))); };
  auto num = [](double v) { return json_number(std::abs(v) < 1e-12 ? 0.0 : v); };

  std::string out = "{\"code\":200,\"status\":\"success\",\"data\":[";
  const auto windows = cost_windows(a, o.window, origin);
  for (std::size_t w = 0; w < windows.size(); ++w) {
    // Not a structured binding: the lambdas below capture them, which clang++ 14 cannot do.
    const SimTime from = windows[w].first;
    const SimTime to = windows[w].second;
    std::map<std::string, Allocation> set;
    for (const PodCharge& c : a.charges) {
      if (c.end <= from || c.start >= to) continue;
      Allocation& al = set[aggregate_key(c, o.aggregate)];
      al.add(c, from, to);
    }
    out += w ? ",{" : "{";
    bool first_entry = true;
    // capsim's node price is one number: a GPU node's is its GPUs' (the ledger splits it by the
    // GPU share each pod holds), a CPU-only node's is split by requested CPU. So OpenCost's
    // cpuCost is what was paid on nodes without GPUs, gpuCost the rest (GPU nodes' price and the
    // GPU energy), ramCost 0; cpuCoreHours and ramByteHours are the requests held, on any node.
    auto entry = [&](const std::string& name, const std::string& properties, SimTime start,
                     SimTime end, const ChargeSums& s) {
      const double hours = hours_of(start, end);
      const double cores = hours > 0 ? s.cpu_core_hours / hours : 0.0;
      const double ram = hours > 0 ? s.ram_byte_hours / hours : 0.0;
      out += first_entry ? "\n" : ",\n";
      first_entry = false;
      out += fmt::format(
          "{}:{{\"name\":{},\"properties\":{},\"window\":{{\"start\":{},\"end\":{}}},"
          "\"start\":{},\"end\":{},\"minutes\":{},"
          "\"cpuCores\":{},\"cpuCoreRequestAverage\":{},\"cpuCoreUsageAverage\":0,"
          "\"cpuCoreHours\":{},\"cpuCost\":{},\"cpuCostAdjustment\":0,\"cpuEfficiency\":0,"
          "\"gpuCount\":{},\"gpuHours\":{},\"gpuCost\":{},\"gpuCostAdjustment\":0,"
          "\"networkTransferBytes\":0,\"networkReceiveBytes\":0,\"networkCost\":0,"
          "\"networkCostAdjustment\":0,\"loadBalancerCost\":0,\"loadBalancerCostAdjustment\":0,"
          "\"pvBytes\":0,\"pvByteHours\":0,\"pvCost\":0,\"pvCostAdjustment\":0,"
          "\"ramBytes\":{},\"ramByteRequestAverage\":{},\"ramByteUsageAverage\":0,"
          "\"ramByteHours\":{},\"ramCost\":0,\"ramCostAdjustment\":0,\"ramEfficiency\":0,"
          "\"sharedCost\":0,\"externalCost\":0,\"totalCost\":{},\"totalEfficiency\":0}}",
          json_quote(name), json_quote(name), properties, stamp(from), stamp(to), stamp(start),
          stamp(end), num(hours * 60.0), num(cores), num(cores), num(s.cpu_core_hours),
          num(s.cpu_node_hardware), num(hours > 0 ? s.gpu_hours / hours : 0.0), num(s.gpu_hours),
          num(s.cost() - s.cpu_node_hardware), num(ram), num(ram), num(s.ram_byte_hours),
          num(s.cost()));
    };
    for (const auto& [name, al] : set) {
      std::string props = "{\"cluster\":" + json_quote(o.cluster);
      auto prop = [&](const char* key, const std::string& v) {
        if (!v.empty()) props += fmt::format(",\"{}\":{}", key, json_quote(v));
      };
      prop("node", al.node);
      prop("namespace", al.namespace_);
      prop("controller", al.controller);
      // OpenCost's controllerKind is the owner's kind in lower case ("deployment", "job"), given
      // where the allocation's charges agree on it.
      if (!al.controller.empty() && !al.controller_kind.empty()) {
        std::string kind = al.controller_kind;
        std::transform(kind.begin(), kind.end(), kind.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        prop("controllerKind", kind);
      }
      prop("pod", al.pod);
      const std::map<std::string, std::string>& labels = al.labels;
      if (!labels.empty()) {
        props += ",\"labels\":{";
        bool first = true;
        for (const auto& [k, v] : labels) {
          props += fmt::format("{}{}:{}", first ? "" : ",", json_quote(k), json_quote(v));
          first = false;
        }
        props += "}";
      }
      props += "}";
      entry(name, props, al.first, al.last, al.sums);
    }
    if (o.idle) {
      // The ledger's idle and stranded rows: what the nodes cost that no pod was charged.
      const SimTime s = std::max<SimTime>(from, 0), e = std::min(to, a.end);
      ChargeSums idle = a.idle_in(from, to);
      idle.add(a.stranded_in(from, to));
      entry(std::string(kIdle), "{\"cluster\":" + json_quote(o.cluster) + "}", s, e, idle);
    }
    out += "\n}";
  }
  out += "]}\n";
  return out;
}

const std::vector<std::string>& focus_columns() {
  static const std::vector<std::string> columns = {
      // FOCUS 1.2 mandatory columns.
      "BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodEnd",
      "BillingPeriodStart", "ChargeCategory", "ChargeClass", "ChargeDescription", "ChargePeriodEnd",
      "ChargePeriodStart", "ContractedCost", "EffectiveCost", "InvoiceIssuerName", "ListCost",
      "PricingQuantity", "PricingUnit", "ProviderName", "PublisherName", "ServiceCategory",
      "ServiceName",
      // Recommended and conditional columns capsim has values for.
      "ChargeFrequency", "ConsumedQuantity", "ConsumedUnit", "ContractedUnitPrice", "ListUnitPrice",
      "PricingCategory", "ResourceId", "ResourceName", "ResourceType", "ServiceSubcategory",
      "SkuId", "SkuPriceId", "SubAccountId", "SubAccountName", "Tags",
      // capsim's own.
      "x_Queue", "x_Pool", "x_GpuModel", "x_SharingMode", "x_Node", "x_Job", "x_Device",
      "x_CostKind", "x_RunId", "x_Scenario"};
  return columns;
}

std::string render_focus_csv(const CostAllocation& a, const CostExportOptions& o) {
  const double origin = o.origin_epoch_s;
  auto stamp = [&](SimTime t) { return utc_timestamp(origin + to_seconds(t)); };
  const SimDuration period = o.window > 0 ? o.window : kHour;
  const auto windows = cost_windows(a, period, origin);
  const std::string billing_start = stamp(windows.front().first);
  const std::string billing_end = stamp(windows.back().second);
  const std::string account = fmt::format("capsim-run-{}", a.run.run_id);
  const std::string scenario = a.run.scenario;

  std::string out;
  for (std::size_t i = 0; i < focus_columns().size(); ++i)
    out += (i ? "," : "") + focus_columns()[i];
  out += "\n";

  struct Row {
    double cost = 0, quantity = 0;
    std::string resource_id, resource_name, resource_type, description, sku, queue, pool, model,
        sharing, node, job, device, kind, tags;
  };
  auto write = [&](const Row& r, SimTime from, SimTime to) {
    const std::string unit_price = r.quantity > 0 ? decimal(r.cost / r.quantity) : "";
    const std::string quantity = decimal(r.quantity);
    const std::vector<std::string> v = {decimal(r.cost),
                                        account,
                                        scenario,
                                        a.currency,
                                        billing_end,
                                        billing_start,
                                        "Usage",
                                        "",  // ChargeClass: null (not a correction)
                                        r.description,
                                        stamp(to),
                                        stamp(from),
                                        decimal(r.cost),
                                        decimal(r.cost),
                                        "capsim",
                                        decimal(r.cost),
                                        quantity,
                                        "GPU-Hours",
                                        "capsim",
                                        "capsim",
                                        "Compute",
                                        "Kubernetes",
                                        "Usage-Based",
                                        quantity,
                                        "GPU-Hours",
                                        unit_price,
                                        unit_price,
                                        "Standard",
                                        r.resource_id,
                                        r.resource_name,
                                        r.resource_type,
                                        "Containers",
                                        r.sku,
                                        r.sku + "/" + r.sharing,
                                        r.queue.empty() ? "" : "queue/" + r.queue,
                                        r.queue,
                                        r.tags,
                                        r.queue,
                                        r.pool,
                                        r.model,
                                        r.sharing,
                                        r.node,
                                        r.job,
                                        r.device,
                                        r.kind,
                                        std::to_string(a.run.run_id),
                                        scenario};
    for (std::size_t i = 0; i < v.size(); ++i)
      out += (i ? "," : "") + csv_field(v[i]);
    out += "\n";
  };

  for (const auto& [from, to] : windows) {
    // 1. Each pod's charge rows' part of the period.
    for (const PodCharge& c : a.charges) {
      if (c.end <= from || c.start >= to) continue;
      const ChargeSums sums = c.sums_in(from, to);
      Row r;
      r.cost = sums.cost();
      r.quantity = sums.gpu_hours;
      r.queue = c.queue;
      r.job = c.job;
      r.resource_id = "pod/" + (c.namespace_.empty() ? "" : c.namespace_ + "/") + c.pod;
      r.resource_name = c.pod;
      r.resource_type = "Kubernetes Pod";
      r.kind = "allocated";
      r.pool = c.pool;
      r.model = c.gpu_model;
      r.sharing = c.sharing;
      r.node = c.node;
      r.device = c.devices;
      r.sku = (c.gpu_model.empty() ? "cpu" : c.gpu_model) + "/" + c.resource;
      r.description = fmt::format("{} of {} on node {}", c.resource,
                                  c.gpu_model.empty() ? "a CPU node" : c.gpu_model, c.node);
      std::string tags = "{";
      auto tag = [&](const std::string& k, const std::string& v) {
        if (v.empty()) return;
        tags += (tags.size() > 1 ? "," : "") + json_quote(k) + ":" + json_quote(v);
      };
      tag("queue", c.queue);
      tag("job", c.job);
      for (const auto& [k, v] : c.labels)
        tag(k, v);
      r.tags = tags + "}";
      if (r.cost == 0 && r.quantity == 0) continue;
      write(r, std::max<SimTime>(from, 0), std::min(to, a.end));
    }
    // 2. Each pool's idle and stranded rows: what its nodes cost in the period that no pod was
    //    charged (the ledger's own remainder, not a difference taken here).
    for (const std::string& pool : a.pools()) {
      const SimTime s = std::max<SimTime>(from, 0), e = std::min(to, a.end);
      if (e <= s) continue;
      for (const char* kind : {"idle", "stranded"}) {
        const bool idle = std::string_view(kind) == "idle";
        const ChargeSums sums = idle ? a.idle_in(from, to, &pool) : a.stranded_in(from, to, &pool);
        if (!idle && sums.cost() == 0 && sums.gpu_hours == 0) continue;
        Row r;
        r.cost = sums.cost();
        r.quantity = sums.gpu_hours;
        r.resource_id = "pool/" + (pool.empty() ? "(none)" : pool);
        r.resource_name = pool;
        r.resource_type = "Kubernetes Node Pool";
        r.kind = kind;
        r.pool = pool;
        for (const NodeCharge& n : a.nodes) {
          if (n.pool == pool) {
            r.model = n.gpu_model;
            r.sharing = n.sharing;
            break;
          }
        }
        r.sku = (r.model.empty() ? "cpu" : r.model) + "/" + kind;
        const std::string pool_name = pool.empty() ? "(none)" : pool;
        r.description =
            idle ? fmt::format("idle capacity of pool {}", pool_name)
                 : fmt::format("stranded capacity (free but unusable) of pool {}", pool_name);
        r.tags = "{}";
        write(r, s, e);
      }
    }
  }
  return out;
}

}  // namespace capsim
