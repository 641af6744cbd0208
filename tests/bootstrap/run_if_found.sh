#!/bin/sh
# run_if_found.sh LAUNCHER ARGS...: runs the launcher, or exits 77 (ctest SKIP_RETURN_CODE)
# when it is not installed.
if ! command -v "$1" >/dev/null 2>&1; then
    echo "SKIP: launcher '$1' is not installed" >&2
    exit 77
fi
exec "$@"
