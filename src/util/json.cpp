#include "gpuadvisor/util/json.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <system_error>

#include "gpuadvisor/util/text.h"

namespace gpuadvisor::util {
namespace {

std::pair<int, int> line_col(std::string_view text, std::size_t offset) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

// Depth and size checks before handing text to nlohmann, so hostile nesting and hostile counts cost
// one pass over the text and nothing else. The values are counted from above: every '[' or '{'
// and every ',' outside strings starts at most one value (plus the first in each container and
// the top-level one), so a document under the bound never builds more than kMaxJsonValues values.
struct PreScan {
  enum Problem { kNone, kTooDeep, kTooMany } problem = kNone;
  std::size_t at = 0;
};
PreScan pre_scan(std::string_view text) {
  int depth = 0;
  std::size_t values = 1;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return {PreScan::kTooDeep, i};
      values += 2;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',') {
      ++values;
    } else {
      continue;
    }
    if (values > kMaxJsonValues + 1) return {PreScan::kTooMany, i};
  }
  return {};
}

// Walks well-formed JSON text and records the line of every value by JSON pointer, down to
// `max_depth` levels ("/gpus/3" is two): deeper values are walked over without building their
// pointers, which is most of the cost of indexing a catalog when only its records' lines are read.
class LineIndexer {
 public:
  LineIndexer(std::string_view t, std::map<std::string, int>& out, int max_depth)
      : t_(t), out_(out), max_depth_(max_depth) {}
  void run() { value("", 0); }

 private:
  std::string_view t_;
  std::map<std::string, int>& out_;
  int max_depth_;
  std::size_t i_ = 0;
  int line_ = 1;

  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) {
      if (t_[i_] == '\n') ++line_;
      ++i_;
    }
  }
  // A string's text; with keep = false only walked over.
  std::string string(bool keep) {
    std::string s;
    ++i_;  // opening quote
    while (i_ < t_.size() && t_[i_] != '"') {
      if (t_[i_] == '\\' && i_ + 1 < t_.size()) {
        if (keep) s.push_back(t_[i_ + 1]);
        i_ += 2;
        continue;
      }
      if (keep) s.push_back(t_[i_]);
      ++i_;
    }
    ++i_;
    return s;
  }
  static std::string escape(const std::string& key) {
    std::string out;
    for (char c : key) {
      if (c == '~')
        out += "~0";
      else if (c == '/')
        out += "~1";
      else
        out += c;
    }
    return out;
  }
  void scalar() {
    while (i_ < t_.size() && t_[i_] != ',' && t_[i_] != '}' && t_[i_] != ']' && t_[i_] != ' ' && t_[i_] != '\n' &&
           t_[i_] != '\r' && t_[i_] != '\t')
      ++i_;
  }
  // Walks over a value below the recorded depth to its end, counting its lines and nothing else.
  void skip() {
    if (i_ >= t_.size()) return;
    if (t_[i_] == '"') return (void)string(false);
    if (t_[i_] != '{' && t_[i_] != '[') return scalar();
    int nest = 0;
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '"') {
        string(false);
        continue;
      }
      ++i_;
      if (c == '{' || c == '[')
        ++nest;
      else if ((c == '}' || c == ']') && --nest == 0)
        return;
      else if (c == '\n')
        ++line_;
    }
  }
  void value(const std::string& ptr, int depth, int key_line = 0) {
    ws();
    const bool record = depth <= max_depth_, deeper = depth + 1 <= max_depth_;
    if (!record) return skip();
    out_[ptr] = key_line ? key_line : line_;
    if (i_ >= t_.size()) return;
    char c = t_[i_];
    if (c == '{') {
      ++i_;
      ws();
      if (i_ < t_.size() && t_[i_] == '}') {
        ++i_;
        return;
      }
      while (i_ < t_.size()) {
        ws();
        int kl = line_;
        std::string key = string(deeper);
        ws();
        ++i_;  // ':'
        value(deeper ? ptr + "/" + escape(key) : std::string(), depth + 1, kl);
        ws();
        if (i_ < t_.size() && t_[i_] == ',') {
          ++i_;
          continue;
        }
        ++i_;  // '}'
        return;
      }
    } else if (c == '[') {
      ++i_;
      ws();
      if (i_ < t_.size() && t_[i_] == ']') {
        ++i_;
        return;
      }
      for (int n = 0; i_ < t_.size(); ++n) {
        value(deeper ? ptr + "/" + std::to_string(n) : std::string(), depth + 1);
        ws();
        if (i_ < t_.size() && t_[i_] == ',') {
          ++i_;
          continue;
        }
        ++i_;  // ']'
        return;
      }
    } else if (c == '"') {
      string(false);
    } else {
      scalar();
    }
  }
};

}  // namespace

