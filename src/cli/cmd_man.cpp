// gpuadvisor man: the manual page (roff), generated from the command tree so that it lists every
// command and flag the binary parses. The build installs it as gpuadvisor.1.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "command_tree.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/version.h"

namespace gpuadvisor::cli {
namespace {

// Escapes text for roff: backslashes, minus signs (so that flags copy as ASCII '-'), and a
// leading '.' or '\'' that would read as a request.
std::string roff(std::string_view s) {
  std::string r;
  for (char ch : s) {
    if (ch == '\\')
      r += "\\e";
    else if (ch == '-')
      r += "\\-";
    else
      r += ch;
  }
  std::string out;
  std::istringstream in(r);
  bool first = true;
  for (std::string line; std::getline(in, line); first = false) {
    if (!first) out += '\n';
    if (!line.empty() && (line[0] == '.' || line[0] == '\'')) out += "\\&";
    out += line;
  }
  return out;
}

std::string bold(std::string_view s) { return "\\fB" + roff(s) + "\\fR"; }
std::string italic(std::string_view s) { return "\\fI" + roff(s) + "\\fR"; }

// "-h, --help" in bold, then the value's type in italics.
std::string option_term(const OptionInfo& o) {
  std::vector<std::string> names;
  for (const auto& n : o.names) names.push_back(bold(n));
  std::string term = util::join(names, ", ");
  if (o.kind == ValueKind::words) {
    // One choice after another; \: lets a long list break after a '|'.
    std::vector<std::string> words;
    for (const auto& w : o.words) words.push_back(roff(w));
    term += " \\fI" + util::join(words, "|\\:") + "\\fR";
  } else if (o.kind != ValueKind::none) {
    term += " " + italic(o.type_name.empty() ? "VALUE" : o.type_name);
  }
  if (o.kind != ValueKind::none && o.repeatable) term += " ...";
  return term;
}

std::string usage(const CommandInfo& c) {
  std::string u = bold("gpuadvisor " + c.path);
  if (!c.subcommands.empty()) return u + " " + italic("command") + " [" + italic("options") + "]";
  if (!c.options.empty()) u += " [" + italic("options") + "]";
  for (const auto& p : c.positionals) {
    std::string a = italic(p.names.front()) + (p.repeatable ? " ..." : "");
    u += " " + (p.required ? a : "[" + a + "]");
  }
  return u;
}

void write_options(std::ostream& os, const std::vector<const OptionInfo*>& options) {
  for (const auto* o : options) os << ".TP\n" << option_term(*o) << "\n" << roff(o->description) << "\n";
}

// A footer as in --help: prose lines fill, and the indented lines under "Examples:" are kept as
// typed.
void write_footer(std::ostream& os, const std::string& footer) {
  std::istringstream in(footer);
  bool in_examples = false, paragraph = false;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) {
      if (in_examples) os << ".fi\n.RE\n";
      in_examples = paragraph = false;
      continue;
    }
    if (line.rfind("  ", 0) == 0) {
      if (!in_examples) os << ".RS\n.nf\n";
      in_examples = true;
      os << roff(util::trim(line)) << "\n";
      continue;
    }
    if (in_examples) os << ".fi\n.RE\n";
    in_examples = false;
    if (!paragraph || line.rfind("Example", 0) == 0 || line.rfind("Exit status", 0) == 0) os << ".PP\n";
    paragraph = true;
    os << roff(line) << "\n";
  }
  if (in_examples) os << ".fi\n.RE\n";
}

