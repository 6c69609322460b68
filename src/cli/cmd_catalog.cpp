// gpuadvisor catalog list | show | validate | export
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "context.h"
#include "gpuadvisor/catalog/validate.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::cli {
namespace {

using catalog::Gpu;
using catalog::Precision;

struct ListOptions {
  std::string vendor, arch, segment, min_memory, sort;
  bool desc = false;
  bool used = false;
  bool ids = false;
};

// Numeric fields `catalog list --sort` accepts.
struct SortKey {
  std::string_view name;
  std::function<std::optional<double>(const Gpu&, bool used)> get;
};
const std::vector<SortKey>& sort_keys() {
  static const std::vector<SortKey> keys = {
      {"memory", [](const Gpu& g, bool) { return std::optional<double>(g.memory_bytes); }},
      {"bandwidth", [](const Gpu& g, bool) { return std::optional<double>(g.memory_bandwidth_gbs); }},
      {"fp32", [](const Gpu& g, bool) { return g.peak_flops(Precision::fp32); }},
      {"tf32", [](const Gpu& g, bool) { return g.peak_flops(Precision::tf32); }},
      {"fp16", [](const Gpu& g, bool) { return g.peak_flops(Precision::fp16); }},
      {"bf16", [](const Gpu& g, bool) { return g.peak_flops(Precision::bf16); }},
      {"fp8", [](const Gpu& g, bool) { return g.peak_flops(Precision::fp8); }},
      {"int8", [](const Gpu& g, bool) { return g.peak_flops(Precision::int8); }},
      {"tdp", [](const Gpu& g, bool) { return g.tdp_w; }},
      {"price", [](const Gpu& g, bool used) { return g.price_usd(used); }},
      {"year",
       [](const Gpu& g, bool) { return g.release_year ? std::optional<double>(*g.release_year) : std::nullopt; }},
      {"interconnect", [](const Gpu& g, bool) { return g.interconnect_gbs; }},
  };
  return keys;
}

std::string opt_num(std::optional<double> v, double scale = 1) { return v ? util::format_number(*v / scale) : "-"; }

std::string price_cell(const Gpu& g, bool used) {
  auto p = g.price_usd(used);
  if (!p) return "-";
  std::string kind = g.price_kind(used);
  return util::format_money(*p) + (kind == "street" ? "" : " (" + kind + ")");
}

void check_choice(const std::string& flag, const std::string& value, const std::vector<std::string>& allowed) {
  if (value.empty() || std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  throw Error(fmt::format("{}: expected one of {}, got {}{}", flag, util::join(allowed, ", "), util::quote(value),
                          util::did_you_mean(value, allowed)));
}

// CSV: one record a GPU (list and show alike), plain numbers, the unit in the column name.
std::string gpus_csv(const std::vector<const Gpu*>& rows, bool used, const report::Style& style) {
  report::Table t({{"id"},
                   {"name"},
                   {"vendor"},
                   {"architecture"},
                   {"segment"},
                   {"memory_bytes"},
                   {"memory_bandwidth_gbs"},
                   {"peak_fp16_tflops"},
                   {"peak_bf16_tflops"},
                   {"peak_fp8_tflops"},
                   {"tdp_w"},
                   {"price_usd"},
                   {"price_kind"}});
  auto raw = [](std::optional<double> v) { return v ? fmt::format("{}", *v) : std::string(); };
  for (const auto* g : rows)
    t.add({g->id, g->name, std::string(catalog::kVendorNames.name(g->vendor)), g->architecture,
           std::string(catalog::kSegmentNames.name(g->segment)), fmt::format("{:.0f}", g->memory_bytes),
           fmt::format("{}", g->memory_bandwidth_gbs), raw(g->peak_tflops[2]), raw(g->peak_tflops[3]),
           raw(g->peak_tflops[4]), raw(g->tdp_w), raw(g->price_usd(used)), g->price_kind(used)});
  return t.render(report::Format::csv, style);
}

void run_list(Context& ctx, const ListOptions& o) {
  auto fmt_out = ctx.output_format();
  const auto& cat = ctx.catalog();
  const auto vendors = catalog::kVendorNames.list();
  const auto segments = catalog::kSegmentNames.list();
  std::vector<std::string> archs;
  for (const auto& a : catalog::architectures()) archs.emplace_back(a.id);
  check_choice("--vendor", o.vendor, vendors);
  check_choice("--segment", o.segment, segments);
  check_choice("--arch", o.arch, archs);
  double min_mem = 0;
  if (!o.min_memory.empty()) {
    auto m = util::parse_bytes(o.min_memory);
    if (!m) throw Error("--min-memory: " + m.error());
    min_mem = *m;
  }
  std::vector<const Gpu*> rows;
  for (const auto& g : cat.gpus()) {
    if (!o.vendor.empty() && catalog::kVendorNames.name(g.vendor) != o.vendor) continue;
    if (!o.segment.empty() && catalog::kSegmentNames.name(g.segment) != o.segment) continue;
    if (!o.arch.empty() && g.architecture != o.arch) continue;
    if (g.memory_bytes < min_mem) continue;
    rows.push_back(&g);
  }
  if (!o.sort.empty()) {
    const SortKey* key = nullptr;
    std::vector<std::string> names;
    for (const auto& k : sort_keys()) {
      names.emplace_back(k.name);
      if (k.name == o.sort) key = &k;
    }
    if (!key)
      throw Error(fmt::format("--sort: expected one of {}, got {}{}", util::join(names, ", "), util::quote(o.sort),
                              util::did_you_mean(o.sort, names)));
    // Unknown values sort last either way; ties keep catalog order.
    std::stable_sort(rows.begin(), rows.end(), [&](const Gpu* a, const Gpu* b) {
      auto x = key->get(*a, o.used), y = key->get(*b, o.used);
      if (!x || !y) return x.has_value() && !y.has_value();
      return o.desc ? *x > *y : *x < *y;
    });
  }

  if (o.ids) {  // for scripts and shell completion
    for (const auto* g : rows) ctx.out << g->id << '\n';
    return;
  }
  if (fmt_out == report::Format::json) {
    auto j = report::envelope("catalog list");
    j["count"] = rows.size();
    util::Json arr = util::Json::array();
    for (const auto* g : rows) arr.push_back(catalog::to_output_json(*g));
    j["gpus"] = arr;
    ctx.out << report::dump(j);
    return;
  }
  if (fmt_out == report::Format::csv) {
    ctx.out << gpus_csv(rows, o.used, ctx.style);
    return;
  }
  using report::Align;
  report::Table t({{"ID"},
                   {"Name"},
                   {"Arch"},
                   {"Segment"},
                   {"Memory", Align::right},
                   {"GB/s", Align::right},
                   {"FP16 TFLOPS", Align::right},
                   {"TDP W", Align::right},
                   {"Price", Align::right}});
  for (const auto* g : rows)
    t.add({g->id, g->name, g->architecture, std::string(catalog::kSegmentNames.name(g->segment)),
           util::format_bytes(g->memory_bytes), util::format_number(g->memory_bandwidth_gbs),
           opt_num(g->peak_flops(Precision::fp16), 1e12), g->tdp_w ? util::format_number(*g->tdp_w) : "unknown",
           price_cell(*g, o.used)});
  ctx.out << t.render(fmt_out, ctx.style);
  if (fmt_out == report::Format::table)
    ctx.out << fmt::format("{} GPUs. Peaks are dense Tensor Core rates; prices are street prices unless marked.\n",
                           rows.size());
}

void run_show(Context& ctx, const std::string& query) {
  auto fmt_out = ctx.output_format();
  auto r = ctx.catalog().resolve(query);
  if (!r) throw Error(r.error());
  const Gpu& g = **r;
  std::vector<std::string> also;
  for (const auto* other : ctx.catalog().also_matching(query, g)) also.push_back(other->id);
  if (fmt_out == report::Format::json) {
    auto j = report::envelope("catalog show");
    j["gpu"] = catalog::to_output_json(g);
    j["also_matches"] = also;
    ctx.out << report::dump(j);
    return;
  }
  if (fmt_out == report::Format::csv) {
    ctx.out << gpus_csv({&g}, false, ctx.style);
    return;
  }
  std::vector<std::pair<std::string, std::string>> kv;
  kv.push_back({"ID", g.id});
  kv.push_back({"Name", g.name});
  if (!also.empty())
    kv.push_back({"Also matches", fmt::format("{} (the query {} is taken as {}; give the id to choose)",
                                              util::join(also, ", "), util::quote(query), g.id)});
  if (!g.aliases.empty()) kv.push_back({"Aliases", util::join(g.aliases, ", ")});
  const auto* arch = catalog::find_architecture(g.architecture);
  kv.push_back(
      {"Architecture", (arch ? std::string(arch->display) : g.architecture) +
                           (g.compute_capability ? " (compute capability " + *g.compute_capability + ")" : "")});
  kv.push_back({"Vendor / segment",
                fmt::format("{}, {}{}", catalog::kVendorNames.name(g.vendor), catalog::kSegmentNames.name(g.segment),
                            g.form_factor ? fmt::format(", {}", catalog::kFormFactorNames.name(*g.form_factor)) : "")});
  if (g.release_year) kv.push_back({"Released", std::to_string(*g.release_year)});
  if (g.cuda_cores)
    kv.push_back({g.vendor == catalog::Vendor::nvidia ? "CUDA cores" : "Stream processors",
                  util::format_number(static_cast<double>(*g.cuda_cores))});
  if (g.tensor_cores)
    kv.push_back({g.vendor == catalog::Vendor::nvidia ? "Tensor Cores" : "Matrix cores",
                  util::format_number(static_cast<double>(*g.tensor_cores))});
  kv.push_back({"Memory", fmt::format("{} {} ({} bytes)", util::format_bytes(g.memory_bytes), g.memory_type,
                                      fmt::format("{:.0f}", g.memory_bytes))});
  std::string bw = util::format_number(g.memory_bandwidth_gbs) + " GB/s";
  if (g.memory_data_rate_gbps && g.memory_bus_bits)
    bw += fmt::format(" ({} Gbps x {} bit / 8)", *g.memory_data_rate_gbps, *g.memory_bus_bits);
  kv.push_back({"Bandwidth", bw});
  for (auto p : catalog::kPrecisions) {
    auto v = g.peak_flops(p);
    if (!v) continue;
    bool integer = p == Precision::int8 || p == Precision::int4;
    kv.push_back({"Peak " + std::string(catalog::name(p)),
                  util::format_number(*v / 1e12) + (integer ? " TOPS" : " TFLOPS") + " dense"});
  }
  std::string power = g.tdp_w ? util::format_number(*g.tdp_w) + " W" : "unknown (not published)";
  if (g.power_min_w && g.power_max_w)
    power += fmt::format(" (configurable {}..{} W)", util::format_number(*g.power_min_w),
                         util::format_number(*g.power_max_w));
  else if (g.power_max_w && *g.power_max_w != g.tdp_w)
    power += fmt::format(" (configurable up to {} W)", util::format_number(*g.power_max_w));
  kv.push_back({"Power", power});
  std::string link = "PCIe";
  if (g.pcie_generation) link += fmt::format(" {}.0", *g.pcie_generation);
  if (g.pcie_lanes) link += fmt::format(" x{}", *g.pcie_lanes);
  if (g.interconnect)
    link += fmt::format(", {}{}{}", *g.interconnect,
                        g.nvlink_generation ? fmt::format(" gen {}", *g.nvlink_generation) : "",
                        g.interconnect_gbs ? " " + util::format_number(*g.interconnect_gbs) + " GB/s" : "");
  kv.push_back({"Interconnect", link});
  kv.push_back({"MIG / ECC", fmt::format("{} / {}",
                                         !g.mig_instances   ? "unknown"
                                         : *g.mig_instances ? std::to_string(*g.mig_instances) + " instances"
                                                            : "no",
                                         g.ecc ? "yes" : "no")});
  if (g.status)
    kv.push_back({"Status", std::string(catalog::kStatusNames.name(*g.status)) +
                                (g.status_year ? fmt::format(" ({})", *g.status_year) : "") +
                                (g.market == "china" ? ", sold in China only" : "")});
  if (g.launch_msrp_usd) kv.push_back({"Launch MSRP", util::format_money(*g.launch_msrp_usd)});
  if (g.street.usd)
    kv.push_back({"Street price", util::format_money(*g.street.usd) + " (as of " + g.street.as_of + ")"});
  if (g.used.usd) kv.push_back({"Used price", util::format_money(*g.used.usd) + " (as of " + g.used.as_of + ")"});
  if (!g.notes.empty()) kv.push_back({"Notes", g.notes});
  for (std::size_t i = 0; i < g.sources.size(); ++i)
    kv.push_back({i == 0 ? "Sources" : "",
                  g.sources[i].title + (g.sources[i].url.empty() ? "" : " <" + g.sources[i].url + ">")});
  kv.push_back({"As of", g.as_of});
  // key_values() renders an empty key as a blank line; keep continuation lines aligned instead.
  for (auto& [k, v] : kv)
    if (k.empty()) k = " ";
  ctx.out << report::key_values(kv, fmt_out, ctx.style);
}

void run_validate(Context& ctx, const std::vector<std::string>& files) {
  auto fmt_out = ctx.output_format();
  std::vector<catalog::Finding> findings;
  std::vector<Gpu> gpus;
  if (files.empty()) {
    gpus = ctx.catalog().gpus();
  } else {
    for (const auto& f : files) {
      auto doc = util::JsonDoc::load(f);
      if (!doc) throw Error(doc.error());
      try {
        auto parsed = catalog::Catalog::parse(*doc);
        gpus.insert(gpus.end(), parsed.begin(), parsed.end());
      } catch (const Error& e) {
        // A schema error stops this file; report it as a finding and go on with the others.
        std::string msg = e.what();
        std::string where = doc->origin();
        if (auto p = msg.find(": "); p != std::string::npos && util::starts_with(msg, doc->origin())) {
          where = msg.substr(0, p);
          msg = msg.substr(p + 2);
        }
        findings.push_back({"schema", catalog::Severity::error, "", where, msg});
      }
    }
  }
  auto more = catalog::validate(gpus, ctx.today());
  findings.insert(findings.end(), more.begin(), more.end());
  std::size_t errors = 0, warnings = 0;
  for (const auto& f : findings) (f.severity == catalog::Severity::error ? errors : warnings)++;
  if (errors) ctx.exit = Exit::no;

  if (fmt_out == report::Format::json) {
    auto j = report::envelope("catalog validate");
    j["gpus_checked"] = gpus.size();
    j["errors"] = errors;
    j["warnings"] = warnings;
    util::Json arr = util::Json::array();
    for (const auto& f : findings) {
      util::Json x;
      x["rule"] = f.rule;
      x["severity"] = catalog::name(f.severity);
      x["gpu_id"] = f.gpu_id.empty() ? util::Json(nullptr) : util::Json(f.gpu_id);
      x["location"] = f.where;
      x["message"] = f.message;
      arr.push_back(x);
    }
    j["findings"] = arr;
    ctx.out << report::dump(j);
    return;
  }
  if (fmt_out == report::Format::table) {
    for (const auto& f : findings) {
      std::string sev(catalog::name(f.severity));
      ctx.out << fmt::format("{}: {}: {}{} [{}]\n", f.where,
                             f.severity == catalog::Severity::error ? ctx.style.bad(sev) : sev,
                             f.gpu_id.empty() ? "" : f.gpu_id + ": ", f.message, f.rule);
    }
    auto plural = [](std::size_t n, std::string_view one) { return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s"); };
    ctx.out << fmt::format("{} checked: {}, {}\n", plural(gpus.size(), "GPU"), plural(errors, "error"),
                           plural(warnings, "warning"));
    return;
  }
  report::Table t({{"location"}, {"severity"}, {"gpu_id"}, {"rule"}, {"message"}});
  for (const auto& f : findings) t.add({f.where, std::string(catalog::name(f.severity)), f.gpu_id, f.rule, f.message});
  ctx.out << t.render(fmt_out, ctx.style);
}

// A data file has one format: --format json is accepted, any other is refused (not ignored).
constexpr report::Format kJsonOnly[] = {report::Format::json};

void run_export(Context& ctx) {
  ctx.output_format();
  util::Json j;
  j["schema_version"] = 1;
  util::Json arr = util::Json::array();
  for (const auto& g : ctx.catalog().gpus()) arr.push_back(catalog::to_data_json(g));
  j["gpus"] = arr;
  ctx.out << report::dump(j);
}

}  // namespace

void setup_catalog(CLI::App& app, Context& ctx) {
  auto* cat = app.add_subcommand("catalog", "List, show, validate and export the GPU catalog");
  cat->require_subcommand(1);
  cat->footer(
      "Examples:\n"
      "  gpuadvisor catalog list --vendor nvidia --min-memory 24GB --sort price\n"
      "  gpuadvisor catalog show 4090\n"
      "  gpuadvisor catalog validate docs/examples/catalogs/my-gpus.json\n"
      "  gpuadvisor catalog export > all-gpus.json");

  auto lo = std::make_shared<ListOptions>();
  auto* list = cat->add_subcommand("list", "List GPUs, filtered and sorted");
  list->add_option("--vendor", lo->vendor, "Only this vendor: nvidia, amd, intel, apple");
  list->add_option("--arch", lo->arch, "Only this architecture (ampere, ada, hopper, ...)");
  list->add_option("--segment", lo->segment, "Only this segment: consumer, workstation, datacenter, edge");
  list->add_option("--min-memory", lo->min_memory, "Only GPUs with at least this much memory (24GB, 24GiB, 80G)");
  list->add_option("--sort", lo->sort,
                   "Sort by memory, bandwidth, fp32, tf32, fp16, bf16, fp8, int8, tdp, price, year or interconnect");
  list->add_flag("--desc", lo->desc, "Sort in descending order");
  list->add_flag("--used", lo->used, "Use used-market prices where known");
  list->add_flag("--ids", lo->ids, "Print only the ids, one a line (for scripts and shell completion)");
  list->footer(
      "Examples:\n  gpuadvisor catalog list --segment datacenter --sort bandwidth --desc\n"
      "  gpuadvisor catalog list --min-memory 48GB --format csv");
  add_format_option(*list, ctx, kTabular);
  add_catalog_option(*list, ctx);
  list->callback([&ctx, lo] { run_list(ctx, *lo); });

  auto q = std::make_shared<std::string>();
  auto* show = cat->add_subcommand("show", "Show one GPU with every field and its sources");
  show->add_option("gpu", *q, "GPU id, alias or loose name (4090, a100-80, \"H100 SXM\")")->required();
  show->footer("Examples:\n  gpuadvisor catalog show 4090\n  gpuadvisor catalog show \"H100 SXM\" --format json");
  add_format_option(*show, ctx, kTabular);
  add_catalog_option(*show, ctx);
  show->callback([&ctx, q] { run_show(ctx, *q); });

  auto files = std::make_shared<std::vector<std::string>>();
  auto* val = cat->add_subcommand("validate",
                                  "Check catalog files (default: the merged catalog) for schema and physics errors");
  val->add_option("files", *files, "Catalog files to check; without files the embedded and user catalogs");
  val->footer(
      "Exit status: 0 no errors (warnings allowed), 1 errors found, 2 a file cannot be read.\n"
      "Examples:\n  gpuadvisor catalog validate\n  gpuadvisor catalog validate docs/examples/catalogs/my-gpus.json "
      "--format json");
  add_format_option(*val, ctx, kTabular);
  add_catalog_option(*val, ctx);
  val->callback([&ctx, files] { run_validate(ctx, *files); });

  auto* exp = cat->add_subcommand("export", "Print the merged catalog as a data file (JSON)");
  exp->footer("Example:\n  gpuadvisor catalog export --catalog docs/examples/catalogs/my-gpus.json > merged.json");
  add_format_option(*exp, ctx, kJsonOnly, "the only one: a data file, as data/gpus.json");
  add_catalog_option(*exp, ctx);
  exp->callback([&ctx] { run_export(ctx); });
}

}  // namespace gpuadvisor::cli
