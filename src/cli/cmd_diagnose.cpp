// gpuadvisor diagnose: what an Xid code or a CUDA/cuDNN/NCCL error text means and what to do;
// --log scans kernel logs for Xid lines.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "context.h"
#include "gpuadvisor/catalog/ops.h"
#include "gpuadvisor/rules/xid_log.h"
#include "gpuadvisor/util/text.h"
#include "ops_layout.h"

namespace gpuadvisor::cli {
namespace {

using catalog::ErrorPattern;
using catalog::XidInfo;

constexpr std::string_view kXidCatalogUrl = "https://docs.nvidia.com/deploy/xid-errors/";

struct DiagnoseOptions {
  std::vector<std::string> query;
  std::string log;
  bool list = false;
};

std::vector<std::string> numbered(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < items.size(); ++i) out.push_back(fmt::format("{}. {}", i + 1, items[i]));
  return out;
}

std::vector<std::string> bulleted(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& s : items) out.push_back("- " + s);
  return out;
}

std::vector<std::string> cites(const std::vector<catalog::Source>& sources) {
  std::vector<std::string> out;
  for (const auto& s : sources) out.push_back(layout::cite(s));
  return out;
}

// "79", "xid 79", "Xid79", "XID-79", "xid: 79" -> 79; nullopt when the text is not an Xid.
std::optional<int> xid_code(const std::string& text, bool& looked_like_xid) {
  std::string t = util::lower(util::trim(text));
  looked_like_xid = util::starts_with(t, "xid");
  if (looked_like_xid) t = t.substr(3);
  while (!t.empty() && (t[0] == ' ' || t[0] == ':' || t[0] == '-' || t[0] == '#')) t.erase(0, 1);
  if (t.empty() || !std::all_of(t.begin(), t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  looked_like_xid = true;
  int code = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), code);
  if (ec != std::errc() || p != t.data() + t.size()) return -1;
  return code;
}

util::Json xid_json(const XidInfo& x) {
  util::Json j;
  j["code"] = x.code;
  j["name"] = x.name;
  j["mnemonic"] = x.mnemonic;
  j["severity"] = std::string(catalog::name(x.severity));
  j["category"] = x.category;
  j["meaning"] = x.meaning;
  j["causes"] = x.causes;
  j["actions"] = x.actions;
  j["nvidia_immediate_action"] = x.immediate_action;
  j["nvidia_investigatory_action"] = x.investigatory_action;
  j["notes"] = x.notes.empty() ? util::Json(nullptr) : util::Json(x.notes);
  j["sources"] = catalog::sources_json(x.sources);
  j["as_of"] = x.as_of;
  return j;
}

util::Json error_json(const ErrorPattern& e) {
  util::Json j;
  j["id"] = e.id;
  j["component"] = e.component;
  j["patterns"] = e.patterns;
  j["meaning"] = e.meaning;
  j["causes"] = e.causes;
  j["actions"] = e.actions;
  j["notes"] = e.notes.empty() ? util::Json(nullptr) : util::Json(e.notes);
  j["sources"] = catalog::sources_json(e.sources);
  j["as_of"] = e.as_of;
  return j;
}

layout::KeyValues xid_kv(const XidInfo& x) {
  layout::KeyValues kv;
  kv.push_back({"Severity", {fmt::format("{} ({})", catalog::name(x.severity), x.category)}});
  if (!x.mnemonic.empty()) kv.push_back({"Mnemonic", {x.mnemonic}});
  kv.push_back({"Meaning", {x.meaning}});
  if (!x.causes.empty()) kv.push_back({"Likely causes", bulleted(x.causes)});
  if (!x.actions.empty()) kv.push_back({"What to do", numbered(x.actions)});
  if (!x.immediate_action.empty() || !x.investigatory_action.empty())
    kv.push_back({"NVIDIA's actions",
                  {fmt::format("immediate: {}; investigatory: {}", x.immediate_action, x.investigatory_action)}});
  if (!x.notes.empty()) kv.push_back({"Notes", {x.notes}});
  kv.push_back({"Sources", cites(x.sources)});
  return kv;
}

layout::KeyValues error_kv(const ErrorPattern& e) {
  layout::KeyValues kv;
  kv.push_back({"Matches", {util::join(e.patterns, " | ")}});
  kv.push_back({"Meaning", {e.meaning}});
  if (!e.causes.empty()) kv.push_back({"Likely causes", bulleted(e.causes)});
  if (!e.actions.empty()) kv.push_back({"What to do", numbered(e.actions)});
  if (!e.notes.empty()) kv.push_back({"Notes", {e.notes}});
  kv.push_back({"Sources", cites(e.sources)});
  return kv;
}

