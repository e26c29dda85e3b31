#!/usr/bin/env bash
# dsh-call.sh measures what one `dsh call bash '{"command":"true",…}'` costs beside
# `bash -c true`, the figure issue 21 asks to bring within 4×, and where the time goes: it
# builds dsh, then runs the commands below in turn, round after round (alternating, so that a
# change in the machine's load hits them all alike), and prints each one's median and 90th
# percentile wall time and its ratio to `bash -c true`.
#
#   bash -c true              the baseline
#   dsh version               starting the Go binary (runtime, package init), nothing else
#   dsh tools                 the same plus building the tool registry and deriving the schemas
#   dsh call bash_tasks {}    the same plus the supervisor's re-exec of the worker and a call
#                             that starts no process
#   dsh call bash true        the same plus starting bash and reaping it (the sweep of
#                             escapees included)
#
# Usage, from anywhere in the repository: scripts/bench/dsh-call.sh [ROUNDS] (default 100)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dsh" ./cmd/dsh
cd "$tmp"

names=("bash -c true" "dsh version" "dsh tools" "dsh call bash_tasks {}" "dsh call bash true")
run() {
	case $1 in
	0) bash -c true ;;
	1) ./dsh version ;;
	2) ./dsh tools ;;
	3) ./dsh call bash_tasks '{}' ;;
	4) ./dsh call bash '{"command":"true","description":"Do nothing"}' ;;
	esac
}
for i in "${!names[@]}"; do run "$i" >/dev/null 2>&1 || true; done # warm the page cache
for ((r = 0; r < rounds; r++)); do
	for i in "${!names[@]}"; do
		start=$EPOCHREALTIME
		run "$i" >/dev/null 2>&1 || true
		echo "$i $start $EPOCHREALTIME"
	done
done >times

awk -v names="$(printf '%s\n' "${names[@]}")" '
	BEGIN { n = split(names, name, "\n") }
	{ t[$1, ++c[$1]] = ($3 - $2) * 1000 }
	END {
		printf "%-24s %10s %10s %8s\n", "command", "median ms", "p90 ms", "× bash"
		for (i = 0; i < n; i++) {
			k = c[i]
			for (a = 1; a <= k; a++) v[a] = t[i, a]
			for (a = 2; a <= k; a++) { x = v[a]; for (b = a - 1; b >= 1 && v[b] > x; b--) v[b + 1] = v[b]; v[b + 1] = x }
			med[i] = v[int((k + 1) / 2)]; p90 = v[int(k * 0.9 + 0.5)]
			printf "%-24s %10.1f %10.1f %8.1f\n", name[i + 1], med[i], p90, med[i] / med[0]
		}
	}' times
echo "($rounds rounds, load average $(cut -d' ' -f1-3 /proc/loadavg))"
