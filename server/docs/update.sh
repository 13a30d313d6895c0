#!/usr/bin/env bash
# Refreshes the embedded Redoc bundle: redoc's standalone build from npm (pinned), with its one
# reference to an outside host (the "API docs by Redocly" logo on cdn.redoc.ly) replaced by an
# empty data: URL, so that /docs loads nothing from anywhere but the gateway. Run from anywhere;
# commit the result.
set -euo pipefail
VERSION=2.5.2
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "redoc@$VERSION" >/dev/null && tar xzf "redoc-$VERSION.tgz")
sed 's#https://cdn.redoc.ly/redoc/logo-mini.svg#data:,#' "$tmp/package/bundles/redoc.standalone.js" > redoc.standalone.js
cp "$tmp/package/LICENSE" redoc.LICENSE
cp "$tmp/package/bundles/redoc.standalone.js.LICENSE.txt" redoc.standalone.js.LICENSE.txt
if grep -Eo 'src:"https?://[^"]+' redoc.standalone.js; then
  echo "update.sh: the bundle still loads something from another host" >&2
  exit 1
fi
echo "redoc $VERSION: $(wc -c < redoc.standalone.js) bytes"
