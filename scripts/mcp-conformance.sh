#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# mcp-clients/package-lock.json, on Node 22 from npm) against a Tidemark node started with the
# suite's fixtures, exactly as the test suite does. Prints every check and the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -pl conformance -am verify -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=ConformanceSuiteIT -Dfailsafe.failIfNoSpecifiedTests=false "$@"
