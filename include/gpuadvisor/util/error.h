#pragma once
/// Errors: expected failures travel as Result<T>; anything else throws gpuadvisor::Error,
/// caught once in cli::run() and printed as "gpuadvisor: error: ..." with its exit code.
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace gpuadvisor {

/// Process exit codes (product.md): 0 ok, 1 the answer is "no", 2 usage/input, 3 internal.
enum class Exit : int { ok = 0, no = 1, usage = 2, internal = 3 };

/// The one exception type of the project. `what()` is a complete one-line message.
class Error : public std::runtime_error {
 public:
  explicit Error(std::string message, Exit code = Exit::usage) : std::runtime_error(std::move(message)), code_(code) {}
  Exit code() const { return code_; }

 private:
  Exit code_;
};

/// A value or a one-line message saying why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  static Result fail(std::string message) { return Result(Failure{std::move(message)}); }

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& {
    if (!ok()) throw Error(error());
    return std::get<0>(v_);
  }
  T&& value() && {
    if (!ok()) throw Error(error());
    return std::get<0>(std::move(v_));
  }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  const std::string& error() const { return std::get<1>(v_).message; }

 private:
  struct Failure {
    std::string message;
  };
  explicit Result(Failure f) : v_(std::move(f)) {}
  std::variant<T, Failure> v_;
};

}  // namespace gpuadvisor
