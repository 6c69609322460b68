#pragma once
/// A compact binary form of plain structs, for the data snapshots made at build time
/// (docs/performance.md, "Data snapshots"). The writer and the reader run in the same build, on the
/// same machine: numbers are stored as their bytes, strings and lists with a 32-bit length.
///
/// A struct takes part by declaring, next to it, one `fields` function that names its members in
/// order for both directions:
///
///     template <class Ar, util::serial::Of<Price> T> void fields(Ar& ar, T& p) { ar(p.usd, p.as_of, p.source); }
///
/// `T` is `const Price` when writing and `Price` when reading, so the list is written once.
#include <array>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "gpuadvisor/util/error.h"
#include "gpuadvisor/util/json.h"

namespace gpuadvisor::util::serial {

/// T is U, const or not: the parameter type of a `fields` function.
template <class T, class U>
concept Of = std::same_as<std::remove_const_t<T>, U>;

class Writer {
 public:
  template <class... T>
  void operator()(const T&... v) {
    (put(*this, v), ...);
  }
  void bytes(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
  const std::string& data() const { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <class... T>
  void operator()(T&... v) {
    (get(*this, v), ...);
  }
  void bytes(void* p, std::size_t n) {
    if (n > in_.size() - pos_) throw Error("data snapshot: truncated", Exit::internal);
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
  }
  std::string_view take(std::size_t n) {
    if (n > in_.size() - pos_) throw Error("data snapshot: truncated", Exit::internal);
    auto s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  std::string_view in_;
  std::size_t pos_ = 0;
};

template <class T>
concept Scalar = std::is_arithmetic_v<T> || std::is_enum_v<T>;
/// A struct with a `fields` function found by argument-dependent look-up.
template <class T>
concept Described = requires(Writer& w, const T& v) {
  fields(w, v);
};

template <Scalar T>
void put(Writer& w, const T& v) {
  w.bytes(&v, sizeof v);
}
template <Scalar T>
void get(Reader& r, T& v) {
  r.bytes(&v, sizeof v);
}

inline void put_size(Writer& w, std::size_t n) { put(w, static_cast<std::uint32_t>(n)); }
inline std::size_t get_size(Reader& r) {
  std::uint32_t n = 0;
  get(r, n);
  return n;
}

inline void put(Writer& w, const std::string& s) {
  put_size(w, s.size());
  w.bytes(s.data(), s.size());
}
inline void get(Reader& r, std::string& s) { s = r.take(get_size(r)); }

template <class T>
void put(Writer& w, const std::optional<T>& v) {
  put(w, v.has_value());
  if (v) put(w, *v);
}
template <class T>
void get(Reader& r, std::optional<T>& v) {
  bool has = false;
  get(r, has);
  if (!has) return v.reset();
  get(r, v.emplace());
}

template <class T>
void put(Writer& w, const std::vector<T>& v) {
  put_size(w, v.size());
  for (const auto& x : v) put(w, x);
}
template <class T>
void get(Reader& r, std::vector<T>& v) {
  v.resize(get_size(r));
  for (auto& x : v) get(r, x);
}

template <class T, std::size_t N>
void put(Writer& w, const std::array<T, N>& v) {
  for (const auto& x : v) put(w, x);
}
template <class T, std::size_t N>
void get(Reader& r, std::array<T, N>& v) {
  for (auto& x : v) get(r, x);
}

template <class T, class C>
void put(Writer& w, const std::map<std::string, T, C>& m) {
  put_size(w, m.size());
  for (const auto& [k, v] : m) {
    put(w, k);
    put(w, v);
  }
}
template <class T, class C>
void get(Reader& r, std::map<std::string, T, C>& m) {
  m.clear();
  for (std::size_t n = get_size(r); n > 0; --n) {
    std::string k;
    get(r, k);
    get(r, m[std::move(k)]);
  }
}

// std::monostate holds nothing; a variant is its index and then its value.
inline void put(Writer&, const std::monostate&) {}
inline void get(Reader&, std::monostate&) {}
template <class... T>
void put(Writer& w, const std::variant<T...>& v) {
  put(w, static_cast<std::uint8_t>(v.index()));
  std::visit([&](const auto& x) { put(w, x); }, v);
}
template <class... T>
void get(Reader& r, std::variant<T...>& v) {
  std::uint8_t i = 0;
  get(r, i);
  if (i >= sizeof...(T)) throw Error("data snapshot: bad variant", Exit::internal);
  // Default-construct the alternative with index i, then read into it.
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((i == I ? (v.template emplace<I>(), get(r, std::get<I>(v)), 0) : 0), ...);
  }
  (std::index_sequence_for<T...>{});
}

/// JSON values (a rule's record as written), tree by tree.
void put(Writer& w, const Json& j);
void get(Reader& r, Json& j);

template <Described T>
void put(Writer& w, const T& v) {
  fields(w, v);
}
template <Described T>
void get(Reader& r, T& v) {
  fields(r, v);
}

/// The bytes of a value.
template <class T>
std::string encode(const T& v) {
  Writer w;
  put(w, v);
  return w.data();
}
/// A value from the bytes encode() made; throws an internal Error when they do not fit.
template <class T>
T decode(std::string_view bytes) {
  Reader r(bytes);
  T v{};
  get(r, v);
  if (!r.done()) throw Error("data snapshot: trailing bytes", Exit::internal);
  return v;
}

}  // namespace gpuadvisor::util::serial
