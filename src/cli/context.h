#pragma once
// State shared by the subcommands of one invocation: streams, common options, lazily loaded data.
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/efficiency.h"
#include "gpuadvisor/catalog/gpu.h"
#include "gpuadvisor/catalog/model.h"
#include "gpuadvisor/catalog/prices.h"
#include "gpuadvisor/catalog/quotes.h"
#include "gpuadvisor/estimate/workload.h"
#include "gpuadvisor/report/output.h"
#include "gpuadvisor/util/error.h"

namespace gpuadvisor::cli {

struct Context {
  Context(std::ostream& o, std::ostream& e) : out(o), err(e), style(report::Style::detect()) {}
  std::ostream& out;
  std::ostream& err;
  report::Style style;

  // Common options (every command has --format; data overrides where they matter).
  std::string format;  ///< empty: the command's first declared format
  std::vector<std::string> catalog_files;
  std::vector<std::string> model_files;
  std::vector<std::string> price_files;
  std::vector<std::string> quote_files;  ///< --quotes: the buyer's own prices for this run
  std::vector<std::string> rule_files;

  Exit exit = Exit::ok;

  /// The merged GPU catalog (embedded + GPUADVISOR_CATALOG + --catalog files), loaded once.
  const catalog::Catalog& catalog();
  /// The model presets (embedded + --models files), loaded once.
  const catalog::ModelSet& models();
  /// The published factors, with a user's calibration (--calibration, GPUADVISOR_CALIBRATION)
  /// scoped to the GPUs and engines it measured; loaded once.
  const catalog::Efficiency& efficiency() const;
  std::string calibration_file;  ///< --calibration
  /// Cloud prices, servers and energy defaults (embedded + --prices files), loaded once.
  const catalog::Prices& prices();
  /// Resolves a GPU name or throws Error (exit 2) with the suggestion. Names resolved once are
  /// remembered: batch files name the same few GPUs on thousands of lines.
  const catalog::Gpu& gpu(const std::string& query);
  /// Where a loose --gpu name chose one of several records (catalog::Catalog::also_matching): a
  /// line saying which and naming the others; empty otherwise.
  std::string gpu_choice(const std::string& query);
  /// Builds the workload from flags and --profile (flags win).
  estimate::Workload workload(const estimate::WorkloadInput& in, estimate::WorkloadSet* set = nullptr);
  /// The formats the command being run declared (add_format_option); the first is the default.
  std::span<const report::Format> formats;
  /// --format checked against the command's declared formats. The table format also turns on
  /// the wrapping of running text at the terminal width (report::SafeStreambuf::wrap_lines).
  report::Format output_format() const;
  /// "YYYY-MM-DD" today, or GPUADVISOR_TODAY when set (for reproducible outputs).
  std::string today() const;

 private:
  std::optional<catalog::Catalog> catalog_;
  std::optional<catalog::ModelSet> models_;
  std::optional<catalog::Prices> prices_;
  mutable std::optional<catalog::Efficiency> efficiency_;
  std::vector<catalog::Quote> quotes_;
  std::map<std::string, const catalog::Gpu*, std::less<>> resolved_gpus_;
};

/// The formats most commands take.
inline constexpr report::Format kTabular[] = {report::Format::table, report::Format::json, report::Format::csv,
                                              report::Format::markdown};
/// The tabular formats and a self-contained HTML page (recommend, compare, memory, cost).
inline constexpr report::Format kTabularHtml[] = {report::Format::table, report::Format::json, report::Format::csv,
                                                  report::Format::markdown, report::Format::html};

/// Declares a subcommand's formats, the one list that its --format help, shell completion (read
/// from that help), the check of the value (Context::output_format) and `gpuadvisor man` come
/// from; `note` follows the list in the help ("(a page with charts)"). The first is the default.
void add_format_option(CLI::App& app, Context& ctx, std::span<const report::Format> formats,
                       std::string_view note = "");
/// The same for a command that keeps its --format value itself (check): the option's help text.
std::string format_help(std::span<const report::Format> formats, std::string_view note);
/// Adds --catalog FILE (repeatable).
void add_catalog_option(CLI::App& app, Context& ctx);

/// A batch line's result: a JSON object, or its members already written as compact text
/// (util::JsonText, no braces), which saves building a tree only to print it.
struct BatchResult {
  util::Json json;
  std::optional<std::string> members;                ///< set: the result is this text, not `json`
  BatchResult(util::Json j) : json(std::move(j)) {}  // NOLINT(google-explicit-constructor): lets `one` return JSON
  static BatchResult text(std::string members) {
    BatchResult r{util::Json()};
    r.members = std::move(members);
    return r;
  }
};

/// Batch mode (--batch-file FILE|-): one JSON object per line, holding workload fields (as in a
/// --profile) and the command's own keys (`own`); `one` computes the result of a line.
/// Prints one compact JSON object per line, {"line": N, ...result}; a bad line prints
/// {"line": N, "error": "..."} and the run goes on. ctx.exit becomes the worst line's exit code.
using BatchFn = std::function<BatchResult(const estimate::WorkloadInput& in, const util::Fields& line, Exit& code)>;
void run_batch(Context& ctx, const std::string& path, const estimate::WorkloadInput& flags,
               const std::vector<std::string>& own, const BatchFn& one);
/// The same for lines that are not workloads (check's specs): `one` gets each line's document.
using BatchLineFn = std::function<BatchResult(const util::JsonDoc& line, Exit& code)>;
void run_batch_lines(Context& ctx, const std::string& path, const BatchLineFn& one);

/// One line describing a workload: "Llama 3.1 8B (8.03B params), qlora, nf4, batch 4, sequence 2048".
std::string describe(const estimate::Workload& w);
/// Adds --prices FILE (repeatable).
void add_prices_option(CLI::App& app, Context& ctx);

/// Adds the shared workload flags (--model, --task, --precision, ...; docs/workload.md).
void add_workload_options(CLI::App& app, estimate::WorkloadInput& in, Context& ctx);

// One setup function per subcommand (src/cli/cmd_<name>.cpp).
void setup_recommend(CLI::App& app, Context& ctx);
void setup_memory(CLI::App& app, Context& ctx);
void setup_estimate(CLI::App& app, Context& ctx);
void setup_cost(CLI::App& app, Context& ctx);
void setup_compare(CLI::App& app, Context& ctx);
void setup_fit(CLI::App& app, Context& ctx);
void setup_catalog(CLI::App& app, Context& ctx);
void setup_models(CLI::App& app, Context& ctx);
void setup_check(CLI::App& app, Context& ctx);
void setup_rules(CLI::App& app, Context& ctx);
void setup_compat(CLI::App& app, Context& ctx);
void setup_diagnose(CLI::App& app, Context& ctx);
void setup_inspect(CLI::App& app, Context& ctx);
void setup_calibrate(CLI::App& app, Context& ctx);

}  // namespace gpuadvisor::cli
