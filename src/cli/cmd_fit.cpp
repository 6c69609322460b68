// gpuadvisor fit: the reverse question, which model presets fit a GPU (x count), per task.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "context.h"
#include "gpuadvisor/rules/recommend.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"
#include "nvidia_smi.h"

namespace gpuadvisor::cli {
namespace {

struct FitFlags {
  std::string gpu, gpus, kind, nvidia_smi = "nvidia-smi";
};

void run_fit(Context& ctx, const FitFlags& o) {
  auto f = ctx.output_format();
  // No --gpu: the GPUs of this machine, as the local nvidia-smi lists them.
  std::optional<DetectedGpus> detected;
  if (o.gpu.empty()) detected = detect_gpus(o.nvidia_smi, ctx.catalog());
  const auto& gpu = detected ? *detected->gpu : ctx.gpu(o.gpu);
  if (!o.kind.empty() && !catalog::kModelKindNames.parse(o.kind))
    throw Error("--kind: " + catalog::kModelKindNames.expected(o.kind));
  auto n = o.gpus.empty() ? Result<long long>(detected ? detected->count : 1) : util::parse_int(o.gpus, 1, 4096);
  if (!n) throw Error("--gpus: " + n.error());
  if (detected && f != report::Format::json && f != report::Format::csv)
    ctx.out << fmt::format(
        "Detected by nvidia-smi: {} x {} ({}){}\n\n", detected->count, detected->gpu->name, detected->gpu->id,
        detected->unidentified.empty()
            ? ""
            : fmt::format("; not in the catalog, left out: {}", util::join_list(detected->unidentified, "and")));
  auto rows = rules::fit_models(gpu, static_cast<int>(*n), ctx.models(), ctx.efficiency(), estimate::kDefaultHeadroom);
  std::vector<std::string> plans = {"inference fp16", "inference int8", "inference int4",
                                    "lora bf16",      "qlora nf4",      "train bf16"};

  if (f == report::Format::json) {
    auto j = report::envelope("fit");
    j["gpu_id"] = gpu.id;
    j["count"] = *n;
    if (detected)
      j["detected"] = util::Json{{"source", "nvidia-smi"},
                                 {"gpu_id", detected->gpu->id},
                                 {"count", detected->count},
                                 {"not_in_catalog", detected->unidentified}};
    j["headroom_fraction"] = estimate::kDefaultHeadroom;
    util::Json arr = util::Json::array();
    for (const auto& r : rows) {
      if (!o.kind.empty() && catalog::kModelKindNames.name(r.model->kind) != o.kind) continue;
      util::Json x;
      x["model"] = r.model->id;
      x["plan"] = r.plan;
      x["fits"] = r.fits;
      x["max_seq_len"] = r.max_seq_len ? util::Json(*r.max_seq_len) : util::Json(nullptr);
      x["max_batch"] = r.max_batch ? util::Json(*r.max_batch) : util::Json(nullptr);
      x["layout"] = r.layout.empty() ? util::Json(nullptr) : util::Json(r.layout);
      arr.push_back(x);
    }
    j["results"] = arr;
    ctx.out << report::dump(j);
    return;
  }
  if (f == report::Format::csv) {  // one record a model and plan, as in JSON
    report::Table t({{"gpu_id"},
                     {"gpus"},
                     {"model"},
                     {"params"},
                     {"plan"},
                     {"fits"},
                     {"max_seq_len_tokens"},
                     {"max_batch"},
                     {"model_limit"},
                     {"layout"}});
    auto count = [](const std::optional<long long>& v) { return v ? std::to_string(*v) : std::string(); };
    for (const auto& r : rows) {
      if (!o.kind.empty() && catalog::kModelKindNames.name(r.model->kind) != o.kind) continue;
      t.add({gpu.id, std::to_string(*n), r.model->id, report::csv_number(r.model->params), r.plan,
             r.fits ? "true" : "false", count(r.max_seq_len), count(r.max_batch),
             r.max_seq_len && r.max_seq_capped ? "true" : "false", r.layout});
    }
    ctx.out << t.render(f, ctx.style);
    return;
  }
  std::vector<report::Column> cols = {{"Model"}, {"Params", report::Align::right}};
  for (const auto& p : plans) cols.push_back({p, report::Align::right});
  report::Table t(cols);
  std::map<const catalog::Model*, std::map<std::string, const rules::FitRow*>> by;
  std::vector<const catalog::Model*> order;
  for (const auto& r : rows) {
    if (!o.kind.empty() && catalog::kModelKindNames.name(r.model->kind) != o.kind) continue;
    if (!by.count(r.model)) order.push_back(r.model);
    by[r.model][r.plan] = &r;
  }
  for (const auto* m : order) {
    std::vector<std::string> row = {m->id, util::format_count(m->params)};
    for (const auto& p : plans) {
      auto it = by[m].find(p);
      if (it == by[m].end()) {
        row.push_back("-");
        continue;
      }
      const auto& r = *it->second;
      // "(max)": the model's own limit; "(tp N)": the heads split over N of the GPUs, the rest replicas.
      std::vector<std::string> notes;
      if (r.max_seq_len && r.max_seq_capped) notes.push_back("max");
      if (!r.layout.empty()) notes.push_back(r.layout.substr(0, r.layout.find(" x ")));
      const std::string note = notes.empty() ? "" : " (" + util::join(notes, ", ") + ")";
      // The longest context that fits, also when it is short of the default one (as `memory` says).
      if (r.max_seq_len)
        row.push_back(util::format_number(static_cast<double>(*r.max_seq_len)) + note);
      else if (!r.fits)
        row.push_back("no" + note);
      else if (r.max_batch)
        row.push_back(fmt::format("batch {}{}", util::format_number(static_cast<double>(*r.max_batch)), note));
      else
        row.push_back("yes*" + note);
    }
    t.add(row);
  }
  ctx.out << t.render(f, ctx.style);
  // The legend (which GPU, what a cell means) goes with the table in both text formats.
  const bool text = f == report::Format::table || f == report::Format::markdown;
  if (text)
    ctx.out << fmt::format(
        "\nOn {} x {} ({} each, keeping 10% free). Cells: the longest context (inference) or sequence\n"
        "(training) that fits at batch 1; \"(max)\" is the model's own limit; \"no\" does not fit even short;\n"
        "vision: the largest batch; \"yes*\": the weights fit, but no published\n"
        "activation figure exists to size a batch. Training plans use ZeRO/tensor parallelism where needed.\n",
        *n, f == report::Format::markdown ? report::markdown_text(gpu.name) : gpu.name,
        util::format_bytes(gpu.memory_bytes));
  if (text && std::any_of(rows.begin(), rows.end(), [](const rules::FitRow& r) { return !r.layout.empty(); }))
    ctx.out << "\"(tp N)\": the model's heads do not split over every GPU, so N GPUs share each copy and the others\n"
               "hold replicas.\n";
}

}  // namespace

void setup_fit(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<FitFlags>();
  auto* cmd = app.add_subcommand("fit", "Which model presets fit a GPU, for inference, LoRA, QLoRA and full training");
  cmd->add_option("--gpu", o->gpu, "GPU id, alias or loose name (default: the GPUs nvidia-smi lists on this machine)");
  cmd->add_option("--gpus", o->gpus, "Number of GPUs (default 1, or as many as nvidia-smi lists)");
  cmd->add_option("--nvidia-smi", o->nvidia_smi, "Without --gpu, the nvidia-smi to run (default: found on PATH)")
      ->type_name("PATH");
  cmd->add_option("--kind", o->kind, "Only decoder, encoder, encoder-decoder or vision models");
  cmd->add_option("--models", ctx.model_files, "Extra model presets file; repeatable")->type_name("FILE");
  add_format_option(*cmd, ctx, kTabular);
  add_catalog_option(*cmd, ctx);
  cmd->footer(
      "Without --gpu, runs nvidia-smi (no shell) and fits the GPUs it lists: one kind, as many as there are.\n"
      "Examples:\n  gpuadvisor fit --gpu rtx-4090\n  gpuadvisor fit --gpu a100-80gb-sxm --gpus 8 --kind decoder "
      "--format json");
  cmd->callback([&ctx, o] { run_fit(ctx, *o); });
}

}  // namespace gpuadvisor::cli
