#!/usr/bin/env bash
# Runs the official MCP conformance suite twice against a Tidemark node started with the suite's
# fixtures, exactly as the test suite (and so .ci/run) does: 0.1.16's active suite for 2025-11-25,
# and 0.2.0-alpha.12's `--requirements 2026-07-28` run (both pinned in mcp-clients/package-lock.json,
# on Node 22 from npm). Prints every check of every scenario and both summaries; fails when a
# scored scenario fails. The checks.json files stay in conformance/target/conformance/<revision>/.
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -pl conformance -am verify -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=ConformanceSuiteIT -Dfailsafe.failIfNoSpecifiedTests=false "$@"