std::string joined(const std::vector<std::string>& items) { return util::join(items, "; "); }

std::string cite_all(const std::vector<catalog::Source>& sources) { return joined(cites(sources)); }

// CSV and markdown: one row per record, columns named as the JSON keys.
std::string xid_rows(Context& ctx, report::Format f, const XidInfo& x) {
  report::Table t({{"code"},
                   {"name"},
                   {"severity"},
                   {"category"},
                   {"mnemonic"},
                   {"meaning"},
                   {"causes"},
                   {"actions"},
                   {"nvidia_immediate_action"},
                   {"nvidia_investigatory_action"},
                   {"sources"}});
  t.add({std::to_string(x.code), x.name, std::string(catalog::name(x.severity)), x.category, x.mnemonic, x.meaning,
         joined(x.causes), joined(x.actions), x.immediate_action, x.investigatory_action, cite_all(x.sources)});
  return t.render(f, ctx.style);
}

std::string error_rows(Context& ctx, report::Format f, const std::vector<const ErrorPattern*>& matches) {
  report::Table t({{"id"}, {"component"}, {"patterns"}, {"meaning"}, {"causes"}, {"actions"}, {"sources"}});
  for (const auto* e : matches)
    t.add({e->id, e->component, joined(e->patterns), e->meaning, joined(e->causes), joined(e->actions),
           cite_all(e->sources)});
  return t.render(f, ctx.style);
}

void run_xid(Context& ctx, report::Format f, int code) {
  const auto& table = catalog::XidTable::embedded();
  const XidInfo* x = table.find(code);
  if (!x) {
    std::vector<std::string> codes;
    for (const auto& y : table.all()) codes.push_back(std::to_string(y.code));
    throw Error(fmt::format("Xid {} is not in gpuadvisor's table ({}); see NVIDIA's Xid catalog <{}>", code,
                            util::join(codes, ", "), kXidCatalogUrl));
  }
  if (f == report::Format::json) {
    auto j = report::envelope("diagnose");
    j["kind"] = "xid";
    j["xid"] = xid_json(*x);
    ctx.out << report::dump(j);
    return;
  }
  if (f != report::Format::table) {
    ctx.out << xid_rows(ctx, f, *x);
    return;
  }
  ctx.out << layout::hanging("", fmt::format("Xid {}: {}", x->code, x->name), ctx.style.width)
          << layout::key_values(xid_kv(*x), ctx.style.width);
}

void run_text(Context& ctx, report::Format f, const std::string& text) {
  const auto& table = catalog::ErrorTable::embedded();
  auto matches = table.match(text);
  if (matches.empty()) {
    auto names = table.names();
    throw Error(
        fmt::format("no known CUDA, cuDNN, cuBLAS, NCCL or driver error matches {}{} ('gpuadvisor diagnose --list' "
                    "shows them; Xid codes are numbers: 'gpuadvisor diagnose 79')",
                    util::quote(text), util::did_you_mean(text, names)));
  }
  if (f == report::Format::json) {
    auto j = report::envelope("diagnose");
    j["kind"] = "error";
    j["query"] = text;
    util::Json arr = util::Json::array();
    for (const auto* e : matches) arr.push_back(error_json(*e));
    j["matches"] = arr;
    ctx.out << report::dump(j);
    return;
  }
  if (f != report::Format::table) {
    ctx.out << error_rows(ctx, f, matches);
    return;
  }
  if (matches.size() > 1) ctx.out << fmt::format("{} known errors match {}:\n\n", matches.size(), util::quote(text));
  for (std::size_t i = 0; i < matches.size(); ++i) {
    if (i) ctx.out << "\n";
    ctx.out << layout::hanging("", fmt::format("{} ({})", matches[i]->id, matches[i]->component), ctx.style.width)
            << layout::key_values(error_kv(*matches[i]), ctx.style.width);
  }
}

