// gpuadvisor compat: CUDA toolkit, driver and framework support for a GPU or an architecture.
#include <fmt/format.h>

#include <algorithm>

#include "context.h"
#include "gpuadvisor/catalog/ops.h"
#include "gpuadvisor/util/text.h"
#include "ops_layout.h"

namespace gpuadvisor::cli {
namespace {

using catalog::Answer;
using catalog::CompatReport;

struct CompatOptions {
  std::string gpu, arch, cuda, driver, framework, version, os = "linux";
};

util::Json opt(const std::optional<std::string>& v) { return v ? util::Json(*v) : util::Json(nullptr); }

// MIG exists on some products of an architecture only (GA100 but not GA10x, RTX PRO Blackwell but
// not GeForce RTX 50): a GPU's own record decides, and says how many instances.
std::optional<bool> has_mig(const catalog::ArchFeatures& f, const catalog::Gpu* gpu) {
  if (!gpu) return f.mig;
  if (!gpu->mig_instances) return std::nullopt;
  return *gpu->mig_instances > 0;
}

std::string features_text(const catalog::ArchFeatures& f, const catalog::Gpu* gpu) {
  std::vector<std::string> yes, no;
  auto put = [&](bool b, const std::string& n) { (b ? yes : no).push_back(n); };
  put(f.tf32, "TF32");
  put(f.bf16, "BF16");
  put(f.fp8, "FP8");
  put(f.fp4, "FP4");
  const auto mig = has_mig(f, gpu);
  if (!gpu)
    put(f.mig, f.mig ? "MIG (not on every product)" : "MIG");
  else if (mig)
    put(*mig, *mig ? fmt::format("MIG (up to {} instances)", *gpu->mig_instances) : "MIG");
  put(f.structured_sparsity, "2:4 structured sparsity");
  put(f.transformer_engine, "Transformer Engine FP8");
  std::string out = yes.empty() ? "none of " + util::join(no, ", ") : util::join(yes, ", ");
  if (!yes.empty() && !no.empty()) out += "; not " + util::join(no, ", ");
  if (!mig) out += "; MIG not known for this GPU";
  return out;
}

std::string framework_text(const catalog::FrameworkSummary& s) {
  const auto& sup = s.support;
  if (sup.first)
    return fmt::format("{} or newer{}", *sup.first,
                       s.build_cuda ? fmt::format(" (its CUDA {} build{})", *s.build_cuda,
                                                  s.build_package.empty() ? "" : ", " + s.build_package)
                                    : "");
  if (sup.runs_from) return fmt::format("{} or newer. {}", *sup.runs_from, sup.note);
  return "unknown: " + (sup.note.empty() ? std::string("not in gpuadvisor's data") : sup.note);
}

std::string arch_display(const std::string& id) {
  const auto* a = catalog::find_architecture(id);
  return a ? std::string(a->display) : id;
}

layout::KeyValues summary(const CompatReport& r, const catalog::Gpu* gpu) {
  layout::KeyValues kv;
  const auto& q = r.query;
  if (!q.gpu_id.empty()) kv.push_back({"GPU", {fmt::format("{} ({})", q.gpu_name, q.gpu_id)}});
  if (!r.arch) {
    kv.push_back(
        {"Architecture", {fmt::format("{} ({})", arch_display(q.arch), catalog::kVendorNames.name(q.vendor))}});
    kv.push_back(
        {"CUDA", {"does not run on it: CUDA and the CUDA builds of PyTorch, TensorFlow and JAX need an NVIDIA GPU"}});
    return kv;
  }
  std::string ccs;
  if (q.gpu_id.empty() && r.arch->compute_capabilities.size() > 1)
    ccs = fmt::format(" (the architecture also has {}; ask with --arch <cc>)", [&] {
      std::vector<std::string> others;
      for (const auto& c : r.arch->compute_capabilities)
        if (c != r.cc) others.push_back(c);
      return util::join(others, ", ");
    }());
  kv.push_back({"Architecture", {fmt::format("{}, compute capability {}{}", arch_display(r.arch->id), r.cc, ccs)}});
  std::string cuda = r.first_cuda
                         ? fmt::format("{} or newer builds native code", *r.first_cuda)
                         : fmt::format("unknown: the first toolkit for compute capability {} is not in the data", r.cc);
  if (r.arch->last_cuda) cuda += fmt::format("; {} is the last toolkit that builds for it", *r.arch->last_cuda);
  kv.push_back({"CUDA", {cuda}});
  if (r.first_cuda_row) {
    const auto& row = *r.first_cuda_row;
    std::vector<std::string> parts;
    if (row.min_driver_linux) parts.push_back(*row.min_driver_linux + " or newer on Linux");
    if (row.min_driver_windows) parts.push_back(*row.min_driver_windows + " or newer on Windows");
    kv.push_back(
        {"Driver", {fmt::format("{} (for CUDA {}, CUDA release notes Table 3)", util::join(parts, ", "), row.cuda)}});
  }
  for (const auto& f : r.frameworks) kv.push_back({std::string(catalog::display(f.framework)), {framework_text(f)}});
  kv.push_back({"Features", {features_text(r.arch->features_for(r.cc), gpu)}});
  return kv;
}

util::Json to_json(const CompatReport& r, const catalog::Gpu* gpu) {
  auto j = report::envelope("compat");
  const auto& q = r.query;
  if (q.gpu_id.empty())
    j["gpu"] = nullptr;
  else
    j["gpu"] = util::Json{{"id", q.gpu_id}, {"name", q.gpu_name}};
  j["vendor"] = catalog::kVendorNames.name(q.vendor);
  j["architecture"] = q.arch;
  j["compute_capability"] = r.arch ? util::Json(r.cc) : util::Json(nullptr);
  util::Json cuda;
  cuda["first"] = opt(r.first_cuda);
  cuda["last"] = r.arch ? opt(r.arch->last_cuda) : util::Json(nullptr);
  j["cuda"] = r.arch ? cuda : util::Json(nullptr);
  if (r.first_cuda_row) {
    util::Json d;
    d["cuda"] = r.first_cuda_row->cuda;
    d["min_linux"] = opt(r.first_cuda_row->min_driver_linux);
    d["min_windows"] = opt(r.first_cuda_row->min_driver_windows);
    j["driver"] = d;
  } else {
    j["driver"] = nullptr;
  }
  util::Json fws = util::Json::object();
  for (const auto& f : r.frameworks) {
    util::Json x;
    x["first"] = opt(f.support.first);
    x["runs_from"] = opt(f.support.runs_from);
    x["build_cuda"] = opt(f.build_cuda);
    x["build_package"] = f.build_package.empty() ? util::Json(nullptr) : util::Json(f.build_package);
    x["note"] = f.support.note;
    fws[std::string(catalog::name(f.framework))] = x;
  }
  j["frameworks"] = fws;
  if (r.arch) {
    const auto f = r.arch->features_for(r.cc);
    j["features"] =
        util::Json{{"tf32", f.tf32},
                   {"bf16", f.bf16},
                   {"fp8", f.fp8},
                   {"fp4", f.fp4},
                   {"mig", has_mig(f, gpu) ? util::Json(*has_mig(f, gpu)) : util::Json(nullptr)},
                   {"mig_instances", gpu && gpu->mig_instances ? util::Json(*gpu->mig_instances) : util::Json(nullptr)},
                   {"structured_sparsity", f.structured_sparsity},
                   {"transformer_engine", f.transformer_engine}};
  } else {
    j["features"] = nullptr;
  }
  util::Json question;
  question["cuda"] = q.cuda ? util::Json(q.cuda->text) : util::Json(nullptr);
  question["driver"] = q.driver ? util::Json(q.driver->text) : util::Json(nullptr);
  question["framework"] = q.framework ? util::Json(std::string(catalog::name(*q.framework))) : util::Json(nullptr);
  question["version"] = q.framework_version ? util::Json(q.framework_version->text) : util::Json(nullptr);
  question["os"] = q.windows ? "windows" : "linux";
  j["question"] = question;
  util::Json checks = util::Json::array();
  for (const auto& c : r.checks)
    checks.push_back(util::Json{{"id", c.id},
                                {"subject", c.subject},
                                {"answer", std::string(catalog::name(c.answer))},
                                {"detail", c.detail},
                                {"needed", c.needed.empty() ? util::Json(nullptr) : util::Json(c.needed)}});
  j["checks"] = checks;
  j["answer"] = std::string(catalog::name(r.answer));
  j["needed"] = r.needed;
  j["sources"] = catalog::sources_json(r.sources);
  return j;
}

void run_compat(Context& ctx, const CompatOptions& o) {
  auto fmt_out = ctx.output_format();
  if (o.gpu.empty() && o.arch.empty())
    throw Error("compat: give --gpu ID or --arch NAME (for example --gpu h100-sxm, --arch hopper or --arch 8.6)");
  if (!o.gpu.empty() && !o.arch.empty()) throw Error("--gpu and --arch: give one of them, not both");
  std::vector<std::string> oses = {"linux", "windows"};
  if (std::find(oses.begin(), oses.end(), o.os) == oses.end())
    throw Error(
        fmt::format("--os: expected linux or windows, got {}{}", util::quote(o.os), util::did_you_mean(o.os, oses)));

  const auto& table = catalog::CompatTable::embedded();
  catalog::CompatQuery q;
  q.windows = o.os == "windows";
  const catalog::Gpu* gpu = nullptr;
  if (!o.gpu.empty()) {
    gpu = &ctx.gpu(o.gpu);
    q.gpu_id = gpu->id;
    q.gpu_name = gpu->name;
    q.vendor = gpu->vendor;
    q.arch = gpu->architecture;
    q.cc = gpu->compute_capability.value_or("");
  } else {
    auto a = catalog::resolve_arch(table, o.arch);
    if (!a) throw Error("--arch: " + a.error());
    q.arch = a->arch->id;
    q.cc = a->cc;
  }
  if (!o.cuda.empty()) {
    auto v = catalog::parse_cuda_release(table, o.cuda);
    if (!v) throw Error("--cuda: " + v.error());
    q.cuda = *v;
  }
  if (!o.driver.empty()) {
    auto v = catalog::parse_version(o.driver);
    if (!v)
      throw Error(fmt::format("--driver: expected a driver version like 535.104.05, got {}", util::quote(o.driver)));
    // NVIDIA's Linux and Windows drivers are numbered branch.build[.patch] with a three-digit branch.
    if (v->parts.size() < 2 || v->parts[0] < 100 || v->parts[0] > 999)
      throw Error(
          fmt::format("--driver: {} is not an NVIDIA driver version: they are a three-digit branch and a build, "
                      "like 535.104.05 or 580.65",
                      util::quote(o.driver)));
    q.driver = *v;
  }
  if (!o.framework.empty()) {
    q.framework = catalog::framework_from(o.framework);
    if (!q.framework) {
      std::vector<std::string> names;
      for (auto f : catalog::kFrameworks) names.emplace_back(catalog::name(f));
      throw Error(fmt::format("--framework: expected one of {}, got {}{}", util::join(names, ", "),
                              util::quote(o.framework), util::did_you_mean(util::lower(o.framework), names)));
    }
  }
  if (!o.version.empty()) {
    if (!q.framework) throw Error("--version: needs --framework (pytorch, tensorflow or jax)");
    auto v = catalog::parse_framework_release(table, *q.framework, o.version);
    if (!v) throw Error("--version: " + v.error());
    q.framework_version = *v;
  }

  auto r = catalog::evaluate_compat(table, q);
  if (!r) throw Error(r.error());
  if (r->answer == Answer::no) ctx.exit = Exit::no;

  if (fmt_out == report::Format::json) {
    ctx.out << report::dump(to_json(*r, gpu));
    return;
  }
  auto kv = summary(*r, gpu);
  if (fmt_out != report::Format::table) {
    report::Table t({{"field"}, {"value"}});
    for (const auto& [k, v] : kv) t.add({k, util::join(v, " ")});
    for (const auto& c : r->checks)
      t.add({"Check: " + c.subject, fmt::format("{}: {}{}", catalog::name(c.answer), c.detail,
                                                c.needed.empty() ? "" : " (needed: " + c.needed + ")")});
    if (!r->checks.empty()) t.add({"Answer", std::string(catalog::name(r->answer))});
    ctx.out << t.render(fmt_out, ctx.style);
    return;
  }
  const int width = ctx.style.width;
  ctx.out << layout::key_values(kv, width);
  if (!r->checks.empty()) {
    ctx.out << "\nChecks\n";
    for (const auto& c : r->checks) {
      std::string tag = fmt::format("  {:<8}", catalog::name(c.answer));
      ctx.out << layout::hanging(tag, c.subject, width);
      ctx.out << layout::hanging(std::string(10, ' '), c.detail, width);
      if (!c.needed.empty()) ctx.out << layout::hanging(std::string(10, ' '), "Needed: " + c.needed, width);
    }
    std::string answer = fmt::format("Answer: {}", catalog::name(r->answer));
    if (!r->needed.empty()) answer += ". Needed: " + util::join(r->needed, "; ");
    ctx.out << "\n" << layout::hanging("", answer + ".", width);
  }
  if (!r->sources.empty()) {
    ctx.out << "\nSources\n";
    for (const auto& s : r->sources) ctx.out << layout::hanging("  - ", layout::cite(s), width);
  }
}

}  // namespace

void setup_compat(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CompatOptions>();
  auto* cmd =
      app.add_subcommand("compat", "CUDA toolkit, driver and framework (PyTorch, TensorFlow, JAX) support for a GPU");
  cmd->add_option("--gpu", o->gpu, "GPU id, alias or loose name (h100-sxm, 4090, \"A100 80GB\")")->type_name("GPU");
  cmd->add_option("--arch", o->arch,
                  "Architecture (volta, turing, ampere, ada, hopper, blackwell) or compute capability (8.6, sm_90)")
      ->type_name("ARCH");
  cmd->add_option("--cuda", o->cuda, "CUDA toolkit version to check (11.8, 12.4)")->type_name("VERSION");
  cmd->add_option("--driver", o->driver, "NVIDIA driver version to check (525.60.13, 535.104)")->type_name("VERSION");
  cmd->add_option("--framework", o->framework, "pytorch, tensorflow or jax")->type_name("NAME");
  cmd->add_option("--version", o->version, "Framework release to check (2.0, 2.3.1, 0.4.12); needs --framework")
      ->type_name("VERSION");
  cmd->add_option("--os", o->os, "Driver platform: linux (default) or windows")->type_name("OS");
  cmd->footer(
      "Says what works and what is needed: the first CUDA toolkit with native code for the GPU's compute\n"
      "capability, the driver that toolkit needs (CUDA release notes, Tables 2 and 3), the first PyTorch,\n"
      "TensorFlow and JAX releases with prebuilt support, and the architecture's features.\n"
      "Exit status: 0 it works (or nothing was asked), 1 the answer is no, 2 a usage error\n"
      "(unknown GPU, architecture, framework or release). See docs/compat.md.\n"
      "Examples:\n"
      "  gpuadvisor compat --gpu h100-sxm\n"
      "  gpuadvisor compat --gpu h100-sxm --framework pytorch --version 1.12\n"
      "  gpuadvisor compat --gpu rtx-4090 --cuda 11.7 --driver 515.65.01\n"
      "  gpuadvisor compat --arch 8.6 --framework tensorflow --version 2.4 --format json");
  add_format_option(*cmd, ctx, kTabular);
  add_catalog_option(*cmd, ctx);
  cmd->callback([&ctx, o] { run_compat(ctx, *o); });
}

}  // namespace gpuadvisor::cli
