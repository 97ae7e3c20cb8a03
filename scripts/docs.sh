#!/usr/bin/env bash
# make docs: the reference of the core modules with DocC (the toolchain's `docc`), as static HTML in .build/docs.
#
# Each core module has a catalog, Sources/<area>/Core/<Module>/<Module>.docc, whose landing page introduces it; the
# reference comes from the module's public declarations and their doc comments (symbol graphs that SwiftPM
# extracts from the debug build). A broken link in a doc comment or a catalog is an error here, not a warning.
#
# Environment: SWIFT, DOCC (default: docc next to swift), DOCS_DIR (default .build/docs), DOCS_MODULES (default:
# every core module).
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
DOCC=${DOCC:-$(dirname "$(command -v "$SWIFT")")/docc}
OUT=${DOCS_DIR:-.build/docs}
if [ -z "${DOCS_MODULES:-}" ]; then
    DOCS_MODULES=$(for catalog in Sources/*/Core/*/*.docc; do basename "$catalog" .docc; done | sort | tr '\n' ' ')
fi
[ -x "$DOCC" ] || { echo "docs: docc is missing (expected at $DOCC, part of the Swift 6.3 toolchain)"; exit 1; }

echo "docs: extracting symbol graphs (builds what is not built yet)"
mkdir -p .build
$SWIFT package dump-symbol-graph --minimum-access-level public >.build/docs-symbol-graphs.log 2>&1 \
    || { tail -40 .build/docs-symbol-graphs.log; exit 1; }
graphs=$(find .build -path '*/symbolgraph' -type d -newer Package.swift -print -quit)
[ -n "$graphs" ] || graphs=$(find .build -path '*/symbolgraph' -type d -print -quit)
[ -n "$graphs" ] || { echo "docs: swift package dump-symbol-graph wrote no symbol graphs"; exit 1; }

rm -rf "$OUT"
mkdir -p "$OUT"
index="$OUT/index.html"
echo '<!doctype html><meta charset="utf-8"><title>HomeApps core modules</title><h1>HomeApps core modules</h1><ul>' \
    >"$index"
for module in $DOCS_MODULES; do
    catalog=$(ls -d Sources/*/Core/"$module"/"$module".docc)
    only="$OUT/.graphs/$module"
    mkdir -p "$only"
    cp "$graphs/$module".symbols.json "$only/"
    cp "$graphs/$module"@*.symbols.json "$only/" 2>/dev/null || true
    echo "docs: $module"
    "$DOCC" convert "$catalog" --additional-symbol-graph-dir "$only" \
        --fallback-display-name "$module" --fallback-bundle-identifier "homeapps.$module" \
        --output-path "$OUT/$module" --transform-for-static-hosting --hosting-base-path "$module" \
        --warnings-as-errors >"$OUT/.graphs/$module.log" 2>&1 || { cat "$OUT/.graphs/$module.log"; exit 1; }
    lower=$(echo "$module" | tr '[:upper:]' '[:lower:]')
    echo "<li><a href=\"$module/documentation/$lower/\">$module</a></li>" >>"$index"
done
echo '</ul>' >>"$index"
rm -rf "$OUT/.graphs"
echo "docs: $OUT/index.html; DocC's pages load their data with fetch, so serve them:"
echo "      python3 -m http.server --directory $OUT 8000   (then open http://localhost:8000/)"
