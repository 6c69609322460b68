#include "gpuadvisor/rules/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/platform.h"
#include "gpuadvisor/estimate/workload.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::rules {
namespace {

using catalog::Framework;
using catalog::Version;

// The metrics `check` computes; a check rule must read one of them (validate_check_rules).
constexpr MetricInfo kCheckMetrics[] = {
    {"gpu_known", "a GPU line's id names a GPU in the catalog (per GPU line)"},
    {"workload_headroom_fraction",
     "share of each GPU's memory left after a workload runs on a GPU line (negative: short; per workload and GPU "
     "line)"},
    {"psu_load_fraction", "(GPU TDP x count + platform power) / usable PSU capacity after redundancy"},
    {"air_cooling_load_fraction", "server power / the rack's kW per server, when the server is air-cooled"},
    {"multi_gpu_training_without_nvlink",
     "a training workload on more than one GPU with no NVLink/NVSwitch between them (per workload and GPU line)"},
    {"geforce_datacenter_deployment", "a GeForce/Titan card in a datacenter deployment (per GPU line)"},
    {"pcie_generation_gap", "the GPU's PCIe generation minus the server's (per GPU line)"},
    {"pcie_slots_short", "PCIe-card GPUs minus the server's PCIe slots"},
    {"driver_supports_gpu", "the driver runs the GPU's architecture and the spec's CUDA version (per GPU)"},
    {"cuda_supports_gpu", "the CUDA toolkit builds native code for the GPU's architecture (per GPU)"},
    {"framework_supports_gpu",
     "the PyTorch/TensorFlow/JAX release ships prebuilt support for the GPU (per GPU and framework)"},
    {"quote_over_reference_fraction",
     "quoted unit price / street price (used-market price for used cards) - 1 (per GPU line)"},
    {"host_ram_to_gpu_memory_ratio", "host RAM / the total memory of the spec's GPUs"},
    {"cost_to_budget_fraction", "(GPU lines at their quoted or reference price + server price) / budget_usd"},
    {"production_training_without_ecc",
     "a GPU without ECC memory that trains in a datacenter deployment (per GPU line)"},
    {"mig_instances_short",
     "the MIG instances a GPU line asks for (gpus[].mig_instances) minus the most the GPU provides (0 without MIG; "
     "per GPU line)"},
};

std::vector<std::string> metric_names() {
  std::vector<std::string> v;
  for (const auto& m : kCheckMetrics) v.emplace_back(m.name);
  return v;
}

bool is_check_metric(const std::string& m) {
  return std::any_of(std::begin(kCheckMetrics), std::end(kCheckMetrics),
                     [&](const MetricInfo& x) { return x.name == m; });
}

std::string percent(double fraction) { return fmt::format("{:.0f}%", fraction * 100); }
std::string watts(double w) { return util::format_number(std::ceil(w - 1e-9)) + " W"; }

// ---------------------------------------------------------------------------------------------
// The spec, parsed

// GPU lines and workloads in one spec, each at most: a purchase spec lists a few of each, and every
// workload is checked on every line, so 64 x 64 pairs bound the work (docs/fuzzing.md).
constexpr std::size_t kMaxSpecLines = 64;

struct GpuLine {
  std::string query;
  int count = 1;
  std::optional<double> unit_price;
  bool used = false;
  std::optional<int> mig_required;  ///< MIG instances each GPU of the line must provide
  const catalog::Gpu* gpu = nullptr;
  std::string resolve_error;
  std::string ptr;  ///< /gpus/<i>
};

struct Psus {
  double watts = 0;
  int count = 0;
  std::string redundancy;
  int active = 0;  ///< supplies that carry the load with the redundant ones failed
};

struct WorkloadLine {
  estimate::WorkloadInput input;
  std::string ptr;  ///< /workloads/<j>
  bool training = false;
};

// The spec's fixed choices, each parsed once into its enum.
enum class Cooling { air, liquid };
constexpr util::Names<Cooling, 2> kCoolingNames{{"air", "liquid"}};
enum class ServerLink { nvlink, nvswitch, pcie };
constexpr util::Names<ServerLink, 3> kServerLinkNames{{"nvlink", "nvswitch", "pcie"}};
enum class Deployment { datacenter, workstation, edge };
constexpr util::Names<Deployment, 3> kDeploymentNames{{"datacenter", "workstation", "edge"}};
enum class Condition { fresh, used };
constexpr util::Names<Condition, 2> kConditionNames{{"new", "used"}};

struct Spec {
  std::string name;
  std::vector<GpuLine> gpus;
  std::optional<Psus> psus;
  std::optional<double> platform_power_w;
  std::optional<double> server_price;
  std::optional<Cooling> cooling;
  std::optional<double> rack_kw;
  std::optional<int> pcie_gen, pcie_slots;
  std::optional<ServerLink> interconnect;
  std::optional<double> host_ram_bytes;
  std::string host_ram_ptr;
  std::optional<Version> driver, cuda;
  std::array<std::optional<Version>, 3> frameworks;  ///< by Framework
  std::optional<Deployment> deployment;
  std::optional<double> budget;
  std::vector<WorkloadLine> workloads;
};

void only_keys(const util::Fields& f, std::initializer_list<std::string_view> allowed) {
  std::vector<std::string> names(allowed.begin(), allowed.end());
  for (const auto& [key, val] : f.object().items())
    if (std::find(names.begin(), names.end(), key) == names.end())
      f.fail(key, "unknown field" + util::did_you_mean(key, names));
}

// A number, or a string in the units parser's form ("$30,000", "3kW", "1TiB").
std::optional<double> amount(const util::Fields& f, const std::string& key, Result<double> (*parse)(std::string_view),
                             std::string_view example) {
  if (!f.has(key)) return std::nullopt;
  const auto& v = f.raw(key);
  double x = 0;
  if (v.is_number()) {
    x = f.num(key);
  } else if (v.is_string()) {
    auto r = parse(v.get<std::string>());
    if (!r) f.fail(key, r.error());
    x = *r;
  } else {
    f.fail(key, fmt::format("expected a number or a string like {}, got {}", example, util::json_snippet(v)));
  }
  if (x < 0) f.fail(key, fmt::format("expected a value of at least 0, got {}", util::json_snippet(v)));
  return x;
}

std::optional<Version> version(const util::Fields& f, const std::string& key,
                               const std::function<Result<Version>(std::string_view)>& parse) {
  if (!f.has(key)) return std::nullopt;
  const auto& v = f.raw(key);
  // A JSON number would turn "12.10" into 12.1: versions are strings.
  if (!v.is_string()) f.fail(key, "expected a version string like \"12.4\", got " + util::json_snippet(v));
  auto r = parse(v.get<std::string>());
  if (!r) f.fail(key, r.error());
  return *r;
}

// Supplies that carry the load: N (all), N+k (all but k), N+N or 2N (half).
int active_supplies(const util::Fields& f, const std::string& redundancy, int count) {
  int active = 0;
  if (redundancy == "N")
    active = count;
  else if (redundancy == "N+N" || redundancy == "2N") {
    if (count % 2) f.fail("redundancy", fmt::format("N+N needs an even number of supplies, got count {}", count));
    active = count / 2;
  } else if (redundancy.size() > 2 && redundancy.compare(0, 2, "N+") == 0) {
    auto k = util::parse_int(redundancy.substr(2), 1, 64);
    if (!k) f.fail("redundancy", fmt::format("expected N, N+1, N+2 or N+N, got {}", util::quote(redundancy)));
    active = count - static_cast<int>(*k);
  } else {
    f.fail("redundancy", fmt::format("expected N, N+1, N+2 or N+N, got {}", util::quote(redundancy)));
  }
  if (active < 1)
    f.fail("redundancy", fmt::format("{} leaves no supply to carry the load with {} supplies", redundancy, count));
  return active;
}

Spec parse_spec(const util::JsonDoc& doc, const CheckData& data) {
  Spec s;
  util::Fields top(doc, doc.root(), "", "");
  only_keys(top, {"$schema", "schema_version", "name", "description", "gpus", "server", "software", "deployment",
                  "budget_usd", "workloads"});
  if (top.has("schema_version")) top.integer("schema_version", 1, 1);
  s.name = top.opt_str("name").value_or("");
  top.opt_str("description");

  const auto& gpus = top.raw("gpus");
  if (!gpus.is_array() || gpus.empty())
    top.fail("gpus",
             "expected a non-empty array of GPU lines ({\"id\", \"count\", ...}), got " + util::json_snippet(gpus));
  if (gpus.size() > kMaxSpecLines)
    top.fail("gpus", fmt::format("{} GPU lines, at most {} (a line is a GPU model with its count)", gpus.size(),
                                 kMaxSpecLines));
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    GpuLine g;
    g.ptr = "/gpus/" + std::to_string(i);
    util::Fields f(doc, gpus[i], g.ptr, fmt::format("gpus[{}]", i));
    only_keys(f, {"id", "count", "unit_price_usd", "condition", "mig_instances", "notes"});
    g.query = f.str("id");
    g.count = static_cast<int>(f.integer("count", 1, 100000));
    g.unit_price = amount(f, "unit_price_usd", util::parse_money, "\"$30,000\"");
    if (f.has("condition")) g.used = f.enumerated("condition", kConditionNames) == Condition::used;
    if (auto n = f.opt_integer("mig_instances", 1, 64)) g.mig_required = static_cast<int>(*n);
    f.opt_str("notes");
    auto r = data.catalog.resolve(g.query);
    if (r)
      g.gpu = *r;
    else
      g.resolve_error = r.error();
    s.gpus.push_back(std::move(g));
  }

