#!/usr/bin/env bash
# Installs the real mermaid renderer (@mermaid-js/mermaid-cli, pinned in
# .ci/mermaid/package-lock.json) into the git-ignored .cache/mmdc, driven by
# the system's chromium: puppeteer's own browser download is skipped. Used
# by .ci/run and by publish's chart test (publish/mermaid_test.go), so both
# render with the same versions. Idempotent: a second run with the same lock
# file does nothing. Prints the mmdc path and the puppeteer config path.
#
#   CHROMIUM   the browser to drive (default: the first of chromium,
#              chromium-browser, google-chrome, google-chrome-stable on PATH)
#
# Exit status 3: no browser or no npm (the test skips on it outside CI).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.cache/mmdc"

chromium="${CHROMIUM:-}"
if [ -z "$chromium" ]; then
  for b in chromium chromium-browser google-chrome google-chrome-stable; do
    chromium="$(command -v "$b" || true)"
    [ -n "$chromium" ] && break
  done
fi
[ -n "$chromium" ] && [ -x "$chromium" ] || { echo ".ci/mermaid.sh: no browser (apt-get install chromium, or set CHROMIUM)" >&2; exit 3; }
command -v npm >/dev/null || { echo ".ci/mermaid.sh: npm is not installed (apt-get install npm)" >&2; exit 3; }

mkdir -p "$dir"
if ! cmp -s "$root/.ci/mermaid/package-lock.json" "$dir/package-lock.json" || [ ! -x "$dir/node_modules/.bin/mmdc" ]; then
  cp "$root/.ci/mermaid/package.json" "$root/.ci/mermaid/package-lock.json" "$dir/"
  PUPPETEER_SKIP_DOWNLOAD=1 npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
fi

# The headless flags a closed network needs (see docs/publish.md): without
# the background-networking ones chromium keeps dialling Google's hosts.
cat > "$dir/puppeteer.json" <<JSON
{
  "executablePath": "$chromium",
  "headless": true,
  "args": ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage"]
}
JSON
echo "$dir/node_modules/.bin/mmdc"
echo "$dir/puppeteer.json"
