#pragma once
// The `--format html` pages whose content is gathered from several layers (docs/html-report.md).
#include <string>
#include <string_view>

#include "context.h"
#include "gpuadvisor/report/html.h"
#include "gpuadvisor/rules/recommend.h"

namespace gpuadvisor::cli {

/// The footer every page ends with: tool, version, command and date (GPUADVISOR_TODAY when set).
std::string html_footer(const Context& ctx, std::string_view command);

/// The recommend page: constraints, a price/speed scatter of the plans with the Pareto front, the
/// ranked table (`plans`, as the text table), the best plan's memory, the rejected and the
/// assumptions; `pareto` is the front's table (shown when it has rows).
std::string recommend_html(Context& ctx, const rules::Request& req, const rules::Recommendation& rec,
                           const report::Table& plans, const report::Table& pareto);

/// The headline of a --serve request: the model, the load and the targets.
std::string serve_headline(const rules::Request& req);

/// A plan's value in its ranking's unit (Recommendation::value_unit): "$16.6", "312".
std::string value_cell(const rules::Candidate& c, const rules::Recommendation& rec);
/// The same in words: "$16.6 per tok/s", "$1.2M for the job (purchase and energy)".
std::string value_words(const rules::Candidate& c, const rules::Recommendation& rec);

}  // namespace gpuadvisor::cli
