#include "gpuadvisor/catalog/gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <type_traits>
#include <unordered_map>

#include "gpuadvisor/catalog/embedded.h"
#include "gpuadvisor/catalog/snapshot.h"
#include "gpuadvisor/catalog/validate.h"
#include "gpuadvisor/util/text.h"

namespace gpuadvisor::catalog {
namespace {

constexpr std::array<std::string_view, kPrecisions.size()> kPrecisionNames = {"fp32", "tf32", "fp16", "bf16",
                                                                              "fp8",  "fp4",  "int8", "int4"};

constexpr ArchitectureInfo kArchitectures[] = {
    {"pascal", Vendor::nvidia, "Pascal"},       {"volta", Vendor::nvidia, "Volta"},
    {"turing", Vendor::nvidia, "Turing"},       {"ampere", Vendor::nvidia, "Ampere"},
    {"ada", Vendor::nvidia, "Ada Lovelace"},    {"hopper", Vendor::nvidia, "Hopper"},
    {"blackwell", Vendor::nvidia, "Blackwell"}, {"cdna2", Vendor::amd, "CDNA 2"},
    {"cdna3", Vendor::amd, "CDNA 3"},           {"rdna3", Vendor::amd, "RDNA 3"},
    {"gaudi2", Vendor::intel, "Gaudi 2"},       {"gaudi3", Vendor::intel, "Gaudi 3"},
    {"cdna4", Vendor::amd, "CDNA 4"},           {"rdna4", Vendor::amd, "RDNA 4"},
    {"rdna3.5", Vendor::amd, "RDNA 3.5"},       {"xe2", Vendor::intel, "Xe2 (Battlemage)"},
    {"apple-m1", Vendor::apple, "Apple M1"},    {"apple-m2", Vendor::apple, "Apple M2"},
    {"apple-m3", Vendor::apple, "Apple M3"},    {"apple-m4", Vendor::apple, "Apple M4"},
    {"apple-m5", Vendor::apple, "Apple M5"},
};

Price read_price(const util::Fields& f, const std::string& prefix) {
  Price p;
  p.usd = f.opt_num(prefix + "_usd");
  p.as_of = f.opt_str(prefix + "_as_of").value_or("");
  if (f.has(prefix + "_source")) p.source = read_source(f, prefix + "_source");
  return p;
}

std::string one_of(const util::Fields& f, const std::string& key, std::initializer_list<std::string_view> allowed) {
  std::string v = f.str(key);
  for (auto a : allowed)
    if (v == a) return v;
  std::vector<std::string> opts(allowed.begin(), allowed.end());
  f.fail(key, fmt::format("expected one of {}, got {}{}", util::join(opts, ", "), util::quote(v),
                          util::did_you_mean(v, opts)));
}

Gpu parse_gpu(const util::JsonDoc& doc, const util::Json& j, const std::string& ptr) {
  std::string label;
  if (j.is_object() && j.contains("id") && j["id"].is_string()) {
    std::string q = util::quote(j["id"].get<std::string>());
    label = "GPU '" + q.substr(1, q.size() - 2) + "'";
  }
  util::Fields f(doc, j, ptr, label);
  Gpu g;
  g.id = f.str("id");
  if (g.id.empty()) f.fail("id", "must not be empty");
  for (char c : g.id)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' ||
          c == '.'))
      f.fail("id", fmt::format("expected a kebab-case id (a-z, 0-9, '-', '.'), got {}", util::quote(g.id)));
  g.name = f.str("name");
  if (f.has("aliases")) {
    const auto& a = f.raw("aliases");
    if (!a.is_array()) f.fail("aliases", "expected an array of strings, got " + util::json_snippet(a));
    for (const auto& x : a) {
      if (!x.is_string()) f.fail("aliases", "expected an array of strings, got " + util::json_snippet(x));
      g.aliases.push_back(x.get<std::string>());
    }
  }
  if (f.has("pci_device_ids")) {
    const auto& a = f.raw("pci_device_ids");
    auto bad = [&](const util::Json& x) {
      f.fail("pci_device_ids", "expected an array of PCI device ids such as \"0x2684\", got " + util::json_snippet(x));
    };
    if (!a.is_array()) bad(a);
    for (const auto& x : a) {
      if (!x.is_string()) bad(x);
      std::string id = x.get<std::string>();
      if (id.size() != 6 || id[0] != '0' || (id[1] != 'x' && id[1] != 'X')) bad(x);
      for (std::size_t i = 2; i < id.size(); ++i) {
        if (!std::isxdigit(static_cast<unsigned char>(id[i]))) bad(x);
        id[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(id[i])));
      }
      id[1] = 'x';
      g.pci_device_ids.push_back(id);
    }
  }
  g.vendor = f.enumerated("vendor", kVendorNames);
  g.architecture = f.str("architecture");
  g.compute_capability = f.opt_str("compute_capability");
  if (auto y = f.opt_integer("release_year", 1990, 2100)) g.release_year = static_cast<int>(*y);
  g.segment = f.enumerated("segment", kSegmentNames);
  // "" is no form factor, as `catalog export` writes a record without one.
  if (const auto ff = f.opt_str("form_factor"); ff && !ff->empty())
    g.form_factor = f.enumerated("form_factor", kFormFactorNames);
  g.cuda_cores = f.opt_integer("cuda_cores", 0, 10'000'000);
  g.tensor_cores = f.opt_integer("tensor_cores", 0, 10'000'000);
  g.memory_bytes = static_cast<double>(f.integer("memory_bytes", 0, std::int64_t{1} << 50));
  g.memory_type = f.opt_str("memory_type").value_or("");
  g.memory_bus_bits = f.opt_num("memory_bus_bits");
  g.memory_data_rate_gbps = f.opt_num("memory_data_rate_gbps");
  g.memory_bandwidth_gbs = f.num("memory_bandwidth_gbs");
  if (f.has("peak_tflops")) {
    util::Fields p(doc, f.raw("peak_tflops"), f.pointer("peak_tflops"),
                   label + (label.empty() ? "" : ": ") + "peak_tflops");
    for (auto& [key, val] : f.raw("peak_tflops").items()) {
      auto prec = precision_from(key);
      if (!prec) {
        std::vector<std::string> names(kPrecisionNames.begin(), kPrecisionNames.end());
        p.fail(key, "unknown precision" + util::did_you_mean(key, names));
      }
      g.peak_tflops[static_cast<std::size_t>(*prec)] = p.opt_num(key);
      (void)val;
    }
  }
  g.tdp_w = f.opt_num("tdp_w");
  g.power_min_w = f.opt_num("power_min_w");
  g.power_max_w = f.opt_num("power_max_w");
  if (auto n = f.opt_integer("nvlink_generation", 1, 20)) g.nvlink_generation = static_cast<int>(*n);
  g.interconnect = f.opt_str("interconnect");
  g.interconnect_gbs = f.opt_num("interconnect_gbs");
  if (auto n = f.opt_integer("pcie_generation", 1, 10)) g.pcie_generation = static_cast<int>(*n);
  if (auto n = f.opt_integer("pcie_lanes", 1, 32)) g.pcie_lanes = static_cast<int>(*n);
  if (auto n = f.opt_integer("mig_instances", 0, 64)) g.mig_instances = static_cast<int>(*n);
  if (auto n = f.opt_integer("gpus_per_board", 1, 8)) g.gpus_per_board = static_cast<int>(*n);
  g.ecc = f.opt_bool("ecc").value_or(false);
  g.launch_msrp_usd = f.opt_num("launch_msrp_usd");
  g.street = read_price(f, "street_price");
  g.used = read_price(f, "used_price");
  g.status = f.opt_enumerated("status", kStatusNames);
  if (auto y = f.opt_integer("status_year", 1990, 2100)) g.status_year = static_cast<int>(*y);
  if (f.has("status_source") && !f.raw("status_source").is_null()) g.status_source = read_source(f, "status_source");
  g.status_as_of = f.opt_str("status_as_of").value_or("");
  if (f.has("market") && !f.raw("market").is_null()) g.market = one_of(f, "market", {"global", "china"});
  g.sources = read_sources(f);
  g.as_of = f.opt_str("as_of").value_or("");
  g.notes = f.opt_str("notes").value_or("");
  g.origin = doc.where(ptr);
  return g;
}

