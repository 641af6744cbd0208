#!/usr/bin/env bash
# older-abi.sh KIT PLUGIN: the plugin (built against abi-1.0/weft/plugin.h) passes the
# conformance kit, in process and through weft_init in a weftrun job, and says ABI 1.0.
set -u -o pipefail
kit=$1 plugin=$2
out=$("$kit" --fabric "$plugin" 2>&1)
rc=$?
echo "$out"
echo "$out" | grep -q 'ABI 1\.0' || { echo "older-abi: the kit did not report the plugin as ABI 1.0"; exit 1; }
echo "$out" | grep -q '^PASS  Multiprocess\.' || { echo "older-abi: no multi-process check ran (the core never loaded it)"; exit 1; }
exit $rc
