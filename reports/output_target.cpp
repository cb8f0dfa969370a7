#include "reports/output_target.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "reports/sqlite_recorder.hpp"

namespace capsim {

namespace fs = std::filesystem;

namespace {

bool names_own_stream(const fs::path& path) {
  const std::string s = fs::absolute(path).lexically_normal().string();
  return s == "/dev/stdout" || s == "/dev/stderr" || s.rfind("/dev/fd/", 0) == 0 ||
         s.rfind("/proc/self/fd/", 0) == 0;
}

// Writes all of `content` to `fd`, retrying on EINTR; false with errno set on failure.
bool write_all(int fd, std::string_view content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

int open_in_place(const fs::path& out) {
  const int fd = ::open(out.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    throw ReportWriteError(out, fmt::format("cannot open for writing: {}", std::strerror(errno)));
  }
  return fd;
}

}  // namespace

bool is_in_place_output(const fs::path& path) {
  if (path.empty() || path == "-") return false;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;  // not there (yet): a file to create
  if (S_ISREG(st.st_mode)) return names_own_stream(path);
  return !S_ISDIR(st.st_mode);
}

fs::path output_temp_path(const fs::path& out) {
  static std::atomic<std::uint64_t> counter{0};
  const std::string suffix = fmt::format(".tmp-{}-{}", ::getpid(), counter.fetch_add(1));
  if (!is_in_place_output(out)) {
    fs::path temp = out;
    temp += suffix;
    return temp;
  }
  std::error_code ec;
  fs::path dir = fs::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  return dir / ("capsim-output" + suffix);
}

void write_in_place(const fs::path& out, std::string_view content) {
  const int fd = open_in_place(out);
  const bool ok = write_all(fd, content);
  const int saved = errno;
  if (::close(fd) != 0 && ok) {
    throw ReportWriteError(out, fmt::format("cannot write: {}", std::strerror(errno)));
  }
  if (!ok) throw ReportWriteError(out, fmt::format("cannot write: {}", std::strerror(saved)));
}

void publish_output(const fs::path& temp, const fs::path& out) {
  std::error_code ignored;
  if (!is_in_place_output(out)) {
    std::error_code ec;
    fs::rename(temp, out, ec);
    if (ec) {
      fs::remove(temp, ignored);
      throw ReportWriteError(out, fmt::format("cannot move the file into place: {}", ec.message()));
    }
    return;
  }
  const int in = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    const int saved = errno;
    fs::remove(temp, ignored);
    throw ReportWriteError(
        out, fmt::format("cannot read back {}: {}", temp.string(), std::strerror(saved)));
  }
  int out_fd = -1;
  try {
    out_fd = open_in_place(out);
  } catch (...) {
    ::close(in);
    fs::remove(temp, ignored);
    throw;
  }
  char buffer[1 << 16];
  bool ok = true;
  int saved = 0;
  for (;;) {
    const ssize_t n = ::read(in, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n < 0) ok = false, saved = errno;
      break;
    }
    if (!write_all(out_fd, std::string_view(buffer, static_cast<std::size_t>(n)))) {
      ok = false;
      saved = errno;
      break;
    }
  }
  ::close(in);
  if (::close(out_fd) != 0 && ok) ok = false, saved = errno;
  fs::remove(temp, ignored);
  if (!ok) throw ReportWriteError(out, fmt::format("cannot write: {}", std::strerror(saved)));
}

void refuse_output_over_inputs(const std::string& output_role, const fs::path& out,
                               const std::vector<InputFile>& inputs) {
  if (out.empty() || out == "-" || is_in_place_output(out)) return;
  std::error_code ec;
  const bool out_exists = fs::exists(out, ec);
  const fs::path out_abs = fs::absolute(out, ec).lexically_normal();
  for (const InputFile& in : inputs) {
    if (in.path.empty() || in.path == "-") continue;
    bool same = false;
    if (out_exists && fs::exists(in.path, ec)) {
      same = fs::equivalent(out, in.path, ec) && !ec;
    } else {
      same = fs::absolute(in.path, ec).lexically_normal() == out_abs;
    }
    if (same) {
      throw ReportWriteError(
          out, fmt::format("the {} would overwrite the {} {}; nothing was written (choose "
                           "another output path)",
                           output_role, in.role, in.path.string()));
    }
  }
}

}  // namespace capsim
