// What a hostile (or careless) user can throw at capsim, as one table run through the real binary:
// outputs that are devices, pipes, full disks, missing or read-only directories, or one of the
// run's own inputs; YAML with repeated keys, several documents, alias bombs and deep nesting;
// NUL bytes and invalid UTF-8; truncated and foreign report files; seeds out of range; a run
// killed by SIGINT, SIGTERM or SIGKILL. Each row gives the exit code (docs/cli.md#exit-codes) and
// a fragment of the message, and names the output that must not appear under its final name (or,
// with `old`, an older file of that name that must survive byte for byte) unless the command
// completed.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "fixtures/cli_run.hpp"

namespace capsim {

namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

using Check = std::function<void(const testing::ScratchDir&, const testing::CommandResult&)>;

struct Row {
  const char* name;
  std::vector<std::pair<std::string, std::string>> files;  // written into the scratch directory
  std::string prep;     // shell commands run first (in the directory), "{capsim}" the binary
  std::string command;  // the command under test, run in the directory
  int want_exit;
  std::string want_err;      // a fragment of stderr ("" when the run succeeds quietly)
  std::string guarded = "";  // an output that must not appear under this name
  bool old = false;          // guarded holds an older file first, which must survive
  Check check = nullptr;     // further checks
};

const char* kOlder = "an older file of this name\n";

std::string expand(std::string s) {
  const std::string key = "{capsim}";
  for (std::size_t at = s.find(key); at != std::string::npos; at = s.find(key)) {
    s.replace(at, key.size(), std::string("'") + CAPSIM_BINARY + "'");
  }
  return s;
}

// Runs `shell` in `dir` with stdout and stderr captured; the exit code is the last command's, a
// death by signal N reported as 128 + N, as a shell does.
testing::CommandResult run_in(const testing::ScratchDir& dir, const std::string& shell) {
  const std::string out = dir.file(".stdout"), err = dir.file(".stderr");
  const std::string cmd = "cd '" + dir.path.string() + "' && { " + expand(shell) + " ; } > '" +
                          out + "' 2> '" + err + "'";
  const int status = std::system(cmd.c_str());
  testing::CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = testing::slurp(out);
  r.err = testing::slurp(err);
  return r;
}

// The start of every SQLite file (https://www.sqlite.org/fileformat2.html).
bool is_sqlite(const std::string& bytes) {
  return bytes.rfind("SQLite format 3"s + '\0', 0) == 0;
}

// Files in `dir` whose names start with `name` (the output and any temporary file beside it).
int files_named(const testing::ScratchDir& dir, const std::string& name) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    if (e.path().filename().string().rfind(name, 0) == 0) ++n;
  }
  return n;
}

// A YAML alias bomb ("billion laughs"): 10 levels, each a list of ten aliases of the previous.
std::string alias_bomb(const std::string& under) {
  std::string s = under + "\n  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    s += "  l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k)
      s += (k ? ", *l" : "*l") + std::to_string(i - 1);
    s += "]\n";
  }
  return s;
}

std::string nested_lists(int depth) {
  return "name: deep\nx: " + std::string(static_cast<std::size_t>(depth), '[') + "1" +
         std::string(static_cast<std::size_t>(depth), ']') + "\n";
}

std::string nested_maps(int depth) {
  std::string s = "name: deep\nx: ";
  for (int i = 0; i < depth; ++i)
    s += "{a: ";
  s += "1";
  for (int i = 0; i < depth; ++i)
    s += "}";
  return s + "\n";
}

const std::string kSmallHead =
    "name: small\nseed: 1\nsimulation: {horizon: 2h, sample_interval: 10m}\n";
const std::string kSmallCluster =
    "cluster:\n  pools:\n    - {name: a, count: 2, cpu: 64, memory: 512Gi, gpu: {model: "
    "A100-80GB, count: 8}}\n";
const std::string kSmallWork =
    "workload:\n  synthetic:\n    tenants:\n      - {name: t, rate_per_hour: 10, gpus: 1, "
    "duration: 10m}\n";
const std::string kSmall = kSmallHead + kSmallCluster + kSmallWork;

const std::string kRunDb = "{capsim} run --quiet small.yaml -o run.db > /dev/null";

