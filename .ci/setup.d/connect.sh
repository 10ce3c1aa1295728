#!/usr/bin/env bash
# Connect e2e tools, fetched from npm ahead of the tests (they run them with
# `deno run -A --no-config --no-lock npm:...`): buf (lint/build of the generated
# .proto) and Redocly CLI (lint of the generated OpenAPI). Idempotent; a failure
# here only means the tests fetch them themselves.
set -uo pipefail
cd "$(mktemp -d)" || exit 1
deno run -A --quiet --no-config --no-lock npm:@bufbuild/buf@1.74.0 --version || exit 1
deno run -A --quiet --no-config --no-lock npm:@redocly/cli@2.77.0 --version || exit 1
