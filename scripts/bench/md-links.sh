#!/usr/bin/env bash
# md-links.sh compares verify-md-links with remark-validate-links (the
# offline checker built on github-slugger) on the benchmark corpus: about
# 2,000 Markdown files, 13 MB, 14,000 relative links with fragments. It
# checks that both pass the clean corpus and report exactly the planted
# broken links on a faulty copy, then prints the two times and their ratio.
# Without npx it checks and times verify-md-links alone. remark is
# installed with npm into a temporary directory that is removed at the end.
#
# Usage, from anywhere in the repository: scripts/bench/md-links.sh [FAULTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
faults=${1:-50}
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"; [ -n "${KEEP:-}" ] && echo "kept $tmp"' EXIT

# remark resolves its plugins from the files' folders, so with npx the
# corpora live beside its node_modules.
work=$tmp
if command -v npx >/dev/null; then
	work=$tmp/npm
	npm install --silent --no-audit --no-fund --prefix "$work" \
		remark-cli@12 remark-validate-links@13 remark-gfm@4 >/dev/null
fi
go run ./scripts/bench/gen-corpus -o "$work/clean"
go run ./scripts/bench/gen-corpus -o "$work/faulty" -faults "$faults" -expect "$tmp/expected"
go build -o "$tmp/verify-md-links" ./scripts/verify-md-links

# timed CMD... runs CMD, sets $status to its exit status and $elapsed to its
# wall time in seconds.
timed() {
	local start=$EPOCHREALTIME
	set +e
	"$@"
	status=$?
	set -e
	elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
}

timed "$tmp/verify-md-links" -root "$work/clean" >/dev/null 2>&1
[ "$status" -eq 0 ] || { echo "verify-md-links failed on the clean corpus" >&2; exit 1; }
ours=$elapsed
"$tmp/verify-md-links" -root "$work/faulty" 2>/dev/null | cut -d: -f1,2 | sort -u >"$tmp/ours" || true
if ! diff -u "$tmp/expected" "$tmp/ours"; then
	echo "verify-md-links does not report exactly the planted faults" >&2
	exit 1
fi
echo "verify-md-links: clean corpus in ${ours}s; reports exactly the $faults planted faults"

if ! command -v npx >/dev/null; then
	echo "npx not found: remark-validate-links skipped"
	exit 0
fi
remark=("$work/node_modules/.bin/remark" --quiet --frail --no-stdout --no-color --no-config --no-ignore
	--use remark-gfm --use "remark-validate-links=repository:false")

cd "$work/clean"
timed "${remark[@]}" . 2>"$tmp/theirs-clean.log"
theirs=$elapsed
if [ "$status" -ne 0 ] || [ -s "$tmp/theirs-clean.log" ]; then
	echo "remark-validate-links fails on the clean corpus (exit $status):" >&2
	head -20 "$tmp/theirs-clean.log" >&2
	exit 1
fi
cd "$work/faulty"
"${remark[@]}" . 2>"$tmp/theirs-faulty.log" || true
# remark prints a file name, then "LINE:COL-LINE:COL  warning ..." rows.
awk '/^ *[0-9]+:[0-9]+/ { split($1, p, ":"); print file ":" p[1]; next } /^[^ ]/ { file = $1 }' \
	"$tmp/theirs-faulty.log" | sort -u >"$tmp/theirs"
if ! diff -u "$tmp/expected" "$tmp/theirs"; then
	echo "remark-validate-links does not report exactly the planted faults" >&2
	exit 1
fi
echo "remark-validate-links: clean corpus in ${theirs}s; reports exactly the $faults planted faults"
awk -v a="$theirs" -v b="$ours" 'BEGIN { printf "ratio: remark-validate-links takes %.1fx the time of verify-md-links\n", a / b }'
