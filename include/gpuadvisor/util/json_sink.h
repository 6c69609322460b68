#pragma once
/// One description of a JSON object's members, two ways to make it: into a util::Json
/// (JsonTree), or straight to compact text (JsonText) with no tree in between, for batch runs that
/// write thousands of results. A type writes its members once, to a JsonSink&, and gets both:
///
///   void write(util::JsonSink& o, const Point& p) { o("x", p.x); o("y", p.y); }
///
/// JsonText writes the same bytes as Json::dump() (compact, error_handler_t::replace) of the tree
/// JsonTree builds from the same calls, so a caller may use either (tests/unit/test_json_sink.cpp).
/// Keys must be distinct within an object: a tree keeps the first place of a repeated key, text
/// cannot.
#include <concepts>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gpuadvisor/util/json.h"

namespace gpuadvisor::util {

class JsonSink {
 public:
  using Members = std::function<void(JsonSink&)>;
  using Element = std::function<void(std::size_t, JsonSink&)>;

  virtual ~JsonSink() = default;

  void operator()(std::string_view key, std::string_view v) { put_string(key, v); }
  void operator()(std::string_view key, const std::string& v) { put_string(key, v); }
  void operator()(std::string_view key, const char* v) { put_string(key, v); }
  template <std::integral I>
  void operator()(std::string_view key, I v) {
    if constexpr (std::same_as<I, bool>)
      put_bool(key, v);
    else if constexpr (std::is_signed_v<I>)
      put_int(key, static_cast<long long>(v));
    else
      put_uint(key, static_cast<unsigned long long>(v));
  }
  /// Non-finite numbers are written as null, as Json::dump() does.
  void operator()(std::string_view key, double v) { put_double(key, v); }
  void operator()(std::string_view key, const Json& v) { put_json(key, v); }
  void operator()(std::string_view key, const std::vector<std::string>& v) { put_strings(key, v); }
  void operator()(std::string_view key, std::span<const std::string_view> v) { put_views(key, v); }

  /// A nested object: `members` writes its members to the sink it is given.
  virtual void object(std::string_view key, const Members& members) = 0;
  /// An array of `n` objects: `each(i, sink)` writes the members of the i-th.
  virtual void objects(std::string_view key, std::size_t n, const Element& each) = 0;

 protected:
  virtual void put_string(std::string_view key, std::string_view v) = 0;
  virtual void put_bool(std::string_view key, bool v) = 0;
  virtual void put_int(std::string_view key, long long v) = 0;
  virtual void put_uint(std::string_view key, unsigned long long v) = 0;
  virtual void put_double(std::string_view key, double v) = 0;
  virtual void put_json(std::string_view key, const Json& v) = 0;
  virtual void put_strings(std::string_view key, std::span<const std::string> v) = 0;
  virtual void put_views(std::string_view key, std::span<const std::string_view> v) = 0;
};

/// Members into an object of a util::Json (made an object if it is null).
class JsonTree final : public JsonSink {
 public:
  explicit JsonTree(Json& j) : j_(j) {}
  using JsonSink::operator();
  void object(std::string_view key, const Members& members) override;
  void objects(std::string_view key, std::size_t n, const Element& each) override;

 private:
  void put_string(std::string_view key, std::string_view v) override;
  void put_bool(std::string_view key, bool v) override;
  void put_int(std::string_view key, long long v) override;
  void put_uint(std::string_view key, unsigned long long v) override;
  void put_double(std::string_view key, double v) override;
  void put_json(std::string_view key, const Json& v) override;
  void put_strings(std::string_view key, std::span<const std::string> v) override;
  void put_views(std::string_view key, std::span<const std::string_view> v) override;
  Json& at(std::string_view key);

  Json& j_;
};

/// Members appended to `out` as compact JSON text, "key":value separated by commas, without the
/// object's braces (the caller writes those, and may write members of its own first).
class JsonText final : public JsonSink {
 public:
  /// `first`: no member is in `out` yet (no comma before the first one written).
  explicit JsonText(std::string& out, bool first = true) : out_(out), first_(first) {}
  using JsonSink::operator();
  void object(std::string_view key, const Members& members) override;
  void objects(std::string_view key, std::size_t n, const Element& each) override;

 private:
  void put_string(std::string_view key, std::string_view v) override;
  void put_bool(std::string_view key, bool v) override;
  void put_int(std::string_view key, long long v) override;
  void put_uint(std::string_view key, unsigned long long v) override;
  void put_double(std::string_view key, double v) override;
  void put_json(std::string_view key, const Json& v) override;
  void put_strings(std::string_view key, std::span<const std::string> v) override;
  void put_views(std::string_view key, std::span<const std::string_view> v) override;
  void key(std::string_view k);

  std::string& out_;
  bool first_;
};

/// The members `members` writes, as an object (JsonTree), or as compact text without the braces
/// (JsonText; `reserve` bytes set aside first).
Json json_tree(const JsonSink::Members& members);
std::string json_text(const JsonSink::Members& members, std::size_t reserve = 0);

/// A value as Json::dump() writes it, compact, with invalid UTF-8 replaced (U+FFFD).
void append_json(std::string& out, const Json& v);
void append_json_string(std::string& out, std::string_view s);
void append_json_number(std::string& out, double v);

}  // namespace gpuadvisor::util
