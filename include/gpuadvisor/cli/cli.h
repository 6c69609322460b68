#pragma once
/// The command line. main() calls run(); tests call the stream overload in-process.
#include <ostream>
#include <string>
#include <vector>

namespace gpuadvisor::cli {

/// Runs gpuadvisor with argv; returns the process exit code (0, 1, 2 or 3).
int run(int argc, const char* const* argv);
/// Runs with `args` (without the program name), writing to `out` and `err`.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace gpuadvisor::cli
