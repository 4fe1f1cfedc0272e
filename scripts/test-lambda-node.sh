#!/usr/bin/env bash
# Runs what Lambda runs on Lambda's Node major (lib/constructs/api-function.ts NODE_RUNTIME): every bundle's cold
# import, the sandbox tests (escapes included) and the integration tests of proxies, reactors and tokens.
# The Node binary comes from the npm registry (the `node` package ships it), so nothing else is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
major=24 # test/infra/bundles.test.ts checks it against NODE_RUNTIME
exec npx -y -p "node@${major}" -- node --disable-proto=throw ./node_modules/vitest/vitest.mjs run \
  bundles sandbox proxies proxy- reactor tokens code-outbound "$@"
