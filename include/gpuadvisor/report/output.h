#pragma once
/// Output formats shared by every command: a Table renders to table/csv/markdown; JSON documents
/// are built with ordered_json and wrapped in the common envelope.
#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/util/error.h"
#include "gpuadvisor/util/json.h"

namespace gpuadvisor::report {

enum class Format { table, json, csv, markdown, junit, sarif, text, html };
std::string_view name(Format f);
/// Parses a --format value among `allowed`; the error lists them.
Result<Format> parse_format(std::string_view s, std::span<const Format> allowed);

/// How to draw for this terminal (docs/terminal-output.md): colour only on a TTY without NO_COLOR;
/// width from COLUMNS, else the terminal's own on a TTY, else 100; Unicode unless the locale
/// (LC_ALL, then LC_CTYPE, then LANG) is not UTF-8 or GPUADVISOR_ASCII is set.
struct Style {
  bool color = false;
  bool unicode = true;
  int width = 100;
  /// Whether tables give way to `width` (Table::render): when the width was given (COLUMNS) or
  /// measured (a terminal); not for output piped on without COLUMNS, which stays one row a line.
  bool reflow = true;
  static Style detect();
  /// The same decision from explicit inputs: `env` looks a variable up (nullptr when unset),
  /// `tty` says whether stdout is a terminal and `tty_columns` its width (0 when unknown).
  static Style detect(const std::function<const char*(const char*)>& env, bool tty, int tty_columns);
  std::string bold(std::string_view s) const;
  std::string dim(std::string_view s) const;
  std::string good(std::string_view s) const;
  std::string bad(std::string_view s) const;
  /// `u` in Unicode mode, `a` in ASCII mode (for symbols the tool itself prints).
  std::string_view sym(std::string_view u, std::string_view a) const { return unicode ? u : a; }
  /// The text as this terminal can show it: unchanged in Unicode mode, else ascii(s).
  std::string text(std::string_view s) const;
};

/// ASCII stand-ins for the Unicode a table may hold: x for the multiplication sign, >= <= -- ...
/// -> for the usual symbols, + - | for box drawing, # for block elements, '?' for anything else.
std::string ascii(std::string_view s);
/// Display width of UTF-8 text: code points, ANSI colour sequences not counted.
std::size_t display_width(std::string_view s);
/// Cuts `s` to at most `width` cells, ending in an ellipsis ("..." in ASCII) when cut.
std::string truncate(std::string_view s, std::size_t width, const Style& style);
/// Word-wraps `s` into lines of at most `width` cells; a word longer than a line is cut with an
/// ellipsis. Always at least one line.
std::vector<std::string> wrap(std::string_view s, std::size_t width, const Style& style);

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
  const std::vector<Column>& columns() const { return cols_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }
  /// Renders as an aligned text table, CSV (RFC 4180 quoting) or a GitHub markdown table. A text
  /// table wider than style.width (with style.reflow) gives way in steps: the widest free-text (left-aligned, not
  /// first) column wraps in place; else it goes on its own lines under each row; else each row
  /// becomes a block of "header  value" lines. CSV and markdown are never cut.
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
/// Cells of the bars in tables (memory shares, compare value metrics), so that they line up.
inline constexpr int kBarWidth = 20;

}  // namespace gpuadvisor::report