  if (top.has("server")) {
    util::Fields sv(doc, top.raw("server"), "/server", "server");
    only_keys(sv, {"psus", "platform_power_w", "price_usd", "cooling", "pcie", "interconnect", "host_ram",
                   "host_ram_bytes", "notes"});
    sv.opt_str("notes");
    if (sv.has("psus")) {
      util::Fields p(doc, sv.raw("psus"), "/server/psus", "server.psus");
      only_keys(p, {"watts", "count", "redundancy"});
      Psus ps;
      ps.watts = *amount(p, "watts", util::parse_power, "\"3000W\"");
      if (ps.watts <= 0) p.fail("watts", "expected a positive power");
      ps.count = static_cast<int>(p.integer("count", 1, 64));
      ps.redundancy = p.opt_str("redundancy").value_or("N");
      ps.active = active_supplies(p, ps.redundancy, ps.count);
      s.psus = ps;
    }
    s.platform_power_w = amount(sv, "platform_power_w", util::parse_power, "\"1500W\"");
    s.server_price = amount(sv, "price_usd", util::parse_money, "\"$150,000\"");
    if (sv.has("cooling")) {
      util::Fields c(doc, sv.raw("cooling"), "/server/cooling", "server.cooling");
      only_keys(c, {"type", "rack_kw_per_server"});
      s.cooling = c.enumerated("type", kCoolingNames);
      s.rack_kw = c.opt_num("rack_kw_per_server");
      if (s.rack_kw && *s.rack_kw <= 0) c.fail("rack_kw_per_server", "expected a positive number of kW");
    }
    if (sv.has("pcie")) {
      util::Fields p(doc, sv.raw("pcie"), "/server/pcie", "server.pcie");
      only_keys(p, {"generation", "slots"});
      if (auto g = p.opt_integer("generation", 1, 7)) s.pcie_gen = static_cast<int>(*g);
      if (auto n = p.opt_integer("slots", 0, 64)) s.pcie_slots = static_cast<int>(*n);
    }
    s.interconnect = sv.opt_enumerated("interconnect", kServerLinkNames);
    if (sv.has("host_ram") && sv.has("host_ram_bytes"))
      sv.fail("host_ram_bytes", "give host_ram (\"1TiB\") or host_ram_bytes, not both");
    if (sv.has("host_ram")) {
      auto r = util::parse_bytes(sv.str("host_ram"));
      if (!r) sv.fail("host_ram", r.error());
      s.host_ram_bytes = *r;
      s.host_ram_ptr = "/server/host_ram";
    } else if (sv.has("host_ram_bytes")) {
      s.host_ram_bytes = static_cast<double>(sv.integer("host_ram_bytes", 1, std::int64_t{1} << 56));
      s.host_ram_ptr = "/server/host_ram_bytes";
    }
  }

