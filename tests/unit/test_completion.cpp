// The shell completions and the man page list every command and flag that --help shows, and the
// values they offer are the ones --help names. --help is CLI11's own rendering of the command
// tree, so this checks the generators against the parser, not against themselves.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cli_fixture.h"

using gpuadvisor::test::run_cli;

namespace {

struct HelpInfo {
  std::vector<std::string> subcommands;
  std::set<std::string> options;
  std::map<std::string, std::string> descriptions;  ///< option name -> its description
};

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> words;
  std::istringstream in(s);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

HelpInfo parse_help(const std::string& path) {
  std::vector<std::string> args = split_words(path);
  args.push_back("--help");
  auto r = run_cli(args);
  REQUIRE(r.code == 0);
  HelpInfo h;
  static const std::regex option_line(
      R"(^  ((?:-[A-Za-z],)?--[a-z][a-z0-9-]*(?:,--[a-z][a-z0-9-]*)*)(?: ([A-Z|\-]+(?: \.\.\.)?))?(?:\s+(.*))?$)");
  static const std::regex command_line(R"(^  ([a-z]+)\s{2,}\S)");
  std::istringstream in(r.out);
  bool in_subcommands = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "Subcommands:") {
      in_subcommands = true;
      continue;
    }
    if (line.empty() || line[0] != ' ') in_subcommands = false;
    std::smatch m;
    if (in_subcommands && std::regex_search(line, m, command_line)) {
      h.subcommands.push_back(m[1]);
    } else if (std::regex_search(line, m, option_line)) {
      std::string names = m[1];
      std::stringstream ss(names);
      for (std::string n; std::getline(ss, n, ',');) {
        h.options.insert(n);
        h.descriptions[n] = m[3];
      }
    }
  }
  return h;
}

// Every command path ("", "catalog", "catalog list", ...) with what its --help shows.
std::map<std::string, HelpInfo> help_tree() {
  std::map<std::string, HelpInfo> tree;
  std::vector<std::string> todo = {""};
  while (!todo.empty()) {
    std::string path = todo.back();
    todo.pop_back();
    tree[path] = parse_help(path);
    for (const auto& s : tree[path].subcommands) todo.push_back(path.empty() ? s : path + " " + s);
  }
  return tree;
}

// The arms of a generated `case` function: "'key1'|'key2') echo 'value' ;;" -> key -> value.
std::map<std::string, std::string> case_arms(const std::string& script, const std::string& function) {
  std::map<std::string, std::string> arms;
  auto start = script.find(function + "() {");
  REQUIRE(start != std::string::npos);
  auto end = script.find("\n}\n", start);
  std::istringstream in(script.substr(start, end - start));
  static const std::regex arm(R"(^    ('.*')\) echo '(.*)' ;;$)");
  static const std::regex key(R"('([^']*)')");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, arm)) continue;
    std::string keys = m[1], value = m[2];
    for (auto it = std::sregex_iterator(keys.begin(), keys.end(), key); it != std::sregex_iterator(); ++it)
      arms[(*it)[1]] = value;
  }
  return arms;
}

std::set<std::string> word_set(const std::string& s) {
  auto w = split_words(s);
  return {w.begin(), w.end()};
}

bool names_word(const std::string& text, const std::string& word) {
  std::regex re("(^|[^a-z0-9_-])" + std::regex_replace(word, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                "([^a-z0-9_-]|$)");
  return std::regex_search(text, re);
}

}  // namespace

TEST_CASE("completion: the bash script has every command and flag", "[completion]") {
  auto tree = help_tree();
  REQUIRE(tree.size() > 15);
  REQUIRE(tree.count("catalog list"));
  auto r = run_cli({"completion", "bash"});
  REQUIRE(r.code == 0);
  auto subs = case_arms(r.out, "_gpuadvisor_subcommands");
  auto opts = case_arms(r.out, "_gpuadvisor_options");
  for (const auto& [path, help] : tree) {
    INFO("command '" << path << "'");
    if (!help.subcommands.empty()) {
      REQUIRE(subs.count(path));
      CHECK(word_set(subs[path]) == std::set<std::string>(help.subcommands.begin(), help.subcommands.end()));
    }
    REQUIRE(opts.count(path));
    CHECK(word_set(opts[path]) == help.options);
  }
}

