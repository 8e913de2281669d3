#!/usr/bin/env bash
# Builds the results site (docs/report.md) from a checkout of the branch
# results are published to: every version of each generator's published
# file in that branch's git history (newest 500, the history's bound), and
# the history file, through `ceiling report`. A version that does not
# validate (an older schema, say) is skipped with a warning, not fatal:
# one old file must not take the site down.
#
# usage: .ci/site.sh DATA_CHECKOUT OUT_DIR   (needs bin/ceiling)
set -euo pipefail
data=$1 out=$2
ceiling=${CEILING:-bin/ceiling}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shopt -s nullglob
results=()
histories=()
for f in "$data"/benchmark/published/*.json; do
  rel=${f#"$data"/}
  gen=$(basename "$f" .json)
  [ -f "${f%.json}.history.jsonl" ] && histories+=("${f%.json}.history.jsonl")
  while read -r commit; do
    doc="$work/$gen-$commit.json"
    git -C "$data" show "$commit:$rel" >"$doc" 2>/dev/null || continue
    if "$ceiling" report --format benchstat "$doc" >/dev/null 2>"$doc.err"; then
      results+=("$doc")
    else
      echo "::warning::results site: skipped $rel at $commit: $(head -c 300 "$doc.err")"
    fi
  done < <(git -C "$data" log --format=%H -n 500 -- "$rel")
done
args=()
# One trend: the first generator's history (ceiling-load sorts first today).
[ ${#histories[@]} -gt 0 ] && args+=(--history "${histories[0]}")
if [ ${#results[@]} -eq 0 ] && [ ${#args[@]} -eq 0 ]; then
  echo "results site: nothing published in $data/benchmark/published yet" >&2
  exit 1
fi
"$ceiling" report --out "$out" "${args[@]}" "${results[@]}"
