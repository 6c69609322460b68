#pragma once
/// Reading JSON that people write by hand: size and depth limits, errors that name the file, the
/// line and the field, and typed field access that never silently accepts a wrong type.
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "gpuadvisor/util/error.h"
#include "gpuadvisor/util/json_map.h"
#include "gpuadvisor/util/names.h"

namespace gpuadvisor::util {

/// JSON values with objects in insertion order and hashed key look-up (util/json_map.h).
using Json = nlohmann::basic_json<IndexedMap>;

/// Largest input file read, in bytes (docs/fuzzing.md lists every limit).
inline constexpr std::size_t kMaxInputBytes = 64u << 20;
/// Deepest JSON nesting accepted.
inline constexpr int kMaxJsonDepth = 64;
/// Most values (objects, arrays, strings, numbers, literals) in one JSON document: bounds the
/// memory a parse can take (a value costs 16 bytes and an empty object or array 60-80 more), so
/// that 60 MB of `[{},{},...]` is refused up front instead of costing gigabytes.
inline constexpr std::size_t kMaxJsonValues = 2'000'000;

/// Seconds a pipe, socket or device named as a file may stay silent before read_file gives up (a
/// named pipe with no writer would otherwise block for ever).
inline constexpr int kPipeTimeoutSeconds = 4;

/// Reads a whole file ("-" is standard input) up to kMaxInputBytes. Directories are refused;
/// anything not a regular file is read with kPipeTimeoutSeconds of silence at most; errors name
/// the reason ("permission denied", "too many levels of symbolic links").
Result<std::string> read_file(const std::string& path);

/// The system's text for an errno value, in lower case ("no such file or directory").
std::string os_error(int err);

/// A parsed JSON document that remembers where each value came from.
class JsonDoc {
 public:
  /// Parses `text`; on failure the message is "<origin>:<line>:<col>: <what>".
  static Result<JsonDoc> parse(std::string text, std::string origin);
  static Result<JsonDoc> load(const std::string& path);

  const Json& root() const { return *root_; }
  const std::string& origin() const { return origin_; }
  /// Line (1-based) of the value at a JSON pointer ("/gpus/3/memory_bytes"); for an object member
  /// the line of its key; 0 when unknown.
  int line_of(const std::string& pointer) const;
  /// "<origin>:<line>" for a pointer, or "<origin>" when the line is unknown.
  std::string where(const std::string& pointer) const;

 private:
  std::string origin_;
  std::shared_ptr<const std::string> text_;
  std::shared_ptr<const Json> root_;
  mutable std::shared_ptr<std::map<std::string, int>> lines_;          ///< every value's line
  mutable std::shared_ptr<std::map<std::string, int>> shallow_lines_;  ///< two levels deep
  mutable int one_line_ = -1;  ///< whether the text has no line break: -1 not yet looked at, 0 no, 1 yes
};

/// Typed access to the members of one JSON object, with messages naming the file, line and field.
/// Every getter throws gpuadvisor::Error (exit 2) on a wrong type or value.
class Fields {
 public:
  Fields(const JsonDoc& doc, const Json& obj, std::string pointer, std::string label);

  bool has(const std::string& key) const;  ///< present and not null
  std::string str(const std::string& key) const;
  std::optional<std::string> opt_str(const std::string& key) const;
  double num(const std::string& key) const;  ///< finite number
  std::optional<double> opt_num(const std::string& key) const;
  /// Whole number within [lo, hi].
  std::int64_t integer(const std::string& key, std::int64_t lo, std::int64_t hi) const;
  std::optional<std::int64_t> opt_integer(const std::string& key, std::int64_t lo, std::int64_t hi) const;
  bool boolean(const std::string& key) const;
  std::optional<bool> opt_bool(const std::string& key) const;
  const Json& raw(const std::string& key) const;
  /// One of an enum's names (util/names.h), parsed into the enum; else the error names them all.
  template <class E, std::size_t N>
  E enumerated(const std::string& key, const Names<E, N>& names) const {
    const std::string v = str(key);
    if (auto e = names.parse(v)) return *e;
    fail(key, names.expected(v));
  }
  /// The same for a key that may be absent or null.
  template <class E, std::size_t N>
  std::optional<E> opt_enumerated(const std::string& key, const Names<E, N>& names) const {
    if (!has(key)) return std::nullopt;
    return enumerated(key, names);
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  std::string pointer(const std::string& key) const { return pointer_ + "/" + key; }
  const JsonDoc& doc() const { return doc_; }
  const Json& object() const { return obj_; }

 private:
  const JsonDoc& doc_;
  const Json& obj_;
  std::string pointer_;
  std::string label_;
};

/// A number for JSON output: whole values (within 2^53) as integers, others as doubles.
Json json_number(double v);
/// A byte count for JSON output: rounded to a whole number of bytes.
Json json_bytes(double v);

/// A short rendering of a JSON value for error messages.
std::string json_snippet(const Json& v);

}  // namespace gpuadvisor::util