std::vector<Row> rows() {
  const auto db_is_sqlite = [](const char* file) {
    return Check([file](const testing::ScratchDir& d, const testing::CommandResult&) {
      CHECK(is_sqlite(testing::slurp(d.file(file))));
    });
  };
  const auto unchanged = [](const char* file, const char* source) {
    return Check([file, source](const testing::ScratchDir& d, const testing::CommandResult&) {
      CHECK(testing::slurp(d.file(file)) ==
            testing::slurp(testing::source_path(std::string("tests/data/hostile/") + source)));
    });
  };
  const auto dev_null_intact = Check([](const testing::ScratchDir&, const testing::CommandResult&) {
    struct stat st {};
    REQUIRE(::stat("/dev/null", &st) == 0);
    CHECK(S_ISCHR(st.st_mode));
  });
  return {
      // 1. Outputs that are devices or pipes are written in place, never replaced.
      {"run -o /dev/null",
       {},
       "",
       "{capsim} run --quiet small.yaml -o /dev/null",
       0,
       "",
       "",
       false,
       dev_null_intact},
      {"run -o a FIFO: the report's bytes come out of the pipe",
       {},
       "mkfifo pipe.db && (timeout 60 cat pipe.db > got.db &)",
       "{capsim} run --quiet small.yaml -o pipe.db",
       0,
       "",
       "",
       false,
       [](const testing::ScratchDir& d, const testing::CommandResult&) {
         for (int i = 0; i < 50 && testing::slurp(d.file("got.db")).size() < 16; ++i)
           ::usleep(100'000);  // the background cat finishes after capsim
         CHECK(is_sqlite(testing::slurp(d.file("got.db"))));
         struct stat st {};
         REQUIRE(::stat(d.file("pipe.db").c_str(), &st) == 0);
         CHECK(S_ISFIFO(st.st_mode));
       }},
      {"report -o /dev/null",
       {},
       kRunDb,
       "{capsim} report --quiet run.db -o /dev/null",
       0,
       "",
       "",
       false,
       dev_null_intact},
      {"report --markdown /dev/stdout",
       {},
       kRunDb,
       "{capsim} report --quiet run.db --markdown /dev/stdout",
       0,
       "",
       "",
       false,
       [](const testing::ScratchDir&, const testing::CommandResult& r) {
         CHECK(r.out.find("pods_total") != std::string::npos);
       }},
      {"report --prometheus /dev/null",
       {},
       kRunDb,
       "{capsim} report --quiet run.db --prometheus /dev/null",
       0,
       "",
       "",
       false,
       dev_null_intact},
      {"compare --markdown /dev/null",
       {},
       kRunDb,
       "{capsim} compare run.db --markdown /dev/null > /dev/null",
       0,
       "",
       "",
       false,
       dev_null_intact},
      {"check --junit /dev/null",
       {},
       kRunDb,
       "{capsim} check --baseline run.db --candidate run.db --junit /dev/null > /dev/null",
       0,
       "",
       "",
       false,
       dev_null_intact},
      {"sweep -o /dev/null",
       {},
       "",
       "{capsim} sweep --quiet -j 1 sweep.yaml -o /dev/null",
       0,
       "",
       "",
       false,
       dev_null_intact},
      {"sweep -o a FIFO",
       {},
       "mkfifo sweep-pipe.db && (timeout 60 cat sweep-pipe.db > got.db &)",
       "{capsim} sweep --quiet -j 1 sweep.yaml -o sweep-pipe.db",
       0,
       "",
       "",
       false,
       [](const testing::ScratchDir& d, const testing::CommandResult&) {
         for (int i = 0; i < 50 && testing::slurp(d.file("got.db")).size() < 16; ++i)
           ::usleep(100'000);
         CHECK(is_sqlite(testing::slurp(d.file("got.db"))));
       }},

      // 2. A full disk: the report, an export, or stdout itself.
      {"run -o /dev/full",
       {},
       "",
       "{capsim} run --quiet small.yaml -o /dev/full",
       74,
       "No space left on device"},
      {"report -o /dev/full",
       {},
       kRunDb,
       "{capsim} report --quiet run.db -o /dev/full",
       74,
       "No space left on device"},
      {"report --markdown - into a full disk",
       {},
       kRunDb,
       "{capsim} report --quiet run.db --markdown - > /dev/full",
       74,
       "cannot write"},
      {"run's summary into a full disk (the report itself was completed)",
       {},
       "",
       "{capsim} run --quiet small.yaml -o out.db > /dev/full",
       74,
       "standard output",
       "",
       false,
       db_is_sqlite("out.db")},
      {"run --json into a full disk",
       {},
       "",
       "{capsim} run --quiet --json small.yaml -o out.db > /dev/full",
       74,
       "standard output"},
      {"catalog into a full disk", {}, "", "{capsim} catalog > /dev/full", 74, "standard output"},
      {"catalog MODEL into a full disk",
       {},
       "",
       "{capsim} catalog A100-80GB > /dev/full",
       74,
       "standard output"},
      {"validate into a full disk",
       {},
       "",
       "{capsim} validate small.yaml > /dev/full",
       74,
       "standard output"},
      {"--help into a full disk", {}, "", "{capsim} --help > /dev/full", 74, "standard output"},
      {"run --help into a full disk",
       {},
       "",
       "{capsim} run --help > /dev/full",
       74,
       "standard output"},
      {"--version into a full disk",
       {},
       "",
       "{capsim} --version > /dev/full",
       74,
       "standard output"},
      {"compare into a full disk",
       {},
       kRunDb,
       "{capsim} compare run.db > /dev/full",
       74,
       "standard output"},
      {"check into a full disk",
       {},
       kRunDb,
       "{capsim} check --baseline run.db --candidate run.db > /dev/full",
       74,
       "standard output"},
      {"sweep --list into a full disk",
       {},
       "",
       "{capsim} sweep --list sweep.yaml > /dev/full",
       74,
       "standard output"},
      {"check --print-thresholds into a full disk",
       {},
       "",
       "{capsim} check --print-thresholds > /dev/full",
       74,
       "standard output"},

      // 3. Missing, read-only or unsuitable output locations.
      {"run into a missing directory",
       {},
       "",
       "{capsim} run --quiet small.yaml -o nodir/out.db",
       74,
       "nodir/out.db"},
      {"run into a read-only file system (/proc)",
       {},
       "",
       "{capsim} run --quiet small.yaml -o /proc/capsim-out.db",
       74,
       "/proc/capsim-out.db"},
      {"run into a directory",
       {},
       "mkdir adir",
       "{capsim} run --quiet small.yaml -o adir",
       74,
       "directory"},
      {"report into a missing directory",
       {},
       kRunDb,
       "{capsim} report --quiet run.db -o nodir/r.html",
       74,
       "does not exist"},
      {"report into a read-only file system (/proc)",
       {},
       kRunDb,
       "{capsim} report --quiet run.db -o /proc/capsim-r.html",
       74,
       "/proc"},
      {"report --markdown into a directory",
       {},
       kRunDb + "; mkdir adir",
       "{capsim} report --quiet run.db --markdown adir",
       74,
       "directory"},
      {"check --junit into a missing directory",
       {},
       kRunDb,
       "{capsim} check --baseline run.db --candidate run.db --junit nodir/j.xml",
       74,
       "does not exist"},
      {"sweep into a missing directory",
       {},
       "",
       "{capsim} sweep --quiet -j 1 sweep.yaml -o nodir/s.db",
       74,
       "nodir"},
      {"a failed run keeps the older report of that name",
       {{"bad.yaml", kSmall + "bogus_field: 1\n"}},
       "",
       "{capsim} run --quiet bad.yaml -o out.db",
       65,
       "bad.yaml",
       "out.db",
       true},

      // 4. An output that is one of the inputs is refused before anything is written.
      {"run -o the scenario",
       {},
       "",
       "{capsim} run --quiet small.yaml -o small.yaml",
       74,
       "would overwrite the scenario",
       "",
       false,
       unchanged("small.yaml", "small.yaml")},
      {"run -o ./the scenario",
       {},
       "",
       "{capsim} run --quiet small.yaml -o ./small.yaml",
       74,
       "scenario",
       "",
       false,
       unchanged("small.yaml", "small.yaml")},
      {"run -o the scenario by another relative path",
       {},
       "mkdir sub",
       "{capsim} run --quiet small.yaml -o sub/../small.yaml",
       74,
       "scenario",
       "",
       false,
       unchanged("small.yaml", "small.yaml")},
      {"run -o the scenario by its absolute path",
       {},
       "",
       "{capsim} run --quiet small.yaml -o \"$PWD/small.yaml\"",
       74,
       "scenario",
       "",
       false,
       unchanged("small.yaml", "small.yaml")},
      {"run -o a hard link to the scenario",
       {},
       "ln small.yaml hard.yaml",
       "{capsim} run --quiet small.yaml -o hard.yaml",
       74,
       "scenario",
       "",
       false,
       unchanged("small.yaml", "small.yaml")},
      {"run -o a symlink to the scenario",
       {},
       "ln -s small.yaml soft.yaml",
       "{capsim} run --quiet small.yaml -o soft.yaml",
       74,
       "scenario",
       "",
       false,
       unchanged("small.yaml", "small.yaml")},
      {"run a symlinked scenario -o its target",
       {},
       "ln -s small.yaml soft.yaml",
       "{capsim} run --quiet soft.yaml -o small.yaml",
       74,
       "scenario",
       "",
       false,
       unchanged("small.yaml", "small.yaml")},
      {"run --append -o the scenario",
       {},
       "",
       "{capsim} run --quiet --append small.yaml -o small.yaml",
       74,
       "scenario",
       "",
       false,
       unchanged("small.yaml", "small.yaml")},
      {"run -o the trace the scenario replays",
       {},
       "",
       "{capsim} run --quiet traced.yaml -o trace.csv",
       74,
       "trace.csv",
       "",
       false,
       unchanged("trace.csv", "trace.csv")},
      {"run -o the manifest file the scenario reads",
       {},
       "",
       "{capsim} run --quiet traced.yaml -o pods.yaml",
       74,
       "pods.yaml",
       "",
       false,
       unchanged("pods.yaml", "pods.yaml")},
      {"run -o a hard link to the trace",
       {},
       "ln trace.csv t2.csv",
       "{capsim} run --quiet traced.yaml -o t2.csv",
       74,
       "trace.csv",
       "",
       false,
       unchanged("trace.csv", "trace.csv")},
      {"report -o the report being read",
       {},
       kRunDb,
       "{capsim} report --quiet run.db -o run.db",
       74,
       "report being read",
       "",
       false,
       db_is_sqlite("run.db")},
      {"report --markdown ./the report being read",
       {},
       kRunDb,
       "{capsim} report --quiet run.db --markdown ./run.db",
       74,
       "report being read",
       "",
       false,
       db_is_sqlite("run.db")},
      {"report --prometheus a symlink to the report",
       {},
       kRunDb + "; ln -s run.db link.db",
       "{capsim} report --quiet run.db --prometheus link.db",
       74,
       "report being read",
       "",
       false,
       db_is_sqlite("run.db")},
      {"report --focus the report being read",
       {},
       kRunDb,
       "{capsim} report --quiet run.db --focus run.db",
       74,
       "report being read",
       "",
       false,
       db_is_sqlite("run.db")},
      {"compare --markdown one of the reports",
       {},
       kRunDb,
       "{capsim} compare run.db --markdown run.db",
       74,
       "report being compared",
       "",
       false,
       db_is_sqlite("run.db")},
      {"check --junit the baseline",
       {},
       kRunDb + "; cp run.db cand.db",
       "{capsim} check --baseline run.db --candidate cand.db --junit run.db",
       74,
       "baseline",
       "",
       false,
       db_is_sqlite("run.db")},
      {"check --markdown the candidate",
       {},
       kRunDb + "; cp run.db cand.db",
       "{capsim} check --baseline run.db --candidate cand.db --markdown cand.db",
       74,
       "candidate",
       "",
       false,
       db_is_sqlite("cand.db")},
      {"check --junit the thresholds file",
       {{"t.yaml", "metrics: {}\n"}},
       kRunDb,
       "{capsim} check --baseline run.db --candidate run.db --thresholds t.yaml --junit t.yaml",
       74,
       "thresholds file"},
      {"sweep -o the sweep file",
       {},
       "",
       "{capsim} sweep --quiet sweep.yaml -o sweep.yaml",
       74,
       "sweep file",
       "",
       false,
       unchanged("sweep.yaml", "sweep.yaml")},
      {"merge onto one of its shards",
       {},
       "{capsim} sweep --quiet -j 1 sweep.yaml -o s.db",
       "{capsim} merge s.db s.db",
       74,
       "shard file",
       "",
       false,
       db_is_sqlite("s.db")},
      {"plan -o the plan file",
       {{"plan.yaml", "name: p\n"}},
       "",
       "{capsim} plan plan.yaml -o plan.yaml",
       74,
       "plan file"},
      {"import -o its input",
       {},
       "",
       "{capsim} import alibaba-openb trace.csv -o trace.csv",
       74,
       "would overwrite",
       "",
       false,
       unchanged("trace.csv", "trace.csv")},
      {"import of a job log -o its input",
       {},
       "",
       "{capsim} import helios trace.csv -o trace.csv",
       74,
       "would overwrite",
       "",
       false,
       unchanged("trace.csv", "trace.csv")},
      {"import kubernetes -o the directory of a dump named pods.yaml",
       {},
       "",
       "{capsim} import kubernetes pods.yaml -o .",
       74,
       "would overwrite",
       "scenario.yaml",
       false,
       unchanged("pods.yaml", "pods.yaml")},

      // 5. YAML: repeated keys, several documents, alias bombs, nesting.
      {"a scenario key given twice",
       {{"s.yaml", kSmallHead + "seed: 2\n" + kSmallCluster + kSmallWork}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "s.yaml:4:1: duplicate key 'seed' (first given on line 2)",
       "out.db",
       true},
      {"a key given twice in a flow mapping",
       {{"s.yaml", kSmallHead +
                       "cluster:\n  pools:\n    - {name: a, count: 2, count: 3, cpu: 64, "
                       "memory: 512Gi, gpu: {model: A100-80GB, count: 8}}\n" +
                       kSmallWork}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "s.yaml:6:",
       "out.db"},
      {"a key given twice in a nested block mapping",
       {{"s.yaml", kSmallHead + kSmallCluster +
                       "workload:\n  synthetic:\n    tenants:\n      - name: t\n        gpus: 1\n"
                       "        rate_per_hour: 10\n        gpus: 2\n        duration: 10m\n"}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "duplicate key 'gpus'",
       "out.db"},
      {"a quoted and a plain spelling of one key",
       {{"s.yaml", kSmallHead + "\"seed\": 3\n" + kSmallCluster + kSmallWork}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "duplicate key 'seed'",
       "out.db"},
      {"a key given twice in a manifest",
       {{"pods.yaml",
         "apiVersion: v1\nkind: Pod\nkind: Pod\nmetadata: {name: m0}\nspec: {containers: []}\n"}},
       "",
       "{capsim} run --quiet traced.yaml -o out.db",
       65,
       "pods.yaml:3:1: duplicate key 'kind'",
       "out.db"},
      {"a key given twice in a sweep file",
       {{"sw.yaml", "name: s\nname: t\nscenario: small.yaml\naxes: []\n"}},
       "",
       "{capsim} sweep --quiet sw.yaml -o out.db",
       65,
       "sw.yaml:2:1: duplicate key 'name'",
       "out.db"},
      {"a key given twice in a thresholds file",
       {{"t.yaml", "metrics: {}\nmetrics: {}\n"}},
       kRunDb,
       "{capsim} check --baseline run.db --candidate run.db --thresholds t.yaml",
       65,
       "t.yaml:2:1: duplicate key 'metrics'"},
      {"validate finds a repeated key",
       {{"s.yaml", kSmallHead + "name: again\n" + kSmallCluster + kSmallWork}},
       "",
       "{capsim} validate s.yaml",
       65,
       "duplicate key 'name'"},
      {"a scenario with two documents",
       {{"s.yaml", kSmall + "---\nname: second\n"}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "s.yaml:11:1: a second YAML document",
       "out.db",
       true},
      {"a scenario whose second document is empty",
       {{"s.yaml", "---\n" + kSmall + "---\n"}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "second YAML document",
       "out.db"},
      {"a manifest file with several documents is fine",
       {},
       "",
       "{capsim} run --quiet traced.yaml -o out.db",
       0,
       "",
       "",
       false,
       db_is_sqlite("out.db")},
      {"a leading '---' is one document",
       {{"s.yaml", "---\n" + kSmall}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       0,
       "",
       "",
       false,
       db_is_sqlite("out.db")},
      {"an alias bomb in a scenario",
       {{"s.yaml", alias_bomb(kSmall + "x-bomb:")}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "alias expansion bomb",
       "out.db",
       true},
      {"an alias bomb in a manifest",
       {{"pods.yaml", alias_bomb("bomb:")}},
       "",
       "{capsim} run --quiet traced.yaml -o out.db",
       65,
       "pods.yaml:",
       "out.db"},
      {"an alias bomb in a sweep file",
       {{"sw.yaml", alias_bomb("name: s\nscenario: small.yaml\nx:")}},
       "",
       "{capsim} sweep --quiet sw.yaml -o out.db",
       65,
       "alias expansion bomb",
       "out.db"},
      {"aliases of modest size are fine",
       {{"s.yaml", kSmallHead +
                       "cluster:\n  pools:\n    - {name: a, count: 1, cpu: 64, memory: 512Gi, "
                       "gpu: &g {model: A100-80GB, count: 8}}\n    - {name: b, count: 1, cpu: "
                       "64, memory: 512Gi, gpu: *g}\n" +
                       kSmallWork}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       0,
       "",
       "",
       false,
       db_is_sqlite("out.db")},
      {"lists nested 100 deep",
       {{"s.yaml", nested_lists(100)}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "s.yaml:2:",
       "out.db"},
      {"mappings nested 100 deep",
       {{"s.yaml", nested_maps(100)}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "nesting deeper than 64",
       "out.db"},
      {"lists nested 10000 deep",
       {{"s.yaml", nested_lists(10000)}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "nesting deeper than 64",
       "out.db"},
      {"a manifest nested 100 deep",
       {{"pods.yaml", nested_maps(100)}},
       "",
       "{capsim} run --quiet traced.yaml -o out.db",
       65,
       "nesting deeper than 64",
       "out.db"},

      // 6. Bytes: NUL and invalid UTF-8 in every kind of text input, located to the column.
      {"a NUL byte in a scenario",
       {{"s.yaml", kSmallHead + "description: a\0b\n"s + kSmallCluster + kSmallWork}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "s.yaml:4:15: a NUL byte",
       "out.db",
       true},
      {"a 0xFF byte in a scenario",
       {{"s.yaml", kSmallHead + "description: caf\xFF\n" + kSmallCluster + kSmallWork}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "s.yaml:4:17: invalid UTF-8 (byte 0xFF",
       "out.db"},
      {"an overlong encoding in a scenario",
       {{"s.yaml", kSmallHead + "description: \xC0\xAF\n" + kSmallCluster + kSmallWork}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "s.yaml:4:14: invalid UTF-8",
       "out.db"},
      {"an encoded surrogate in a scenario",
       {{"s.yaml", kSmallHead + "description: \xED\xA0\x80\n" + kSmallCluster + kSmallWork}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "surrogate",
       "out.db"},
      {"a character cut off at the end of a scenario",
       {{"s.yaml", kSmall + "# \xE2\x82"}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "cut off",
       "out.db"},
      {"a lone continuation byte in a scenario",
       {{"s.yaml", kSmallHead + "description: \x80\n" + kSmallCluster + kSmallWork}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "byte 0x80 cannot start",
       "out.db"},
      {"a NUL byte in a trace",
       {{"trace.csv", "pod,submit,duration,gpu\np0,0,10m,1\np\0,60,20m,2\n"s}},
       "",
       "{capsim} run --quiet traced.yaml -o out.db",
       65,
       "trace.csv:3:2: a NUL byte",
       "out.db"},
      {"invalid UTF-8 in a trace",
       {{"trace.csv", "pod,submit,duration,gpu\np\xFE,0,10m,1\n"}},
       "",
       "{capsim} run --quiet traced.yaml -o out.db",
       65,
       "trace.csv:2:2: invalid UTF-8",
       "out.db"},
      {"invalid UTF-8 in a manifest",
       {{"pods.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: m\xC3}\n"}},
       "",
       "{capsim} run --quiet traced.yaml -o out.db",
       65,
       "pods.yaml:3:",
       "out.db"},
      {"a NUL byte in a sweep file",
       {{"sw.yaml", "name: s\0\nscenario: small.yaml\n"s}},
       "",
       "{capsim} sweep --quiet sw.yaml -o out.db",
       65,
       "sw.yaml:1:8: a NUL byte",
       "out.db"},
      {"validate finds a NUL byte",
       {{"s.yaml", "name: x\0"s}},
       "",
       "{capsim} validate s.yaml",
       65,
       "s.yaml:1:8: a NUL byte"},
      {"UTF-8 text is fine",
       {{"s.yaml", kSmallHead + "description: caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80\n" +
                       kSmallCluster + kSmallWork}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       0,
       "",
       "",
       false,
       db_is_sqlite("out.db")},

      // 7. Report files that are truncated, empty or not capsim's: plain words, no SQL.
      {"report of a text file",
       {{"x.db", "hello, not a database\n"}},
       "",
       "{capsim} report --quiet x.db -o r.html",
       65,
       "x.db: is not a capsim report",
       "r.html"},
      {"report of an empty file",
       {{"x.db", ""}},
       "",
       "{capsim} report --quiet x.db -o r.html",
       65,
       "is not a capsim report",
       "r.html"},
      {"report of a report cut in half",
       {},
       kRunDb + "; head -c $(( $(wc -c < run.db) / 2 )) "
                "run.db > half.db",
       "{capsim} report --quiet half.db -o r.html",
       65,
       "half.db: is not a capsim report (or is truncated)",
       "r.html",
       true},
      {"report of a report cut to its first 50 bytes",
       {},
       kRunDb + "; head -c 50 run.db > h.db",
       "{capsim} report --quiet h.db -o r.html",
       65,
       "is not a capsim report (or is truncated)",
       "r.html"},
      {"explain of a truncated report",
       {},
       kRunDb + "; head -c 8192 run.db > h.db",
       "{capsim} explain h.db some-pod",
       65,
       "is not a capsim report (or is truncated)"},
      {"compare of a truncated report",
       {},
       kRunDb + "; head -c 8192 run.db > h.db",
       "{capsim} compare run.db h.db",
       65,
       "is not a capsim report (or is truncated)"},
      {"check with a truncated baseline",
       {},
       kRunDb + "; head -c 8192 run.db > h.db",
       "{capsim} check --baseline h.db --candidate run.db",
       65,
       "is not a capsim report (or is truncated)"},
      {"report of another program's SQLite file",
       {},
       "sqlite3 other.db 'CREATE TABLE t (x); INSERT INTO t VALUES (1);'",
       "{capsim} report --quiet other.db -o r.html",
       65,
       "is not a capsim report",
       "r.html"},
      {"report of a capsim report with a table dropped",
       {},
       kRunDb + "; cp run.db broken.db; sqlite3 broken.db 'DROP TABLE sample;'",
       "{capsim} report --quiet broken.db -o r.html",
       65,
       "is not a capsim report",
       "r.html",
       false,
       [](const testing::ScratchDir&, const testing::CommandResult& r) {
         CHECK(r.err.find("SELECT") == std::string::npos);  // no SQL text
       }},
      {"report of garbage after an SQLite header",
       {},
       kRunDb + "; head -c 100 run.db > g.db; "
                "head -c 8000 /dev/zero >> g.db",
       "{capsim} report --quiet g.db -o r.html",
       65,
       "is not a capsim report",
       "r.html"},
      {"report of a directory",
       {},
       "mkdir d.db",
       "{capsim} report --quiet d.db -o r.html",
       66,
       "directory",
       "r.html"},
      {"report of a missing file",
       {},
       "",
       "{capsim} report --quiet none.db -o r.html",
       66,
       "no such report file",
       "r.html"},

      // 8. Seeds out of range.
      {"a negative seed",
       {},
       "",
       "{capsim} run --quiet small.yaml --seed=-1 -o out.db",
       65,
       "--seed: '-1' is not a seed",
       "out.db",
       true},
      {"a seed above 2^64-1",
       {},
       "",
       "{capsim} run --quiet small.yaml --seed=18446744073709551616 -o out.db",
       65,
       "larger than 18446744073709551615",
       "out.db"},
      {"a seed far above 2^64-1",
       {},
       "",
       "{capsim} run --quiet small.yaml --seed 99999999999999999999999 -o out.db",
       65,
       "not a seed",
       "out.db"},
      {"a seed that is not a number",
       {},
       "",
       "{capsim} run --quiet small.yaml --seed abc -o out.db",
       65,
       "'abc' is not a seed",
       "out.db"},
      {"a seed in scientific notation",
       {},
       "",
       "{capsim} run --quiet small.yaml --seed 1e3 -o out.db",
       65,
       "not a seed",
       "out.db"},
      {"an empty seed (a usage error: the option needs its value)",
       {},
       "",
       "{capsim} run --quiet small.yaml --seed= -o out.db",
       2,
       "--seed",
       "out.db"},
      {"the largest seed is fine",
       {},
       "",
       "{capsim} run --quiet small.yaml --seed 18446744073709551615 -o out.db",
       0,
       "",
       "",
       false,
       db_is_sqlite("out.db")},
      {"score with a negative seed",
       {},
       "",
       "{capsim} score small.yaml --pod x --seed=-5",
       65,
       "not a seed"},

      // 10. Soft limits, lifted by --force (docs/cli.md#limits).
      {"more nodes than the soft limit",
       {},
       "",
       "{capsim} run --quiet small.yaml --set cluster.pools.a.count=200000 -o out.db",
       65,
       "above the limit of 100000 nodes (docs/cli.md#limits); pass --force",
       "out.db",
       true},
      {"two pools above the node limit together",
       {{"s.yaml", kSmallHead +
                       "cluster:\n  pools:\n    - {name: a, count: 60000, cpu: 64, memory: 512Gi}\n"
                       "    - {name: b, count: 60000, cpu: 64, memory: 512Gi}\n" +
                       kSmallWork}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "s.yaml:7:",
       "out.db"},
      {"--force lifts the node limit (two pools of 60000 nodes)",
       {{"s.yaml", kSmallHead +
                       "cluster:\n  pools:\n    - {name: a, count: 60000, cpu: 64, memory: 512Gi}\n"
                       "    - {name: b, count: 60000, cpu: 64, memory: 512Gi}\n" +
                       kSmallWork}},
       "",
       "{capsim} run --quiet --force --list-profiles s.yaml",
       0,
       ""},
      {"a sample table above the soft limit",
       {},
       "",
       "{capsim} run --quiet small.yaml --set simulation.horizon=400d --set "
       "simulation.sample_interval=1s -o out.db",
       65,
       "sample rows, above the limit of 20000000",
       "out.db"},
      {"--force lifts the sample-table limit",
       {},
       "",
       "{capsim} run --quiet --force --list-profiles small.yaml --set simulation.horizon=400d "
       "--set simulation.sample_interval=1s",
       0,
       ""},
      // 11. Device resources no GPU model has.
      {"an unknown MIG profile in a workload",
       {{"s.yaml", kSmallHead + kSmallCluster +
                       "workload:\n  synthetic:\n    tenants:\n      - {name: t, rate_per_hour: "
                       "10, gpus: 1, duration: 10m, gpu_resource: nvidia.com/mig-9g.99gb}\n"}},
       "",
       "{capsim} run --quiet s.yaml -o out.db",
       65,
       "unknown MIG resource 'nvidia.com/mig-9g.99gb'",
       "out.db"},
      {"an unknown MIG profile in a manifest",
       {{"pods.yaml",
         "apiVersion: v1\nkind: Pod\nmetadata: {name: m0, annotations: {capsim.io/duration: "
         "10m}}\nspec:\n  containers:\n    - name: main\n      resources: {limits: "
         "{nvidia.com/mig-1g.11gb: 1}}\n"}},
       "",
       "{capsim} run --quiet traced.yaml -o out.db",
       65,
       "unknown MIG resource 'nvidia.com/mig-1g.11gb' (did you mean",
       "out.db"},
      {"a typo of nvidia.com/gpu.shared in a manifest",
       {{"pods.yaml",
         "apiVersion: v1\nkind: Pod\nmetadata: {name: m0, annotations: {capsim.io/duration: "
         "10m}}\nspec:\n  containers:\n    - name: main\n      resources: {limits: "
         "{nvidia.com/gpu.shard: 1}}\n"}},
       "",
       "{capsim} run --quiet traced.yaml -o out.db",
       65,
       "unknown sharing resource 'nvidia.com/gpu.shard'",
       "out.db"},
      {"a resource a few edits from nvidia.com/gpu",
       {{"pods.yaml",
         "apiVersion: v1\nkind: Pod\nmetadata: {name: m0, annotations: {capsim.io/duration: "
         "10m}}\nspec:\n  containers:\n    - name: main\n      resources: {limits: "
         "{nvidia.com/gpus: 1}}\n"}},
       "",
       "{capsim} run --quiet traced.yaml -o out.db",
       65,
       "unknown GPU resource 'nvidia.com/gpus' (did you mean 'nvidia.com/gpu'?)",
       "out.db"},
      {"a misspelt nvidia.com/gpu in another domain",
       {{"pods.yaml",
         "apiVersion: v1\nkind: Pod\nmetadata: {name: m0, annotations: {capsim.io/duration: "
         "10m}}\nspec:\n  containers:\n    - name: main\n      resources: {limits: "
         "{nvida.com/gpu: 1}}\n"}},
       "",
       "{capsim} run --quiet traced.yaml -o out.db",
       65,
       "unknown GPU resource 'nvida.com/gpu' (did you mean 'nvidia.com/gpu'?)",
       "out.db"},

      // 9. Stopped mid-run: nothing under the final name, an older report kept.
      {"SIGINT mid-run",
       {},
       "",
       "timeout --preserve-status -s INT 0.5 {capsim} run --quiet long.yaml -o out.db",
       130,
       "no report",
       "out.db",
       true},
      {"SIGTERM mid-run",
       {},
       "",
       "timeout --preserve-status -s TERM 0.5 {capsim} run --quiet long.yaml -o out.db",
       143,
       "no report",
       "out.db",
       true},
      {"SIGKILL mid-run",
       {},
       "",
       "timeout --preserve-status -s KILL 0.5 {capsim} run --quiet long.yaml -o out.db",
       137,
       "",
       "out.db",
       true},
      {"SIGTERM mid-run, no older report",
       {},
       "",
       "timeout --preserve-status -s TERM 0.5 {capsim} run --quiet long.yaml -o out.db",
       143,
       "no report",
       "out.db",
       false,
       [](const testing::ScratchDir& d, const testing::CommandResult&) {
         CHECK(files_named(d, "out.db") == 0);  // nor a temporary file beside it
       }},
  };
}

}  // namespace

TEST_CASE("hostile inputs and outputs: each gives its exit code and message and destroys nothing") {
  const std::vector<Row> table = rows();
  CHECK(table.size() >= 80);
  for (const Row& row : table) {
    const std::string name = row.name;
    CAPTURE(name);
    testing::ScratchDir dir("hostile");
    for (const auto& e : fs::directory_iterator(testing::source_path("tests/data/hostile")))
      fs::copy_file(e.path(), dir.path / e.path().filename());
    for (const auto& [file, text] : row.files)
      testing::write_file(dir.file(file), text);
    if (!row.guarded.empty() && row.old) testing::write_file(dir.file(row.guarded), kOlder);
    if (!row.prep.empty()) {
      const testing::CommandResult p = run_in(dir, row.prep);
      const std::string prep_err = p.err;
      CAPTURE(prep_err);
      CHECK(p.exit_code == 0);
      if (p.exit_code != 0) continue;
    }
    const testing::CommandResult r = run_in(dir, row.command);
    const std::string err = r.err;
    CAPTURE(err);
    CHECK(r.exit_code == row.want_exit);
    if (!row.want_err.empty()) CHECK(err.find(row.want_err) != std::string::npos);
    if (row.want_exit != 0) CHECK(err.find("internal error") == std::string::npos);
    if (!row.guarded.empty()) {
      if (row.old) {
        CHECK(testing::slurp(dir.file(row.guarded)) == kOlder);
      } else {
        CHECK(!fs::exists(dir.file(row.guarded)));
      }
    }
    if (row.check) row.check(dir, r);
  }
}

TEST_CASE("a read-only directory refuses the report before the run (when not root)") {
  if (::geteuid() == 0) return;  // root writes anywhere: /proc stands in for it in the table
  testing::ScratchDir dir("hostile-ro");
  fs::copy_file(testing::source_path("tests/data/hostile/small.yaml"), dir.path / "small.yaml");
  fs::create_directory(dir.path / "ro");
  fs::permissions(dir.path / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  const testing::CommandResult r = run_in(dir, "{capsim} run --quiet small.yaml -o ro/out.db");
  fs::permissions(dir.path / "ro", fs::perms::owner_all);
  CHECK(r.exit_code == 74);
  CHECK(!fs::exists(dir.path / "ro" / "out.db"));
}

}  // namespace capsim