std::string os_error(int err) {
  std::string s = std::generic_category().message(err);
  if (!s.empty() && s[0] >= 'A' && s[0] <= 'Z' && (s.size() < 2 || !(s[1] >= 'A' && s[1] <= 'Z')))
    s[0] = static_cast<char>(s[0] - 'A' + 'a');
  return s;
}

Result<std::string> read_file(const std::string& path) {
  std::string data;
  if (path == "-") {
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) {
      data.append(buf, n);
      if (data.size() > kMaxInputBytes)
        return Result<std::string>::fail(fmt::format("<stdin>: input larger than {} MiB", kMaxInputBytes >> 20));
    }
    return data;
  }
  // Opened without blocking, so a named pipe with no writer cannot hang the open (nor the read:
  // pipes, sockets and devices are read with a timeout below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Result<std::string>::fail(fmt::format("{}: cannot open file: {}", path, os_error(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return Result<std::string>::fail(fmt::format("{}: cannot read file: {}", path, os_error(errno)));
  if (S_ISDIR(st.st_mode)) return Result<std::string>::fail(fmt::format("{}: is a directory, expected a file", path));
  const bool regular = S_ISREG(st.st_mode);
  if (regular && st.st_size > 0 && static_cast<std::uint64_t>(st.st_size) > kMaxInputBytes)
    return Result<std::string>::fail(fmt::format("{}: file larger than {} MiB", path, kMaxInputBytes >> 20));
  // Read in chunks with a cap: devices and pipes report no size (/dev/zero never ends).
  char buf[65536];
  for (;;) {
    if (!regular) {
      pollfd p{fd, POLLIN, 0};
      int ready = ::poll(&p, 1, kPipeTimeoutSeconds * 1000);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0)
        return Result<std::string>::fail(fmt::format(
            "{}: nothing to read for {} s ({}); a slow command can be piped to standard input ('-') instead", path,
            kPipeTimeoutSeconds, S_ISFIFO(st.st_mode) ? "a pipe with no writer?" : "not a regular file"));
    }
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return Result<std::string>::fail(fmt::format("{}: cannot read file: {}", path, os_error(errno)));
    }
    data.append(buf, static_cast<std::size_t>(n));
    if (data.size() > kMaxInputBytes)
      return Result<std::string>::fail(fmt::format("{}: file larger than {} MiB", path, kMaxInputBytes >> 20));
  }
  return data;
}

Result<JsonDoc> JsonDoc::parse(std::string text, std::string origin) {
  if (trim(text).empty()) return Result<JsonDoc>::fail(fmt::format("{}: empty file, expected JSON", origin));
  if (auto scan = pre_scan(text); scan.problem != PreScan::kNone) {
    auto [l, c] = line_col(text, scan.at);
    if (scan.problem == PreScan::kTooDeep)
      return Result<JsonDoc>::fail(
          fmt::format("{}:{}:{}: JSON nested deeper than {} levels", origin, l, c, kMaxJsonDepth));
    return Result<JsonDoc>::fail(fmt::format(
        "{}:{}:{}: JSON with more than {} values (objects, arrays, strings, numbers)", origin, l, c, kMaxJsonValues));
  }
  JsonDoc doc;
  doc.origin_ = std::move(origin);
  try {
    doc.root_ = std::make_shared<const Json>(Json::parse(text));
  } catch (const nlohmann::json::parse_error& e) {
    auto [l, c] = line_col(text, e.byte > 0 ? e.byte - 1 : 0);
    // nlohmann's message reads "[json.exception.parse_error.101] parse error at line 1, column 2:
    // syntax error while parsing value - invalid literal; last read: 'x'"; keep the part after
    // the position.
    std::string what = e.what();
    auto pos = what.find(": ", what.find("parse error"));
    what = pos == std::string::npos ? what : what.substr(pos + 2);
    std::string q = quote(what, 200);
    return Result<JsonDoc>::fail(
        fmt::format("{}:{}:{}: malformed JSON: {}", doc.origin_, l, c, q.substr(1, q.size() - 2)));
  } catch (const nlohmann::json::exception& e) {
    // Numbers beyond double range ("1e400") and the like: no position is reported for them.
    std::string what = e.what();
    auto pos = what.find("] ");
    std::string q = quote(pos == std::string::npos ? what : what.substr(pos + 2), 200);
    return Result<JsonDoc>::fail(fmt::format("{}: invalid JSON: {}", doc.origin_, q.substr(1, q.size() - 2)));
  }
  doc.text_ = std::make_shared<const std::string>(std::move(text));
  return doc;
}

Result<JsonDoc> JsonDoc::load(const std::string& path) {
  auto text = read_file(path);
  if (!text) return Result<JsonDoc>::fail(text.error());
  return parse(std::move(text).value(), path == "-" ? "<stdin>" : path);
}

