#!/usr/bin/env bash
# Compares two trees of report folders file by file, byte for byte, apart from the wall-clock
# time of the run (`wall_s` in summary.json and run.json, the console's and the pages' "s (wall)"
# and "s of wall time"), the tree's own path (the console's `report:` line) and the binary's
# path (its `reproduce:` line). Exit 0 when every file of either tree is in the other and the same.
#
#   harness/benches/same_outputs.sh BEFORE_DIR AFTER_DIR
set -euo pipefail
a=${1:?before dir}; b=${2:?after dir}
norm() {
  sed -E -e "s|$2|ROOT|g" \
    -e 's/("wall_s": *)[0-9.eE+-]+/\1W/g' \
    -e 's/[0-9.]+ s \(wall\)/W s (wall)/g' \
    -e 's/^reproduce: [^ ]+ run /reproduce: ACKBENCH run /' \
    -e 's/in [0-9.]+ s of wall time/in W s of wall time/g' \
    -e 's/(wall_s[^0-9]{0,40})[0-9]+(\.[0-9]+)?/\1W/g' "$1/$3"
}
status=0
files=$( (cd "$a" && find . -type f; cd "$b" && find . -type f) | sort -u)
checked=0
for f in $files; do
  if [[ ! -f "$a/$f" || ! -f "$b/$f" ]]; then
    echo "only in one tree: $f"; status=1; continue
  fi
  checked=$((checked + 1))
  cmp -s "$a/$f" "$b/$f" && continue
  if ! diff -q <(norm "$a" "$a" "$f") <(norm "$b" "$b" "$f") >/dev/null; then
    echo "differs: $f"; diff <(norm "$a" "$a" "$f") <(norm "$b" "$b" "$f") | head -5 || true
    status=1
  fi
done
echo "$checked files compared; $([[ $status == 0 ]] && echo 'all the same apart from wall time' || echo 'DIFFERENCES')"
exit $status
