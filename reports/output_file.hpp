// Writing a text output (HTML, markdown, JSON, JUnit, Prometheus) the way every capsim output is
// written: "-" means stdout; a file is written to a temporary name beside it and renamed into
// place, so a reader never sees half a file and a failed write leaves the old file alone; a device
// or pipe (/dev/null, /dev/stdout, a FIFO) is written directly (reports/output_target.hpp).
// Failures throw ReportWriteError (exit code 74).
#pragma once

#include <string>
#include <string_view>

namespace capsim {

void write_output(const std::string& path, std::string_view content);

// Fails early (ReportWriteError) when `path` cannot be written: its directory is missing or not
// writable, or it names a directory. "-" always passes. Creates nothing.
void check_writable(const std::string& path);

}  // namespace capsim
