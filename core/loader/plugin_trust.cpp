#include "loader/plugin_trust.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace weft {

namespace {

bool owner_only_writes(const struct stat &st, const char *what, const std::string &path, std::string &why) {
    if (st.st_uid != 0 && st.st_uid != geteuid()) {
        why = std::string(what) + " " + path + " belongs to user " + std::to_string(st.st_uid) +
            ", neither root nor this user: not searched (name it in WEFT_PLUGIN_PATH to use it anyway)";
        return false;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        why = std::string(what) + " " + path + " is writable by " +
            ((st.st_mode & S_IWOTH) ? "every user" : "its group") +
            ": not searched (chmod go-w it, or name it in WEFT_PLUGIN_PATH to use it anyway)";
        return false;
    }
    return true;
}

}  // namespace

bool plugin_dir_trusted(const std::string &dir, std::string &why) {
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) {
        why = "directory " + dir + ": " + std::strerror(errno);
        return false;
    }
    return owner_only_writes(st, "directory", dir, why);
}

bool plugin_file_trusted(const std::string &path, std::string &why) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
        why = path + ": " + std::strerror(errno);
        return false;
    }
    return owner_only_writes(st, "plugin file", path, why);
}

bool plugin_file_whole(const std::string &path, std::string &why) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        why = "cannot open " + path + ": " + std::strerror(errno);
        return false;
    }
    struct stat st;
    Elf64_Ehdr eh;
    bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::pread(fd, &eh, sizeof eh, 0) == sizeof eh;
    const uint64_t size = ok ? static_cast<uint64_t>(st.st_size) : 0;
    auto fits = [size](uint64_t off, uint64_t len) { return off <= size && len <= size - off; };
    ok = ok && std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
        eh.e_type == ET_DYN && eh.e_phentsize == sizeof(Elf64_Phdr) &&
        fits(eh.e_phoff, uint64_t{eh.e_phnum} * eh.e_phentsize) &&
        (eh.e_shnum == 0 || fits(eh.e_shoff, uint64_t{eh.e_shnum} * eh.e_shentsize));
    if (ok) {
        std::vector<Elf64_Phdr> ph(eh.e_phnum);
        const size_t bytes = ph.size() * sizeof(Elf64_Phdr);
        ok = ::pread(fd, ph.data(), bytes, static_cast<off_t>(eh.e_phoff)) == static_cast<ssize_t>(bytes);
        for (size_t i = 0; ok && i < ph.size(); ++i)
            if (ph[i].p_type == PT_LOAD || ph[i].p_type == PT_DYNAMIC) ok = fits(ph[i].p_offset, ph[i].p_filesz);
    }
    ::close(fd);
    if (!ok) why = "truncated or corrupt plugin " + path + " (not a whole 64-bit ELF shared object); reinstall it";
    return ok;
}

}  // namespace weft