  if (top.has("software")) {
    util::Fields sw(doc, top.raw("software"), "/software", "software");
    only_keys(sw, {"driver", "cuda", "pytorch", "tensorflow", "jax", "notes"});
    sw.opt_str("notes");
    s.driver = version(sw, "driver", [](std::string_view t) { return catalog::parse_version(t); });
    s.cuda = version(sw, "cuda", [&](std::string_view t) { return catalog::parse_cuda_release(data.compat, t); });
    for (auto fw : catalog::kFrameworks)
      s.frameworks[static_cast<std::size_t>(fw)] = version(sw, std::string(catalog::name(fw)), [&](std::string_view t) {
        return catalog::parse_framework_release(data.compat, fw, t);
      });
  }

  s.deployment = top.opt_enumerated("deployment", kDeploymentNames);
  s.budget = amount(top, "budget_usd", util::parse_money, "\"$400k\"");

  if (top.has("workloads")) {
    const auto& arr = top.raw("workloads");
    if (!arr.is_array())
      top.fail("workloads", "expected an array of workload profiles, got " + util::json_snippet(arr));
    if (arr.size() > kMaxSpecLines)
      top.fail("workloads",
               fmt::format("{} workloads, at most {} (each is checked on every GPU line)", arr.size(), kMaxSpecLines));
    for (std::size_t j = 0; j < arr.size(); ++j) {
      WorkloadLine w;
      w.ptr = "/workloads/" + std::to_string(j);
      util::Fields f(doc, arr[j], w.ptr, fmt::format("workloads[{}]", j));
      if (!f.has("model") && !f.has("model_config") && !f.has("model_file"))
        f.fail("model", "missing: name a model preset (llama-3.1-8b), a size (7B), a model_config or a model_file");
      w.input = estimate::merge_profile(doc, w.ptr, {});
      // Validate now (an unknown model is an input error), with the first GPU line's count.
      estimate::WorkloadInput probe = w.input;
      if (probe.gpus.empty()) probe.gpus = std::to_string(s.gpus.front().count);
      auto wl = estimate::make_workload(probe, data.models);
      w.training = estimate::is_training(wl.task);
      s.workloads.push_back(std::move(w));
    }
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Subjects: what a rule is evaluated against, with the JSON pointer of each metric's key

struct Subject {
  Metrics m;
  std::map<std::string, std::string> ptr;  ///< metric -> pointer of the offending key
  void put(const std::string& metric, Value v, std::string shown, std::string pointer) {
    m.set(metric, std::move(v), std::move(shown));
    ptr[metric] = std::move(pointer);
  }
  void show(const std::string& key, std::string shown) { m.set(key, shown, shown); }
};

std::string describe_workload(const estimate::Workload& w) {
  std::string s = fmt::format("{}, {}, {}", w.model.name, estimate::name(w.task), w.precision);
  if (w.model.is_transformer())
    s += fmt::format(", batch {}, {} {}", w.batch, estimate::is_training(w.task) ? "sequence" : "context", w.seq_len);
  else
    s += fmt::format(", batch {}", w.batch);
  return s;
}

std::string describe_layout(const estimate::Workload& w) {
  std::string s = fmt::format("{} GPU{}", w.gpus, w.gpus == 1 ? "" : "s");
  if (w.tp > 1) s += fmt::format(", tp {}", w.tp);
  if (w.pp > 1) s += fmt::format(", pp {}", w.pp);
  if (w.zero) s += fmt::format(", ZeRO-{}", w.zero);
  if (estimate::is_training(w.task) && w.checkpointing != catalog::Checkpointing::none)
    s += fmt::format(", {} checkpointing", catalog::kCheckpointingNames.name(w.checkpointing));
  return s;
}

// PCIe bandwidth per direction of a link: 0.985 GB/s per lane at 3.0 (128b/130b at 8 GT/s),
// doubling each generation (PCI-SIG base specifications).
double pcie_gbs(int gen, int lanes) { return 0.985 * std::pow(2.0, gen - 3) * lanes; }

struct Builder {
  const util::JsonDoc& doc;
  const CheckData& data;
  const Spec& s;
  std::vector<Subject> subjects;
  std::vector<std::string> assumptions;
  double gpu_tdp_total = 0;  ///< over known GPU lines
  bool all_known = true;
  std::vector<std::string> unknown_power;  ///< ids of known GPUs whose power is not published

  void gpu_lines() {
    std::vector<std::string> training;
    for (std::size_t j = 0; j < s.workloads.size(); ++j)
      if (s.workloads[j].training) training.push_back(fmt::format("workloads[{}]", j));
    int pcie_cards = 0;
    std::vector<std::string> card_parts;
    for (std::size_t i = 0; i < s.gpus.size(); ++i) {
      const GpuLine& g = s.gpus[i];
      Subject x;
      x.show("gpu_line", fmt::format("gpus[{}]", i));
      x.show("gpu_query", util::quote(g.query));
      x.show("count", std::to_string(g.count));
      x.put("gpu_known", g.gpu != nullptr, "", g.ptr + "/id");
      if (!g.gpu) {
        all_known = false;
        x.show("gpu_resolve_error", g.resolve_error);
        subjects.push_back(std::move(x));
        continue;
      }
      const catalog::Gpu& gpu = *g.gpu;
      if (gpu.tdp_w)
        gpu_tdp_total += *gpu.tdp_w * g.count;
      else
        unknown_power.push_back(gpu.id);
      x.show("gpu", gpu.name);
      x.show("gpu_id", gpu.id);

      if (s.deployment)
        x.put("geforce_datacenter_deployment",
              s.deployment == Deployment::datacenter && gpu.segment == catalog::Segment::consumer &&
                  gpu.vendor == catalog::Vendor::nvidia,
              "", g.ptr + "/id");
      if (s.deployment && !s.workloads.empty()) {
        x.put("production_training_without_ecc",
              s.deployment == Deployment::datacenter && !training.empty() && !gpu.ecc, "", g.ptr + "/id");
        x.show("training_workloads", util::join(training, ", "));
      }
      if (s.pcie_gen && gpu.pcie_generation) {
        int lanes = gpu.pcie_lanes.value_or(16);
        x.put("pcie_generation_gap", static_cast<double>(*gpu.pcie_generation - *s.pcie_gen), "",
              "/server/pcie/generation");
        x.show("gpu_pcie", fmt::format("PCIe {}.0 x{}", *gpu.pcie_generation, lanes));
        x.show("server_pcie", fmt::format("PCIe {}.0", *s.pcie_gen));
        x.show("gpu_pcie_gbs", util::format_number(pcie_gbs(*gpu.pcie_generation, lanes)) + " GB/s");
        x.show("server_pcie_gbs",
               util::format_number(pcie_gbs(std::min(*gpu.pcie_generation, *s.pcie_gen), lanes)) + " GB/s");
      }
      if (g.mig_required) {
        // MIG is the GPU's own fact (A100 has it, the Ampere RTX cards do not): its catalog record decides.
        if (gpu.mig_instances) {
          x.put("mig_instances_short", static_cast<double>(*g.mig_required - *gpu.mig_instances), "",
                g.ptr + "/mig_instances");
          x.show("mig_required", std::to_string(*g.mig_required));
          x.show("gpu_mig",
                 *gpu.mig_instances ? fmt::format("at most {} MIG instances", *gpu.mig_instances) : "no MIG");
        } else {
          assumptions.push_back(
              fmt::format("gpus[{}]: the MIG instances of {} are not known; mig-instances was not checked", i, gpu.id));
        }
      }
      if (gpu.form_factor == catalog::FormFactor::pcie) {
        pcie_cards += g.count;
        card_parts.push_back(fmt::format("{} x {}", g.count, gpu.id));
      }
      quote(x, g);
      subjects.push_back(std::move(x));
    }
    if (s.pcie_slots && pcie_cards > 0) {
      Subject x;
      x.put("pcie_slots_short", static_cast<double>(pcie_cards - *s.pcie_slots), "", "/server/pcie/slots");
      x.show("pcie_cards", std::to_string(pcie_cards));
      x.show("pcie_card_parts", util::join(card_parts, " + "));
      x.show("pcie_slots", std::to_string(*s.pcie_slots));
      subjects.push_back(std::move(x));
    }
  }

  // The price a quote is compared with: the used-market price for used cards (street where no
  // used price is known), the street price for new ones (launch MSRP where none is known).
  struct Reference {
    double usd = 0;
    std::string kind, as_of;
  };
  static std::optional<Reference> reference(const catalog::Gpu& gpu, bool used) {
    if (used && gpu.used.usd) return Reference{*gpu.used.usd, "used-market price", gpu.used.as_of};
    if (gpu.street.usd) return Reference{*gpu.street.usd, "street price", gpu.street.as_of};
    if (!used && gpu.launch_msrp_usd) return Reference{*gpu.launch_msrp_usd, "launch MSRP", gpu.as_of};
    return std::nullopt;
  }

  void quote(Subject& x, const GpuLine& g) const {
    if (!g.unit_price) return;
    auto ref = reference(*g.gpu, g.used);
    if (!ref || ref->usd <= 0) return;
    double over = *g.unit_price / ref->usd - 1;
    x.put("quote_over_reference_fraction", over, percent(over), g.ptr + "/unit_price_usd");
    x.show("unit_price", util::format_money(*g.unit_price));
    x.show("condition", g.used ? "used" : "new");
    x.show("reference_kind", ref->kind);
    x.show("reference_price", util::format_money(ref->usd));
    x.show("reference_as_of", ref->as_of.empty() ? "date unknown" : "as of " + ref->as_of);
    x.m.set("reference_usd", ref->usd);
  }

  // Platform power (CPUs, RAM, NICs, drives, fans, NVSwitches): the spec's, else the host that
  // recommend and cost plan for these GPUs (estimate/platform.h), else a documented default
  // (docs/procurement-check.md).
  std::pair<double, std::string> platform_power() {
    if (s.platform_power_w) return {*s.platform_power_w, ""};
    const GpuLine& first = s.gpus.front();
    int total = 0;
    for (const auto& g : s.gpus) total += g.count;
    if (first.gpu) {
      const auto host = estimate::host_for(*first.gpu, total, data.prices);
      if (host.fits() && host.power_w) {
        assumptions.push_back(fmt::format("platform power {} from data/platforms.json {} (set server.platform_power_w)",
                                          watts(*host.power_w), host.platform->id));
        return {*host.power_w, fmt::format("(default: data/platforms.json {})", host.platform->id)};
      }
    }
    double w = s.deployment == Deployment::edge ? 100 : s.deployment == Deployment::workstation ? 500 : 1500;
    std::string why(s.deployment ? kDeploymentNames.name(*s.deployment) : "server");
    assumptions.push_back(
        fmt::format("platform power {}: the default for a {} (set server.platform_power_w)", watts(w), why));
    return {w, fmt::format("(default for a {})", why)};
  }

  void server() {
    if (!all_known) return;  // unknown GPUs: unknown-gpu says so; power and memory totals would be wrong
    Subject x;
    const bool power_needed = s.psus || (s.cooling == Cooling::air && s.rack_kw);
    if (power_needed && !unknown_power.empty())
      assumptions.push_back(fmt::format("power of {} is not published: the power supply and cooling checks are not run",
                                        util::join(unknown_power, ", ")));
    if (power_needed && unknown_power.empty()) {
      auto [platform, platform_label] = platform_power();
      double load = gpu_tdp_total + platform;
      std::vector<std::string> parts;
      for (const auto& g : s.gpus) parts.push_back(fmt::format("{} x {} {}", g.count, watts(*g.gpu->tdp_w), g.gpu->id));
      std::string power_parts = fmt::format("{} + platform {}{}", util::join(parts, " + "), watts(platform),
                                            platform_label.empty() ? "" : " " + platform_label);
      x.show("power_parts", power_parts);
      x.show("server_power", watts(load));
      x.m.set("server_power_w", load);
      if (s.psus) {
        const Psus& p = *s.psus;
        double usable = p.watts * p.active;
        x.put("psu_load_fraction", load / usable, percent(load / usable), "/server/psus");
        x.show("psu_load_percent", percent(load / usable));
        x.show("psu_usable", watts(usable));
        x.show("psu_config", fmt::format("{} x {}, redundancy {}: {} carry the load", p.count, watts(p.watts),
                                         p.redundancy, p.active));
        x.m.set("psu_watts", p.watts);
        x.m.set("psu_spare", static_cast<double>(p.count - p.active));
        x.m.set("psu_redundancy", p.redundancy);
      }
      if (s.cooling == Cooling::air && s.rack_kw) {
        double frac = load / (*s.rack_kw * 1000);
        x.put("air_cooling_load_fraction", frac, percent(frac), "/server/cooling/rack_kw_per_server");
        x.show("cooling_load_percent", percent(frac));
        x.show("rack_kw", fmt::format("{:.3g} kW", *s.rack_kw));
      }
    }
    if (s.host_ram_bytes) {
      double gpu_mem = 0;
      std::vector<std::string> parts;
      for (const auto& g : s.gpus) {
        gpu_mem += g.gpu->memory_bytes * g.count;
        parts.push_back(fmt::format("{} x {}", g.count, util::format_bytes(g.gpu->memory_bytes)));
      }
      if (gpu_mem > 0) {
        double ratio = *s.host_ram_bytes / gpu_mem;
        x.put("host_ram_to_gpu_memory_ratio", ratio, fmt::format("{:.3g}", ratio), s.host_ram_ptr);
        x.show("host_ram", util::format_bytes(*s.host_ram_bytes));
        x.show("gpu_memory_total", util::format_bytes(gpu_mem));
        x.show("gpu_memory_parts", util::join(parts, " + "));
        x.m.set("gpu_memory_bytes", gpu_mem);
      }
    }
    if (s.budget) {
      double total = 0;
      bool known = true;
      std::vector<std::string> parts;
      for (const auto& g : s.gpus) {
        if (g.unit_price) {
          total += *g.unit_price * g.count;
          parts.push_back(fmt::format("{} x {} quoted", g.count, util::format_money(*g.unit_price)));
        } else if (auto ref = reference(*g.gpu, g.used)) {
          total += ref->usd * g.count;
          parts.push_back(fmt::format("{} x {} {}", g.count, util::format_money(ref->usd), ref->kind));
        } else {
          known = false;
        }
      }
      if (s.server_price) {
        total += *s.server_price;
        parts.push_back("server " + util::format_money(*s.server_price));
      }
      if (known && *s.budget > 0) {
        double frac = total / *s.budget;
        x.put("cost_to_budget_fraction", frac, percent(frac), "/budget_usd");
        x.show("spec_cost", util::format_money(total));
        x.show("cost_parts", util::join(parts, " + "));
        x.show("budget", util::format_money(*s.budget));
        x.show("budget_over", util::format_money(total - *s.budget));
      }
    }
    subjects.push_back(std::move(x));
  }

  // Each workload on each GPU line: memory fit and, for training, the interconnect.
  void workloads() {
    for (std::size_t j = 0; j < s.workloads.size(); ++j) {
      const WorkloadLine& wl = s.workloads[j];
      for (std::size_t i = 0; i < s.gpus.size(); ++i) {
        const GpuLine& g = s.gpus[i];
        if (!g.gpu) continue;
        const catalog::Gpu& gpu = *g.gpu;
        estimate::WorkloadInput in = wl.input;
        if (in.gpus.empty()) {
          in.gpus = std::to_string(g.count);
          in.where["gpus"] = fmt::format("{}: field 'count'", doc.where(g.ptr + "/count"));
          assumptions.push_back(
              fmt::format("workloads[{}] runs on the {} GPUs of gpus[{}] (set its gpus)", j, g.count, i));
        }
        estimate::WorkloadSet set;
        estimate::Workload w = estimate::make_workload(in, data.models, &set);
        const double cap = gpu.memory_bytes;
        // Training is laid out for the GPU here; inference already was, by make_workload, as
        // memory, fit and recommend lay it out (estimate::inference_tp).
        if (estimate::is_training(w.task))
          w = estimate::plan_layout(std::move(w), set, gpu, data.efficiency);
        else
          estimate::apply_gpu_defaults(w, set, gpu);  // the engine and attention the GPU runs
        const double need = estimate::estimate_memory(w, data.efficiency).per_gpu_bytes;
        const double headroom = (cap - need) / cap;
        std::string model_ptr = wl.ptr + (doc.line_of(wl.ptr + "/model") ? "/model" : "");
        Subject x;
        x.show("workload_index", fmt::format("workloads[{}]", j));
        x.show("workload", describe_workload(w));
        x.show("layout", describe_layout(w));
        x.show("gpu", gpu.name);
        x.show("count", std::to_string(g.count));
        x.put("workload_headroom_fraction", headroom, percent(headroom), model_ptr);
        x.show("memory_need", util::format_bytes(need));
        x.show("memory_capacity", util::format_bytes(cap));
        x.m.set("memory_short_bytes", need - cap);
        // LoRA and QLoRA in data parallelism all-reduce only the adapters' gradients (tens of MB):
        // the link matters for full training, or when the base weights are sharded (gathered at
        // every step) or split by tensor parallelism (activations all-reduced in every layer).
        // A pipeline split passes one activation tensor per stage boundary: light on PCIe.
        const bool heavy_traffic = w.task == estimate::Task::train || w.zero >= 3 || w.tp > 1;
        std::vector<std::string> traffic;
        if (w.zero >= 3) traffic.push_back("the sharded weights are gathered at every step");
        if (w.tp > 1)
          traffic.push_back(
              fmt::format("every layer's activations are all-reduced across the {} tensor-parallel GPUs", w.tp));
        if (w.task == estimate::Task::train)
          traffic.push_back(w.zero >= 2 ? "the gradients are reduce-scattered" : "the gradients are all-reduced");
        if (estimate::is_training(w.task) && w.gpus > 1 && heavy_traffic) {
          const bool link = gpu.fast_link_for(w.gpus) && s.interconnect != ServerLink::pcie;
          std::string why = !gpu.has_fast_interconnect() ? fmt::format("{} has no NVLink", gpu.id)
                            : !gpu.fast_link_for(w.gpus)
                                ? fmt::format("an NVLink bridge joins only two {} cards", gpu.id)
                                : "the server's interconnect is pcie";
          x.put("multi_gpu_training_without_nvlink", !link, "",
                !s.interconnect ? wl.ptr + (doc.line_of(wl.ptr + "/task") ? "/task" : "") : "/server/interconnect");
          x.show("gpus", std::to_string(w.gpus));
          x.show("no_nvlink_why", why);
          x.show("traffic", util::join_list(traffic, "and"));
        }
        subjects.push_back(std::move(x));
      }
    }
  }

  // Driver, CUDA and framework versions against each NVIDIA GPU's architecture.
  void software() {
    std::set<std::string> seen;
    for (const auto& g : s.gpus) {
      if (!g.gpu || g.gpu->vendor != catalog::Vendor::nvidia || !seen.insert(g.gpu->id).second) continue;
      const catalog::Gpu& gpu = *g.gpu;
      catalog::CompatQuery base;
      base.gpu_id = gpu.id;
      base.gpu_name = gpu.name;
      base.vendor = gpu.vendor;
      base.arch = gpu.architecture;
      base.cc = gpu.compute_capability.value_or("");
      auto ask = [&](const catalog::CompatQuery& q, const std::string& id) -> std::optional<catalog::CompatCheck> {
        auto r = catalog::evaluate_compat(data.compat, q);
        if (!r) return std::nullopt;
        for (const auto& c : r->checks)
          if (c.id == id) return c;
        return std::nullopt;
      };
      auto put = [&](const std::optional<catalog::CompatCheck>& c, const std::string& metric, const std::string& key,
                     const std::string& ptr, const std::string& subject) {
        if (!c || c->answer == catalog::Answer::unknown) return;
        Subject x;
        x.show("gpu", gpu.name);
        x.show(key, subject);
        x.show(key + "_detail", c->detail);
        x.show(key + "_needed", c->needed.empty() ? "a newer release" : c->needed);
        x.put(metric, c->answer != catalog::Answer::no, "", ptr);
        subjects.push_back(std::move(x));
      };
      if (s.cuda) {
        auto q = base;
        q.cuda = s.cuda;
        put(ask(q, "cuda"), "cuda_supports_gpu", "cuda", "/software/cuda", "CUDA " + s.cuda->text);
      }
      if (s.driver) {
        auto q = base;
        q.driver = s.driver;
        q.cuda = s.cuda;
        put(ask(q, "driver"), "driver_supports_gpu", "driver", "/software/driver", s.driver->text);
      }
      for (auto fw : catalog::kFrameworks) {
        const auto& v = s.frameworks[static_cast<std::size_t>(fw)];
        if (!v) continue;
        auto q = base;
        q.framework = fw;
        q.framework_version = v;
        put(ask(q, "framework"), "framework_supports_gpu", "framework", "/software/" + std::string(catalog::name(fw)),
            fmt::format("{} {}", catalog::display(fw), v->text));
      }
    }
  }
};

// Values that depend on the rule's threshold, for its message and fix.
void derive(const Rule& r, const Subject& x, Metrics& opts) {
  if (!std::holds_alternative<double>(r.threshold)) return;
  const double t = std::get<double>(r.threshold);
  opts.set("threshold", t, threshold_text(r));
  opts.set("threshold_percent", t, percent(t));
  const auto num = [&](const char* key) -> std::optional<double> {
    const Value& v = x.m.get(key);
    return std::holds_alternative<double>(v) ? std::optional<double>(std::get<double>(v)) : std::nullopt;
  };
  if (r.metric == "psu_load_fraction" && t > 0) {
    auto load = num("server_power_w"), size = num("psu_watts"), spare = num("psu_spare");
    if (load && size && spare) {
      double needed = *load / t;
      opts.set("psu_needed", needed, watts(needed));
      // What would carry it: the spec's supply size, enough of them, its redundancy on top.
      const std::string red = to_string(x.m.get("psu_redundancy"));
      // Clamped: absurd wattages must not overflow the conversion.
      int active = static_cast<int>(std::clamp(std::ceil(needed / *size - 1e-9), 0.0, 1e6));
      int total = red == "N+N" || red == "2N" ? 2 * active : active + static_cast<int>(*spare);
      opts.set("psu_suggestion", fmt::format("{} x {} with {} redundancy", total, watts(*size), red));
    }
  }
  if (r.metric == "workload_headroom_fraction") {
    const Value& h = x.m.get("workload_headroom_fraction");
    if (std::holds_alternative<double>(h)) {
      double v = std::get<double>(h);
      auto short_by = num("memory_short_bytes");
      opts.set("memory_verdict", v < 0 && short_by
                                     ? fmt::format("short by {}", util::format_bytes(*short_by))
                                     : fmt::format("only {} left, below the {} headroom", percent(v), percent(t)));
    }
  }
  if (r.metric == "quote_over_reference_fraction")
    if (auto ref = num("reference_usd")) opts.set("quote_limit", util::format_money(*ref * (1 + t)));
  if (r.metric == "host_ram_to_gpu_memory_ratio")
    if (auto mem = num("gpu_memory_bytes")) opts.set("host_ram_needed", util::format_bytes(*mem * t));
}

}  // namespace

std::span<const MetricInfo> check_metrics() { return kCheckMetrics; }

std::string threshold_text(const Rule& r) {
  if (std::holds_alternative<double>(r.threshold)) return fmt::format("{:g}", std::get<double>(r.threshold));
  return to_string(r.threshold);
}

void validate_check_rules(const util::JsonDoc& doc) {
  const auto& root = doc.root();
  if (!root.is_object() || !root.contains("rules") || !root["rules"].is_array()) return;
  const auto& arr = root["rules"];
  const auto names = metric_names();
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const auto& r = arr[i];
    if (!r.is_object() || !r.contains("scope") || r["scope"] != "check" || !r.contains("metric") ||
        !r["metric"].is_string())
      continue;
    std::string metric = r["metric"].get<std::string>();
    if (is_check_metric(metric)) continue;
    std::string label = r.contains("id") && r["id"].is_string() ? "rule '" + r["id"].get<std::string>() + "'" : "";
    util::Fields f(doc, r, "/rules/" + std::to_string(i), label);
    f.fail("metric", fmt::format("unknown check metric {}{}", util::quote(metric), util::did_you_mean(metric, names)));
  }
}

