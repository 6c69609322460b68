#include "gpuadvisor/cli/cli.h"

#include <fmt/format.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <regex>
#include <sstream>

#include "command_tree.h"
#include "context.h"
#include "gpuadvisor/util/text.h"
#include "gpuadvisor/version.h"

namespace gpuadvisor::cli {
namespace {

// The one subcommand table: it fixes the order in --help and feeds "did you mean".
struct Command {
  std::string_view name;
  void (*setup)(CLI::App&, Context&);
};
constexpr Command kCommands[] = {
    {"recommend", setup_recommend},   {"memory", setup_memory},
    {"estimate", setup_estimate},     {"cost", setup_cost},
    {"compare", setup_compare},       {"fit", setup_fit},
    {"catalog", setup_catalog},       {"models", setup_models},
    {"check", setup_check},           {"rules", setup_rules},
    {"compat", setup_compat},         {"diagnose", setup_diagnose},
    {"inspect", setup_inspect},       {"calibrate", setup_calibrate},
    {"completion", setup_completion}, {"man", setup_man},
};

void print_help(std::ostream& os, const std::string& text) {
  os << text;
  if (!text.empty() && text.back() != '\n') os << '\n';
}

// Help shows what a flag takes: N for counts, the flag's own name in capitals for the rest
// (--task TASK, --seq-len SEQ_LEN; VALUE past 10 letters), never CLI11's generic TEXT.
void name_values(CLI::App& app) {
  static constexpr std::string_view kCounts[] = {"top",  "gpus",      "max-gpus",   "batch", "tp",
                                                 "pp",   "lora-rank", "gpu-layers", "users", "page",
                                                 "jobs", "count",     "lines"};
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_name() != "TEXT") continue;
    const std::string name = opt->get_lnames().empty() ? opt->get_single_name() : opt->get_lnames().front();
    if (name.empty()) continue;
    if (!opt->get_lnames().empty() && std::find(std::begin(kCounts), std::end(kCounts), name) != std::end(kCounts)) {
      opt->type_name("N");
      continue;
    }
    std::string meta;
    for (char ch : name) meta += ch == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    opt->type_name(meta.size() > 10 ? "VALUE" : meta);
  }
  for (CLI::App* sub : app.get_subcommands({})) name_values(*sub);
}