// Tokens of a name for loose matching: "H100 SXM5 80GB" -> {"h100", "sxm5", "80gb"}.
std::vector<std::string> tokens(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      cur.push_back(static_cast<char>(std::tolower(u)));
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

std::string_view name(Precision p) { return kPrecisionNames[static_cast<std::size_t>(p)]; }

std::optional<Precision> precision_from(std::string_view s) {
  for (std::size_t i = 0; i < kPrecisionNames.size(); ++i)
    if (kPrecisionNames[i] == s) return kPrecisions[i];
  return std::nullopt;
}

std::string_view display_name(Vendor v) {
  static constexpr util::Names<Vendor, 4> kDisplay{{"NVIDIA", "AMD", "Intel", "Apple"}};
  return kDisplay.name(v);
}

std::span<const ArchitectureInfo> architectures() { return kArchitectures; }

const ArchitectureInfo* find_architecture(std::string_view id) {
  for (const auto& a : kArchitectures)
    if (a.id == id) return &a;
  return nullptr;
}

std::optional<double> Gpu::price_usd(bool prefer_used) const {
  auto kind = price_kind(prefer_used);
  if (kind == "msrp") return launch_msrp_usd;
  const Price* p = price_record(kind);
  return p ? p->usd : std::nullopt;
}

std::string Gpu::price_kind(bool prefer_used) const {
  if (quote.usd) return "quote";  // an offer in hand beats any catalog figure
  if (prefer_used && used.usd) return "used";
  // A card no longer made is not sold new: its street and launch prices are history.
  if (street.usd && !out_of_production()) return "street";
  if (launch_msrp_usd && in_production()) return "msrp";
  return "";
}

std::vector<Gpu> Catalog::parse(const util::JsonDoc& doc) {
  util::Fields top(doc, doc.root(), "", "");
  const auto& arr = top.raw("gpus");
  if (!arr.is_array()) top.fail("gpus", "expected an array of GPU records, got " + util::json_snippet(arr));
  std::vector<Gpu> out;
  for (std::size_t i = 0; i < arr.size(); ++i) out.push_back(parse_gpu(doc, arr[i], "/gpus/" + std::to_string(i)));
  return out;
}

void Catalog::merge(std::vector<Gpu> gpus) {
  // Positions by id, built once: a user catalog of n records costs O(n), not a search per record.
  std::unordered_map<std::string, std::size_t> at;
  at.reserve(gpus_.size() + gpus.size());
  for (std::size_t i = 0; i < gpus_.size(); ++i) at.emplace(gpus_[i].id, i);
  for (auto& g : gpus) {
    auto [it, fresh] = at.emplace(g.id, gpus_.size());
    if (fresh)
      gpus_.push_back(std::move(g));
    else
      gpus_[it->second] = std::move(g);
  }
}

Catalog Catalog::load(const std::vector<std::string>& user_files) {
  Catalog c;
  if (auto snap = embedded::snapshot("gpus.json"))
    decode(*snap, c.gpus_);
  else
    c.merge(parse(embedded::doc("gpus.json")));
  for (const auto& f : user_files) {
    auto d = util::JsonDoc::load(f);
    if (!d) throw Error(d.error());
    auto gpus = parse(*d);
    for (const auto& g : gpus)
      if (auto bad = value_findings(g); !bad.empty())
        throw Error(fmt::format("{}: GPU '{}': {} [{}] (see 'gpuadvisor catalog validate {}')", g.origin, g.id,
                                bad.front().message, bad.front().rule, f));
    c.merge(std::move(gpus));
  }
  return c;
}

const Gpu* Catalog::find(std::string_view id) const {
  for (const auto& g : gpus_)
    if (g.id == id) return &g;
  return nullptr;
}

std::vector<std::string> Catalog::names() const {
  std::vector<std::string> out;
  for (const auto& g : gpus_) {
    out.push_back(g.id);
    for (const auto& a : g.aliases) out.push_back(a);
  }
  return out;
}

std::vector<const Gpu*> Catalog::token_matches(std::string_view lowered_query) const {
  auto qt = tokens(std::string(lowered_query));
  std::vector<const Gpu*> hits;
  for (const auto& g : gpus_) {
    std::set<std::string> gt;
    for (auto& t : tokens(g.id)) gt.insert(t);
    for (auto& t : tokens(g.name)) gt.insert(t);
    for (const auto& a : g.aliases)
      for (auto& t : tokens(a)) gt.insert(t);
    bool all = std::all_of(qt.begin(), qt.end(), [&](const std::string& t) {
      return std::any_of(gt.begin(), gt.end(), [&](const std::string& x) { return util::starts_with(x, t); });
    });
    if (all) hits.push_back(&g);
  }
  return hits;
}

std::vector<const Gpu*> Catalog::also_matching(std::string_view query, const Gpu& chosen) const {
  const std::string q = util::lower(util::trim(query));
  if (util::squashes_to(chosen.id, util::squash(q))) return {};
  auto hits = token_matches(q);
  std::erase(hits, &chosen);
  return hits;
}

Result<const Gpu*> Catalog::resolve(std::string_view query) const {
  const std::string q = util::lower(util::trim(query));
  const std::string qs = util::squash(q);
  if (qs.empty()) return Result<const Gpu*>::fail(fmt::format("unknown GPU {}", util::quote(query)));
  // 1. Exact id, alias or name, ignoring case and punctuation.
  for (const auto& g : gpus_) {
    if (util::squashes_to(g.id, qs) || util::squashes_to(g.name, qs)) return &g;
    for (const auto& a : g.aliases)
      if (util::squashes_to(a, qs)) return &g;
  }
  // 2. Every query token is a prefix of a token of the id, name or an alias.
  const auto hits = token_matches(q);
  if (hits.size() == 1) return hits[0];
  if (hits.size() > 1) {
    std::vector<std::string> ids;
    for (const auto* g : hits) ids.push_back(g->id);
    return Result<const Gpu*>::fail(
        fmt::format("GPU {} is ambiguous: it matches {}", util::quote(query), util::join(ids, ", ")));
  }
  auto all = names();
  return Result<const Gpu*>::fail(
      fmt::format("unknown GPU {}{} (see 'gpuadvisor catalog list')", util::quote(query), util::did_you_mean(q, all)));
}

namespace {
template <typename T>
util::Json opt(const std::optional<T>& v) {
  if (!v) return nullptr;
  if constexpr (std::is_floating_point_v<T>)
    return util::json_number(*v);
  else
    return util::Json(*v);
}
}  // namespace

util::Json to_data_json(const Gpu& g) {
  util::Json j;
  j["id"] = g.id;
  j["name"] = g.name;
  j["aliases"] = g.aliases;
  j["pci_device_ids"] = g.pci_device_ids;
  j["vendor"] = kVendorNames.name(g.vendor);
  j["architecture"] = g.architecture;
  j["compute_capability"] = opt(g.compute_capability);
  j["release_year"] = opt(g.release_year);
  j["segment"] = kSegmentNames.name(g.segment);
  j["form_factor"] = g.form_factor ? std::string(kFormFactorNames.name(*g.form_factor)) : std::string();
  j["cuda_cores"] = opt(g.cuda_cores);
  j["tensor_cores"] = opt(g.tensor_cores);
  j["memory_bytes"] = static_cast<std::int64_t>(g.memory_bytes);
  j["memory_type"] = g.memory_type;
  j["memory_bus_bits"] = opt(g.memory_bus_bits);
  j["memory_data_rate_gbps"] = opt(g.memory_data_rate_gbps);
  j["memory_bandwidth_gbs"] = util::json_number(g.memory_bandwidth_gbs);
  util::Json p;
  for (auto prec : kPrecisions) p[std::string(name(prec))] = opt(g.peak_tflops[static_cast<std::size_t>(prec)]);
  j["peak_tflops"] = p;
  j["tdp_w"] = opt(g.tdp_w);
  j["power_min_w"] = opt(g.power_min_w);
  j["power_max_w"] = opt(g.power_max_w);
  j["nvlink_generation"] = opt(g.nvlink_generation);
  j["interconnect"] = opt(g.interconnect);
  j["interconnect_gbs"] = opt(g.interconnect_gbs);
  j["pcie_generation"] = opt(g.pcie_generation);
  j["pcie_lanes"] = opt(g.pcie_lanes);
  j["mig_instances"] = opt(g.mig_instances);
  j["ecc"] = g.ecc;
  j["launch_msrp_usd"] = opt(g.launch_msrp_usd);
  for (auto [key, price] : {std::pair<const char*, const Price*>{"street_price", &g.street}, {"used_price", &g.used}}) {
    j[std::string(key) + "_usd"] = opt(price->usd);
    j[std::string(key) + "_as_of"] = price->as_of.empty() ? util::Json(nullptr) : util::Json(price->as_of);
    j[std::string(key) + "_source"] = price->source ? source_json(*price->source) : util::Json(nullptr);
  }
  j["status"] = g.status ? util::Json(kStatusNames.name(*g.status)) : util::Json(nullptr);
  j["status_year"] = opt(g.status_year);
  j["status_source"] = g.status_source ? source_json(*g.status_source) : util::Json(nullptr);
  j["status_as_of"] = g.status_as_of.empty() ? util::Json(nullptr) : util::Json(g.status_as_of);
  j["market"] = g.market;
  j["sources"] = sources_json(g.sources);
  j["as_of"] = g.as_of;
  if (!g.notes.empty()) j["notes"] = g.notes;
  return j;
}

util::Json to_output_json(const Gpu& g) {
  util::Json j;
  j["id"] = g.id;
  j["name"] = g.name;
  j["aliases"] = g.aliases;
  j["pci_device_ids"] = g.pci_device_ids;
  j["vendor"] = kVendorNames.name(g.vendor);
  j["architecture"] = g.architecture;
  j["compute_capability"] = opt(g.compute_capability);
  j["release_year"] = opt(g.release_year);
  j["segment"] = kSegmentNames.name(g.segment);
  j["form_factor"] = g.form_factor ? std::string(kFormFactorNames.name(*g.form_factor)) : std::string();
  j["cuda_cores"] = opt(g.cuda_cores);
  j["tensor_cores"] = opt(g.tensor_cores);
  j["memory_bytes"] = static_cast<std::int64_t>(g.memory_bytes);
  j["memory_type"] = g.memory_type;
  j["memory_bus_bits"] = opt(g.memory_bus_bits);
  j["memory_data_rate_gbps"] = opt(g.memory_data_rate_gbps);
  j["memory_bandwidth_bytes_per_s"] = util::json_number(g.bandwidth_bytes_per_s());
  for (auto prec : kPrecisions) {
    auto v = g.peak_flops(prec);
    j[fmt::format("peak_{}_flops", name(prec))] = v ? util::json_number(std::round(*v)) : util::Json(nullptr);
  }
  j["tdp_w"] = opt(g.tdp_w);
  j["power_min_w"] = opt(g.power_min_w);
  j["power_max_w"] = opt(g.power_max_w);
  j["interconnect"] = opt(g.interconnect);
  j["nvlink_generation"] = opt(g.nvlink_generation);
  j["interconnect_bytes_per_s"] =
      g.interconnect_gbs ? util::json_number(*g.interconnect_gbs * 1e9) : util::Json(nullptr);
  j["pcie_generation"] = opt(g.pcie_generation);
  j["pcie_lanes"] = opt(g.pcie_lanes);
  j["mig_instances"] = opt(g.mig_instances);
  j["ecc"] = g.ecc;
  j["launch_msrp_usd"] = opt(g.launch_msrp_usd);
  j["street_price_usd"] = opt(g.street.usd);
  j["street_price_as_of"] = g.street.as_of.empty() ? util::Json(nullptr) : util::Json(g.street.as_of);
  j["used_price_usd"] = opt(g.used.usd);
  j["used_price_as_of"] = g.used.as_of.empty() ? util::Json(nullptr) : util::Json(g.used.as_of);
  j["status"] = g.status ? util::Json(kStatusNames.name(*g.status)) : util::Json(nullptr);
  j["status_year"] = opt(g.status_year);
  j["market"] = g.market;
  j["sources"] = sources_json(g.sources);
  j["as_of"] = g.as_of;
  return j;
}

}  // namespace gpuadvisor::catalog
