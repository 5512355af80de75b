#!/usr/bin/env bash
# Writes the healthgate(1) man page with swift-argument-parser's generate-manual plugin (it ships
# with the argument parser HealthGate already depends on): every command and option, from the same
# definitions as --help, in one page. docs/operations.md, "Shell completions and the man page".
#   bash scripts/man.sh [OUTDIR]          default OUTDIR: .build/man
#   sudo install -Dm644 .build/man/healthgate.1 /usr/local/share/man/man1/healthgate.1 && sudo mandb -q
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-.build/man}"
# Debug is enough for the page (only --help's text is read) and reuses the usual build.
swift package plugin generate-manual --configuration debug --authors "The HealthGate authors" >/dev/null
page=$(find .build/plugins -path '*GenerateManual*' -name healthgate.1 -newer Package.swift -print -quit 2>/dev/null || true)
[ -n "$page" ] || page=$(find .build/plugins -path '*GenerateManual*' -name healthgate.1 -print -quit)
[ -n "$page" ] || { echo "scripts/man.sh: the plugin wrote no healthgate.1 (see its output above)" >&2; exit 1; }
mkdir -p "$out"
cp "$page" "$out/healthgate.1"
echo "$out/healthgate.1"
