#pragma once
// Shared by the libFuzzer targets (docs/fuzzing.md). A target feeds one input kind to a parser and
// whatever consumes its result. The contract it checks:
//   - an expected failure is a gpuadvisor::Error (or a failed Result) with a one-line message;
//   - any other exception escaping, a crash or a sanitizer report is a finding;
//   - numbers that come out of an accepted input are finite (and not negative where that is
//     meaningless), because they end up printed.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>

#include "gpuadvisor/util/error.h"

namespace gpuadvisor::fuzz {

/// Stops the run with a message; libFuzzer reports the abort as a crash with the input.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "\n==FINDING== %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// A gpuadvisor::Error must carry a non-empty, one-line message.
inline void check_error_message(const Error& e) {
  std::string_view m = e.what();
  if (m.empty()) finding("gpuadvisor::Error with an empty message");
  if (m.find('\n') != std::string_view::npos) finding("gpuadvisor::Error message spans lines: " + std::string(m));
  if (e.code() == Exit::internal) finding("internal error on user input: " + std::string(m));
}

/// A failed Result must carry a non-empty, one-line message too.
template <typename T>
inline void check_result_message(const Result<T>& r) {
  if (r.ok()) return;
  const std::string& m = r.error();
  if (m.empty()) finding("failed Result with an empty message");
  if (m.find('\n') != std::string::npos) finding("failed Result message spans lines: " + m);
}

/// Runs `body`: gpuadvisor::Error is the expected way to fail; anything else is a finding.
template <typename F>
inline void guarded(F&& body) {
  try {
    body();
  } catch (const Error& e) {
    check_error_message(e);
  } catch (const std::exception& e) {
    finding(std::string("exception other than gpuadvisor::Error escaped: ") + typeid(e).name() + ": " + e.what());
  } catch (...) {
    finding("non-std exception escaped");
  }
}

/// A number that is printed must be finite; `non_negative` where a negative value is nonsense.
inline void check_number(double v, const char* what, bool non_negative = true) {
  if (!std::isfinite(v)) finding(std::string(what) + " is not finite: " + std::to_string(v));
  if (non_negative && v < 0) finding(std::string(what) + " is negative: " + std::to_string(v));
}

inline std::string as_string(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace gpuadvisor::fuzz
