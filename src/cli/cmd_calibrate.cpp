// gpuadvisor calibrate: fit the speed and memory factors to the user's own benchmark outputs and
// training logs, and write a calibration file that --calibration applies to what was measured.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <set>

#include "bench_files.h"
#include "context.h"
#include "gpuadvisor/estimate/measurement.h"
#include "gpuadvisor/util/json.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::cli {
namespace {

struct CalibrateOptions {
  std::vector<std::string> files;
  std::string model, gpu, gpus, precision, engine;
  // Training logs rarely state the workload: the user's, as the workload flags take it.
  std::string task, batch, seq_len, zero, tp, checkpointing, recipe;
  std::string output = "gpuadvisor-calibration.json";
};

struct Used {
  std::string file;
  BenchRun run;
  estimate::Measurement m;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string pct(double x) { return fmt::format("{:.0f}%", x * 100); }

// Letters and digits only, lower case, without the vendor's brand words.
std::string card_key(std::string_view name) {
  std::string k;
  for (char c : util::lower(name))
    if (std::isalnum(static_cast<unsigned char>(c))) k += c;
  for (std::string_view brand : {"nvidia", "geforce", "tesla", "amd", "radeon", "intel"})
    if (auto at = k.find(brand); at != std::string::npos) k.erase(at, brand.size());
  return k;
}

bool same_card(std::string_view name, const catalog::Gpu& gpu) {
  const std::string k = card_key(name);
  if (k == card_key(gpu.name) || k == card_key(gpu.id)) return true;
  return std::any_of(gpu.aliases.begin(), gpu.aliases.end(), [&](const auto& a) { return card_key(a) == k; });
}

double rel_error(double got, double want) { return std::fabs(got - want) / want; }

using Skips = std::vector<std::pair<std::string, std::string>>;  // where, why

// Each run matched to a catalog GPU and a workload (the flags win over what the file says).
std::vector<Used> match_runs(Context& ctx, const CalibrateOptions& o, const std::vector<BenchFile>& files,
                             const std::vector<std::string>& smi_gpus, Skips& skipped) {
  std::vector<Used> used;
  for (const auto& f : files) {
    for (const auto& r : f.runs) {
      const std::string where = fmt::format("{}:{}", f.path, r.line);
      if (!r.skip.empty()) {
        skipped.emplace_back(where, r.skip);
        continue;
      }
      std::string gpu_name = !o.gpu.empty()        ? o.gpu
                             : !r.gpu_name.empty() ? r.gpu_name
                             : smi_gpus.empty()    ? ""
                                                   : smi_gpus[0];
      if (gpu_name.empty()) {
        skipped.emplace_back(where, "no GPU named (give --gpu, or an nvidia-smi --query-gpu capture among the files)");
        continue;
      }
      const catalog::Gpu* gpu = nullptr;
      try {
        gpu = &ctx.gpu(gpu_name);
      } catch (const Error&) {
      }
      // A device a file names must be the catalog's card itself, not the nearest name (an RTX
      // 4080 is not an RTX 4080 SUPER); --gpu is the user's own choice.
      if (gpu && o.gpu.empty() && !same_card(gpu_name, *gpu)) {
        skipped.emplace_back(where, fmt::format("GPU {} is not in the catalog (the nearest is {}; --gpu to say it is)",
                                                util::quote(gpu_name), gpu->id));
        continue;
      }
      if (!gpu) {
        skipped.emplace_back(where, fmt::format("GPU {} is not in the catalog", util::quote(gpu_name)));
        continue;
      }
      estimate::Measurement m;
      m.id = where;
      m.where = where;
      m.kind = r.kind;
      m.expected = r.value;
      m.gpu = gpu->id;
      m.in.model = !o.model.empty() ? o.model : r.model;
      m.in.precision = !o.precision.empty() ? o.precision : r.precision;
      m.in.gpus = !o.gpus.empty() ? o.gpus : r.gpus > 1 ? std::to_string(r.gpus) : "";
      const bool training = r.kind == estimate::MeasureKind::train_per_gpu ||
                            r.kind == estimate::MeasureKind::train_tflops ||
                            r.kind == estimate::MeasureKind::train_mfu || r.kind == estimate::MeasureKind::train_memory;
      if (training) {
        m.in.task = !o.task.empty() ? o.task : "train";
        m.in.batch = o.batch;
        // The flag, else the log's own (Megatron-LM's seq_length).
        const std::string seq_len = !o.seq_len.empty() ? o.seq_len : r.seq_len > 0 ? std::to_string(r.seq_len) : "";
        m.in.seq_len = seq_len;
        m.in.zero = o.zero;
        m.in.checkpointing = o.checkpointing;
        m.in.recipe = o.recipe;
        m.in.tp = !o.tp.empty() ? o.tp : r.tp > 1 ? std::to_string(r.tp) : "";
        if (r.pp > 1) m.in.pp = std::to_string(r.pp);
        if (r.kind == estimate::MeasureKind::train_memory) {
          m.memory.unit_bytes = 1024.0 * 1024 * 1024;
          m.memory.counts = r.counts;
        }
        if (r.per_sample) {
          // Samples/s over the job: tokens/s per GPU needs the tokens per sample and the GPUs.
          if (seq_len.empty()) {
            skipped.emplace_back(where, "the log reports samples/s: give --seq-len (tokens per sample) and --gpus");
            continue;
          }
          const auto g = util::parse_number(m.in.gpus);
          const double gpus = g && *g >= 1 ? *g : 1;
          const auto seq = util::parse_count(seq_len);
          if (!seq || !(*seq > 0))
            throw Error(fmt::format("--seq-len: expected a token count, got {}", util::quote(seq_len)));
          m.expected = r.value * *seq / gpus;
        }
      } else {
        m.in.engine = !o.engine.empty() ? o.engine : r.engine;
        m.in.batch = std::to_string(r.batch);
        m.prompt_tokens = r.prompt_tokens;
        m.generated_tokens = r.generated_tokens;
        long long ctx_len = r.prompt_tokens + r.generated_tokens / 2;
        if (r.kind == estimate::MeasureKind::prefill) ctx_len = r.prompt_tokens;
        m.in.seq_len = std::to_string(std::max<long long>(ctx_len, 1));
      }
      if (o.model.empty() && !r.model_desc.empty()) {
        skipped.emplace_back(where, fmt::format("{} is a mixture-of-experts model: its parameter count does not give "
                                                "its shape (give --model)",
                                                util::quote(r.model_desc)));
        continue;
      }
      if (m.in.model.empty()) {
        skipped.emplace_back(where, "no model named (give --model)");
        continue;
      }
      used.push_back({f.path, r, m});
    }
  }
  return used;
}

// The text report, read from the JSON document the command writes.
void print_text(Context& ctx, const util::Json& j, const std::string& output) {
  const auto& files = j["files"];
  const auto& factors = j["factors"];
  const auto& skipped = j["skipped"];
  const std::size_t matched = j["measurements"].size();
  ctx.out << fmt::format("Read {} file{}: {} measurement{} matched, {} skipped.\n", files.size(),
                         files.size() == 1 ? "" : "s", matched, matched == 1 ? "" : "s", skipped.size());
  for (const auto& f : files)
    ctx.out << fmt::format("  {}: {}\n", f["path"].get<std::string>(), f["format"].get<std::string>());
  ctx.out << '\n';
  if (!factors.empty()) {
    report::Table t({{"factor"},
                     {"published", report::Align::right},
                     {"fitted", report::Align::right},
                     {"measurements", report::Align::right},
                     {"error before", report::Align::right},
                     {"error after", report::Align::right}});
    for (const auto& r : factors)
      t.add({r["id"].get<std::string>(), fmt::format("{:.4g}", r["published"].get<double>()),
             fmt::format("{:.4g}", r["fitted"].get<double>()), std::to_string(r["measurements"].get<int>()),
             pct(r["median_error_before"].get<double>()), pct(r["median_error_after"].get<double>())});
    ctx.out << t.render(report::Format::table, ctx.style) << '\n';
    const auto& held = j["held_out_median_error"];
    ctx.out << fmt::format("Median error on your measurements: {} with the published factors, {} calibrated{}.\n",
                           pct(j["median_error_before"].get<double>()), pct(j["median_error_after"].get<double>()),
                           held.is_null() ? "" : fmt::format(" ({} held out, 5-fold)", pct(held.get<double>())));
    auto names = [](const util::Json& a) {
      std::vector<std::string> v;
      for (const auto& x : a) v.push_back(x.get<std::string>());
      return util::join(v, ", ");
    };
    if (j["median_error_after"].get<double>() > j["median_error_before"].get<double>())
      ctx.out << "The calibrated factors do not lower the median error on these measurements: read the matched "
                 "and skipped runs before using the file.\n";
    ctx.out << fmt::format("Applies to {} on {}.\n", names(j["scope"]["engines"]), names(j["scope"]["gpus"]));
    ctx.out << fmt::format("Wrote {}; use it with --calibration {} (or GPUADVISOR_CALIBRATION).\n", output, output);
  } else {
    const std::size_t need = estimate::kMinRecordsPerFactor;
    ctx.out << fmt::format(
        "Nothing fitted: a factor moves only where at least {} matched measurements use it ({}). "
        "No file written.\n",
        need,
        matched >= need ? fmt::format("no factor is used by {} of the {} matched", need, matched)
                        : fmt::format("{} matched", matched));
    // What was read, against the published estimate: worth knowing with no fit.
    if (matched > 0) ctx.out << "\nMatched, against the published estimate:\n";
    for (const auto& m : j["measurements"]) {
      const auto& est = m["estimate_before"];
      const double measured = m["measured"].get<double>();
      const std::string unit = m["kind"] == "train_memory" ? " GiB" : "";
      ctx.out << fmt::format("  - {}: {} {}{} on {} x {}, estimated {}\n", m["source"].get<std::string>(),
                             m["kind"].get<std::string>(), util::format_number(measured), unit, m["gpus"].get<int>(),
                             m["gpu_id"].get<std::string>(),
                             est.is_null() ? std::string("unknown")
                                           : fmt::format("{}{} ({:+.0f}%)", util::format_number(est.get<double>()),
                                                         unit, (est.get<double>() / measured - 1) * 100));
    }
  }
  if (!skipped.empty()) {
    ctx.out << "\nSkipped:\n";
    for (const auto& x : skipped)
      ctx.out << fmt::format("  - {}: {}\n", x["source"].get<std::string>(), x["reason"].get<std::string>());
  }
}

// Each measurement used, with the estimate before and after the fit.
util::Json measurements_json(const std::vector<const estimate::Prepared*>& records,
                             const catalog::Efficiency& published, const catalog::Efficiency& fitted) {
  util::Json mj = util::Json::array();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto* p = records[i];
    const auto before = estimate::predict(*p, published), after = estimate::predict(*p, fitted);
    mj.push_back({{"source", p->m->where},
                  {"kind", std::string(estimate::kMeasureKindNames.name(p->m->kind))},
                  {"measured", p->m->expected},
                  {"model", p->w.model.id},
                  {"gpu_id", p->gpu->id},
                  {"gpus", p->w.gpus},
                  {"engine", estimate::is_training(p->w.task) ? std::string("training")
                                                              : std::string(catalog::name(p->w.engine))},
                  {"precision", p->w.precision},
                  {"batch", p->w.batch},
                  {"prompt_tokens", p->m->prompt_tokens},
                  {"generated_tokens", p->m->generated_tokens},
                  {"estimate_before", before ? util::Json(before->value) : util::Json(nullptr)},
                  {"estimate_after", after ? util::Json(after->value) : util::Json(nullptr)}});
  }
  return mj;
}

void run_calibrate(Context& ctx, const CalibrateOptions& o) {
  const auto fmt_out = ctx.output_format();
  std::vector<BenchFile> files;
  std::vector<std::string> smi_gpus;
  // Among several files, one of no known format (a README beside the outputs) is skipped and
  // said; when none is known, that is the error.
  Skips unknown;
  for (const auto& path : o.files) {
    auto text = util::read_file(path);
    if (!text) throw Error(text.error());
    try {
      files.push_back(read_bench_file(path, *text));
    } catch (const Error& e) {
      if (o.files.size() == 1) throw;
      unknown.emplace_back(path, e.what());
      continue;
    }
    for (const auto& g : files.back().gpu_names) smi_gpus.push_back(g);
  }
  if (files.empty()) throw Error(unknown.front().second);
  Skips skipped;
  for (const auto& [path, why] : unknown)
    skipped.emplace_back(path, fmt::format("not a format calibrate reads (it reads {})", kBenchFormats));
  std::vector<Used> used = match_runs(ctx, o, files, smi_gpus, skipped);
  std::vector<estimate::Prepared> prepared;
  prepared.reserve(used.size());
  for (const auto& u : used) prepared.push_back(estimate::prepare(u.m, ctx.catalog(), ctx.models()));
  const auto& published = catalog::Efficiency::embedded();
  std::vector<const estimate::Prepared*> records;
  for (std::size_t i = 0; i < prepared.size(); ++i) {
    auto& p = prepared[i];
    // prepare() keeps a pointer to the measurement: point it at the one that lives on.
    p.m = &used[i].m;
    if (!p.skip.empty()) {
      skipped.emplace_back(used[i].m.where, p.skip);
      continue;
    }
    if (!estimate::predict(p, published)) {
      skipped.emplace_back(used[i].m.where, fmt::format("no estimate for {} in {}", p.gpu->id, p.w.precision));
      continue;
    }
    records.push_back(&p);
  }
  // The fit: the published factors are the start; only factors that at least the minimum
  // number of measurements use move.
  std::vector<estimate::FactorFit> fits;
  const auto ids = estimate::speed_factor_ids(published);
  const auto fitted = records.empty() ? published : estimate::fit_factors(records, published, ids, &fits);
  // Per factor: the error on the measurements that use it, before and after.
  struct Row {
    estimate::FactorFit fit;
    double before = 0, after = 0;
  };
  std::vector<Row> rows;
  for (const auto& f : fits) {
    std::vector<double> b, a;
    for (const auto* p : records) {
      auto got = estimate::predict(*p, published);
      if (!got || std::find(got->factors.begin(), got->factors.end(), f.id) == got->factors.end()) continue;
      b.push_back(rel_error(got->value, p->m->expected));
      if (auto g2 = estimate::predict(*p, fitted)) a.push_back(rel_error(g2->value, p->m->expected));
    }
    rows.push_back({f, median(b), median(a)});
  }
  std::vector<double> all_before, all_after;
  for (const auto* p : records) {
    if (auto g = estimate::predict(*p, published)) all_before.push_back(rel_error(g->value, p->m->expected));
    if (auto g = estimate::predict(*p, fitted)) all_after.push_back(rel_error(g->value, p->m->expected));
  }
  std::optional<double> held_out;
  if (records.size() >= 10) {
    std::vector<double> e;
    for (const auto& h : estimate::cross_validate(records, published, ids, 5))
      e.push_back(rel_error(h.got.value, h.p->m->expected));
    held_out = median(e);
  }
  // The scope: the GPUs and engines measured.
  std::set<std::string> gpus, engines;
  for (const auto* p : records) {
    gpus.insert(p->gpu->id);
    // Training runs are not an engine's: their scope is "training", every framework's on the GPU.
    engines.insert(is_training(p->w.task) ? std::string("training") : std::string(catalog::name(p->w.engine)));
  }
  // The file.
  auto j = report::envelope("calibrate");
  j["created"] = ctx.today();
  util::Json files_j = util::Json::array();
  for (const auto& f : files) files_j.push_back({{"path", f.path}, {"format", f.format}});
  j["files"] = files_j;
  j["scope"] = {{"gpus", std::vector<std::string>(gpus.begin(), gpus.end())},
                {"engines", std::vector<std::string>(engines.begin(), engines.end())}};
  util::Json fj = util::Json::array();
  for (const auto& r : rows)
    fj.push_back({{"id", r.fit.id},
                  {"published", r.fit.before},
                  {"fitted", r.fit.after},
                  {"measurements", r.fit.records},
                  {"median_error_before", r.before},
                  {"median_error_after", r.after}});
  j["factors"] = fj;
  j["measurements"] = measurements_json(records, published, fitted);
  util::Json sj = util::Json::array();
  for (const auto& [where, why] : skipped) sj.push_back({{"source", where}, {"reason", why}});
  j["skipped"] = sj;
  j["median_error_before"] = all_before.empty() ? util::Json(nullptr) : util::Json(median(all_before));
  j["median_error_after"] = all_after.empty() ? util::Json(nullptr) : util::Json(median(all_after));
  j["held_out_median_error"] = held_out ? util::Json(*held_out) : util::Json(nullptr);
  if (!rows.empty()) {
    std::ofstream out(o.output);
    if (!out) throw Error(fmt::format("--output: cannot write {}", o.output));
    out << j.dump(2) << '\n';
  }
  j["written_to"] = rows.empty() ? util::Json(nullptr) : util::Json(o.output);

  if (fmt_out == report::Format::json)
    ctx.out << j.dump(2) << '\n';
  else
    print_text(ctx, j, o.output);
}

}  // namespace

