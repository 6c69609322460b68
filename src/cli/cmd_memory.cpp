// gpuadvisor memory: the memory breakdown of a workload, and whether it fits a GPU.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "context.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/report/html.h"
#include "gpuadvisor/util/json_sink.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"
#include "html_pages.h"
#include "trace.h"

namespace gpuadvisor::cli {
namespace {

struct MemoryOptions {
  estimate::WorkloadInput in;
  std::string gpu;
  std::string batch_file;
};

struct MemoryResult {
  estimate::Workload w;
  estimate::MemoryEstimate mem;
  std::optional<estimate::FitResult> fit;
};

MemoryResult compute(Context& ctx, const estimate::WorkloadInput& in, const catalog::Gpu* gpu, bool explain = true) {
  estimate::WorkloadSet set;
  MemoryResult r{ctx.workload(in, &set), {}, {}};
  if (gpu) r.w = estimate::plan_layout(std::move(r.w), set, *gpu, ctx.efficiency());
  r.mem = estimate::estimate_memory(r.w, ctx.efficiency(), explain);
  if (gpu) r.fit = estimate::fit(r.w, *gpu, ctx.efficiency());
  trace_workload(r.w, gpu);
  trace_memory(r.mem);
  return r;
}

// The result's members, for a single run's JSON (a tree) and a batch line (text) alike.
void write(util::JsonSink& o, const MemoryResult& r, const catalog::Gpu* gpu, bool detail) {
  o.object("workload", [&](util::JsonSink& w) { estimate::write(w, r.w); });
  estimate::write(o, r.mem, detail);
  if (gpu) {
    const auto& fit = *r.fit;
    const util::Json max_batch = fit.max_batch ? util::Json(*fit.max_batch) : util::Json(nullptr);
    const util::Json max_seq_len = fit.max_seq_len ? util::Json(*fit.max_seq_len) : util::Json(nullptr);
    o("fits", fit.fits);
    o("max_batch", max_batch);
    o("max_seq_len", max_seq_len);
    o.object("gpu", [&](util::JsonSink& g) {
      g("gpu_id", gpu->id);
      g("count", r.w.gpus);
      g("capacity_bytes", static_cast<std::int64_t>(gpu->memory_bytes));
      // Whole bytes: a share of a capacity is not a byte count until rounded down.
      const auto usable = static_cast<std::int64_t>(std::floor(fit.usable_bytes));
      g("usable_bytes", usable);
      g("kept_free_bytes", static_cast<std::int64_t>(gpu->memory_bytes) - usable);
      g("fits", fit.fits);
      g("spare_bytes", static_cast<std::int64_t>(std::floor(fit.headroom_bytes)));
      g("max_batch", max_batch);
      g("max_seq_len", max_seq_len);
      g("max_seq_len_is_model_limit", fit.max_seq_capped);
      if (fit.kv_capacity_tokens) {
        g("kv_cache_capacity_tokens", *fit.kv_capacity_tokens);
        g("max_concurrency", *fit.max_concurrency);
      }
    });
  }
}

util::Json to_json(const MemoryResult& r, const catalog::Gpu* gpu) {
  return util::json_tree([&](util::JsonSink& o) { write(o, r, gpu, true); });
}

// What the fit means, in lines of text: the verdict first (coloured by `style`).
std::vector<std::string> fit_lines(const MemoryResult& r, const catalog::Gpu& gpu, const report::Style& style) {
  const auto& w = r.w;
  const auto& fit = *r.fit;
  std::vector<std::string> out;
  std::string cap = fmt::format("{} of {} usable, keeping {:.0f}% free", util::format_bytes(fit.usable_bytes),
                                util::format_bytes(gpu.memory_bytes), 100 * (1 - fit.usable_bytes / gpu.memory_bytes));
  std::string on = (w.gpus > 1 ? fmt::format("{} x ", w.gpus) : "") + gpu.name;
  if (fit.fits)
    out.push_back(fmt::format("{} on {} ({}): {} to spare per GPU.", style.good("Fits"), on, cap,
                              util::format_bytes(fit.headroom_bytes)));
  else
    out.push_back(fmt::format("{} on {} ({}): needs {} per GPU, short by {}.", style.bad("Does not fit"), on, cap,
                              util::format_bytes(r.mem.per_gpu_bytes), util::format_bytes(-fit.headroom_bytes)));
  if (r.mem.host_bytes > 0)
    out.push_back(fmt::format(
        "Host RAM: {} beside the GPU memory{}.", util::format_bytes(r.mem.host_bytes),
        w.gpus > 1 ? fmt::format(" ({} per GPU's process)", util::format_bytes(r.mem.per_gpu_host_bytes)) : ""));
  if (fit.kv_capacity_tokens) {
    out.push_back(fmt::format("KV cache capacity: {} tokens; maximum concurrency at {} tokens per sequence: {:.2f}x{}.",
                              util::format_number(static_cast<double>(*fit.kv_capacity_tokens)),
                              util::format_number(static_cast<double>(w.seq_len)), *fit.max_concurrency,
                              *fit.max_concurrency < static_cast<double>(w.batch)
                                  ? fmt::format(", below --batch {}: the engine queues the rest", w.batch)
                                  : ""));
  }
  if (fit.activations_unknown)
    out.push_back("No largest batch: activation memory per sample is not known for this model.");
  else if (fit.max_batch)
    out.push_back(fmt::format("Largest batch at {} {}: {}.", w.model.is_transformer() ? "this length" : "this size",
                              w.model.is_transformer() ? fmt::format("({} tokens)", w.seq_len) : "", *fit.max_batch));
  else
    out.push_back(fmt::format("Not even batch 1 fits{}.",
                              w.model.is_transformer()
                                  ? fmt::format(" at {} tokens", util::format_number(static_cast<double>(w.seq_len)))
                                  : ""));
  if (fit.max_seq_len)
    out.push_back(fmt::format("Longest {} at batch {}: {} tokens{}.",
                              estimate::is_training(w.task) ? "sequence" : "context", w.batch,
                              util::format_number(static_cast<double>(*fit.max_seq_len)),
                              fit.max_seq_capped ? " (the model's own limit)" : ""));
  else if (w.model.is_transformer())
    out.push_back(fmt::format("No context length fits at batch {}.", w.batch));
  return out;
}

// The breakdown table: in text a share with a bar; elsewhere the share and the formula.
report::Table breakdown(const MemoryResult& r, bool text, const report::Style& style) {
  using report::Align;
  const auto& mem = r.mem;
  const bool multi = r.w.gpus > 1;
  std::vector<report::Column> cols = {{"Line"}, {"Per GPU", Align::right}};
  if (multi) cols.push_back({"All GPUs", Align::right});
  cols.push_back({"Share"});
  if (!text) cols.push_back({"Formula"});
  report::Table t(cols);
  for (const auto& l : mem.lines) {
    if (l.host) continue;
    double share = mem.per_gpu_bytes > 0 ? l.per_gpu_bytes / mem.per_gpu_bytes : 0;
    std::vector<std::string> row = {l.label, util::format_bytes(l.per_gpu_bytes)};
    if (multi) row.push_back(util::format_bytes(l.total_bytes));
    row.push_back(text ? fmt::format("{:>3.0f}% {}", share * 100, report::bar(share, report::kBarWidth, style))
                       : fmt::format("{:.1f}%", share * 100));
    if (!text) row.push_back(l.formula);
    t.add(row);
  }
  std::vector<std::string> total = {"total", util::format_bytes(mem.per_gpu_bytes)};
  if (multi) total.push_back(util::format_bytes(mem.total_bytes));
  total.push_back(text ? "100%" : "100.0%");
  if (!text) total.push_back("sum of the lines above");
  t.add(total);
  // Host RAM lines after the GPU total: they do not count against the GPU.
  if (mem.host_bytes > 0) {
    for (const auto& l : mem.lines) {
      if (!l.host) continue;
      std::vector<std::string> row = {l.label, util::format_bytes(l.per_gpu_bytes)};
      if (multi) row.push_back(util::format_bytes(l.total_bytes));
      row.push_back(text ? "host" : "host RAM");
      if (!text) row.push_back(l.formula);
      t.add(row);
    }
    std::vector<std::string> host = {"host RAM total", util::format_bytes(mem.per_gpu_host_bytes)};
    if (multi) host.push_back(util::format_bytes(mem.host_bytes));
    host.push_back(text ? "host" : "host RAM");
    if (!text) host.push_back("sum of the host RAM lines");
    t.add(host);
  }
  return t;
}

// CSV: one record per line of memory, plain numbers with units in the column names; with a GPU,
// two more records carry the verdict: the usable memory per GPU and what is spare (negative: short).
report::Table breakdown_csv(const MemoryResult& r, const catalog::Gpu* gpu) {
  const auto& mem = r.mem;
  // The workload and GPU on every record, so that records of several runs can be stacked.
  report::Table t({{"model"},
                   {"task"},
                   {"precision"},
                   {"gpus"},
                   {"gpu_id"},
                   {"line"},
                   {"memory"},
                   {"per_gpu_bytes"},
                   {"all_gpus_bytes"},
                   {"share_of_gpu_total"},
                   {"formula"}});
  const std::vector<std::string> head = {r.w.model.id, std::string(estimate::name(r.w.task)), r.w.precision,
                                         std::to_string(r.w.gpus), gpu ? gpu->id : ""};
  auto add = [&](std::vector<std::string> cells) {
    cells.insert(cells.begin(), head.begin(), head.end());
    t.add(std::move(cells));
  };
  auto bytes = [](double b) { return fmt::format("{:.0f}", b); };
  for (const auto& l : mem.lines) {
    const double share = !l.host && mem.per_gpu_bytes > 0 ? l.per_gpu_bytes / mem.per_gpu_bytes : 0;
    add({l.label, l.host ? "host" : "gpu", bytes(l.per_gpu_bytes), bytes(l.total_bytes),
         l.host ? "" : fmt::format("{:.4f}", share), l.formula});
  }
  add({"total", "gpu", bytes(mem.per_gpu_bytes), bytes(mem.total_bytes), "1", "sum of the gpu lines"});
  if (mem.host_bytes > 0)
    add({"host RAM total", "host", bytes(mem.per_gpu_host_bytes), bytes(mem.host_bytes), "", "sum of the host lines"});
  if (gpu && r.fit) {
    add({"usable", "gpu", bytes(r.fit->usable_bytes), bytes(r.fit->usable_bytes * r.w.gpus), "",
         fmt::format("{} capacity less the kept-free share", gpu->id)});
    add({"spare", "gpu", bytes(r.fit->headroom_bytes), bytes(r.fit->headroom_bytes * r.w.gpus), "",
         r.fit->fits ? "usable - total: fits" : "usable - total: does not fit"});
  }
  return t;
}

std::string memory_html(Context& ctx, const MemoryResult& r, const catalog::Gpu* gpu) {
  namespace html = report::html;
  html::Page page("Memory breakdown", describe(r.w));
  if (gpu) {
    auto lines = fit_lines(r, *gpu, report::Style{false, true, 100});
    page.p(lines.front(), r.fit->fits ? "good" : "bad");
    for (std::size_t i = 1; i < lines.size(); ++i) page.p(lines[i]);
  }
  std::vector<html::Segment> segs;
  for (const auto& l : r.mem.lines)
    if (!l.host) segs.push_back({l.label, l.per_gpu_bytes, util::format_bytes(l.per_gpu_bytes), false});
  std::vector<html::Marker> marks;
  if (gpu) {
    marks.push_back({r.fit->usable_bytes, "usable " + util::format_bytes(r.fit->usable_bytes)});
    marks.push_back({gpu->memory_bytes, "capacity " + util::format_bytes(gpu->memory_bytes)});
  }
  page.h2("Memory per GPU")
      .figure(html::stacked_bar(segs, "Memory per GPU, line by line", marks),
              fmt::format(
                  "{} per GPU{}{}.", util::format_bytes(r.mem.per_gpu_bytes),
                  r.w.gpus > 1 ? fmt::format(", {} over {} GPUs", util::format_bytes(r.mem.total_bytes), r.w.gpus) : "",
                  gpu ? fmt::format("; the dashed lines mark the {}'s capacity and the part usable after the headroom",
                                    gpu->name)
                      : ""));
  page.table(breakdown(r, false, ctx.style));
  if (!r.mem.assumptions.empty()) page.h2("Assumptions").list(r.mem.assumptions);
  return page.str(html_footer(ctx, "memory"));
}

void run_memory(Context& ctx, const MemoryOptions& o) {
  if (!o.batch_file.empty()) {
    run_batch(
        ctx, o.batch_file, o.in, {"gpu"}, [&](const estimate::WorkloadInput& in, const util::Fields& line, Exit& code) {
          std::string gq = line.opt_str("gpu").value_or(o.gpu);
          const catalog::Gpu* gpu = gq.empty() ? nullptr : &ctx.gpu(gq);
          auto r = compute(ctx, in, gpu, false);
          if (r.fit && !r.fit->fits) code = Exit::no;
          // Batch results carry the numbers; the formulas and assumptions are in single-run JSON.
          // A line's result is about 1,000 bytes.
          return BatchResult::text(util::json_text([&](util::JsonSink& sink) { write(sink, r, gpu, false); }, 2048));
        });
    return;
  }
  auto f = ctx.output_format();
  const catalog::Gpu* gpu = o.gpu.empty() ? nullptr : &ctx.gpu(o.gpu);
  auto r = compute(ctx, o.in, gpu);
  const auto& mem = r.mem;
  if (r.fit && !r.fit->fits) ctx.exit = Exit::no;

  if (f == report::Format::json) {
    auto j = report::envelope("memory");
    const util::Json body = to_json(r, gpu);
    for (auto& [k, v] : body.items()) j[k] = v;
    ctx.out << report::dump(j);
    return;
  }
  if (f == report::Format::html) {
    ctx.out << memory_html(ctx, r, gpu);
    return;
  }
  if (f == report::Format::csv) {
    ctx.out << breakdown_csv(r, gpu).render(f, ctx.style);
    return;
  }
  auto t = breakdown(r, f == report::Format::table, ctx.style);
  if (f == report::Format::markdown) {
    // The same facts as the terminal page: header, table, verdict, assumptions.
    ctx.out << "**" << report::markdown_text(describe(r.w)) << "**\n\n" << t.render(f, ctx.style);
    if (gpu) {
      ctx.out << "\n";
      for (const auto& l : fit_lines(r, *gpu, report::Style{false, true, 100}))
        ctx.out << report::markdown_text(l) << "\n\n";
    }
    if (!mem.assumptions.empty()) {
      ctx.out << (gpu ? "" : "\n") << "Assumptions:\n\n";
      for (const auto& a : mem.assumptions) ctx.out << "- " << report::markdown_text(a) << "\n";
    }
    return;
  }
  ctx.out << ctx.style.bold(describe(r.w)) << "\n\n" << t.render(f, ctx.style);
  if (gpu) {
    ctx.out << "\n";
    for (const auto& l : fit_lines(r, *gpu, ctx.style)) ctx.out << l << "\n";
  }
  if (!gpu && mem.host_bytes > 0)
    ctx.out << fmt::format("\nHost RAM: {} beside the GPU memory.\n", util::format_bytes(mem.host_bytes));
  ctx.out << "\nHow each line is computed:\n";
  for (const auto& l : mem.lines) ctx.out << fmt::format("  {}: {}\n", l.label, l.formula);
  if (!mem.assumptions.empty()) {
    ctx.out << "\nAssumptions:\n";
    for (const auto& a : mem.assumptions) ctx.out << "  - " << a << "\n";
  }
}

}  // namespace

void setup_memory(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<MemoryOptions>();
  auto* cmd = app.add_subcommand("memory", "Memory a workload needs, line by line, and whether it fits a GPU");
  add_workload_options(*cmd, o->in, ctx);
  cmd->add_option("--gpu", o->gpu, "GPU to fit on (id, alias or loose name); with --gpus N, N of them");
  cmd->add_option("--batch-file", o->batch_file,
                  "JSON Lines: one workload per line (profile fields, plus gpu, headroom); one JSON result per line")
      ->type_name("FILE|-");
  add_format_option(*cmd, ctx, kTabularHtml, "html: a page with charts");
  add_catalog_option(*cmd, ctx);
  cmd->footer(
      "Exit status: 0, or 1 when --gpu is given and the workload does not fit.\n"
      "Examples:\n"
      "  gpuadvisor memory --model llama-3.1-8b --task qlora --batch 4 --seq-len 2048\n"
      "  gpuadvisor memory --model 10B --precision int8 --gpu rtx-4090\n"
      "  gpuadvisor memory --model llama-3.1-70b --task train --gpus 64 --zero 3 --gpu h100-sxm --format json\n"
      "  gpuadvisor memory --model-config docs/examples/model-config/config.json --task lora --gpu rtx-4090");
  cmd->callback([&ctx, o] { run_memory(ctx, *o); });
}

}  // namespace gpuadvisor::cli