void validate_check_rules(const RuleSet& rules) {
  const auto names = metric_names();
  for (const auto& r : rules.rules())
    if (r.scope == "check" && !is_check_metric(r.metric))
      throw Error(fmt::format("{}: rule '{}': field 'metric': unknown check metric {}{}", r.origin, r.id,
                              util::quote(r.metric), util::did_you_mean(r.metric, names)));
}

bool glob_match(std::string_view p, std::string_view t) {
  // Iterative matcher with backtracking to the last '*'.
  std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi;
      ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

bool glob_list_match(std::span<const std::string> globs, std::string_view id) {
  bool selected = false;
  for (const auto& item : globs)
    for (const auto& raw : util::split(item, ',')) {
      std::string g = util::trim(raw);
      if (g.empty()) continue;
      bool negative = g[0] == '-';
      if (negative) g.erase(0, 1);
      if (glob_match(g, id)) selected = !negative;
    }
  return selected;
}

std::vector<const Rule*> enabled_check_rules(const RuleSet& rules, std::span<const std::string> disable_globs) {
  std::vector<const Rule*> out;
  for (const auto& r : rules.rules())
    if (r.scope == "check" && !glob_list_match(disable_globs, r.id)) out.push_back(&r);
  return out;
}

SpecResult check_spec(const util::JsonDoc& doc, const CheckData& data, std::span<const Rule* const> rules) {
  Spec spec = parse_spec(doc, data);
  Builder build{doc, data, spec, {}, {}, 0, true, {}};
  build.gpu_lines();
  build.server();
  build.workloads();
  build.software();

  SpecResult out;
  out.origin = doc.origin();
  out.name = spec.name;
  out.rules.assign(rules.begin(), rules.end());
  out.assumptions = build.assumptions;
  for (const Rule* r : rules) {
    bool applicable = false;
    for (const auto& x : build.subjects) {
      auto p = x.ptr.find(r->metric);
      if (p == x.ptr.end()) continue;
      Metrics opts;
      derive(*r, x, opts);
      Outcome o = evaluate(*r, x.m, opts);
      applicable = applicable || o.applicable;
      if (!o.applicable || o.passed) continue;
      Finding f;
      f.rule = r;
      f.severity = r->severity;
      f.message = o.message;
      f.fix = render(r->fix, x.m, opts);
      f.pointer = p->second;
      f.line = doc.line_of(p->second);
      out.findings.push_back(std::move(f));
    }
    if (!applicable) out.not_applicable.push_back(r);
  }
  std::stable_sort(out.findings.begin(), out.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.line < b.line; });
  return out;
}

void apply_warnings_as_errors(SpecResult& r, std::span<const std::string> globs) {
  if (globs.empty()) return;
  for (auto& f : r.findings)
    if (f.severity == Severity::warning && glob_list_match(globs, f.rule->id)) {
      f.severity = Severity::error;
      f.promoted = true;
    }
}

CheckSummary summarize(std::span<const SpecOutcome> outcomes) {
  CheckSummary s;
  for (const auto& o : outcomes) {
    ++s.specs;
    if (!o.result) {
      ++s.unreadable;
      continue;
    }
    for (const auto& f : o.result->findings)
      (f.severity == Severity::error ? s.errors : f.severity == Severity::warning ? s.warnings : s.notes)++;
  }
  return s;
}

}  // namespace gpuadvisor::rules
