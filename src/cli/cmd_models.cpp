// gpuadvisor models list | show
#include <fmt/format.h>

#include "context.h"
#include "gpuadvisor/estimate/memory.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/util/units.h"

namespace gpuadvisor::cli {
namespace {

// CSV: one record a model, plain numbers, the unit in the column name (list and show alike).
std::string models_csv(const std::vector<const catalog::Model*>& rows, const report::Style& style) {
  report::Table t({{"id"},
                   {"name"},
                   {"kind"},
                   {"family"},
                   {"params"},
                   {"active_params"},
                   {"layers"},
                   {"hidden"},
                   {"heads"},
                   {"kv_heads"},
                   {"context_tokens"},
                   {"kv_cache_fp16_bytes_per_token"}});
  for (const auto* m : rows) {
    const bool tr = m->is_transformer();
    auto count = [&](long long v) { return tr && v > 0 ? std::to_string(v) : std::string(); };
    const double kvt = tr ? estimate::kv_bytes_per_token(*m, "fp16") : 0;
    t.add({m->id, m->name, std::string(catalog::kModelKindNames.name(m->kind)), m->family,
           report::csv_number(m->params),
           report::csv_number(m->moe ? std::optional<double>(m->params_per_token()) : std::nullopt), count(m->layers),
           count(m->hidden), count(m->heads), count(m->kv_heads), m->max_context ? std::to_string(m->max_context) : "",
           kvt > 0 ? report::csv_number(kvt) : ""});
  }
  return t.render(report::Format::csv, style);
}

void run_list(Context& ctx, const std::string& kind, bool ids) {
  auto f = ctx.output_format();
  std::vector<const catalog::Model*> rows;
  for (const auto& m : ctx.models().models())
    if (kind.empty() || catalog::kModelKindNames.name(m.kind) == kind) rows.push_back(&m);
  if (ids) {  // for scripts and shell completion
    for (const auto* m : rows) ctx.out << m->id << '\n';
    return;
  }
  if (f == report::Format::json) {
    auto j = report::envelope("models list");
    j["count"] = rows.size();
    util::Json arr = util::Json::array();
    for (const auto* m : rows) arr.push_back(catalog::to_output_json(*m));
    j["models"] = arr;
    ctx.out << report::dump(j);
    return;
  }
  if (f == report::Format::csv) {
    ctx.out << models_csv(rows, ctx.style);
    return;
  }
  using report::Align;
  report::Table t({{"ID"},
                   {"Name"},
                   {"Kind"},
                   {"Params", Align::right},
                   {"Layers", Align::right},
                   {"Hidden", Align::right},
                   {"Heads (KV)", Align::right},
                   {"Context", Align::right}});
  for (const auto* m : rows) {
    std::string params = util::format_count(m->params);
    if (m->moe) params += " (" + util::format_count(m->params_per_token()) + " active)";
    bool tr = m->is_transformer();
    t.add({m->id, m->name, std::string(catalog::kModelKindNames.name(m->kind)), params,
           tr ? std::to_string(m->layers) : "-", tr ? std::to_string(m->hidden) : "-",
           tr ? fmt::format("{} ({})", m->heads, m->kv_heads) : "-",
           m->max_context ? util::format_number(static_cast<double>(m->max_context)) : "-"});
  }
  ctx.out << t.render(f, ctx.style);
}

void run_show(Context& ctx, const std::string& query) {
  auto f = ctx.output_format();
  estimate::WorkloadInput in;
  in.model = query;
  estimate::Workload w;
  try {
    w = ctx.workload(in);
  } catch (const Error& e) {
    // The workload reader names the flag; here the model is a positional argument.
    std::string msg = e.what();
    if (msg.rfind("--model: ", 0) == 0) throw Error("models show: " + msg.substr(9));
    throw;
  }
  const auto& m = w.model;
  if (f == report::Format::json) {
    auto j = report::envelope("models show");
    j["model"] = catalog::to_output_json(m);
    if (m.is_transformer()) {
      j["model"]["counted_params"] = catalog::count_params(m);
      j["model"]["kv_cache_bytes_per_token"] = estimate::kv_bytes_per_token(m, "fp16");
    }
    j["assumptions"] = m.assumptions;
    ctx.out << report::dump(j);
    return;
  }
  if (f == report::Format::csv) {
    ctx.out << models_csv({&m}, ctx.style);
    return;
  }
  std::vector<std::pair<std::string, std::string>> kv;
  kv.push_back({"ID", m.id});
  kv.push_back({"Name", m.name});
  if (!m.aliases.empty()) kv.push_back({"Aliases", util::join(m.aliases, ", ")});
  kv.push_back(
      {"Kind", std::string(catalog::kModelKindNames.name(m.kind)) + (m.family.empty() ? "" : " (" + m.family + ")")});
  kv.push_back({"Parameters", fmt::format("{} ({})", util::format_number(m.params), util::format_count(m.params))});
  if (m.moe)
    kv.push_back(
        {"Active per token", fmt::format("{} ({} of {} experts + {} shared)", util::format_count(m.params_per_token()),
                                         m.moe->experts_per_token, m.moe->experts, m.moe->shared_experts)});
  if (m.is_transformer()) {
    kv.push_back({"Counted from shape", util::format_number(catalog::count_params(m))});
    kv.push_back({"Layers", std::to_string(m.layers) +
                                (m.encoder_layers ? fmt::format(" decoder + {} encoder", m.encoder_layers) : "")});
    kv.push_back({"Hidden", std::to_string(m.hidden)});
    kv.push_back({"Heads", fmt::format("{} query, {} key/value, head dim {}", m.heads, m.kv_heads, m.head_dim)});
    kv.push_back({"MLP", fmt::format("{} x {}", m.gated_mlp ? "gated" : "plain", m.intermediate)});
    if (m.vocab)
      kv.push_back({"Vocabulary", fmt::format("{}{}", m.vocab, m.tied_embeddings ? " (tied embeddings)" : "")});
    if (m.max_context) kv.push_back({"Context", util::format_number(static_cast<double>(m.max_context)) + " tokens"});
    double kvt = estimate::kv_bytes_per_token(m, "fp16");
    if (kvt > 0) kv.push_back({"KV cache (fp16)", util::format_bytes(kvt) + " per token"});
  }
  if (m.vision) {
    if (m.vision->image_size) kv.push_back({"Input", fmt::format("{0:.0f} x {0:.0f}", *m.vision->image_size)});
    if (m.vision->gflops_per_image)
      kv.push_back({"Forward FLOPs", util::format_number(*m.vision->gflops_per_image) + " GFLOPs per image"});
  }
  for (std::size_t i = 0; i < m.sources.size(); ++i)
    kv.push_back({i == 0 ? "Sources" : " ",
                  m.sources[i].title + (m.sources[i].url.empty() ? "" : " <" + m.sources[i].url + ">")});
  if (!m.notes.empty()) kv.push_back({"Notes", m.notes});
  for (const auto& a : m.assumptions) kv.push_back({"Assumption", a});
  ctx.out << report::key_values(kv, f, ctx.style);
}

}  // namespace

void setup_models(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("models", "List and show model presets");
  cmd->require_subcommand(1);
  cmd->footer(
      "Examples:\n  gpuadvisor models list\n  gpuadvisor models show llama-3.1-70b\n  gpuadvisor models show 10B");
  auto kind = std::make_shared<std::string>();
  auto ids = std::make_shared<bool>(false);
  auto* list = cmd->add_subcommand("list", "List the model presets");
  list->add_option("--kind", *kind, "Only decoder, encoder, encoder-decoder or vision models");
  list->add_option("--models", ctx.model_files, "Extra model presets file; repeatable")->type_name("FILE");
  list->add_flag("--ids", *ids, "Print only the ids, one a line (for scripts and shell completion)");
  add_format_option(*list, ctx, kTabular);
  list->footer("Examples:\n  gpuadvisor models list --kind vision\n  gpuadvisor models list --format json");
  list->callback([&ctx, kind, ids] {
    if (!kind->empty() && *kind != "decoder" && *kind != "encoder" && *kind != "encoder-decoder" && *kind != "vision")
      throw Error(
          fmt::format("--kind: expected one of decoder, encoder, encoder-decoder, vision, got {}", util::quote(*kind)));
    run_list(ctx, *kind, *ids);
  });
  auto q = std::make_shared<std::string>();
  auto* show = cmd->add_subcommand("show", "Show a preset's architecture and sources, or the shape a bare size gets");
  show->add_option("model", *q, "Model id, alias or size (7B)")->required();
  show->add_option("--models", ctx.model_files, "Extra model presets file; repeatable")->type_name("FILE");
  add_format_option(*show, ctx, kTabular);
  show->footer("Examples:\n  gpuadvisor models show mixtral-8x7b\n  gpuadvisor models show 10B --format json");
  show->callback([&ctx, q] { run_show(ctx, *q); });
}

}  // namespace gpuadvisor::cli
