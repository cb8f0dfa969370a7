#!/bin/sh
# Runs the team-quotas scenario three ways and prints the per-team waits as a markdown table.
#   scenarios/team-quotas/run.sh [path/to/capsim] [output dir]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
capsim=${1:-"$here/../../build/release/capsim"}
out=${2:-"${TMPDIR:-/tmp}/team-quotas"}
mkdir -p "$out"
"$capsim" run "$here/team-quotas.yaml" -o "$out/borrowing.db" --quiet > /dev/null
"$capsim" run "$here/team-quotas.yaml" -o "$out/no-borrowing.db" --quiet \
  --set 'manifests=[queues-no-borrowing.yaml]' > /dev/null
"$capsim" run "$here/team-quotas.yaml" -o "$out/fair-sharing.db" --quiet \
  --set kueue.fairSharing.enable=true > /dev/null

metric() {  # db metric
  sqlite3 "$1" "SELECT printf('%.0f', value) FROM summary WHERE metric = '$2'"
}
share() {
  sqlite3 "$1" "SELECT printf('%.0f%%', 100 * value) FROM summary WHERE metric = '$2'"
}
echo "| team | run | pod wait mean (s) | p95 (s) | p99 (s) | admission wait p95 (s) | GPU-hour share | preempted | PodsReady timeouts |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
for team in research product evals; do
  for run in no-borrowing borrowing fair-sharing; do
    db="$out/$run.db"
    echo "| $team | $run | $(metric "$db" "queue.$team.wait_seconds_mean") |" \
      "$(metric "$db" "queue.$team.wait_seconds_p95") |" \
      "$(metric "$db" "queue.$team.wait_seconds_p99") |" \
      "$(metric "$db" "clusterqueue.$team.admission_wait_seconds_p95") |" \
      "$(share "$db" "clusterqueue.$team.gpu_hour_share") |" \
      "$(metric "$db" "clusterqueue.$team.preemptions") |" \
      "$(metric "$db" "clusterqueue.$team.pods_ready_timeouts") |"
  done
done

# The synthetic teams change with the seed (the research trace does not): research's mean pod
# wait over seeds 1-8, per run.
echo
echo "| run | research mean wait over seeds 1-8: min | mean | max (s) | product p95, mean (s) | evals p95, mean (s) | Kueue preemptions, mean |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for run in no-borrowing borrowing fair-sharing; do
  case $run in
    no-borrowing) extra="--set manifests=[queues-no-borrowing.yaml]" ;;
    borrowing) extra="" ;;
    fair-sharing) extra="--set kueue.fairSharing.enable=true" ;;
  esac
  rm -f "$out/seeds-$run.db"
  for seed in 1 2 3 4 5 6 7 8; do
    # shellcheck disable=SC2086
    "$capsim" run "$here/team-quotas.yaml" -o "$out/seeds-$run.db" --append --quiet \
      --seed "$seed" $extra > /dev/null
  done
  sqlite3 "$out/seeds-$run.db" "
    WITH m(name, metric) AS (VALUES ('w', 'queue.research.wait_seconds_mean'),
                                    ('p', 'queue.product.wait_seconds_p95'),
                                    ('e', 'queue.evals.wait_seconds_p95'),
                                    ('k', 'kueue.preemptions')),
         v AS (SELECT m.name, s.value FROM summary s JOIN m ON s.metric = m.metric)
    SELECT '| $run | ' ||
      (SELECT printf('%.0f | %.0f | %.0f', min(value), avg(value), max(value)) FROM v
       WHERE name = 'w') || ' | ' ||
      (SELECT printf('%.0f', avg(value)) FROM v WHERE name = 'p') || ' | ' ||
      (SELECT printf('%.0f', avg(value)) FROM v WHERE name = 'e') || ' | ' ||
      (SELECT printf('%.1f', avg(value)) FROM v WHERE name = 'k') || ' |'"
done
