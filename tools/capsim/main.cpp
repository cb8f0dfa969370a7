// capsim: the command-line entry point. The subcommands, their one-line help and the dispatch
// are one table (tools/capsim/commands.hpp); every subcommand has --help.
#include <cstdlib>
#include <string>
#include <vector>

#if defined(CAPSIM_WITH_MIMALLOC)
#include <mimalloc.h>
#endif

#include "tools/capsim/commands.hpp"

namespace {

// With mimalloc linked (CMakeLists.txt), its segments are asked for in 2 MiB pages (transparent
// huge pages, through madvise): a fleet run or a large import touches hundreds of megabytes, and
// 4 KiB pages cost a page fault each and a TLB miss on most pointer chases. A user's
// MIMALLOC_LARGE_OS_PAGES still decides. Placement decisions do not depend on it.
void tune_allocator() {
#if defined(CAPSIM_WITH_MIMALLOC)
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") == nullptr) {
    mi_option_set(mi_option_large_os_pages, 1);
  }
#endif
}

}  // namespace

int main(int argc, char** argv) {
  tune_allocator();
  return capsim::cli::dispatch(std::vector<std::string>(argv + 1, argv + argc));
}
