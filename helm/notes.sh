#!/usr/bin/env bash
# Prints the notes `helm install` would print (templates/NOTES.txt) for a release of a chart, rendered
# offline: `helm template` renders no notes, so they are rendered as a template of a copy of the chart.
# Usage: helm/notes.sh HELM CHART RELEASE [helm template options...]
set -euo pipefail
helm=$1 chart=$2 release=$3
shift 3
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp -r "$chart" "$copy/chart"
{ echo 'notes: |'; sed 's/^/  /' "$copy/chart/templates/NOTES.txt"; } >"$copy/chart/templates/notes-check.yaml"
rm "$copy/chart/templates/NOTES.txt"
"$helm" template "$release" "$copy/chart" "$@" --show-only templates/notes-check.yaml | sed '1,/^notes: |$/d; s/^  //'
