// gpuadvisor inspect: health and acceptance checks from nvidia-smi output.
#include <fmt/format.h>

#include "context.h"
#include "gpuadvisor/rules/inspect.h"
#include "gpuadvisor/util/text.h"
#include "nvidia_smi.h"
#include "ops_layout.h"

namespace gpuadvisor::cli {
namespace {

using rules::Verdict;

struct InspectOptions {
  std::string from;
  bool print_query = false;
  std::string nvidia_smi = "nvidia-smi";
};

std::string card_title(const rules::CardReport& c) {
  std::vector<std::string> parts;
  if (!c.pci_bus_id.empty()) parts.push_back(c.pci_bus_id);
  if (!c.serial.empty()) parts.push_back("serial " + c.serial);
  if (!c.driver_version.empty()) parts.push_back("driver " + c.driver_version);
  return fmt::format("{}: {}{}", c.index.empty() ? fmt::format("GPU on line {}", c.line) : "GPU " + c.index, c.name,
                     parts.empty() ? "" : " (" + util::join(parts, ", ") + ")");
}

std::string plural(std::size_t n, std::string_view word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

util::Json to_json(const rules::InspectReport& rep) {
  auto j = report::envelope("inspect");
  j["source"] = rep.origin;
  j["input"] = rep.input;
  j["verdict"] = util::lower(rules::name(rep.verdict));
  j["summary"] =
      util::Json{{"gpus", rep.cards.size()}, {"pass", rep.passes}, {"warn", rep.warnings}, {"fail", rep.failures}};
  util::Json cards = util::Json::array();
  for (const auto& c : rep.cards) {
    util::Json x;
    x["index"] = c.index;
    x["name"] = c.name;
    x["pci_bus_id"] = c.pci_bus_id;
    x["pci_device_id"] = c.pci_device_id.empty() ? util::Json(nullptr) : util::Json(c.pci_device_id);
    x["serial"] = c.serial.empty() ? util::Json(nullptr) : util::Json(c.serial);
    x["driver_version"] = c.driver_version.empty() ? util::Json(nullptr) : util::Json(c.driver_version);
    x["vbios_version"] = c.vbios_version.empty() ? util::Json(nullptr) : util::Json(c.vbios_version);
    x["gpu_id"] = c.gpu ? util::Json(c.gpu->id) : util::Json(nullptr);
    x["line"] = c.line;
    x["verdict"] = util::lower(rules::name(c.verdict));
    util::Json items = util::Json::array();
    for (const auto& i : c.items)
      items.push_back(
          util::Json{{"check", i.check}, {"verdict", util::lower(rules::name(i.verdict))}, {"message", i.message}});
    x["checks"] = items;
    cards.push_back(x);
  }
  j["gpus"] = cards;
  j["next_steps"] = rep.next_steps;
  util::Json m = util::Json::array();
  for (const auto& [when, what] : rep.maintenance) m.push_back(util::Json{{"interval", when}, {"task", what}});
  j["maintenance"] = m;
  return j;
}

// What the capture was, as read: with or without a header, units or nounits; or a text output.
std::string input_kind(const rules::SmiCapture& cap) {
  if (cap.shape != rules::SmiShape::csv)
    return fmt::format(
        "nvidia-smi's {} output, which shows {} of the {} fields inspect reads; for every check, capture with "
        "'gpuadvisor inspect --print-query'",
        cap.shape == rules::SmiShape::table ? "table" : "-q", cap.fields.size(), rules::smi_query_fields(0).size());
  if (cap.guessed_columns) {
    std::vector<std::string> read;
    for (const auto& f : cap.fields)
      if (!util::starts_with(f, "column.")) read.push_back(f);
    const std::size_t other = cap.fields.size() - read.size();
    return fmt::format(
        "CSV without a header, not inspect's field list: {} told by their look{}; for every check, capture with "
        "'gpuadvisor inspect --print-query'",
        util::join_list(read, "and"),
        other == 0 ? "" : fmt::format(", {} other cell{} not read", other, other == 1 ? "" : "s"));
  }
  if (!cap.has_header) return "CSV without a header (csv,noheader), read as the documented field list";
  return cap.header_units ? "CSV with a header and units" : "CSV with a header, no units (nounits)";
}

void run_inspect(Context& ctx, const InspectOptions& o) {
  if (o.print_query) {
    ctx.out << rules::smi_query_command() << "\n";
    return;
  }
  auto f = ctx.output_format();
  std::string text, origin;
  if (!o.from.empty()) {
    auto r = util::read_file(o.from);
    if (!r) throw Error("--from: " + r.error());
    text = std::move(r).value();
    origin = o.from == "-" ? "<stdin>" : o.from;
  } else {
    text = query_nvidia_smi(o.nvidia_smi, "--from FILE");
    origin = "nvidia-smi";
  }
  auto cap = rules::parse_smi_csv(text, origin);
  if (!cap) throw Error(cap.error());
  auto result = rules::inspect(*cap, ctx.catalog(), catalog::CompatTable::embedded());
  if (!result) throw Error(result.error());
  auto report = std::move(result).value();
  report.input = input_kind(*cap);
  const auto* rep = &report;
  if (rep->verdict == Verdict::fail) ctx.exit = Exit::no;

  if (f == report::Format::json) {
    ctx.out << report::dump(to_json(*rep));
    return;
  }
  if (f != report::Format::table) {
    report::Table t({{"gpu"}, {"pci_bus_id"}, {"name"}, {"gpu_id"}, {"check"}, {"verdict"}, {"message"}});
    for (const auto& c : rep->cards)
      for (const auto& i : c.items)
        t.add({c.index, c.pci_bus_id, c.name, c.gpu ? c.gpu->id : "", i.check, std::string(rules::name(i.verdict)),
               i.message});
    ctx.out << t.render(f, ctx.style);
    return;
  }
  const int width = ctx.style.width;
  if (!cap->has_header || cap->shape != rules::SmiShape::csv)
    ctx.out << layout::hanging("", fmt::format("Input: {}", rep->input), width) << "\n";
  std::size_t w = 0;
  for (const auto& c : rep->cards)
    for (const auto& i : c.items) w = std::max(w, i.check.size());
  for (const auto& c : rep->cards) {
    ctx.out << layout::hanging("", card_title(c), width);
    for (const auto& i : c.items) {
      std::string v(rules::name(i.verdict));
      if (i.verdict == Verdict::fail)
        v = ctx.style.bad(v);
      else if (i.verdict == Verdict::pass)
        v = ctx.style.good(v);
      std::string prefix = fmt::format("  {}  {:<{}}  ", v, i.check, w);
      std::size_t indent = 2 + 4 + 2 + w + 2;
      auto lines = layout::wrap(i.message, static_cast<std::size_t>(std::max(20, width - static_cast<int>(indent))));
      for (std::size_t k = 0; k < lines.size(); ++k)
        ctx.out << (k == 0 ? prefix : std::string(indent, ' ')) << lines[k] << "\n";
    }
    ctx.out << "\n";
  }
  std::size_t failed_cards = 0;
  for (const auto& c : rep->cards)
    if (c.verdict == Verdict::fail) ++failed_cards;
  ctx.out << fmt::format("Result: {}: {}{}; {} failed, {}, {} passed\n", rules::name(rep->verdict),
                         plural(rep->cards.size(), "GPU"),
                         failed_cards ? fmt::format(", {} with failures", failed_cards) : "",
                         plural(rep->failures, "check"), plural(rep->warnings, "warning"), rep->passes);
  ctx.out << "\nNext steps\n";
  for (std::size_t i = 0; i < rep->next_steps.size(); ++i)
    ctx.out << layout::hanging(fmt::format("  {}. ", i + 1), rep->next_steps[i], width);
  ctx.out << "\nMaintenance\n";
  layout::KeyValues kv;
  for (const auto& [when, what] : rep->maintenance) kv.push_back({"  " + when, {what}});
  ctx.out << layout::key_values(kv, width);
}

}  // namespace

void setup_inspect(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<InspectOptions>();
  auto* cmd =
      app.add_subcommand("inspect",
                         "Health and acceptance checks from nvidia-smi (ECC, retired/remapped memory, power cap, "
                         "thermals, PCIe link)");
  cmd->add_option("--from", o->from,
                  "Read nvidia-smi CSV output from FILE ('-' is standard input) instead of running nvidia-smi")
      ->type_name("FILE");
  cmd->add_option("--nvidia-smi", o->nvidia_smi, "The nvidia-smi to run (default: nvidia-smi found on PATH)")
      ->type_name("PATH");
  cmd->add_flag("--print-query", o->print_query,
                "Print the nvidia-smi command inspect runs (to capture on another machine) and exit");
  cmd->footer(
      "Without --from, runs nvidia-smi (found on PATH; no shell) with the field list in docs/inspect.md.\n"
      "Each card is identified in the catalog and checked; every item is PASS, WARN or FAIL.\n"
      "Exit status: 0 no FAIL item, 1 a FAIL item, 2 nvidia-smi not found or input that cannot be read.\n"
      "See docs/inspect.md.\n"
      "Examples:\n"
      "  gpuadvisor inspect                                 (on the GPU machine: runs nvidia-smi)\n"
      "  gpuadvisor inspect --from docs/examples/nvidia-smi-a100.csv --format json\n"
      "  gpuadvisor inspect --print-query\n"
      "  ssh gpu-host nvidia-smi --query-gpu=<fields> --format=csv | gpuadvisor inspect --from -");
  add_format_option(*cmd, ctx, kTabular);
  add_catalog_option(*cmd, ctx);
  cmd->callback([&ctx, o] { run_inspect(ctx, *o); });
}

}  // namespace gpuadvisor::cli
