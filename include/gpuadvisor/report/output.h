#pragma once
/// Output formats shared by every command: a Table renders to table/csv/markdown; JSON documents
/// are built with ordered_json and wrapped in the common envelope.
#include <functional>
#include <optional>
#include <ostream>
#include <span>
#include <streambuf>
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

/// Text from input (a GPU name, an id, a path, a note) as every renderer shows it: control bytes
/// (C0 with ESC, BEL, CR, LF and TAB, DEL, and the C1 controls U+0080-U+009F) written as \xNN or
/// \u007f by util::escape_controls, the same as in error lines, so that no name can drive the terminal or
/// break a line. gpuadvisor's own colour sequences (Style::bold ... on a terminal) pass: they carry
/// a mark made afresh by each run, which no input can know. Table cells and headers, key/value
/// lines and HTML text go through it.
std::string safe_text(std::string_view s);

/// Running markdown text (not a table cell): a '<' that does not open an http(s) autolink written
/// as &lt;, so that no HTML tag in a name passes to a viewer. Idempotent: text that went through
/// it, or through a markdown Table, comes out the same.
std::string markdown_text(std::string_view s);

/// What cli::run writes stdout and stderr through: the safe_text rule, keeping newlines, over every
/// byte a command prints, so that text a command formats itself ("Fits on NAME") is held to it
/// too; the marked colour sequences become plain SGR codes here.
class SafeStreambuf : public std::streambuf {
 public:
  /// Holds up to `hold` bytes before writing them on to `dest` (0: writes through at once).
  SafeStreambuf(std::streambuf* dest, std::size_t hold) : dest_(dest), hold_(hold) {}
  SafeStreambuf(const SafeStreambuf&) = delete;
  SafeStreambuf& operator=(const SafeStreambuf&) = delete;
  ~SafeStreambuf() override;
  /// From now on, a line longer than `width` cells is word-wrapped (wrap_prose_line); 0: never.
  /// For the table format, whose tables already fit the width: what is left is running text.
  void wrap_lines(std::size_t width) { wrap_ = width; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void drain(bool final);
  std::streambuf* dest_;
  std::size_t hold_;
  std::string pending_;
  std::size_t wrap_ = 0;
  std::string line_;  ///< with wrap_: the line not yet ended
};

/// A line of running text word-wrapped to `width` cells, the continuation lines hanging under its
/// text: under a list item's text ("  - "), a key/value line's value ("Key     value"), else two
/// spaces in from its own indent. Broken at spaces only: a word longer than the room (a URL) is
/// kept whole on its own line. Lines joined with '\n'; a line that fits is returned as it is, and
/// so is a diagnostic ("FILE:LINE: error: ...", which editors and CI read a line at a time).
std::string wrap_prose_line(std::string_view line, std::size_t width);

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
  /// Headers and cells are kept as safe_text() of what is given: every format shows them so.
  explicit Table(std::vector<Column> columns);
  void add(std::vector<std::string> row);
  bool empty() const { return rows_.empty(); }
  const std::vector<Column>& columns() const { return cols_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }
  /// Renders as an aligned text table, CSV (RFC 4180 quoting; a text cell that starts with = + -
  /// @, tab or CR gets a leading ' so that no spreadsheet reads it as a formula, a number such as
  /// -1.5 stays as it is) or a GitHub markdown table (| escaped, < written &lt; unless it opens an
  /// http(s) autolink, so that no HTML tag passes). A text
  /// table wider than style.width gives way in steps: the widest free-text (left-aligned, not
  /// first) column wraps in place; else it goes on its own lines under each row; else each row
  /// becomes a block of "header  value" lines. CSV and markdown are never cut.
  std::string render(Format f, const Style& style) const;

 private:
  std::vector<Column> cols_;
  std::vector<std::vector<std::string>> rows_;
};

/// A number for a CSV cell: six significant digits, never an exponent (1e+06 reads as text in
/// some spreadsheets); empty when unknown.
std::string csv_number(std::optional<double> v);

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
