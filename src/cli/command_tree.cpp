#include "command_tree.h"

#include <string_view>

#include "gpuadvisor/catalog/engine.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/recipe.h"
#include "gpuadvisor/estimate/workload.h"
#include "gpuadvisor/rules/recommend.h"
#include "gpuadvisor/util/text.h"

namespace gpuadvisor::cli {
namespace {

struct Words {
  ValueKind kind;
  std::vector<std::string> words;
};

// The values an option takes. Where a lower layer owns the list (precisions, optimizers, tasks,
// architectures, ranking preferences) it comes from there; the rest are the values the commands
// check by hand. tests/unit/test_completion.cpp checks that each word is named in the option's
// description, so a list cannot silently outgrow its --help.
// The formats a command's --format takes, as its description lists them: "Output format: text
// (default), json, junit or sarif" (commands check --format themselves, each with its own set).
std::vector<std::string> listed_formats(std::string description) {
  if (auto colon = description.find(": "); colon != std::string::npos) description.erase(0, colon + 2);
  std::string plain;  // without "(...)" asides
  int depth = 0;
  for (char ch : description) {
    if (ch == '(')
      ++depth;
    else if (ch == ')')
      depth = depth > 0 ? depth - 1 : 0;
    else if (depth == 0)
      plain += ch;
  }
  for (auto at = plain.find(" or "); at != std::string::npos; at = plain.find(" or ")) plain.replace(at, 4, ",");
  std::vector<std::string> formats;
  for (const auto& part : util::split(plain, ',')) {
    std::string w = util::trim(part);
    if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyz") == std::string::npos) formats.push_back(w);
  }
  return formats;
}

Words option_values(const std::string& path, std::string_view name, const std::string& description) {
  using V = std::vector<std::string>;
  if (name == "--format") {
    auto formats = listed_formats(description);
    return {ValueKind::words, formats.empty() ? V{"table", "json", "csv", "markdown"} : formats};
  }
  if (name == "--gpu") return {ValueKind::gpu, {}};
  if (name == "--model") return {ValueKind::model, {}};
  if (name == "--task") {
    V v;
    for (auto t : {estimate::Task::inference, estimate::Task::train, estimate::Task::lora, estimate::Task::qlora})
      v.emplace_back(estimate::name(t));
    return {ValueKind::words, v};
  }
  if (name == "--precision") {
    V v;
    for (const auto& f : estimate::weight_formats()) v.emplace_back(f.id);
    return {ValueKind::words, v};
  }
  if (name == "--optimizer") {
    V v;
    for (const auto& o : estimate::optimizers()) v.emplace_back(o.id);
    return {ValueKind::words, v};
  }
  if (name == "--prefer") {
    V v;
    for (auto p : {rules::Prefer::balanced, rules::Prefer::cost, rules::Prefer::speed, rules::Prefer::efficiency})
      v.emplace_back(rules::name(p));
    return {ValueKind::words, v};
  }
  if (name == "--arch") {  // compat knows NVIDIA's architectures only (CUDA)
    V v;
    for (const auto& a : catalog::architectures())
      if (path != "compat" || a.vendor == catalog::Vendor::nvidia) v.emplace_back(a.id);
    return {ValueKind::words, v};
  }
  if (name == "--engine") return {ValueKind::words, catalog::kEngineNames.list()};
  if (name == "--split") return {ValueKind::words, catalog::kSplitNames.list()};
  if (name == "--kv-precision") return {ValueKind::words, {"fp16", "bf16", "fp8", "int8", "int4", "fp32"}};
  if (name == "--checkpointing") return {ValueKind::words, {"none", "selective", "selective-op", "full"}};
  if (name == "--recipe") {
    V v;
    for (const auto& r : catalog::recipes()) v.push_back(r.id);
    return {ValueKind::words, v};
  }
  if (name == "--master-weights") return {ValueKind::words, {"fp32", "none"}};
  if (name == "--gradient-dtype") return {ValueKind::words, {"bf16", "fp16", "fp32"}};
  if (name == "--offload") return {ValueKind::words, {"none", "optimizer", "params"}};
  if (name == "--flash-attention") return {ValueKind::words, {"on", "off"}};
  if (name == "--zero") return {ValueKind::words, {"0", "1", "2", "3", "fsdp"}};
  if (name == "--lora-targets") return {ValueKind::words, {"all", "attn", "mlp"}};
  if (name == "--scenario") return {ValueKind::words, {"personal", "workstation", "datacenter", "edge", "cloud"}};
  if (name == "--kind") return {ValueKind::words, {"decoder", "encoder", "encoder-decoder", "vision"}};
  if (name == "--vendor") return {ValueKind::words, {"nvidia", "amd", "intel", "apple"}};
  if (name == "--segment") return {ValueKind::words, {"consumer", "workstation", "datacenter", "edge"}};
  if (name == "--sort")
    return {
        ValueKind::words,
        {"memory", "bandwidth", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "tdp", "price", "year", "interconnect"}};
  if (name == "--framework") return {ValueKind::words, {"pytorch", "tensorflow", "jax"}};
  if (name == "--os") return {ValueKind::words, {"linux", "windows"}};
  if (name == "--fail-on") return {ValueKind::words, {"error", "warning"}};
  return {ValueKind::any, {}};
}

// Positionals are few; each names what it holds.
Words positional_values(const std::string& path, std::string_view name) {
  if (path == "catalog show" || path == "compare") return {ValueKind::gpu, {}};
  if (path == "models show") return {ValueKind::model, {}};
  if (path == "rules show") return {ValueKind::rule, {}};
  if (path == "completion") return {ValueKind::words, {"bash", "zsh", "fish"}};
  if (name == "files" || name == "specs") return {ValueKind::file, {}};
  return {ValueKind::any, {}};
}

OptionInfo option_info(const std::string& path, const CLI::Option& o) {
  OptionInfo info;
  info.positional = !o.nonpositional();
  info.description = o.get_description();
  info.group = o.get_group();
  info.required = o.get_required();
  info.repeatable = o.get_expected_max() > 1 || o.get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll;
  if (info.positional) {
    info.names.push_back(o.get_name(true));
    info.type_name = o.get_type_name();
    auto w = positional_values(path, info.names.front());
    if (w.kind == ValueKind::any && info.type_name.find("FILE") != std::string::npos) w.kind = ValueKind::file;
    info.kind = w.kind;
    info.words = std::move(w.words);
    return info;
  }
  for (const auto& s : o.get_snames()) info.names.push_back("-" + s);
  for (const auto& l : o.get_lnames()) info.names.push_back("--" + l);
  if (o.get_expected_max() == 0) return info;  // a flag
  info.type_name = o.get_type_name();
  Words w{ValueKind::any, {}};
  for (const auto& n : info.names) {
    w = option_values(path, n, info.description);
    if (w.kind != ValueKind::any) break;
  }
  // FILE, FILE|-: a path whatever the option is called.
  if (w.kind == ValueKind::any && info.type_name.rfind("FILE", 0) == 0) w.kind = ValueKind::file;
  info.kind = w.kind;
  info.words = std::move(w.words);
  return info;
}

CommandInfo walk(const CLI::App& app, const std::string& path) {
  CommandInfo c;
  c.name = app.get_name();
  c.path = path;
  c.description = app.get_description();
  c.footer = app.get_footer();
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_group().empty()) continue;  // hidden
    auto info = option_info(path, *o);
    (info.positional ? c.positionals : c.options).push_back(std::move(info));
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
    c.subcommands.push_back(walk(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name()));
  return c;
}

void collect(const CommandInfo& c, std::vector<const CommandInfo*>& out) {
  out.push_back(&c);
  for (const auto& s : c.subcommands) collect(s, out);
}

}  // namespace

CommandInfo command_tree(const CLI::App& app) { return walk(app, ""); }

std::vector<const CommandInfo*> flatten(const CommandInfo& root) {
  std::vector<const CommandInfo*> out;
  collect(root, out);
  return out;
}

}  // namespace gpuadvisor::cli