void setup_logging(std::ostream& err, int verbosity) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(err);
  auto logger = std::make_shared<spdlog::logger>("gpuadvisor", sink);
  logger->set_pattern("gpuadvisor: %l: %v");
  // -v: the reasoning (debug), -vv: the arithmetic too (trace); -q: errors only.
  logger->set_level(verbosity > 1   ? spdlog::level::trace
                    : verbosity > 0 ? spdlog::level::debug
                    : verbosity < 0 ? spdlog::level::err
                                    : spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

// The deepest subcommand selected so far (for "did you mean" on its own subcommands).
// "models show " for the models show subcommand, "" for the program itself: the words between
// gpuadvisor and --help.
std::string command_path(const CLI::App* app) {
  std::string path;
  for (const CLI::App* p = app; p && p->get_parent(); p = p->get_parent()) path = p->get_name() + " " + path;
  return path;
}

const CLI::App* deepest(const CLI::App* app) {
  for (const auto* sub : app->get_subcommands())
    if (sub->parsed()) return deepest(sub);
  return app;
}

// An error line as printed: control bytes from the input (ESC, BEL, CR, LF, ...) shown as \xNN so
// that a hostile name or path can neither drive the terminal nor split the line, and a line past
// kMaxErrorLine characters elided in the middle so that a huge value is never echoed whole.
std::string error_line(std::string_view msg) {
  constexpr std::size_t kMaxErrorLine = 1000;
  std::string out = util::escape_controls(msg);
  if (out.size() > kMaxErrorLine) out = out.substr(0, kMaxErrorLine - 300) + " ... " + out.substr(out.size() - 295);
  return out;
}

int run_safe(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& raw_out, std::ostream& raw_err) {
  // Everything printed goes through the sanitiser (report::safe_text): no control byte from input
  // reaches the terminal, whichever command formatted the line.
  report::SafeStreambuf out_buf(raw_out.rdbuf(), 1 << 14), err_buf(raw_err.rdbuf(), 0);
  std::ostream out(&out_buf), err(&err_buf);
  const int code = run_safe(args, out, err);
  out.flush();
  err.flush();
  // The logger must not outlive `err`: later log lines (in-process callers) go to the caller's stream.
  const auto level = spdlog::default_logger()->level();
  setup_logging(raw_err, 0);
  spdlog::default_logger()->set_level(level);
  return code;
}

namespace {

int run_safe(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Context ctx(out, err);
  // Logging is set up before parsing so that parse-time work can log.
  int verbosity = 0;
  for (const auto& a : args) {
    if (a == "-v" || a == "--verbose") verbosity = std::max(verbosity, 0) + 1;
    if (a == "-vv") verbosity = std::max(verbosity, 0) + 2;
    if (a == "-q" || a == "--quiet") verbosity = -1;
  }
  setup_logging(err, verbosity);
  CLI::App app{"gpuadvisor: which GPUs, how many, how much memory, how fast, at what cost.", "gpuadvisor"};
  app.set_version_flag("--version", std::string("gpuadvisor ") + kVersion);
  app.require_subcommand(1);
  app.fallthrough();
  int verbose_flag = 0;  // read before parsing, above
  bool quiet_flag = false;
  app.add_flag("-v,--verbose", verbose_flag,
               "The reasoning on stderr: layout, factors, dropped candidates and why; -vv also the arithmetic");
  app.add_flag("-q,--quiet", quiet_flag, "Only errors on stderr");
  app.footer(
      "Exit codes: 0 ok, 1 the answer is no (nothing fits, a check failed), 2 usage or input error,\n"
      "3 internal error. Documentation: docs/ in the source tree, and 'man gpuadvisor'.\n"
      "Examples:\n"
      "  gpuadvisor recommend --model 10B --budget 3000\n"
      "  gpuadvisor memory --model llama-3.1-8b --task qlora --gpu rtx-4090\n"
      "  gpuadvisor catalog show 4090");
  // Only the command named is set up: building every command's options was most of the start-up.
  // Without one, or for the commands that print the whole tree (completion, man), all are.
  const Command* named = nullptr;
  for (const auto& a : args) {
    if (a.empty() || a[0] == '-') continue;  // the top level's options take no values
    for (const auto& c : kCommands)
      if (c.name == a && c.name != "completion" && c.name != "man") named = &c;
    break;
  }
  for (const auto& c : kCommands)
    if (!named || &c == named) c.setup(app, ctx);
  name_values(app);

  // "unknown command 'recomend', did you mean 'recommend'?" before CLI11 sees it, for commands
  // and the subcommands of a command (catalog list, models show, ...).
  const CLI::App* level = &app;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.empty() || a[0] == '-') {
      if (level == &app) continue;
      break;  // options of a command: its positionals may follow, leave them to CLI11
    }
    std::vector<std::string> names;
    for (const auto* s : level->get_subcommands({})) names.push_back(s->get_name());
    if (names.empty()) break;
    if (std::find(names.begin(), names.end(), a) == names.end()) {
      std::string what = level == &app ? "command" : level->get_name() + " command";
      std::string hint = util::did_you_mean(a, names);
      err << fmt::format("gpuadvisor: error: unknown {} {}{}\n", what, util::quote(a),
                         hint.empty() ? fmt::format(" (expected one of: {})", util::join(names, ", ")) : hint);
      return static_cast<int>(Exit::usage);
    }
    level = level->get_subcommand(a);
  }

  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    try {
      app.parse(rev);
    } catch (const CLI::CallForHelp&) {
      print_help(out, app.help());
      return 0;
    } catch (const CLI::CallForAllHelp&) {
      print_help(out, app.help("", CLI::AppFormatMode::All));
      return 0;
    } catch (const CLI::CallForVersion&) {
      out << "gpuadvisor " << kVersion << "\n";
      return 0;
    } catch (const CLI::ExtrasError& e) {
      const CLI::App* at = deepest(&app);
      std::vector<std::string> subs;
      for (const auto* s : at->get_subcommands({})) subs.push_back(s->get_name());
      std::string extra = rev.empty() ? "" : rev.back();
      std::string hint = subs.empty() ? "" : util::did_you_mean(extra, subs);
      if (!subs.empty() && !extra.empty() && extra[0] != '-')
        err << fmt::format("gpuadvisor: error: unknown {} command {}{}\n", at->get_name(), util::quote(extra),
                           hint.empty() ? fmt::format(" (expected one of: {})", util::join(subs, ", ")) : hint);
      else {
        // Words left over after the flags: usually a value with a space in it ("--budget 3 dollars").
        std::vector<std::string> raw;
        for (const CLI::App* p = at; p && raw.empty(); p = p->get_parent()) raw = p->remaining();
        std::vector<std::string> left;
        for (const auto& x : raw) left.push_back(util::quote(x));
        // An unknown flag: name it, with the closest option of the command.
        auto flag =
            std::find_if(raw.begin(), raw.end(), [](const std::string& x) { return x.size() > 1 && x[0] == '-'; });
        if (flag != raw.end()) {
          std::vector<std::string> names;
          for (const auto* opt : at->get_options())
            for (const auto& n : opt->get_lnames()) names.push_back("--" + n);
          const std::string name = flag->substr(0, flag->find('='));
          std::string near = util::did_you_mean(name, names);
          err << fmt::format("gpuadvisor: error: unknown option {}{}\n", util::quote(name),
                             near.empty() ? fmt::format(" (see 'gpuadvisor {}--help')", command_path(at)) : near);
        } else if (left.empty())
          err << "gpuadvisor: error: " << error_line(e.what()) << "\n";
        else
          err << fmt::format(
              "gpuadvisor: error: unexpected argument{} {} (a value with spaces needs quotes; see 'gpuadvisor "
              "{}--help')\n",
              left.size() > 1 ? "s" : "", util::join(left, " "), command_path(at));
      }
      return static_cast<int>(Exit::usage);
    } catch (const CLI::ParseError& e) {
      std::string msg = e.what();
      if (msg.find("A subcommand is required") != std::string::npos) {
        const CLI::App* at = deepest(&app);
        std::string parents;
        for (const CLI::App* p = at->get_parent(); p; p = p->get_parent())
          parents = p->get_name() + (parents.empty() ? "" : " " + parents);
        print_help(err, at->help(parents));
        return static_cast<int>(Exit::usage);
      }
      // CLI11's own sentences, said as the rest of the tool says things.
      const CLI::App* at_cmd = deepest(&app);
      const std::string path = command_path(at_cmd);
      const std::string see = fmt::format(" (see 'gpuadvisor {}--help')", path);
      static const std::regex twice(R"(^(\S+): At Most 1 required but received (\d+)$)");
      static const std::regex no_value(R"(^(\S+): (\d+) required (\S+) missing$)");
      static const std::regex required(R"(^(\S+) is required$)");
      static const std::regex convert(R"(^Could not convert: (\S+) = (.*)$)");  // a switch given a value
      std::smatch m;
      if (std::regex_match(msg, m, convert)) {
        msg = fmt::format("{}: a switch: give it alone (or =on, =off), got {}", m[1].str(), util::quote(m[2].str()));
      } else if (std::regex_match(msg, m, twice)) {
        msg = fmt::format("{}: given {} times; give it once", m[1].str(), m[2].str());
      } else if (std::regex_match(msg, m, no_value)) {
        msg = fmt::format("{}: needs a value, {} {}{}", m[1].str(), m[2].str() == "1" ? "a" : m[2].str(), m[3].str(),
                          see);
      } else if (std::regex_match(msg, m, required)) {
        // A positional: named by its value name (MODEL, GPU), as --help shows it.
        const CLI::Option* opt = at_cmd->get_option_no_throw(m[1].str());
        std::string what = opt && !opt->get_type_name().empty() ? opt->get_type_name() : m[1].str();
        if (opt && !opt->get_description().empty()) what += ": " + opt->get_description();
        msg = fmt::format("{}: missing {}; see 'gpuadvisor {}--help'",
                          path.empty() ? "gpuadvisor" : path.substr(0, path.size() - 1), what, path);
      }
      err << "gpuadvisor: error: " << error_line(msg) << "\n";
      return static_cast<int>(Exit::usage);
    }
  } catch (const Error& e) {
    err << "gpuadvisor: error: " << error_line(e.what()) << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    err << "gpuadvisor: internal error: " << error_line(e.what()) << "\n";
    return static_cast<int>(Exit::internal);
  }
  return static_cast<int>(ctx.exit);
}

}  // namespace

int run(int argc, const char* const* argv) {
  // iostreams synchronised with stdio write through on every insertion; batch output is many
  // small writes.
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  int code = run(args, std::cout, std::cerr);
  std::cout.flush();
  return code;
}

}  // namespace gpuadvisor::cli
