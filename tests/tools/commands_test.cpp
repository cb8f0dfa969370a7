// The subcommand table: help printed from it, dispatch through it, a suggestion for a typo; and
// the one command-line parser the subcommands share.
#include "tools/capsim/commands.hpp"

#include <doctest/doctest.h>

#include <iostream>
#include <sstream>

#include "tools/capsim/cli.hpp"

using namespace capsim::cli;
namespace po = boost::program_options;

namespace {

// Runs dispatch() with std::cerr captured.
int dispatch_capturing(const std::vector<std::string>& args, std::string& err) {
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  const int rc = dispatch(args);
  std::cerr.rdbuf(old);
  err = captured.str();
  return rc;
}

}  // namespace

TEST_CASE("a mistyped command is a usage error that names the nearest commands") {
  struct Case {
    const char* name;
    const char* typed;
    const char* want_hint;
  };
  const Case cases[] = {
      {"two letters swapped", "rnu", "(did you mean 'run'?)"},
      {"one letter missing", "valdate", "(did you mean 'validate'?)"},
      {"one letter wrong", "sweap", "(did you mean 'sweep'?)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::string err;
    CHECK(dispatch_capturing({c.typed}, err) == kUsage);
    CHECK(err.find(std::string("unknown command '") + c.typed + "' " + c.want_hint) !=
          std::string::npos);
    CHECK(err.find("Usage: capsim <command>") != std::string::npos);
  }
  std::string err;
  CHECK(dispatch_capturing({}, err) == kUsage);
  CHECK(err == usage_text());
}

TEST_CASE("capsim --help lists every command of the table, each on its synopsis line") {
  const std::string help = usage_text();
  for (const Command& c : commands()) {
    CAPTURE(c.name);
    CHECK(help.find("\n  " + c.synopsis) != std::string::npos);
    CHECK((c.fn != nullptr));
  }
  // A long synopsis puts its summary on the next line, in the summary column (25).
  CHECK(help.find("  check --baseline B.db --candidate C.db\n"
                  "                         CI gate") != std::string::npos);
  CHECK(help.find("  run SCENARIO.yaml      simulate a scenario") != std::string::npos);
}

TEST_CASE("parse_command_line fills options and positional arguments, and rejects extra words") {
  std::string file, out;
  std::vector<std::string> rest;
  po::options_description opts("Options");
  opts.add_options()("out,o", po::value(&out), "output");
  const po::variables_map vm = parse_command_line(
      opts, {"a.yaml", "-o", "x.db", "b", "c"},
      {{"file", po::value(&file), 1}, {"rest", po::value(&rest)->composing(), -1}});
  CHECK(file == "a.yaml");
  CHECK(out == "x.db");
  CHECK(rest == std::vector<std::string>{"b", "c"});
  CHECK(vm.count("out") == 1);

  std::string only;
  po::options_description none("Options");
  CHECK_THROWS_AS((void)parse_command_line(none, {"a", "b"}, {{"only", po::value(&only), 1}}),
                  po::error);
  CHECK_THROWS_AS((void)parse_command_line(none, {"--nope"}), po::error);
}