TEST_CASE("completion: the values offered are the ones --help names", "[completion]") {
  auto tree = help_tree();
  auto r = run_cli({"completion", "bash"});
  REQUIRE(r.code == 0);
  auto values = case_arms(r.out, "_gpuadvisor_option_value");
  int lists = 0;
  for (const auto& [key, value] : values) {
    auto bar = key.find('|');
    std::string path = key.substr(0, bar), option = key.substr(bar + 1);
    REQUIRE(tree.count(path));
    REQUIRE(tree[path].options.count(option));
    if (value.empty() || value[0] == '@') continue;
    const std::string& description = tree[path].descriptions[option];
    if (description.find("...") != std::string::npos) continue;  // an open list ("ampere, ada, ...")
    if (option == "--arch") continue;  // every architecture of the catalog; --help names examples
    ++lists;
    for (const auto& w : split_words(value)) {
      if (w.find_first_not_of("0123456789") == std::string::npos) continue;  // "0-3" names 1 and 2
      INFO(path << " " << option << ": '" << w << "' not in \"" << description << "\"");
      CHECK(names_word(description, w));
    }
  }
  CHECK(lists > 20);
  CHECK(values["memory|--gpu"] == "@gpu");
  CHECK(values["memory|--model"] == "@model");
  CHECK(values["memory|--model-config"] == "@file");
  CHECK(values["check|--format"] == "text table json junit sarif");
}

TEST_CASE("completion: zsh and fish scripts have every command and flag", "[completion]") {
  auto tree = help_tree();
  auto zsh = run_cli({"completion", "zsh"});
  auto fish = run_cli({"completion", "fish"});
  REQUIRE(zsh.code == 0);
  REQUIRE(fish.code == 0);
  CHECK(zsh.out.rfind("#compdef gpuadvisor\n", 0) == 0);
  for (const auto& [path, help] : tree) {
    INFO("command '" << path << "'");
    std::string at = "complete -c gpuadvisor -n '__gpuadvisor_at \\'" + path + "\\''";
    for (const auto& s : help.subcommands) {
      CHECK(zsh.out.find("'" + s + ":") != std::string::npos);
      CHECK(fish.out.find(at + " -a " + s + " -d ") != std::string::npos);
    }
    for (const auto& o : help.options) {
      CHECK(zsh.out.find("'" + o + ":") != std::string::npos);
      std::string flag = o.rfind("--", 0) == 0 ? " -l " + o.substr(2) : " -s " + o.substr(1);
      bool found = false;
      std::istringstream in(fish.out);
      for (std::string line; std::getline(in, line);)
        if (line.rfind(at + " ", 0) == 0 && (line.find(flag + " ") != std::string::npos)) found = true;
      CHECK(found);
    }
  }
}

TEST_CASE("man: the page has every command and flag", "[completion]") {
  auto tree = help_tree();
  auto r = run_cli({"man"});
  REQUIRE(r.code == 0);
  auto roff = [](std::string s) { return std::regex_replace(s, std::regex("-"), "\\-"); };
  for (const auto& [path, help] : tree) {
    INFO("command '" << path << "'");
    if (!path.empty()) CHECK(r.out.find(".SS \\fBgpuadvisor " + roff(path) + "\\fR") != std::string::npos);
    for (const auto& o : help.options) CHECK(r.out.find("\\fB" + roff(o) + "\\fR") != std::string::npos);
  }
  for (const char* section :
       {"NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"})
    CHECK(r.out.find(std::string("\n.SH ") + section + "\n") != std::string::npos);
}

TEST_CASE("man: every environment variable the sources read is documented", "[completion]") {
  auto r = run_cli({"man"});
  REQUIRE(r.code == 0);
  auto env = r.out.substr(r.out.find("\n.SH ENVIRONMENT\n"));
  env = env.substr(0, env.find("\n.SH ", 1));
  // getenv("X") anywhere; env("X") and get("X") in the files that also call getenv (as
  // src/report/output.cpp does through a lookup function).
  static const std::regex getenv_call(R"re(\bgetenv\("([A-Z][A-Z0-9_]+)"\))re");
  static const std::regex lookup_call(R"re(\b(?:getenv|env|get)\("([A-Z][A-Z0-9_]+)"\))re");
  int found = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(gpuadvisor::test::source_path("src"))) {
    if (entry.path().extension() != ".cpp") continue;
    std::ifstream in(entry.path());
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    const auto& re = text.find("getenv(") != std::string::npos ? lookup_call : getenv_call;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
      ++found;
      INFO((*it)[1] << " read in " << entry.path().string());
      CHECK(names_word(env, (*it)[1]));
    }
  }
  CHECK(found >= 3);
}

TEST_CASE("completion: an unknown shell is a usage error", "[completion]") {
  auto r = run_cli({"completion", "tcsh"});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "gpuadvisor: error: completion: unknown shell \"tcsh\" (expected one of: bash, zsh, fish)\n");
}
