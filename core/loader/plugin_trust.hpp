// What the loader checks before it dlopens anything: that a directory it found on its own may
// be trusted, and that a plugin file is whole.
#pragma once
#include <string>

namespace weft {

// A directory the loader derived itself (beside libweft, the install directory) is trusted
// when it is owned by root or by this user and no one else may write it, as sudo and ld.so's
// secure mode require: otherwise any local user could put a plugin there, whose constructor
// runs in every Weft program.  Directories named in WEFT_PLUGIN_PATH are the user's choice and
// are not checked.  False with the reason in why.
bool plugin_dir_trusted(const std::string &dir, std::string &why);
// The same rule for one plugin file found in a derived directory.
bool plugin_file_trusted(const std::string &path, std::string &why);
// The file is a 64-bit ELF shared object whose program and section headers, and loadable
// segments, lie inside it: a truncated plugin would otherwise kill the process with SIGBUS
// inside dlopen.  False with the reason in why.
bool plugin_file_whole(const std::string &path, std::string &why);

}  // namespace weft