void run_log(Context& ctx, report::Format f, const std::string& path) {
  auto text = util::read_file(path);
  if (!text) throw Error("--log: " + text.error());
  const std::string origin = path == "-" ? "<stdin>" : path;
  const auto& table = catalog::XidTable::embedded();
  auto scan = rules::scan_xid_log(*text, origin, table);
  if (!scan) throw Error(scan.error());
  if (scan->critical) ctx.exit = Exit::no;
  auto sev = [](const rules::XidGroup& g) {
    return g.severity ? std::string(catalog::name(*g.severity)) : std::string("unknown");
  };
  auto what = [](const rules::XidGroup& g) {
    std::string n = g.log_message ? g.log_message->name
                    : g.info      ? g.info->name
                                  : std::string("(not in gpuadvisor's table)");
    return g.label.empty() ? n : n + ": " + g.label;
  };
  auto code_text = [](const rules::XidGroup& g) { return g.code ? std::to_string(g.code) : std::string("-"); };
  auto warning_lines = [&] {
    std::vector<std::string> out;
    for (const auto& w : scan->warnings) out.push_back(fmt::format("{}:{}: {}", origin, w.line, w.what));
    if (scan->warnings_total > scan->warnings.size())
      out.push_back(
          fmt::format("{}: {} more malformed Xid lines skipped", origin, scan->warnings_total - scan->warnings.size()));
    if (scan->unlisted_events)
      out.push_back(fmt::format("{}: {} events past the first 10,000 GPU and Xid groups are counted but not listed",
                                origin, scan->unlisted_events));
    return out;
  };

  if (f == report::Format::json) {
    auto j = report::envelope("diagnose");
    j["kind"] = "log";
    j["source"] = origin;
    j["lines_scanned"] = scan->lines;
    j["events"] = scan->events;
    j["critical_events"] = scan->critical;
    j["gpus"] = scan->gpus;
    j["warnings"] = warning_lines();
    util::Json arr = util::Json::array();
    for (const auto& g : scan->groups) {
      util::Json x;
      x["pci_address"] = g.pci;
      x["xid"] = g.code ? util::Json(g.code) : util::Json(nullptr);
      x["message"] = g.log_message ? util::Json(g.log_message->id) : util::Json(nullptr);
      x["name"] = g.info || g.log_message ? util::Json(g.log_message ? g.log_message->name : g.info->name)
                                          : util::Json(nullptr);
      x["severity"] = sev(g);
      x["recovery_action"] = g.label.empty() ? util::Json(nullptr) : util::Json(g.label);
      x["count"] = g.count;
      x["first_line"] = g.first_line;
      x["last_line"] = g.last_line;
      x["first_seen"] = g.first_time;
      x["last_seen"] = g.last_time;
      x["sample"] = g.sample;
      arr.push_back(x);
    }
    j["groups"] = arr;
    ctx.out << report::dump(j);
    return;
  }
  using report::Align;
  // CSV gets the JSON key names; people get words.
  const bool csv = f == report::Format::csv;
  report::Table t({{csv ? "pci_address" : "GPU"},
                   {csv ? "xid" : "Xid", Align::right},
                   {csv ? "severity" : "Severity"},
                   {csv ? "count" : "Count", Align::right},
                   {csv ? "first_seen" : "First seen"},
                   {csv ? "last_seen" : "Last seen"},
                   {csv ? "lines" : "Lines"},
                   {csv ? "name" : "Meaning"}});
  for (const auto& g : scan->groups)
    t.add({g.pci, code_text(g), sev(g), std::to_string(g.count), g.first_time.empty() ? "-" : g.first_time,
           g.last_time.empty() ? "-" : g.last_time,
           g.first_line == g.last_line ? std::to_string(g.first_line) : fmt::format("{}-{}", g.first_line, g.last_line),
           what(g)});
  if (f != report::Format::table) {
    ctx.out << t.render(f, ctx.style);
    return;
  }
  const int width = ctx.style.width;
  ctx.out << fmt::format("{}: {} lines, {} Xid event{} on {} GPU{}\n", origin, scan->lines, scan->events,
                         scan->events == 1 ? "" : "s", scan->gpus.size(), scan->gpus.size() == 1 ? "" : "s");
  auto warnings = warning_lines();
  if (scan->groups.empty()) {
    ctx.out << "No Xid lines found.\n";
    for (const auto& w : warnings) ctx.out << layout::hanging("Warning: ", w, width);
    return;
  }
  ctx.out << "\n" << t.render(f, ctx.style) << "\n";
  std::vector<std::string> crit;
  for (const auto& g : scan->groups)
    if (g.severity == catalog::XidSeverity::critical)
      crit.push_back(g.code ? fmt::format("Xid {} ({}) on {}", g.code, what(g), g.pci)
                            : fmt::format("{} on {}", what(g), g.pci));
  if (!crit.empty()) ctx.out << layout::hanging("", fmt::format("Critical: {}.", util::join(crit, "; ")), width);
  std::vector<std::string> codes, unknown;
  for (const auto& g : scan->groups) {
    if (!g.code) continue;
    auto& into = g.info ? codes : unknown;
    std::string c = std::to_string(g.code);
    if (std::find(into.begin(), into.end(), c) == into.end()) into.push_back(c);
  }
  if (!codes.empty())
    ctx.out << layout::hanging(
        "",
        fmt::format(
            "What each code means and what to do: gpuadvisor diagnose {}{}", codes.front(),
            codes.size() > 1
                ? fmt::format(" (and {})", util::join(std::vector<std::string>(codes.begin() + 1, codes.end()), ", "))
                : ""),
        width);
  if (!unknown.empty())
    ctx.out << layout::hanging("",
                               fmt::format("Not in gpuadvisor's table: Xid {}; see NVIDIA's Xid catalog <{}>",
                                           util::join(unknown, ", "), kXidCatalogUrl),
                               width);
  if (!warnings.empty()) ctx.out << "\n";
  for (const auto& w : warnings) ctx.out << layout::hanging("Warning: ", w, width);
}

