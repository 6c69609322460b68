#pragma once
/// The GPU catalog: one record per GPU model, loaded from the embedded data/gpus.json and any
/// user catalogs, which add records or replace them by id.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/catalog/source.h"
#include "gpuadvisor/util/error.h"
#include "gpuadvisor/util/json.h"
#include "gpuadvisor/util/names.h"

namespace gpuadvisor::catalog {

/// Compute precisions with a peak rate in the catalog (key names of `peak_tflops`).
enum class Precision { fp32, tf32, fp16, bf16, fp8, fp4, int8, int4 };
inline constexpr std::array<Precision, 8> kPrecisions = {Precision::fp32, Precision::tf32, Precision::fp16,
                                                         Precision::bf16, Precision::fp8,  Precision::fp4,
                                                         Precision::int8, Precision::int4};
std::string_view name(Precision p);
/// Whether a precision is 16-bit or wider (fp32, tf32, fp16, bf16).
constexpr bool is_wide(Precision p) {
  return p == Precision::fp32 || p == Precision::tf32 || p == Precision::fp16 || p == Precision::bf16;
}
std::optional<Precision> precision_from(std::string_view s);

/// Who makes the GPU: which software stack runs on it (CUDA, ROCm, oneAPI/SynapseAI, Metal).
enum class Vendor { nvidia, amd, intel, apple };
inline constexpr util::Names<Vendor, 4> kVendorNames{{"nvidia", "amd", "intel", "apple"}};
/// "NVIDIA", "AMD", "Intel", "Apple".
std::string_view display_name(Vendor v);

/// The market a GPU is made for.
enum class Segment { consumer, workstation, datacenter, edge };
inline constexpr util::Names<Segment, 4> kSegmentNames{{"consumer", "workstation", "datacenter", "edge"}};

/// How a GPU is built and mounted: a PCIe card; an SXM or OAM module on a baseboard; a Jetson
/// module on its carrier; a system on a chip (unified memory); a Grace superchip.
enum class FormFactor { pcie, sxm, oam, module, soc, superchip };
inline constexpr util::Names<FormFactor, 6> kFormFactorNames{{"pcie", "sxm", "oam", "module", "soc", "superchip"}};

/// Whether a GPU is still made.
enum class Status { in_production, end_of_life, discontinued };
inline constexpr util::Names<Status, 3> kStatusNames{{"in_production", "end_of_life", "discontinued"}};

/// A dated price with its source.
struct Price {
  std::optional<double> usd;
  std::string as_of;
  std::optional<Source> source;

  bool operator==(const Price&) const = default;
};

struct Gpu {
  std::string id;
  std::string name;
  std::vector<std::string> aliases;
  std::vector<std::string> pci_device_ids;  ///< "0x2684": PCI device ids (vendor 0x10de), lowercase
  Vendor vendor = Vendor::nvidia;
  std::string architecture;  ///< volta ... gaudi3
  std::optional<std::string> compute_capability;
  std::optional<int> release_year;
  Segment segment = Segment::consumer;
  std::optional<FormFactor> form_factor;  ///< nullopt: not given
  std::optional<std::int64_t> cuda_cores;
  std::optional<std::int64_t> tensor_cores;
  double memory_bytes = 0;
  std::string memory_type;
  std::optional<double> memory_bus_bits;
  std::optional<double> memory_data_rate_gbps;
  double memory_bandwidth_gbs = 0;
  std::array<std::optional<double>, kPrecisions.size()> peak_tflops{};  ///< indexed by Precision
  std::optional<double> tdp_w;  ///< nullopt: not published (Apple gives no chip power)
  std::optional<double> power_min_w, power_max_w;
  std::optional<int> nvlink_generation;
  std::optional<std::string> interconnect;  ///< nvlink, nvlink-bridge, infinity-fabric, roce
  std::optional<double> interconnect_gbs;
  std::optional<int> pcie_generation, pcie_lanes;
  /// The most MIG instances the GPU can be split into; 0: no MIG; nullopt: not known.
  std::optional<int> mig_instances;
  /// GPUs on one board (2 for dual-GPU cards): the record's memory, bandwidth and peaks are the
  /// board's totals, each GPU seeing only its share; such a board is not planned as one GPU.
  int gpus_per_board = 1;
  bool ecc = false;
  std::optional<double> launch_msrp_usd;
  Price street, used;
  Price quote;  ///< the buyer's own quote (--quotes FILE), for one run; planned before any other price
  /// Availability: in_production, end_of_life or discontinued ("" when no source says); the year it
  /// left production; where that is stated; when it was checked; global or china (sold in China only).
  std::optional<Status> status;  ///< nullopt when no source says
  std::optional<int> status_year;
  std::optional<Source> status_source;
  std::string status_as_of;
  std::string market = "global";
  std::vector<Source> sources;
  std::string as_of;
  std::string notes;
  std::string origin;  ///< "file:line" the record came from

