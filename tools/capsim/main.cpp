// capsim: the command-line entry point. The subcommands, their one-line help and the dispatch
// are one table (tools/capsim/commands.hpp); every subcommand has --help.
#include <string>
#include <vector>

#include "tools/capsim/commands.hpp"

int main(int argc, char** argv) {
  return capsim::cli::dispatch(std::vector<std::string>(argv + 1, argv + argc));
}