void setup_calibrate(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CalibrateOptions>();
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Fit the speed and memory factors to your own benchmark outputs and training logs, and write a calibration file");
  cmd->add_option("files", o->files, fmt::format("Benchmark outputs, read by their content: {}", kBenchFormats))
      ->required()
      ->type_name("FILE");
  cmd->add_option("--model", o->model, "The model measured, where the file does not name it (preset or size)");
  cmd->add_option("--gpu", o->gpu, "The GPU measured, where the file does not name it");
  cmd->add_option("--gpus", o->gpus, "GPUs the runs used, where the file does not say");
  cmd->add_option("--precision", o->precision, "Weight format measured, where the file does not say (fp16, fp8, ...)");
  const std::string tg = "Training logs (the workload they ran, as the workload flags take it)";
  cmd->add_option("--task", o->task, "train (default), lora or qlora; inference runs are the serving benchmarks'")
      ->group(tg);
  cmd->add_option("--batch", o->batch, "Micro-batch per GPU")->group(tg);
  cmd->add_option("--seq-len", o->seq_len, "Sequence length (tokens per sample)")->group(tg);
  cmd->add_option("--zero", o->zero, "ZeRO stage 0-3 or fsdp")->group(tg);
  cmd->add_option("--tp", o->tp, "Tensor-parallel degree, where the log does not say")->group(tg);
  cmd->add_option("--checkpointing", o->checkpointing, "Activation checkpointing: none, selective, selective-op, full")
      ->group(tg);
  cmd->add_option("--recipe", o->recipe, "The framework's memory defaults (torchtune, fsdp, megatron, ...)")->group(tg);
  cmd->add_option(
      "--engine", o->engine,
      "Engine measured, where the file does not say: llama.cpp, vllm, sglang, trt-llm, transformers, exllamav2");
  cmd->add_option("-o,--output", o->output, "The calibration file to write (default gpuadvisor-calibration.json)")
      ->type_name("FILE");
  static constexpr report::Format kFormats[] = {report::Format::table, report::Format::json};
  add_format_option(*cmd, ctx, kFormats);
  add_catalog_option(*cmd, ctx);
  cmd->footer(
      "Each measurement is matched to a model, a catalog GPU and an engine, and the factors its estimate uses\n"
      "are fitted where at least 3 measurements use them (docs/calibrate.md).\n"
      "Exit status: 0, or 2 for a file that cannot be read or is none of the formats.\n"
      "Examples:\n"
      "  gpuadvisor calibrate tests/fixtures/calibrate/llama-bench-rtx3090-llama3-b2824.md --model llama-3.1-8b -o "
      "/tmp/rtx3090.json\n"
      "  gpuadvisor estimate --model llama-3.1-8b --precision q4_k_m --gpu rtx-3090 --calibration /tmp/rtx3090.json\n"
      "  gpuadvisor calibrate tests/fixtures/calibrate/llama-bench-rtx3090ti-llama7b-b1275.json --model 7B --format "
      "json -o /tmp/3090ti.json");
  cmd->callback([&ctx, o] { run_calibrate(ctx, *o); });
}

}  // namespace gpuadvisor::cli
