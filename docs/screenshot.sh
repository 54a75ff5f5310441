#!/bin/sh
# Renders the HTML report of an experiment in headless Chromium at two window
# widths and writes the screenshots kept in the repository:
# docs/report.png (1280 px wide) and docs/report-800.png (800 px wide).
#
#   docs/screenshot.sh                       # quick.yaml, run first (cached nodes are reused)
#   EXPERIMENT=experiments/ablate-context.yaml docs/screenshot.sh
#   NO_RUN=1 docs/screenshot.sh              # only report + screenshots, from the cache as it is
#   HEIGHT=2000 docs/screenshot.sh           # window height in pixels (default 2400)
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
EXPERIMENT=${EXPERIMENT:-experiments/quick.yaml}

if [ -z "${NO_RUN:-}" ]; then
  deno task run "$EXPERIMENT"
fi
page=.envsmith/report/$(basename "$EXPERIMENT" .yaml).html
./envsmith report "$EXPERIMENT" --out "$page"

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
for width in 1280 800; do
  out=docs/report.png
  [ "$width" = 1280 ] || out=docs/report-$width.png
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$profile" \
    --window-size="$width,${HEIGHT:-2400}" \
    --screenshot="$out" "file://$(pwd)/$page" 2>"$profile/stderr" || {
    cat "$profile/stderr" >&2
    exit 1
  }
  echo "wrote $out ($width px wide) from $page" >&2
done
