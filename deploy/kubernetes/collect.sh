#!/bin/sh
# collect.sh: gather the shards' results of a finished storebench Job from
# its pods' logs and merge them into one result with its HTML report.
#
#   collect.sh [JOB [DIR]]    JOB defaults to storebench, DIR to ./JOB-results:
#                             DIR/logs/POD.log, DIR/shards/POD.json, DIR/merged/
#   collect.sh --cut          read one pod's log on stdin, write its result.json
#                             to stdout (what the first form does per pod)
#
# Each pod prints its result.json gzipped and base64-encoded between the
# lines "--- storebench result I begin ---" and "--- storebench result I
# end ---" (job.yaml). kubectl must reach the cluster, and storebench (or
# $STOREBENCH) must be on this machine: the merge runs here.
set -eu

# cut_result writes the result between the markers of the log on stdin;
# a log without exactly one complete block (a pod that failed, a log the
# kubelet rotated away) is an error, not an empty file.
cut_result() {
	block=$(mktemp)
	if ! awk '
		/^--- storebench result [0-9]+ begin ---$/ { blocks++; inside = 1; next }
		/^--- storebench result [0-9]+ end ---$/ { if (inside) ended++; inside = 0; next }
		inside { print }
		END { exit !(blocks == 1 && ended == 1) }' >"$block"; then
		rm -f "$block"
		echo "collect.sh: the log holds no single complete storebench result between marker lines" >&2
		return 1
	fi
	# gzip checks its CRC: a damaged block fails here, not in the merge.
	if ! base64 -d <"$block" | gzip -dc; then
		rm -f "$block"
		echo "collect.sh: the result between the marker lines does not decode (base64, gzip)" >&2
		return 1
	fi
	rm -f "$block"
}

if [ "${1:-}" = "--cut" ]; then
	cut_result
	exit
fi

job=${1:-storebench}
dir=${2:-./$job-results}
storebench=${STOREBENCH:-storebench}
if [ -e "$dir/merged" ]; then
	echo "collect.sh: $dir/merged exists; give another DIR" >&2
	exit 2
fi
mkdir -p "$dir/logs" "$dir/shards"

completions=$(kubectl get job "$job" -o 'jsonpath={.spec.completions}')
pods=$(kubectl get pods -l "job-name=$job" --field-selector=status.phase=Succeeded -o 'jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}')
found=0
for pod in $pods; do
	kubectl logs "$pod" >"$dir/logs/$pod.log"
	cut_result <"$dir/logs/$pod.log" >"$dir/shards/$pod.json"
	found=$((found + 1))
done
if [ "$found" -ne "$completions" ]; then
	# merge would refuse too; this says which pods to look at.
	echo "collect.sh: $found of $completions pods of job $job succeeded; see kubectl get pods -l job-name=$job" >&2
	exit 1
fi
# merge writes result.json and report.html into the new directory.
"$storebench" merge "$dir"/shards/*.json -o "$dir/merged"
