#pragma once
/// Output formats shared by every command: a Table renders to table/csv/markdown; JSON documents
/// are built with ordered_json and wrapped in the common envelope.
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/util/error.h"
#include "gpuadvisor/util/json.h"

namespace gpuadvisor::report {

enum class Format { table, json, csv, markdown, junit, sarif, text };
std::string_view name(Format f);
/// Parses a --format value among `allowed`; the error lists them.
Result<Format> parse_format(std::string_view s, std::span<const Format> allowed);

/// How to draw for this terminal: colour only on a TTY without NO_COLOR; width from COLUMNS.
struct Style {
  bool color = false;
  bool unicode = true;
  int width = 100;
  static Style detect();
  std::string bold(std::string_view s) const;
  std::string dim(std::string_view s) const;
  std::string good(std::string_view s) const;
  std::string bad(std::string_view s) const;
};

enum class Align { left, right };

struct Column {
  std::string header;
  Align align = Align::left;
};

class Table {
 public:
  explicit Table(std::vector<Column> columns) : cols_(std::move(columns)) {}
  void add(std::vector<std::string> row);
  bool empty() const { return rows_.empty(); }
  /// Renders as an aligned text table, CSV (RFC 4180 quoting) or a GitHub markdown table.
  std::string render(Format f, const Style& style) const;

 private:
  std::vector<Column> cols_;
  std::vector<std::vector<std::string>> rows_;
};

/// Key/value lines ("Memory       24 GiB") for `show`-style output.
std::string key_values(const std::vector<std::pair<std::string, std::string>>& kv, const Style& style);
/// Key/value pairs in a format: aligned lines for `table`, a two-column field/value table for csv
/// and markdown.
std::string key_values(const std::vector<std::pair<std::string, std::string>>& kv, Format f, const Style& style);

/// The common JSON envelope: schema_version, gpuadvisor_version, command.
util::Json envelope(std::string_view command);
/// Dumps JSON (2-space indent, UTF-8 errors replaced) with a trailing newline.
std::string dump(const util::Json& j);

/// A horizontal bar of `fraction` (0..1) of `width` cells: Unicode blocks, or '#' in ASCII.
std::string bar(double fraction, int width, const Style& style);

}  // namespace gpuadvisor::report
