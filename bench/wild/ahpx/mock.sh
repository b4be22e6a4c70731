#!/bin/sh
# Starts the ahpx test mock host on 127.0.0.1 and prints its ws:// URL (one line).
# usage: mock.sh echo|toolcall|none [AHPX_CHECKOUT]    (see README.md; run setup.sh once)
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$here/node_modules/tsx/dist/esm/index.mjs" ] || [ ! -d "$here/node_modules/ws" ]; then
    echo "mock.sh: $here/node_modules is missing tsx or ws: run $here/setup.sh" >&2
    exit 2
fi
exec node --import "file://$here/node_modules/tsx/dist/esm/index.mjs" "$here/launch-mock.ts" "$@"