int JsonDoc::line_of(const std::string& pointer) const {
  if (!text_) return 0;
  // One-line documents (JSON Lines): every value is on line 1. Looked at once, not per call (a
  // one-line catalog of 20,000 records asks 20,000 times).
  if (one_line_ < 0) one_line_ = text_->find('\n') == std::string::npos ? 1 : 0;
  if (one_line_ == 1) return 1;
  // Loading a catalog asks for the line of every record ("/gpus/3"), an error for one deep field:
  // a shallow index serves the first, the full one is built only when a deeper line is asked for.
  constexpr int kShallow = 2;
  const bool shallow = std::count(pointer.begin(), pointer.end(), '/') <= kShallow;
  auto& index = shallow ? shallow_lines_ : lines_;
  if (!index) {
    index = std::make_shared<std::map<std::string, int>>();
    LineIndexer(*text_, *index, shallow ? kShallow : std::numeric_limits<int>::max()).run();
  }
  auto it = index->find(pointer);
  return it == index->end() ? 0 : it->second;
}

std::string JsonDoc::where(const std::string& pointer) const {
  int l = line_of(pointer);
  return l ? fmt::format("{}:{}", origin_, l) : origin_;
}

Json json_number(double v) {
  if (std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 9007199254740992.0) return static_cast<std::int64_t>(v);
  return v;
}

Json json_bytes(double v) { return std::isfinite(v) ? json_number(std::round(v)) : Json(nullptr); }

std::string json_snippet(const Json& v) {
  std::string s = v.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

Fields::Fields(const JsonDoc& doc, const Json& obj, std::string pointer, std::string label)
    : doc_(doc), obj_(obj), pointer_(std::move(pointer)), label_(std::move(label)) {
  if (!obj_.is_object())
    throw Error(fmt::format("{}: {}expected an object, got {}", doc_.where(pointer_),
                            label_.empty() ? "" : label_ + ": ", json_snippet(obj_)));
}

void Fields::fail(const std::string& key, const std::string& what) const {
  std::string p = pointer(key);
  std::string at = doc_.line_of(p) ? doc_.where(p) : doc_.where(pointer_);
  // Keys come from the input: quoted so that the message stays on one line.
  std::string k = quote(key);
  throw Error(
      fmt::format("{}: {}field '{}': {}", at, label_.empty() ? "" : label_ + ": ", k.substr(1, k.size() - 2), what));
}

bool Fields::has(const std::string& key) const {
  auto it = obj_.find(key);
  return it != obj_.end() && !it->is_null();
}

const Json& Fields::raw(const std::string& key) const {
  auto it = obj_.find(key);
  if (it == obj_.end()) fail(key, "missing");
  return *it;
}

std::string Fields::str(const std::string& key) const {
  const Json& v = raw(key);
  if (!v.is_string()) fail(key, "expected a string, got " + json_snippet(v));
  return v.get<std::string>();
}

std::optional<std::string> Fields::opt_str(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return str(key);
}

double Fields::num(const std::string& key) const {
  const Json& v = raw(key);
  if (!v.is_number()) fail(key, "expected a number, got " + json_snippet(v));
  double d = v.get<double>();
  if (!std::isfinite(d)) fail(key, "expected a finite number, got " + json_snippet(v));
  return d;
}

std::optional<double> Fields::opt_num(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return num(key);
}

std::int64_t Fields::integer(const std::string& key, std::int64_t lo, std::int64_t hi) const {
  const Json& v = raw(key);
  std::int64_t out = 0;
  if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi))
      fail(key, fmt::format("expected a whole number from {} to {}, got {}", lo, hi, json_snippet(v)));
    out = static_cast<std::int64_t>(u);
  } else if (v.is_number_integer()) {
    out = v.get<std::int64_t>();
  } else if (v.is_number_float() && std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>() &&
             std::fabs(v.get<double>()) < 9e18) {
    out = static_cast<std::int64_t>(v.get<double>());
  } else {
    fail(key, "expected a whole number, got " + json_snippet(v));
  }
  if (out < lo || out > hi)
    fail(key, fmt::format("expected a whole number from {} to {}, got {}", lo, hi, json_snippet(v)));
  return out;
}

std::optional<std::int64_t> Fields::opt_integer(const std::string& key, std::int64_t lo, std::int64_t hi) const {
  if (!has(key)) return std::nullopt;
  return integer(key, lo, hi);
}

bool Fields::boolean(const std::string& key) const {
  const Json& v = raw(key);
  if (!v.is_boolean()) fail(key, "expected true or false, got " + json_snippet(v));
  return v.get<bool>();
}

std::optional<bool> Fields::opt_bool(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return boolean(key);
}

}  // namespace gpuadvisor::util
