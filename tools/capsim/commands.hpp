// The capsim subcommands in one table: each row's name, synopsis, one-line summary and entry
// point. `capsim --help` is printed from it, main() dispatches through it, and a mistyped
// command gets the nearest names as a suggestion (exit 2, like every usage error). Also the one
// place that turns a subcommand's arguments into Boost.Program_options values, so the commands
// only declare their options.
#pragma once

#include <boost/program_options.hpp>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace capsim::cli {

struct Command {
  std::string name;      // "run"
  std::string synopsis;  // "run SCENARIO.yaml"
  std::string summary;   // may hold '\n' for a second line
  int (*fn)(const std::vector<std::string>& args);
};

// Every subcommand, in the order `capsim --help` lists them.
const std::vector<Command>& commands();

// The text `capsim --help` prints (and `capsim` with no command, on stderr).
std::string usage_text();

// Runs `capsim ARGS...` (argv without the program name): help, version, or the named command;
// an unknown command prints the nearest names and the usage on stderr and returns kUsage.
int dispatch(const std::vector<std::string>& args);

// A positional argument of a subcommand: the hidden option it fills and how many words it takes
// (-1: all that remain).
struct Positional {
  const char* name;
  const boost::program_options::value_semantic* value;  // po::value(&target), owned after the call
  int max_count;
};

// Parses `args` against `visible` (what --help shows) plus `positional`, stores and notifies.
// Boost's errors propagate; guarded() turns them into usage errors.
boost::program_options::variables_map parse_command_line(
    const boost::program_options::options_description& visible,
    const std::vector<std::string>& args, std::initializer_list<Positional> positional = {});

}  // namespace capsim::cli
