#!/bin/sh
# Installs the launcher's two npm packages (tsx, ws) into bench/wild/ahpx/node_modules,
# exactly as package-lock.json pins them. Offline-safe: prefers the local npm cache, runs no
# install scripts (esbuild's postinstall only checks its platform binary, which the
# optional @esbuild/* package already provides), no audit, no funding lookups.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
if [ -f node_modules/tsx/dist/esm/index.mjs ] && [ -d node_modules/ws ] && [ "${1:-}" != "--force" ]; then
    echo "setup.sh: node_modules already present (pass --force to reinstall)"
    exit 0
fi
npm ci --prefer-offline --ignore-scripts --no-audit --no-fund
echo "setup.sh: installed $(node -p 'require("./node_modules/tsx/package.json").version') tsx, $(node -p 'require("./node_modules/ws/package.json").version') ws"