// A group of options (Workload, ...) shared word for word by several commands is described once
// in its own section; the commands point to it.
std::map<std::string, std::vector<const OptionInfo*>> shared_groups(const std::vector<const CommandInfo*>& all) {
  std::map<std::string, std::vector<std::string>> names;
  std::map<std::string, int> count;
  std::map<std::string, bool> same;
  std::map<std::string, std::vector<const OptionInfo*>> first;
  for (const auto* c : all) {
    std::map<std::string, std::vector<std::string>> here;
    std::map<std::string, std::vector<const OptionInfo*>> opts;
    for (const auto& o : c->options)
      if (o.group != "Options") {
        here[o.group].push_back(util::join(o.names, ",") + "\t" + o.description);
        opts[o.group].push_back(&o);
      }
    for (const auto& [g, n] : here) {
      if (!count[g]++) {
        names[g] = n;
        first[g] = opts[g];
        same[g] = true;
      } else if (names[g] != n) {
        same[g] = false;
      }
    }
  }
  std::map<std::string, std::vector<const OptionInfo*>> shared;
  for (const auto& [g, n] : count)
    if (n > 1 && same[g]) shared[g] = first[g];
  return shared;
}

std::string upper(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

void write_command(std::ostream& os, const CommandInfo& c,
                   const std::map<std::string, std::vector<const OptionInfo*>>& shared) {
  os << ".SS " << usage(c) << "\n" << roff(c.description) << (c.description.ends_with('.') ? "" : ".") << "\n";
  if (!c.subcommands.empty()) {
    std::vector<std::string> subs;
    for (const auto& s : c.subcommands) subs.push_back(bold(s.name));
    os << "Commands: " << util::join(subs, ", ") << "; each is described below.\n";
  }
  for (const auto& p : c.positionals) os << ".TP\n" << italic(p.names.front()) << "\n" << roff(p.description) << "\n";
  std::vector<std::string> groups;  // in the order they come
  for (const auto& o : c.options)
    if (std::find(groups.begin(), groups.end(), o.group) == groups.end()) groups.push_back(o.group);
  for (const auto& g : groups) {
    if (shared.count(g)) {
      os << ".PP\nThe " << roff(util::lower(g)) << " options (" << roff(upper(g)) << " OPTIONS).\n";
      continue;
    }
    if (g != "Options") os << ".PP\n" << roff(g) << ":\n";
    std::vector<const OptionInfo*> opts;
    for (const auto& o : c.options)
      if (o.group == g) opts.push_back(&o);
    write_options(os, opts);
  }
  write_footer(os, c.footer);
}

void write_man(std::ostream& os, const CommandInfo& root) {
  auto all = flatten(root);
  auto shared = shared_groups(all);
  std::string summary = root.description;
  if (summary.rfind("gpuadvisor: ", 0) == 0) summary = summary.substr(12);
  if (summary.ends_with('.')) summary.pop_back();

  os << ".\\\" The gpuadvisor manual page, generated by 'gpuadvisor man' from the program's commands.\n"
     << ".TH GPUADVISOR 1 \"\" \"gpuadvisor " << kVersion << "\" \"User Commands\"\n"
     << ".SH NAME\ngpuadvisor \\- " << roff(summary) << "\n"
     << ".SH SYNOPSIS\n"
     << bold("gpuadvisor") << " [" << italic("global options") << "] " << italic("command") << " [" << italic("options")
     << "] [" << italic("arguments") << "]\n.br\n"
     << bold("gpuadvisor") << " " << italic("command") << " " << bold("--help") << "\n"
     << ".SH DESCRIPTION\n"
     << "gpuadvisor answers which GPUs a job needs, how many, how much memory it takes per GPU, how fast it runs, "
        "and what it costs to buy, power or rent. It is one offline binary: the GPU catalog, model presets, "
        "prices, efficiency factors and rules are compiled in, and every figure carries its public source.\n"
     << ".PP\n"
     << "Every command takes " << bold("--help") << " (with examples) and " << bold("--format") << "; "
     << "commands that take a workload share the flags in WORKLOAD OPTIONS. Sizes, money and power accept units "
        "(24GB, 3k, $3,000, 0.7kW).\n"
     << ".SH OPTIONS\nThese come before the command.\n";
  std::vector<const OptionInfo*> global;
  for (const auto& o : root.options) global.push_back(&o);
  write_options(os, global);

  os << ".SH COMMANDS\n";
  for (const auto* c : all)
    if (c != &root) write_command(os, *c, shared);

  for (const auto& [g, opts] : shared) {
    os << ".SH " << roff(upper(g)) << " OPTIONS\n";
    if (g == "Workload")
      os << "A workload is a model (a preset, a size, a Hugging Face config.json or a weights file) and what is "
            "done with it. The same fields may come from a JSON profile ("
         << bold("--profile")
         << "); flags "
            "override it.\n";
    write_options(os, opts);
  }

  os << ".SH EXIT STATUS\n"
        ".TP\n.B 0\nSuccess.\n"
        ".TP\n.B 1\nThe answer is no: nothing fits, a check failed, a critical finding.\n"
        ".TP\n.B 2\nA usage or input error: an unknown command, flag, GPU or model, a file that cannot be read or "
        "parsed. One line on standard error says what and where.\n"
        ".TP\n.B 3\nAn internal error.\n"
        ".PP\nEach command's "
     << bold("--help") << " says what 1 means for it.\n";

  os << ".SH ENVIRONMENT\n"
        ".TP\n.B GPUADVISOR_CATALOG\nExtra GPU catalog files, separated by colons, read before the "
     << bold("--catalog")
     << " files; they add or replace GPUs by id.\n"
        ".TP\n.B NO_COLOR\nWhen set, no colour even on a terminal. Colour is used only when standard output is a "
        "terminal.\n"
        ".TP\n.B COLUMNS\nThe width tables are fitted to (40 to 1000); without it, the terminal's width.\n"
        ".TP\n.BR LC_ALL \", \" LC_CTYPE \", \" LANG\nThe first of these that is set decides whether output uses "
        "Unicode characters (a UTF\\-8 locale) or ASCII.\n"
        ".TP\n.B GPUADVISOR_ASCII\nWhen set to anything but 0, ASCII output even in a UTF\\-8 locale.\n"
        ".TP\n.B GPUADVISOR_CALIBRATION\nA calibration file written by calibrate, applied as "
     << bold("--calibration")
     << " is (the option wins).\n"
        ".TP\n.B GPUADVISOR_TODAY\nThe date taken as today (YYYY\\-MM\\-DD), for the age of catalog records and "
        "reproducible output.\n"
        ".TP\n.B PATH\n"
     << bold("inspect") << " runs " << bold("nvidia-smi") << " found on the path.\n";

  os << ".SH FILES\n"
        "gpuadvisor reads no files of its own: the data are compiled in. It reads the files named on the command "
        "line and in "
     << bold("GPUADVISOR_CATALOG")
     << ".\n"
        ".TP\n.I /usr/share/bash\\-completion/completions/gpuadvisor\n"
        ".TQ\n.I /usr/share/zsh/vendor\\-completions/_gpuadvisor\n"
        ".TQ\n.I /usr/share/fish/vendor_completions.d/gpuadvisor.fish\n"
        "Shell completions, as installed by the package (under the installation prefix); "
     << bold("gpuadvisor completion")
     << " prints them.\n"
        ".TP\n.I /usr/share/doc/gpuadvisor/\nThe documentation: methodology, data formats, JSON output, rules.\n";

  os << ".SH EXAMPLES\n";
  std::istringstream ex(root.footer);
  bool open = false;
  for (std::string line; std::getline(ex, line);) {
    if (line.rfind("  gpuadvisor ", 0) != 0) continue;
    if (!open) os << ".RS\n.nf\n";
    open = true;
    os << roff(util::trim(line)) << "\n";
  }
  if (open) os << ".fi\n.RE\n";
  os << "Each command's " << bold("--help") << " ends with more.\n";

  os << ".SH SEE ALSO\n.BR nvidia\\-smi (1)\n";
}

}  // namespace

void setup_man(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("man", "Print the manual page (roff), as installed as gpuadvisor.1");
  cmd->footer("Examples:\n  gpuadvisor man | man -l -\n  gpuadvisor man > gpuadvisor.1");
  cmd->callback([&app, &ctx] { write_man(ctx.out, command_tree(app)); });
}

}  // namespace gpuadvisor::cli
