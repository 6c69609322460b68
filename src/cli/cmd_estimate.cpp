// gpuadvisor estimate: throughput and time of a workload on a GPU (or N of them).
#include <fmt/format.h>

#include "context.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/estimate/perf.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"
#include "trace.h"

namespace gpuadvisor::cli {
namespace {

struct EstimateOptions {
  estimate::WorkloadInput in;
  std::string gpu;
  std::string batch_file;
};

std::string rate(const estimate::Range& r, const char* unit) {
  return fmt::format("{} {} (range {} to {})", util::format_number(r.typical), unit, util::format_number(r.low),
                     util::format_number(r.high));
}

std::string duration(const estimate::Range& r) {
  return fmt::format("{} (range {} to {})", util::format_duration(r.typical), util::format_duration(r.low),
                     util::format_duration(r.high));
}

struct EstimateResult {
  estimate::Workload w;
  estimate::PerfEstimate perf;
  estimate::FitResult fit;
};

EstimateResult compute(Context& ctx, const estimate::WorkloadInput& in, const std::string& gpu_query) {
  if (gpu_query.empty()) throw Error("--gpu is required: which GPU to estimate on (e.g. --gpu rtx-4090)");
  const auto& gpu = ctx.gpu(gpu_query);
  estimate::WorkloadSet set;
  EstimateResult r;
  r.w = estimate::plan_layout(ctx.workload(in, &set), set, gpu, ctx.efficiency());
  r.perf = estimate::estimate_perf(r.w, gpu, ctx.efficiency());
  r.fit = estimate::fit(r.w, gpu, ctx.efficiency());
  trace_workload(r.w, &gpu);
  trace_perf(r.perf, gpu);
  if (!r.perf.available) throw Error(fmt::format("cannot estimate: {}", r.perf.reason), Exit::usage);
  return r;
}

util::Json to_json(const EstimateResult& r, const catalog::Gpu& gpu) {
  util::Json j;
  j["workload"] = estimate::to_json(r.w);
  j["gpu_id"] = gpu.id;
  j["count"] = r.w.gpus;
  j["fits"] = r.fit.fits;
  const util::Json pj = estimate::to_json(r.perf, r.w);
  for (auto& [k, v] : pj.items()) j[k] = v;
  // The workload's own defaults first, as in the text output.
  util::Json all = r.w.assumptions;
  for (const auto& a : pj["assumptions"]) all.push_back(a);
  j["assumptions"] = all;
  return j;
}

// CSV: one record with the units in the column names; an unknown quantity is an empty cell.
report::Table estimate_csv(const EstimateResult& r, const catalog::Gpu& gpu) {
  const auto& w = r.w;
  const auto& p = r.perf;
  auto num = [](double v) { return report::csv_number(v); };
  auto whole = [](double v) { return fmt::format("{:.0f}", v); };
  std::vector<report::Column> cols = {{"gpu_id"}, {"gpus"}, {"precision"}, {"task"}, {"fits"}, {"spare_bytes_per_gpu"},
                                      {"bound"}};
  std::vector<std::string> row = {gpu.id,
                                  std::to_string(w.gpus),
                                  std::string(w.precision),
                                  std::string(estimate::name(w.task)),
                                  r.fit.fits ? "true" : "false",
                                  whole(r.fit.headroom_bytes),
                                  std::string(p.bound)};
  auto range = [&](const std::string& key, const estimate::Range& v) {
    for (const char* suffix : {"", "_low", "_high"}) cols.push_back({key + suffix});
    row.push_back(num(v.typical));
    row.push_back(num(v.low));
    row.push_back(num(v.high));
  };
  if (p.images_per_s) {
    range("images_per_s", *p.images_per_s);
    if (p.image_batch_s) range("batch_seconds", *p.image_batch_s);
  } else if (estimate::is_training(w.task)) {
    range("tokens_per_s", p.tokens_per_s);
    cols.push_back({"step_time_s"});
    row.push_back(num(p.step_time_s));
    if (p.time_s) range("time_s", *p.time_s);
  } else {
    if (p.compute_known) {
      range("prefill_tokens_per_s", p.prefill_tokens_per_s);
    } else {
      for (const char* c : {"prefill_tokens_per_s", "prefill_tokens_per_s_low", "prefill_tokens_per_s_high"}) {
        cols.push_back({c});
        row.push_back("");
      }
    }
    range("decode_tokens_per_s", p.decode_tokens_per_s);
    cols.push_back({"decode_total_tokens_per_s"});
    row.push_back(num(p.decode_total_tokens_per_s.typical));
    cols.push_back({"time_to_first_token_s"});
    row.push_back(p.compute_known ? num(p.time_to_first_token_s) : "");
    cols.push_back({"decode_bytes_per_step_per_gpu"});
    row.push_back(whole(p.decode_bytes_per_step));
  }
  report::Table t(cols);
  t.add(row);
  return t;
}

void run_estimate(Context& ctx, const EstimateOptions& o) {
  if (!o.batch_file.empty()) {
    run_batch(ctx, o.batch_file, o.in, {"gpu"},
              [&](const estimate::WorkloadInput& in, const util::Fields& line, Exit& code) {
                std::string gq = line.opt_str("gpu").value_or(o.gpu);
                auto r = compute(ctx, in, gq);
                if (!r.fit.fits) code = Exit::no;
                return to_json(r, ctx.gpu(gq));
              });
    return;
  }
  auto f = ctx.output_format();
  auto r = compute(ctx, o.in, o.gpu);
  const auto& gpu = ctx.gpu(o.gpu);
  const auto& w = r.w;
  const auto& perf = r.perf;
  const auto& fit = r.fit;
  if (!fit.fits) ctx.exit = Exit::no;

  if (f == report::Format::json) {
    auto j = report::envelope("estimate");
    const util::Json body = to_json(r, gpu);
    for (auto& [k, v] : body.items()) j[k] = v;
    ctx.out << report::dump(j);
    return;
  }
  if (f == report::Format::csv) {
    ctx.out << estimate_csv(r, gpu).render(f, ctx.style);
    return;
  }
  std::vector<std::pair<std::string, std::string>> kv;
  const std::string on = fmt::format("{} x {}", w.gpus, gpu.name);
  std::string peak = fmt::format("{:.0f}% of {} TFLOPS {}", perf.mfu * 100, util::format_number(perf.peak_flops / 1e12),
                                 catalog::name(perf.compute));
  if (perf.images_per_s) {
    kv.push_back({"Images/s", rate(*perf.images_per_s, "images/s")});
    if (perf.image_batch_s) {
      const auto& t = *perf.image_batch_s;
      std::string per = fmt::format("{} ({} to {})", util::format_duration(t.typical), util::format_duration(t.low),
                                    util::format_duration(t.high));
      kv.push_back({w.batch == 1 ? "Per image" : fmt::format("Per batch of {}", w.batch), per});
    }
    if (perf.steps_per_s)
      kv.push_back({"Steps/s", fmt::format("{} denoising steps/s ({} steps per image)",
                                           util::format_number(perf.steps_per_s->typical), w.steps)});
    kv.push_back({"Compute", peak});
  } else if (estimate::is_training(w.task)) {
    kv.push_back({"Throughput", rate(perf.tokens_per_s, "tokens/s")});
    kv.push_back({"Per GPU", util::format_number(perf.tokens_per_s.typical / w.gpus) + " tokens/s"});
    kv.push_back({"FLOPs/token", fmt::format("{:.3g}", perf.flops_per_token)});
    kv.push_back({"Utilisation", peak + (w.gpus > 1 ? fmt::format(", x {:.2f} multi-GPU scaling", perf.scaling) : "")});
    kv.push_back(
        {"Step time", fmt::format("{} for {} tokens (batch {} x {} x dp {})", util::format_duration(perf.step_time_s),
                                  util::format_number(static_cast<double>(w.batch * w.seq_len * w.dp())), w.batch,
                                  w.seq_len, w.dp())});
    if (perf.time_s) {
      kv.push_back(
          {"Total compute", fmt::format("{:.3g} FLOPs for {} tokens", perf.total_flops, util::format_count(w.tokens))});
      kv.push_back({"Time", duration(*perf.time_s)});
    }
  } else {
    kv.push_back(
        {"Prefill",
         perf.compute_known
             ? rate(perf.prefill_tokens_per_s, "tokens/s") + ", compute-bound at " +
                   fmt::format("{:.0f}% of {} TFLOPS {}{}", perf.mfu * 100,
                               util::format_number(perf.prefill_peak_flops / 1e12), catalog::name(perf.compute),
                               perf.prefill_peak_flops > perf.peak_flops ? " (fp16 accumulate)" : "")
             : "unknown (no published compute peak)"});
    kv.push_back({"Decode", rate(perf.decode_tokens_per_s, "tokens/s per sequence")});
    if (w.batch > 1)
      kv.push_back({"Decode, batch", util::format_number(perf.decode_total_tokens_per_s.typical) + " tokens/s"});
    kv.push_back({"First token", perf.compute_known
                                     ? fmt::format("{} for a {}-token prompt",
                                                   util::format_duration(perf.time_to_first_token_s), w.seq_len)
                                     : std::string("unknown (no published compute peak)")});
    kv.push_back({"Per step",
                  fmt::format("{} read per GPU at {:.0f}% of {} GB/s", util::format_bytes(perf.decode_bytes_per_step),
                              perf.bandwidth_efficiency * 100, util::format_number(gpu.memory_bandwidth_gbs))});
  }
  kv.push_back({"Bound", std::string(perf.bound)});
  kv.push_back(
      {"Memory", fit.fits ? fmt::format("fits ({} spare per GPU)", util::format_bytes(fit.headroom_bytes))
                          : fmt::format("does not fit: short by {} per GPU", util::format_bytes(-fit.headroom_bytes))});
  kv.push_back({"Factors", util::join(perf.factors, ", ") + " (docs/calibration.md)"});
  if (!perf.borrowed.empty()) kv.push_back({"Borrowed", util::join(perf.borrowed, "; ")});
  if (f == report::Format::markdown) {
    // The same facts as the terminal page: header, figures, verdict, assumptions.
    ctx.out << "**" << report::markdown_text(describe(w)) << "**, on " << report::markdown_text(on) << "\n\n"
            << report::key_values(kv, f, ctx.style);
    if (!fit.fits) ctx.out << "\nThis configuration cannot hold the workload; the speed above is hypothetical.\n";
    ctx.out << "\nAssumptions:\n\n";
    for (const auto& a : w.assumptions) ctx.out << "- " << report::markdown_text(a) << "\n";
    for (const auto& a : perf.assumptions) ctx.out << "- " << report::markdown_text(a) << "\n";
    return;
  }
  ctx.out << ctx.style.bold(describe(w)) << "\non " << on << "\n";
  if (auto choice = ctx.gpu_choice(o.gpu); !choice.empty()) ctx.out << choice << "\n";
  ctx.out << "\n" << report::key_values(kv, ctx.style);
  if (!fit.fits)
    ctx.out << "\n"
            << ctx.style.bad("This configuration cannot hold the workload; the speed above is hypothetical.") << "\n";
  ctx.out << "\nAssumptions:\n";
  for (const auto& a : w.assumptions) ctx.out << "  - " << a << "\n";
  for (const auto& a : perf.assumptions) ctx.out << "  - " << a << "\n";
}

}  // namespace

void setup_estimate(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<EstimateOptions>();
  auto* cmd =
      app.add_subcommand("estimate", "Throughput and time: tokens/s, images/s, time to train, and what bounds it");
  add_workload_options(*cmd, o->in, ctx);
  cmd->add_option("--gpu", o->gpu, "GPU to estimate on (id, alias or loose name); --gpus N for N of them");
  cmd->add_option("--batch-file", o->batch_file,
                  "JSON Lines: one workload per line (profile fields, plus gpu); one JSON result per line")
      ->type_name("FILE|-");
  add_format_option(*cmd, ctx, kTabular);
  add_catalog_option(*cmd, ctx);
  cmd->footer(
      "Exit status: 0, or 1 when the workload does not fit the GPUs (the figures are then hypothetical).\n"
      "Examples:\n"
      "  gpuadvisor estimate --model llama-3.1-8b --precision fp16 --gpu rtx-4090\n"
      "  gpuadvisor estimate --model llama-3.1-70b --task train --tokens 2T --gpu h100-sxm --gpus 512 --zero 3\n"
      "  gpuadvisor estimate --model yolov8s --gpu jetson-agx-orin-64gb --batch 8");
  cmd->callback([&ctx, o] { run_estimate(ctx, *o); });
}

}  // namespace gpuadvisor::cli
