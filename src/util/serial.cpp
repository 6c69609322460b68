#include "gpuadvisor/util/serial.h"

namespace gpuadvisor::util::serial {
namespace {

enum class Tag : std::uint8_t { null, boolean, integer, unsigned_integer, floating, string, array, object };

}  // namespace

void put(Writer& w, const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded:
      put(w, Tag::null);
      return;
    case Json::value_t::boolean:
      put(w, Tag::boolean);
      put(w, j.get<bool>());
      return;
    case Json::value_t::number_integer:
      put(w, Tag::integer);
      put(w, j.get<std::int64_t>());
      return;
    case Json::value_t::number_unsigned:
      put(w, Tag::unsigned_integer);
      put(w, j.get<std::uint64_t>());
      return;
    case Json::value_t::number_float:
      put(w, Tag::floating);
      put(w, j.get<double>());
      return;
    case Json::value_t::string:
      put(w, Tag::string);
      put(w, j.get_ref<const std::string&>());
      return;
    case Json::value_t::array:
    case Json::value_t::binary:
      put(w, Tag::array);
      put_size(w, j.size());
      for (const auto& x : j) put(w, x);
      return;
    case Json::value_t::object:
      put(w, Tag::object);
      put_size(w, j.size());
      for (const auto& [k, v] : j.items()) {
        put(w, k);
        put(w, v);
      }
      return;
  }
}

void get(Reader& r, Json& j) {
  Tag t{};
  get(r, t);
  switch (t) {
    case Tag::null:
      j = nullptr;
      return;
    case Tag::boolean: {
      bool b = false;
      get(r, b);
      j = b;
      return;
    }
    case Tag::integer: {
      std::int64_t i = 0;
      get(r, i);
      j = i;
      return;
    }
    case Tag::unsigned_integer: {
      std::uint64_t u = 0;
      get(r, u);
      j = u;
      return;
    }
    case Tag::floating: {
      double d = 0;
      get(r, d);
      j = d;
      return;
    }
    case Tag::string: {
      std::string s;
      get(r, s);
      j = std::move(s);
      return;
    }
    case Tag::array: {
      j = Json::array();
      for (std::size_t n = get_size(r); n > 0; --n) {
        Json x;
        get(r, x);
        j.push_back(std::move(x));
      }
      return;
    }
    case Tag::object: {
      j = Json::object();
      for (std::size_t n = get_size(r); n > 0; --n) {
        std::string k;
        get(r, k);
        get(r, j[std::move(k)]);
      }
      return;
    }
  }
  throw Error("data snapshot: bad JSON tag", Exit::internal);
}

}  // namespace gpuadvisor::util::serial
