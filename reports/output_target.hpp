// Where an output goes, decided once for every writer (the .db recorder, sweep merge, HTML, CSV,
// JSON, Prometheus, markdown, JUnit, plan and import outputs). A regular file (or a name not yet
// taken) is written to a temporary file beside it and renamed into place; a device node or a pipe
// (/dev/null, /dev/stdout, a FIFO) is opened and written directly, never replaced. And an output
// that would overwrite one of the run's inputs is refused before anything is written.
// Failures throw ReportWriteError (exit code 74). No state; safe from any thread.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace capsim {

// True when `path` is written in place: it exists and is not a regular file or a directory
// (character or block device, FIFO, socket), or it names one of the process's own streams
// (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N, which may point at a regular file the
// shell redirected to, and must not be renamed over either).
bool is_in_place_output(const std::filesystem::path& path);

// The temporary file an output is built in before it is published: beside `out` for a regular
// file (so the rename stays on one file system), in the system's temporary directory for an
// in-place output (nothing may be created beside /dev/null). Unique within the process.
std::filesystem::path output_temp_path(const std::filesystem::path& out);

// Writes `content` to the in-place output `out`: opened for writing only (never created or
// truncated), every byte written, a short write or a full device (/dev/full) an error.
void write_in_place(const std::filesystem::path& out, std::string_view content);

// Publishes a finished temporary file: renames it onto `out`, or, for an in-place output, copies
// its bytes into `out` and removes it. `temp` is removed on failure too.
void publish_output(const std::filesystem::path& temp, const std::filesystem::path& out);

// One input of a command, named for messages ("scenario", "trace", "baseline report").
struct InputFile {
  std::string role;
  std::filesystem::path path;
};

// Refuses (ReportWriteError naming both roles) an output that is one of `inputs`: the same file
// by std::filesystem::equivalent when both exist (hard links, symlinks, ./x and x), the same
// normalised absolute path otherwise. "-" and in-place outputs are never refused.
void refuse_output_over_inputs(const std::string& output_role, const std::filesystem::path& out,
                               const std::vector<InputFile>& inputs);

}  // namespace capsim
