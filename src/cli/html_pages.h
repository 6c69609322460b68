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

}  // namespace gpuadvisor::cli
