// gpuadvisor recommend (in progress: registered so that the command table is complete).
#include "context.h"

namespace gpuadvisor::cli {

void setup_recommend(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("recommend", "(not available yet)");
  add_format_option(*cmd, ctx);
  cmd->allow_extras();
  cmd->callback([] { throw Error("'recommend' is not available in this build", Exit::internal); });
}

}  // namespace gpuadvisor::cli
