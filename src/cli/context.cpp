#include "context.h"

#include <chrono>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

#include "gpuadvisor/util/text.h"

namespace gpuadvisor::cli {

const catalog::Catalog& Context::catalog() {
  if (!catalog_) {
    std::vector<std::string> files;
    if (const char* env = std::getenv("GPUADVISOR_CATALOG"); env && *env)
      for (auto& f : util::split(env, ':'))
        if (!f.empty()) files.push_back(f);
    files.insert(files.end(), catalog_files.begin(), catalog_files.end());
    catalog_ = catalog::Catalog::load(files);
  }
  return *catalog_;
}

report::Format Context::output_format(std::span<const report::Format> allowed) const {
  auto f = report::parse_format(format, allowed);
  if (!f) throw Error(f.error());
  return *f;
}

std::string Context::today() const {
  if (const char* t = std::getenv("GPUADVISOR_TODAY"); t && *t) return t;
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  return fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

void add_format_option(CLI::App& app, Context& ctx) {
  app.add_option("--format", ctx.format, "Output format: table, json, csv or markdown")->type_name("FORMAT");
}

void add_catalog_option(CLI::App& app, Context& ctx) {
  app.add_option("--catalog", ctx.catalog_files,
                 "Extra GPU catalog file (JSON, as data/gpus.json); adds or replaces GPUs by id; repeatable")
      ->type_name("FILE");
}

}  // namespace gpuadvisor::cli
