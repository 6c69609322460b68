#pragma once
/// Names of an enum's values, in one table: the name of a value, parsing with "did you mean",
/// and the list for help texts. Input is parsed into the enum once, where it is read; the code
/// below compares enums, not strings.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/util/text.h"

namespace gpuadvisor::util {

template <class E, std::size_t N>
struct Names {
  std::array<std::string_view, N> names;

  std::string_view name(E e) const { return names[static_cast<std::size_t>(e)]; }
  std::optional<E> parse(std::string_view s) const {
    for (std::size_t i = 0; i < N; ++i)
      if (names[i] == s) return static_cast<E>(i);
    return std::nullopt;
  }
  std::vector<std::string> list() const { return {names.begin(), names.end()}; }
  /// "a, b or c".
  std::string join_or() const {
    auto l = list();
    return util::join_list(l, "or");
  }
  /// The names of several values, in their order.
  std::vector<std::string> names_of(const std::vector<E>& values) const {
    std::vector<std::string> out;
    for (E e : values) out.emplace_back(name(e));
    return out;
  }
  /// The message for a value that is none of them: "expected one of a, b, c, got "x", did you mean 'a'?".
  std::string expected(std::string_view got) const {
    auto l = list();
    return "expected one of " + util::join(l, ", ") + ", got " + util::quote(got) + util::did_you_mean(got, l);
  }
  /// " (did you mean 'x'?)" or "".
  std::string suggest(std::string_view s) const {
    auto l = list();
    return util::did_you_mean(s, l);
  }
};

}  // namespace gpuadvisor::util
