#!/bin/sh
# Build the documentation site into site/ with every warning an error (CI runs this).
# Needs the docs extra: pip install -e '.[docs]'
set -eu
cd "$(dirname "$0")/.."
export NO_MKDOCS_2_WARNING=1  # Material's banner about its successor, not a warning
exec python -m mkdocs build --strict "$@"
