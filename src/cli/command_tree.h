#pragma once
// The command tree as data, read from the CLI11 App that cli::run() builds: commands, their
// options and positionals, and what each value completes to. The shell completions and the man
// page are generated from it, so they list exactly the commands and flags the binary parses.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "context.h"

namespace gpuadvisor::cli {

/// What the value of an option or positional completes to.
enum class ValueKind {
  none,   ///< a flag: takes no value
  any,    ///< free text or a number: nothing to offer
  words,  ///< one of `words`
  file,   ///< a path
  gpu,    ///< a GPU id (`catalog list --ids`)
  model,  ///< a model preset id (`models list --ids`)
  rule,   ///< a rule id (`rules list --ids`)
};

struct OptionInfo {
  std::vector<std::string> names;  ///< "-h", "--help"; a positional has its one name without dashes
  std::string type_name;           ///< "FILE", "TEXT", ... (empty for a flag)
  std::string description;
  std::string group;  ///< "Options", "Workload", ...
  bool positional = false;
  bool required = false;
  bool repeatable = false;  ///< takes several values (positionals) or may be given again
  ValueKind kind = ValueKind::none;
  std::vector<std::string> words;  ///< for ValueKind::words
};

struct CommandInfo {
  std::string name;  ///< "list"
  std::string path;  ///< "catalog list"; "" for the program itself
  std::string description;
  std::string footer;  ///< examples and exit status, as in --help
  std::vector<OptionInfo> options;
  std::vector<OptionInfo> positionals;
  std::vector<CommandInfo> subcommands;
};

/// Walks `app` (the program's root App, after every command's setup) into plain data.
CommandInfo command_tree(const CLI::App& app);

/// Every command in the tree, depth first, the root included.
std::vector<const CommandInfo*> flatten(const CommandInfo& root);

// Commands that print what is generated from the tree (cmd_completion.cpp, cmd_man.cpp).
void setup_completion(CLI::App& app, Context& ctx);
void setup_man(CLI::App& app, Context& ctx);

}  // namespace gpuadvisor::cli
