#pragma once
/// Cloud rental prices, server platform figures and energy defaults (data/cloud.json); user files
/// given with --prices add or replace instances by id.
#include <optional>
#include <string>
#include <vector>

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

struct ServerPlatform {
  std::string id, description, gpu_form_factor;
  int max_gpus = 0;
  std::optional<double> usd;
  std::optional<double> platform_power_w;
  std::vector<Source> sources;

  bool operator==(const ServerPlatform&) const = default;
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
  std::vector<ServerPlatform> servers;
  SourcedValue kwh_usd;  ///< electricity price per kWh
  SourcedValue pue;      ///< datacenter power usage effectiveness

  /// The embedded data/cloud.json plus user files (instances replaced by id).
  static Prices load(const std::vector<std::string>& user_files);
  static void parse_into(const util::JsonDoc& doc, Prices& out);

  bool operator==(const Prices&) const = default;
};

}  // namespace gpuadvisor::catalog
