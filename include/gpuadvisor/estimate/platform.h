#pragma once
/// The host a plan of GPUs goes into: one decision, used by recommend, cost and check
/// (docs/methodology.md, "Hosts").
///
/// - One PCIe card goes into a computer the buyer has: no host is added.
/// - Two or more PCIe cards need a host that takes them: the platform of data/platforms.json with
///   enough slots whose per-GPU and whole-machine power limits hold the cards (GPUs at TDP plus the
///   host's own power), the cheapest with a known price, else the smallest; datacenter cards go only
///   into servers; more cards than the largest takes are not planned.
/// - SXM and OAM GPUs exist only on baseboard systems (HGX, DGX, OAM UBB): a platform that names the
///   GPU, as many as the count needs.
/// - Unified-memory machines and modules (form factor soc, module, superchip) are whole systems:
///   one is planned alone.
#include <cstdint>
#include <optional>
#include <string>

#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/prices.h"

namespace gpuadvisor::estimate {

/// Why no platform takes the GPUs.
enum class HostProblem : std::uint8_t { none, whole_system, no_baseboard, no_slots, power, unknown_power };

struct Host {
  bool needed = false;  ///< false: a single card in the buyer's own computer, or a whole system
  HostProblem problem = HostProblem::none;
  const catalog::Platform* platform = nullptr;  ///< the one chosen; with problem power, the nearest
  int boxes = 0;
  int largest_slots = 0;             ///< with problem no_slots: the most GPUs a platform takes
  std::optional<double> price_usd;   ///< boxes x the platform price; unknown when the data has none
  bool price_includes_gpus = false;  ///< price_usd is the whole systems' with their GPUs: the plan costs that alone
  std::optional<double> power_w;     ///< boxes x the host's own power at load; unknown when the data has none

  bool fits() const { return problem == HostProblem::none; }
};

/// The host for `count` of `gpu` (see the rules above). Makes no text: recommend calls it for
/// every candidate.
Host host_for(const catalog::Gpu& gpu, int count, const catalog::Prices& prices);
/// The same for `count` cards in groups of `group` that must share a box (a serving replica's
/// tensor-parallel GPUs): PCIe cards go into as many servers as the groups need, each group in one.
Host host_for(const catalog::Gpu& gpu, int count, int group, const catalog::Prices& prices);
/// In words: which platform and what it adds, or why none takes the GPUs.
std::string describe(const Host& h, const catalog::Gpu& gpu, int count);

}  // namespace gpuadvisor::estimate
