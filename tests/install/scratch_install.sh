# Sourced by the install tests (install-consumer.sh, install-plugins.sh, tests/mpi/install-mpi.sh).
# scratch_install BUILD_DIR WORK_DIR [SANITIZERS]: empties WORK_DIR, installs the build into
# WORK_DIR/prefix and sets `prefix`, and `flags` (the -fsanitize flag a program needs to load a
# sanitized libweft; empty otherwise).
scratch_install() {
  flags=""
  [ -z "${3:-}" ] || flags="-fsanitize=$3"
  prefix=$2/prefix
  rm -rf "$2"
  mkdir -p "$2"
  cmake --install "$1" --prefix "$prefix" >"$2/install.log"
}