  /// Dense peak in FLOP/s (OP/s for integers) at a precision, if known.
  std::optional<double> peak_flops(Precision p) const {
    const auto& t = peak_tflops[static_cast<std::size_t>(p)];
    return t ? std::optional<double>(*t * 1e12) : std::nullopt;
  }
  double bandwidth_bytes_per_s() const { return memory_bandwidth_gbs * 1e9; }
  /// A fast GPU-to-GPU link (NVLink, Infinity Fabric, RoCE scale-up), not PCIe only.
  bool has_fast_interconnect() const { return interconnect.has_value(); }
  /// Whether any dense peak is published (Apple and AMD's Ryzen AI Max publish none).
  bool any_peak() const {
    return std::any_of(peak_tflops.begin(), peak_tflops.end(), [](const auto& v) { return v.has_value(); });
  }
  /// Whether `gpus` of these talk over the fast link: an NVLink bridge joins a pair only, so more
  /// than two bridged cards reach each other over PCIe.
  bool fast_link_for(int gpus) const {
    return has_fast_interconnect() && !(gpus > 2 && *interconnect == "nvlink-bridge");
  }
  /// Whether the card is no longer made (end_of_life or discontinued): no new price is planned.
  bool out_of_production() const { return status == Status::end_of_life || status == Status::discontinued; }
  bool in_production() const { return status == Status::in_production; }
  /// "discontinued" or "end of life", for a card out of production.
  std::string_view out_of_production_words() const {
    return status == Status::discontinued ? "discontinued" : "end of life";
  }
  /// CUDA software runs on it unchanged (NVIDIA); others need ROCm, oneAPI/SynapseAI or Metal ports.
  bool runs_cuda() const { return vendor == Vendor::nvidia; }
  /// The price to plan with: the used-market price when asked and known; else the street price
  /// unless the card is out of production; else the launch MSRP, only for a card in production.
  std::optional<double> price_usd(bool prefer_used = false) const;
  /// The dated price record of a price kind ("quote", "used", "street"); nullptr for "msrp" (a
  /// launch price has no market date) and "".
  const Price* price_record(std::string_view kind) const {
    return kind == "street" ? &street : kind == "used" ? &used : kind == "quote" ? &quote : nullptr;
  }
  /// Which price price_usd() used: "quote", "used", "street", "msrp" or "" when none is known.
  std::string price_kind(bool prefer_used = false) const;

  bool operator==(const Gpu&) const = default;
};

/// The merged catalog.
class Catalog {
 public:
  /// The embedded catalog plus user catalogs (files, in order; later files win by id).
  static Catalog load(const std::vector<std::string>& user_files);
  /// Parse one catalog document; throws Error naming file, line and field on a schema error.
  static std::vector<Gpu> parse(const util::JsonDoc& doc);
  /// Replace by id or append.
  void merge(std::vector<Gpu> gpus);

  const std::vector<Gpu>& gpus() const { return gpus_; }
  const Gpu* find(std::string_view id) const;
  /// Resolve a loose name ("4090", "a100-80", "H100 SXM"): an id, alias, or a unique token
  /// match. Fails with "unknown GPU ..., did you mean ..." or the list of candidates.
  Result<const Gpu*> resolve(std::string_view query) const;
  /// The one ambiguity policy: an exact id, alias or name wins, even where the query is also a
  /// loose match of other records (the alias "a100" is the A100 80GB SXM4). This gives those
  /// others, for outputs to name ("also matches: a100-40gb-sxm, a100-80gb-pcie"); empty when the
  /// query is `chosen`'s id or matches nothing else.
  std::vector<const Gpu*> also_matching(std::string_view query, const Gpu& chosen) const;
  /// Every id and alias (for suggestions and completions).
  std::vector<std::string> names() const;

 private:
  /// Records where every query token is a prefix of a token of the id, name or an alias.
  std::vector<const Gpu*> token_matches(std::string_view lowered_query) const;
  std::vector<Gpu> gpus_;
};

/// The data-file form of a record (what `catalog export` prints and `--catalog` reads).
util::Json to_data_json(const Gpu& g);
/// The output-contract form: SI units in key names (memory_bytes, peak_fp16_flops, tdp_w, ...).
util::Json to_output_json(const Gpu& g);

/// Architectures the catalog knows, with their vendor.
struct ArchitectureInfo {
  std::string_view id;
  Vendor vendor;
  std::string_view display;
};
std::span<const ArchitectureInfo> architectures();
const ArchitectureInfo* find_architecture(std::string_view id);

}  // namespace gpuadvisor::catalog
