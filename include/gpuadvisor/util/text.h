#pragma once
/// Text helpers: case folding, edit distance and "did you mean" suggestions, joining.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuadvisor::util {

std::string lower(std::string_view s);
std::string trim(std::string_view s);
/// Lower-case with every character that is not a letter or digit removed: "RTX 4090" -> "rtx4090".
std::string squash(std::string_view s);
/// squash(s) == squashed, without making squash(s): for look-ups that compare one query with
/// every id, name and alias of a catalog.
bool squashes_to(std::string_view s, std::string_view squashed);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::vector<std::string> split(std::string_view s, char sep);
std::string join(std::span<const std::string> parts, std::string_view sep);
std::string join(std::span<const std::string_view> parts, std::string_view sep);
/// A list in words: "a", "a and b", "a, b and c" (`last` is "and" or "or").
std::string join_list(std::span<const std::string> parts, std::string_view last);

/// Edit distance: insertions, deletions, substitutions and adjacent transpositions cost 1.
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The closest candidate to `word` when it is close enough to be a plausible typo.
std::optional<std::string> closest(std::string_view word, std::span<const std::string> candidates);
/// ", did you mean 'x'?" or "" when nothing is close.
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

/// Quote a user-provided value for an error message, escaping control and non-ASCII bytes so the
/// message stays on one line.
std::string quote(std::string_view s, std::size_t max_len = 60);

/// Whether `u` is a control byte: C0 (0x00-0x1f, ESC, BEL, CR, LF, TAB ...) or DEL (0x7f).
constexpr bool is_control(unsigned char u) { return u < 0x20 || u == 0x7f; }
/// Whether `s` holds a control byte, or a C1 control (U+0080-U+009F) in UTF-8.
bool has_control(std::string_view s);
/// Appends byte `u` as \xNN (two lower-case hex digits): how every output shows a C0 control byte.
void append_escaped(std::string& out, unsigned char u);
/// Appends `s` with each C0 control byte written as \xNN, and DEL and the C1 controls in UTF-8
/// (U+0080-U+009F: 0xC2 0x80-0x9F) as \u007f ... \u009f (their JSON escape: a JSON string may hold
/// them raw, so JSON output stays valid); bytes listed in `keep` pass. Everything else is
/// unchanged, other UTF-8 included: "\x1b[2J" comes out as the seven characters \x1b[2J.
void append_escaped(std::string& out, std::string_view s, std::string_view keep = {});
/// append_escaped() into a new string.
std::string escape_controls(std::string_view s, std::string_view keep = {});

/// The lines of a text in order, without their "\n" (or "\r\n"), numbered from 1: the readers of
/// line-oriented inputs (nvidia-smi CSV, kernel logs, JSON Lines) name the line of a problem.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  /// The next line into `line`; false at the end of the text.
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    std::size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    ++number_;
    return true;
  }
  /// The number of the line `next` gave last.
  int number() const { return number_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  int number_ = 0;
};

}  // namespace gpuadvisor::util
