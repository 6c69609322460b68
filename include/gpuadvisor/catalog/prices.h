#pragma once
/// Cloud rental prices and energy defaults (data/cloud.json), host platforms (data/platforms.json);
/// user files given with --prices add or replace instances and platforms by id.
#include <optional>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/source.h"

namespace gpuadvisor::catalog {

struct CloudInstance {
  std::string id, provider, instance, gpu_id;
  int gpu_count = 1;
  std::optional<double> usd_per_hour;
  std::string pricing, region, as_of, notes;
  std::vector<Source> sources;

  bool operator==(const CloudInstance&) const = default;
};

/// A host that takes several GPUs (data/platforms.json): a workstation, a PCIe server or an HGX/DGX
/// baseboard system. Plans of two or more cards are priced and powered with one (estimate/platform.h).
struct Platform {
  std::string id, name, kind;                 ///< kind: workstation, server, hgx
  FormFactor form_factor = FormFactor::pcie;  ///< the GPUs it takes: pcie, sxm, oam
  std::vector<std::string> gpu_ids;           ///< hgx: the GPUs its baseboard carries; empty: any of the form factor
  int gpu_slots = 0;
  std::optional<double> max_gpu_tdp_w;       ///< the most power one GPU may draw in it
  std::optional<double> system_max_power_w;  ///< what the whole machine may draw (PSUs, circuit)
  std::optional<double> host_power_w;        ///< everything but the GPUs at load: CPUs, memory, NICs, fans
  std::optional<double> idle_w;
  std::optional<double> price_usd;   ///< without its GPUs, unless price_includes_gpus
  bool price_includes_gpus = false;  ///< the price is the whole system with gpu_slots GPUs (HGX/DGX)
  std::string price_as_of;
  std::optional<Source> price_source;
  std::vector<Source> sources;
  std::string as_of, notes;

  bool operator==(const Platform&) const = default;
};

/// Electricity price of a region, dated and sourced.
struct Region {
  std::string id, kind, as_of, notes;
  std::optional<double> usd_per_kwh;  ///< null where no USD figure is published
  std::vector<Source> sources;

  bool operator==(const Region&) const = default;
};

struct SourcedValue {
  double value = 0;
  std::string as_of;
  std::string note;
  std::vector<Source> sources;

  bool operator==(const SourcedValue&) const = default;
};

struct Prices {
  std::vector<CloudInstance> instances;
  std::vector<Platform> platforms;  ///< data/platforms.json plus user files (replaced by id)
  std::vector<Region> regions;      ///< electricity by region (cloud.json energy.regions)
  SourcedValue kwh_usd;             ///< electricity price per kWh (the default region's)
  SourcedValue pue;                 ///< datacenter power usage effectiveness

  /// The embedded data/cloud.json plus user files (instances replaced by id).
  static Prices load(const std::vector<std::string>& user_files);
  static void parse_into(const util::JsonDoc& doc, Prices& out);

  bool operator==(const Prices&) const = default;
};

}  // namespace gpuadvisor::catalog
