#!/usr/bin/env bash
# Runs every shipped sim profile (profiles/**/*.yaml without `mode: live`) with the given
# ackbench binary and writes each run's report folder under OUT/<profile path>/, plus one run
# with --trace (each run's console output beside its folder, DIR.console.txt), so two builds can be compared with same_outputs.sh:
#
#   harness/benches/shipped_outputs.sh target/release/ackbench /tmp/before
#   (change, rebuild)
#   harness/benches/shipped_outputs.sh target/release/ackbench /tmp/after
#   harness/benches/same_outputs.sh /tmp/before /tmp/after
set -uo pipefail
bin=${1:?ackbench binary}; out=${2:?output dir}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
for p in $(find profiles -name '*.yaml' | sort); do
  grep -qE '^mode: *live' "$p" && continue
  dir="$out/${p%.yaml}"
  rm -rf "$dir" "$dir.console.txt"; mkdir -p "$(dirname "$dir")"
  "$bin" run "$p" --out "$dir" >"$dir.console.txt" 2>&1
  echo "$p: exit $?"
done
rm -rf "$out/trace-marlow-thursday"
"$bin" run profiles/marlow-thursday.yaml --out "$out/trace-marlow-thursday" --trace msg-3 >"$out/trace-marlow-thursday.console.txt" 2>&1
echo "profiles/marlow-thursday.yaml --trace msg-3: exit $?"