// A pasted kernel-log line ("NVRM: Xid (PCI:0000:3b:00): 79, ... GPU has fallen off the bus."): what
// each Xid in it means, with the GPU it names and, for Xid 154, the recovery action it states.
bool run_pasted(Context& ctx, report::Format f, const std::string& text) {
  if (text.find("NVRM:") == std::string::npos) return false;
  const auto& table = catalog::XidTable::embedded();
  auto scan = rules::scan_xid_log(text, "the pasted line", table);
  if (!scan) throw Error(scan.error());
  if (scan->groups.empty()) {
    if (!scan->warnings.empty()) throw Error(fmt::format("the pasted line: {}", scan->warnings.front().what));
    return false;
  }
  std::vector<const rules::XidGroup*> known;
  for (const auto& g : scan->groups) {
    if (g.code && !g.info) run_xid(ctx, f, g.code);  // not in the table: the usual error with the list
    known.push_back(&g);
  }
  if (f == report::Format::json) {
    auto j = report::envelope("diagnose");
    j["kind"] = "line";
    util::Json arr = util::Json::array();
    for (const auto* g : known) {
      util::Json e;
      e["pci_address"] = g->pci;
      e["severity"] = g->severity ? util::Json(std::string(catalog::name(*g->severity))) : util::Json(nullptr);
      e["recovery_action"] = g->label.empty() ? util::Json(nullptr) : util::Json(g->label);
      e["xid"] = g->info ? xid_json(*g->info) : util::Json(nullptr);
      e["message"] = g->log_message ? util::Json(g->log_message->id) : util::Json(nullptr);
      arr.push_back(e);
    }
    j["events"] = arr;
    ctx.out << report::dump(j);
    return true;
  }
  for (std::size_t i = 0; i < known.size(); ++i) {
    const auto& g = *known[i];
    if (i) ctx.out << "\n";
    if (!g.info) {  // an Xid-less driver message
      const auto& m = *g.log_message;
      ctx.out << layout::hanging("", fmt::format("{} (GPU {})", m.name, g.pci), ctx.style.width);
      layout::KeyValues kv;
      kv.push_back({"Severity", {std::string(catalog::name(m.severity))}});
      kv.push_back({"Meaning", {m.meaning}});
      if (m.same_as_xid)
        kv.push_back({"Same as", {fmt::format("Xid {}: gpuadvisor diagnose {}", *m.same_as_xid, *m.same_as_xid)}});
      kv.push_back({"Sources", cites(m.sources)});
      ctx.out << layout::key_values(kv, ctx.style.width);
      continue;
    }
    const auto& x = *g.info;
    ctx.out << layout::hanging("", fmt::format("Xid {}: {} (GPU {})", x.code, x.name, g.pci), ctx.style.width);
    auto kv = xid_kv(x);
    if (!g.label.empty())  // the line's own severity (Xid 154: the recovery action it states)
      kv.front().second = {fmt::format("{} ({}; this line states the recovery action {})", catalog::name(*g.severity),
                                       x.category, g.label)};
    ctx.out << layout::key_values(kv, ctx.style.width);
  }
  return true;
}

