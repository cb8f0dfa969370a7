#include "reports/output_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "reports/output_target.hpp"
#include "reports/sqlite_recorder.hpp"

namespace capsim {

namespace fs = std::filesystem;

namespace {

fs::path directory_of(const fs::path& p) {
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

}  // namespace

void check_writable(const std::string& path) {
  if (path == "-") return;
  const fs::path p(path);
  if (path.empty()) throw ReportWriteError(p, "the output path is empty");
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw ReportWriteError(p, "is a directory, not a file");
  if (is_in_place_output(p)) {
    if (::access(p.c_str(), W_OK) != 0) throw ReportWriteError(p, "is not writable");
    return;
  }
  const fs::path dir = directory_of(p);
  if (!fs::is_directory(dir, ec)) {
    throw ReportWriteError(p, fmt::format("directory {} does not exist", dir.string()));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    throw ReportWriteError(p, fmt::format("directory {} is not writable", dir.string()));
  }
  if (fs::exists(p, ec) && ::access(p.c_str(), W_OK) != 0) {
    throw ReportWriteError(p, "the file exists and is not writable");
  }
}

void write_output(const std::string& path, std::string_view content) {
  if (path == "-") {
    std::cout << content << std::flush;
    if (!std::cout) throw ReportWriteError("-", "cannot write to standard output");
    return;
  }
  check_writable(path);
  const fs::path p(path);
  if (is_in_place_output(p)) {
    write_in_place(p, content);
    return;
  }
  const fs::path temp = output_temp_path(p);
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (f == nullptr) throw ReportWriteError(p, std::strerror(errno));
  const std::size_t written = std::fwrite(content.data(), 1, content.size(), f);
  const bool ok = written == content.size() && std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  const int saved = errno;
  if (std::fclose(f) != 0 || !ok) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw ReportWriteError(p, std::strerror(ok ? errno : saved));
  }
  publish_output(temp, p);
}

}  // namespace capsim
