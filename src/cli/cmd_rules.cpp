// gpuadvisor rules (in progress: registered so that the command table is complete).
#include "context.h"

namespace gpuadvisor::cli {

void setup_rules(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("rules", "(not available yet)");
  add_format_option(*cmd, ctx);
  cmd->allow_extras();
  cmd->callback([] { throw Error("'rules' is not available in this build", Exit::internal); });
}

}  // namespace gpuadvisor::cli
