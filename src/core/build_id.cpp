#include "core/build_id.hpp"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <string>

namespace warden {

namespace {

// Looks for the build-ID note in the main program's PT_NOTE segments (the first object
// dl_iterate_phdr reports is the executable).
int find_build_id(dl_phdr_info* info, std::size_t /*size*/, void* out) {
  auto& id = *static_cast<std::string*>(out);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note{};
      std::memcpy(&note, p, sizeof(note));
      const unsigned char* name = p + sizeof(note);
      const unsigned char* desc = name + ((note.n_namesz + 3) & ~3U);
      const unsigned char* next = desc + ((note.n_descsz + 3) & ~3U);
      if (next > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        static constexpr char kHex[] = "0123456789abcdef";
        for (std::uint32_t b = 0; b < note.n_descsz; ++b) {
          id.push_back(kHex[desc[b] >> 4]);
          id.push_back(kHex[desc[b] & 15]);
        }
        return 1;
      }
      p = next;
    }
  }
  return 1;  // only the executable is searched
}

}  // namespace

std::string_view executable_build_id() noexcept {
  static const std::string id = [] {
    std::string out;
    dl_iterate_phdr(find_build_id, &out);
    return out;
  }();
  return id;
}

}  // namespace warden
