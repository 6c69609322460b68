#pragma once
/// The snapshot form of the embedded records (util::serial): gpuadvisor_snapshot writes it at
/// build time from what the JSON parsers made of data/*.json, and the loaders read it back instead
/// of parsing the JSON again (embedded::snapshot; docs/performance.md, "Data snapshots").
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/catalog/prices.h"

namespace gpuadvisor::catalog {

std::string encode(const std::vector<Gpu>& gpus);
std::string encode(const std::vector<Model>& models);
std::string encode(const Prices& prices);
std::string encode(const Efficiency& eff);

/// Each throws an internal Error when the bytes are not what encode() wrote.
void decode(std::string_view bytes, std::vector<Gpu>& gpus);
void decode(std::string_view bytes, std::vector<Model>& models);
void decode(std::string_view bytes, Prices& prices);
void decode(std::string_view bytes, Efficiency& eff);

}  // namespace gpuadvisor::catalog
