#!/usr/bin/env bash
# check-layers.sh [ROOT]: fails when a core folder includes a header of a higher layer
# (core/LAYERS), when a core file includes a core header without its folder, when a tool
# reaches into core/ (tools use the public headers, libweft and wire/), or when the MPI front
# end (mpi/) includes anything of Weft but weft/weft.h.  Prints each violation.
set -euo pipefail
root=$(cd "${1:-$(dirname "$0")/..}" && pwd)
declare -A rank
while read -r r folders; do
  [[ -z "$r" || "$r" == \#* ]] && continue
  for f in $folders; do rank[$f]=$r; done
done <"$root/core/LAYERS"

bad=0
cd "$root/core"
for dir in */; do
  dir=${dir%/}
  if [[ -z "${rank[$dir]:-}" ]]; then
    echo "core/$dir: folder not listed in core/LAYERS"; bad=1; continue
  fi
  while IFS=: read -r file line inc; do
    target=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$inc")
    case "$target" in
      weft/*|kvs_wire.hpp) continue ;;  # the public API and the wire formats: any layer
      */*)
        top=${target%%/*}
        if [[ -z "${rank[$top]:-}" ]]; then
          echo "core/$file:$line: includes \"$target\", which is not a core folder"; bad=1
        elif (( rank[$top] > rank[$dir] )); then
          echo "core/$file:$line: layer $dir (${rank[$dir]}) includes \"$target\" of higher layer $top (${rank[$top]})"
          bad=1
        fi ;;
      *)
        if [[ "$file" == */* && -e "$(dirname "$file")/$target" ]]; then
          echo "core/$file:$line: write \"$(dirname "$file")/$target\": core includes name their folder"; bad=1
        elif compgen -G "*/$target" >/dev/null; then
          echo "core/$file:$line: \"$target\" is a core header: include it by its folder"; bad=1
        fi ;;
    esac
  done < <(grep -rn --include='*.cpp' --include='*.hpp' --include='*.h' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$dir" || true)
done

# Tools sit on the public surface: no tool includes a core header.
cd "$root"
while IFS=: read -r file line inc; do
  echo "$file:$line: a tool includes a core header ($inc); use api/weft, libweft or wire/"; bad=1
done < <(grep -rnE '#[[:space:]]*include[[:space:]]*"(base|loader|bootstrap|transport|comm|coll|pgas|enqueue|init)/' tools || true)

# The MPI front end (mpi/) is a layer above the core: the public API (weft/weft.h) and its own
# headers only.
while IFS=: read -r file line inc; do
  echo "$file:$line: the MPI front end includes $inc; it may use weft/weft.h and mpi/ headers only"; bad=1
done < <(grep -rnE '#[[:space:]]*include[[:space:]]*[<"]' mpi --include='*.cpp' --include='*.hpp' --include='*.h' |
         grep -vE '#[[:space:]]*include[[:space:]]*(<weft/weft\.h>|"weft/weft\.h"|<mpi\.h>|[<"]weft_mpi_functions\.def[>"]|"[a-z_]+\.hpp"|<[a-z_]+(\.h)?>|<sys/[a-z_]+\.h>)' || true)

if (( bad )); then
  echo "check-layers: violations above (the layer order is core/LAYERS)"; exit 1
fi
echo "check-layers: core folders respect core/LAYERS"
