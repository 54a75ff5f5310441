#!/bin/sh
# Renders the HTML report of experiments/quick.yaml in headless Chromium and
# writes docs/report.png (the screenshot kept in the repository).
#
#   docs/screenshot.sh                # runs quick.yaml first (cached nodes are reused)
#   NO_RUN=1 docs/screenshot.sh       # only report + screenshot, from the cache as it is
#   HEIGHT=2000 docs/screenshot.sh    # window height in pixels (default: the whole quick report)
#
# Needs Deno and Chromium (Debian: apt-get install -y chromium; or set
# CHROMIUM=/path/to/chrome). The cache is $ENVSMITH_CACHE or .envsmith/cache.
set -eu
cd "$(dirname "$0")/.."

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -z "$CHROMIUM" ]; then
  echo "docs/screenshot.sh: Chromium not found; install it (apt-get install -y chromium) or set CHROMIUM=/path/to/chrome" >&2
  exit 2
fi

if [ -z "${NO_RUN:-}" ]; then
  deno task run experiments/quick.yaml
fi
page=.envsmith/report/quick.html
deno task report experiments/quick.yaml --out "$page"

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --hide-scrollbars --user-data-dir="$profile" \
  --window-size="1280,${HEIGHT:-3100}" \
  --screenshot=docs/report.png "file://$(pwd)/$page" 2>"$profile/stderr" || {
  cat "$profile/stderr" >&2
  exit 1
}
echo "wrote docs/report.png from $page" >&2
