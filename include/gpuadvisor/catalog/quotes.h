#pragma once
/// A buyer's own quotes (--quotes FILE, CSV or JSON): a price per GPU, or for a whole system of
/// N GPUs, with the vendor and date. They replace the catalog's prices for one run
/// (docs/quotes.md).
#include <string>
#include <vector>

#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/prices.h"

namespace gpuadvisor::catalog {

struct Quote {
  std::string gpu_id;  ///< resolved against the catalog
  int count = 1;       ///< above 1: a whole system of `count` GPUs for `usd`
  double usd = 0;
  std::string vendor, date;
  std::string origin;  ///< "file:line"
};

/// Reads a quotes file: CSV with a header naming gpu, price_usd, vendor and date (count
/// optional), or JSON {"quotes": [{"gpu", "price_usd", "vendor", "date", "count"}]}. Throws Error
/// (exit 2) naming file:line and the field on anything it cannot read.
std::vector<Quote> load_quotes(const std::string& path, const Catalog& catalog);

/// Applies quotes for one run: a GPU quote becomes that GPU's price (kind "quote"); a system
/// quote becomes a platform priced with its GPUs, chosen before any other for that GPU.
/// `gpus` gets the GPU quotes, `prices` the system quotes (as platforms; `gpus` names their GPUs).
void apply_gpu_quotes(const std::vector<Quote>& quotes, Catalog& gpus);
void apply_system_quotes(const std::vector<Quote>& quotes, const Catalog& gpus, Prices& prices);

}  // namespace gpuadvisor::catalog
