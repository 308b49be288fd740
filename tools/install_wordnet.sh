#!/usr/bin/env bash
# Install WordNet 3.0 for nltk (METEOR) from Debian, without nltk's data server.
#
# Usage: tools/install_wordnet.sh [VENV]   (default: .venv next to this script's repo)
# Idempotent: apt-get runs only when /usr/share/wordnet lacks the files, files are
# copied only when they differ, and a second run changes nothing.
#
# Why copies, not symlinks: nltk 3.10 refuses links that leave its corpus root.
# Why a generated lexnames: Debian ships none; nltk needs "NN<TAB>name<TAB>category"
# lines, built here from the lexnames(5WN) man page (noun 1, verb 2, adj 3, adv 4).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$repo/.venv}
source_dir=/usr/share/wordnet
target=$venv/share/nltk_data/corpora/wordnet
manpage=/usr/share/man/man5/lexnames.5WN.gz

if [ ! -f "$source_dir/data.noun" ] || [ ! -f "$source_dir/index.sense" ] || [ ! -f "$manpage" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index >/dev/null \
        || { apt-get update >/dev/null && apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index >/dev/null; }
fi
[ -d "$venv" ] || { echo "install_wordnet.sh: no virtual environment at $venv; fix: create it or pass its path" >&2; exit 1; }

mkdir -p "$target"
for file in "$source_dir"/*.exc "$source_dir"/cntlist.rev "$source_dir"/data.* "$source_dir"/index.*; do
    cmp -s "$file" "$target/$(basename "$file")" || cp "$file" "$target/"
done

lexnames=$(zcat "$manpage" | awk -F'\t' '$1 ~ /^[0-9][0-9]$/ { name = $2; gsub(/[ \t]+/, "", name)
    split(name, part, "."); category = (part[1] == "noun") ? 1 : (part[1] == "verb") ? 2 : (part[1] == "adj") ? 3 : 4
    printf "%s\t%s\t%d\n", $1, name, category }')
[ "$(printf '%s\n' "$lexnames" | wc -l)" -eq 45 ] || { echo "install_wordnet.sh: expected 45 lexnames in $manpage" >&2; exit 1; }
printf '%s\n' "$lexnames" | cmp -s - "$target/lexnames" || printf '%s\n' "$lexnames" > "$target/lexnames"

# Where nltk looks: found. Reading it (nltk loads every lemma index first, 5-8 s) is left to METEOR's tests and
# jobs, which say what to run where it fails (storyeval.metrics.meteor).
"$venv/bin/python" -c "import nltk; nltk.data.find('corpora/wordnet/lexnames'); nltk.data.find('corpora/wordnet/data.noun')" \
    || { echo "install_wordnet.sh: nltk finds no WordNet under $target" >&2; exit 1; }
echo "WordNet ready under $target"
