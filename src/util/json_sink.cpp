#include "gpuadvisor/util/json_sink.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace gpuadvisor::util {

// ---- JsonTree ----

Json& JsonTree::at(std::string_view key) { return j_[std::string(key)]; }

void JsonTree::object(std::string_view key, const Members& members) {
  Json sub = Json::object();
  JsonTree t(sub);
  members(t);
  at(key) = std::move(sub);
}

void JsonTree::objects(std::string_view key, std::size_t n, const Element& each) {
  Json arr = Json::array();
  for (std::size_t i = 0; i < n; ++i) {
    Json x = Json::object();
    JsonTree t(x);
    each(i, t);
    arr.push_back(std::move(x));
  }
  at(key) = std::move(arr);
}

void JsonTree::put_string(std::string_view key, std::string_view v) { at(key) = std::string(v); }
void JsonTree::put_bool(std::string_view key, bool v) { at(key) = v; }
void JsonTree::put_int(std::string_view key, long long v) { at(key) = static_cast<std::int64_t>(v); }
void JsonTree::put_uint(std::string_view key, unsigned long long v) { at(key) = static_cast<std::uint64_t>(v); }
void JsonTree::put_double(std::string_view key, double v) { at(key) = v; }
void JsonTree::put_json(std::string_view key, const Json& v) { at(key) = v; }
void JsonTree::put_strings(std::string_view key, std::span<const std::string> v) {
  at(key) = Json(std::vector<std::string>(v.begin(), v.end()));
}
void JsonTree::put_views(std::string_view key, std::span<const std::string_view> v) {
  Json arr = Json::array();
  for (auto s : v) arr.push_back(std::string(s));
  at(key) = std::move(arr);
}

Json json_tree(const JsonSink::Members& members) {
  Json j = Json::object();
  JsonTree t(j);
  members(t);
  return j;
}

// ---- JsonText ----

std::string json_text(const JsonSink::Members& members, std::size_t reserve) {
  std::string out;
  out.reserve(reserve);
  JsonText t(out);
  members(t);
  return out;
}

namespace {

// Bytes written as they are inside a JSON string: printable ASCII but the quote and the backslash.
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x7f; ++c) t[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
  return t;
}();

template <class I>
void append_integer(std::string& out, I v) {
  const fmt::format_int f(v);
  out.append(f.data(), f.size());
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  // Plain text is copied; anything else (escapes, control characters, UTF-8, invalid bytes) goes
  // through nlohmann's own escaping.
  bool plain = true;
  for (char c : s) plain &= kPlain[static_cast<unsigned char>(c)];
  if (plain) {
    out.reserve(out.size() + s.size() + 2);
    out += '"';
    out.append(s);
    out += '"';
    return;
  }
  out += Json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void append_json_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  // The shortest text that reads back as v, with ".0" on whole numbers: what dump() writes.
  std::array<char, 64> buf;
  char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), v);
  out.append(buf.data(), end);
}

void append_json(std::string& out, const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      out += "null";
      return;
    case Json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::number_integer:
      append_integer(out, v.get<std::int64_t>());
      return;
    case Json::value_t::number_unsigned:
      append_integer(out, v.get<std::uint64_t>());
      return;
    case Json::value_t::number_float:
      append_json_number(out, v.get<double>());
      return;
    case Json::value_t::string:
      append_json_string(out, v.get_ref<const std::string&>());
      return;
    default:
      out += v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return;
  }
}

void JsonText::key(std::string_view k) {
  if (!first_) out_ += ',';
  first_ = false;
  append_json_string(out_, k);
  out_ += ':';
}

void JsonText::object(std::string_view k, const Members& members) {
  key(k);
  out_ += '{';
  JsonText t(out_);
  members(t);
  out_ += '}';
}

void JsonText::objects(std::string_view k, std::size_t n, const Element& each) {
  key(k);
  out_ += '[';
  for (std::size_t i = 0; i < n; ++i) {
    if (i) out_ += ',';
    out_ += '{';
    JsonText t(out_);
    each(i, t);
    out_ += '}';
  }
  out_ += ']';
}

void JsonText::put_string(std::string_view k, std::string_view v) {
  key(k);
  append_json_string(out_, v);
}
void JsonText::put_bool(std::string_view k, bool v) {
  key(k);
  out_ += v ? "true" : "false";
}
void JsonText::put_int(std::string_view k, long long v) {
  key(k);
  append_integer(out_, v);
}
void JsonText::put_uint(std::string_view k, unsigned long long v) {
  key(k);
  append_integer(out_, v);
}
void JsonText::put_double(std::string_view k, double v) {
  key(k);
  append_json_number(out_, v);
}
void JsonText::put_json(std::string_view k, const Json& v) {
  key(k);
  append_json(out_, v);
}

namespace {

template <class S>
void append_array(std::string& out, std::span<const S> v) {
  out += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, v[i]);
  }
  out += ']';
}

}  // namespace

void JsonText::put_strings(std::string_view k, std::span<const std::string> v) {
  key(k);
  append_array(out_, v);
}
void JsonText::put_views(std::string_view k, std::span<const std::string_view> v) {
  key(k);
  append_array(out_, v);
}

}  // namespace gpuadvisor::util
