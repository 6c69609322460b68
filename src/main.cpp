#include "gpuadvisor/cli/cli.h"

int main(int argc, char** argv) { return gpuadvisor::cli::run(argc, argv); }