void run_list(Context& ctx, report::Format f) {
  const auto& xids = catalog::XidTable::embedded();
  const auto& errors = catalog::ErrorTable::embedded();
  if (f == report::Format::json) {
    auto j = report::envelope("diagnose");
    j["kind"] = "list";
    util::Json xa = util::Json::array();
    for (const auto& x : xids.all())
      xa.push_back(
          util::Json{{"code", x.code}, {"name", x.name}, {"severity", std::string(catalog::name(x.severity))}});
    j["xids"] = xa;
    util::Json ea = util::Json::array();
    for (const auto& e : errors.all())
      ea.push_back(util::Json{{"id", e.id}, {"component", e.component}, {"patterns", e.patterns}});
    j["errors"] = ea;
    ctx.out << report::dump(j);
    return;
  }
  if (f == report::Format::csv) {  // one table: a record an Xid code or error text
    report::Table t({{"kind"}, {"id"}, {"severity"}, {"component"}, {"name"}, {"patterns"}});
    for (const auto& x : xids.all())
      t.add({"xid", std::to_string(x.code), std::string(catalog::name(x.severity)), "", x.name, ""});
    for (const auto& e : errors.all()) t.add({"error", e.id, "", e.component, "", util::join(e.patterns, " | ")});
    ctx.out << t.render(f, ctx.style);
    return;
  }
  using report::Align;
  report::Table xt({{"Xid", Align::right}, {"Severity"}, {"Name"}});
  for (const auto& x : xids.all()) xt.add({std::to_string(x.code), std::string(catalog::name(x.severity)), x.name});
  report::Table et({{"Error"}, {"Component"}, {"Matches"}});
  for (const auto& e : errors.all()) et.add({e.id, e.component, util::join(e.patterns, " | ")});
  if (f == report::Format::table) ctx.out << "Xid codes\n";
  ctx.out << xt.render(f, ctx.style);
  ctx.out << (f == report::Format::table ? "\nError texts\n" : "\n");
  ctx.out << et.render(f, ctx.style);
}

void run_diagnose(Context& ctx, const DiagnoseOptions& o) {
  auto f = ctx.output_format();
  if (o.list) {
    if (!o.query.empty() || !o.log.empty()) throw Error("--list: takes no code, text or --log");
    run_list(ctx, f);
    return;
  }
  if (!o.log.empty()) {
    if (!o.query.empty()) throw Error("--log: give a log or a code/text, not both");
    run_log(ctx, f, o.log);
    return;
  }
  if (o.query.empty())
    throw Error(
        "diagnose: give an Xid code ('diagnose 79'), an error text ('diagnose \"CUDNN_STATUS_NOT_INITIALIZED\"') "
        "or --log FILE");
  std::string text = util::join(o.query, " ");
  if (run_pasted(ctx, f, text)) return;
  bool looked_like_xid = false;
  auto code = xid_code(text, looked_like_xid);
  if (code) {
    if (*code <= 0) throw Error(fmt::format("expected an Xid number like 79, got {}", util::quote(text)));
    run_xid(ctx, f, *code);
    return;
  }
  if (looked_like_xid) throw Error(fmt::format("xid: expected an Xid number like 79, got {}", util::quote(text)));
  run_text(ctx, f, text);
}

}  // namespace

void setup_diagnose(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<DiagnoseOptions>();
  auto* cmd = app.add_subcommand("diagnose",
                                 "What an Xid code or a CUDA/cuDNN/NCCL error means and what to do; scans kernel logs");
  cmd->add_option("query", o->query, "An Xid code (79, 'xid 48') or an error text (\"CUDNN_STATUS_NOT_INITIALIZED\")")
      ->type_name("CODE|TEXT");
  cmd->add_option("--log", o->log,
                  "Scan a kernel log (dmesg, journalctl -k, syslog; '-' is standard input) for Xid lines")
      ->type_name("FILE");
  cmd->add_flag("--list", o->list, "List the Xid codes and error texts gpuadvisor knows");
  cmd->footer(
      "Xid meanings follow NVIDIA's Xid documentation. A log scan groups the 'NVRM: Xid' lines by GPU\n"
      "(PCI address) and code, most severe first.\n"
      "Exit status: 0 ok, 1 the log has critical Xids (fallen off the bus, uncorrectable ECC, a GPU\n"
      "reset required, ...), a malformed Xid line is a warning and the scan goes on;\n"
      "2 an unknown code or text, or a log that cannot be read. See docs/diagnose.md.\n"
      "Examples:\n"
      "  gpuadvisor diagnose 79\n"
      "  gpuadvisor diagnose xid 48\n"
      "  gpuadvisor diagnose \"CUDNN_STATUS_NOT_INITIALIZED\"\n"
      "  gpuadvisor diagnose \"NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\"\n"
      "  sudo dmesg | gpuadvisor diagnose --log -\n"
      "  journalctl -k -b | gpuadvisor diagnose --log - --format json");
  add_format_option(*cmd, ctx, kTabular);
  cmd->callback([&ctx, o] { run_diagnose(ctx, *o); });
}

}  // namespace gpuadvisor::cli
