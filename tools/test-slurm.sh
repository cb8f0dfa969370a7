#!/usr/bin/env bash
# Sweeps on a real Slurm: installs Debian's Slurm and MUNGE when missing, starts a one-node
# cluster on this machine (loopback only, the machine's own hostname, no cgroups, every file in
# a temporary directory), submits docs/sweep-slurm.sh with sbatch exactly as docs/planning.md
# says (it submits an array of shards and a merge job that depends on the array), waits for
# every job, and checks that the merged file holds the same tables as the same sweep run whole.
#
#   tools/test-slurm.sh [SWEEP.yaml]     default: a 24-variant sweep of scenarios/tests/small.yaml
#   CAPSIM=path/to/capsim SHARDS=4 TIMEOUT=900 tools/test-slurm.sh scenarios/planning/sweep.yaml
#
# Compared: every table of both files, row by row in stored order, except `run.wall_seconds` and
# `run.started_at` (wall-clock time of each run) and the `sweep_shard` table (which shards made
# the file); docs/planning.md says these are the only parts that differ. `capsim compare` on both
# files must print the same table too.
#
# Exit 0 when the files agree, 1 when they do not or a job failed, 2 on a usage error, and 77
# when Slurm cannot be started here (not root, packages not installable, a daemon refuses to
# start), with the reason on stderr. Every daemon it started is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
readonly SKIPPED=77

say() { echo "test-slurm: $*" >&2; }
skip() { say "SKIPPED: $*"; exit "$SKIPPED"; }
fail() { say "FAILED: $*"; exit 1; }

capsim=$(realpath -e "${CAPSIM:-build/ci/capsim}" 2>/dev/null) ||
  { say "no capsim binary at ${CAPSIM:-build/ci/capsim} (build it: tools/setup.sh ci)"; exit 2; }
shards=${SHARDS:-4}
timeout=${TIMEOUT:-900}

# --- Slurm and MUNGE from Debian's packages ------------------------------------------------------
[[ $(id -u) -eq 0 ]] || skip "needs root to install Slurm and run slurmd (it runs jobs as their user)"
need=(slurmctld slurmd sbatch sinfo squeue scontrol munged)
missing=0
for c in "${need[@]}"; do PATH=$PATH:/usr/sbin command -v "$c" >/dev/null || missing=1; done
if ((missing)); then
  command -v apt-get >/dev/null || skip "Slurm is not installed and there is no apt-get to install it"
  export DEBIAN_FRONTEND=noninteractive
  say "installing slurmctld slurmd slurm-client munge (Debian packages)"
  if ! apt-cache show slurmctld >/dev/null 2>&1; then apt-get update -q >&2 || true; fi
  apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge >&2 ||
    skip "could not install slurmctld slurmd slurm-client munge with apt-get"
fi
PATH=$PATH:/usr/sbin
for c in "${need[@]}"; do
  command -v "$c" >/dev/null || skip "$c is still missing after installing Slurm and MUNGE"
done

# --- the cluster's files, all under one temporary directory --------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/capsim-slurm.XXXXXX")
pids=()
cleanup() {
  local rc=$?
  if [[ -n ${SLURM_CONF:-} && -f $SLURM_CONF ]] && ((${#pids[@]} == 3)); then
    # Jobs first, so that no job step outlives slurmd.
    scancel --quiet --user=root 2>/dev/null || true
    for _ in $(seq 20); do [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break; sleep 0.5; done
  fi
  # Newest first: slurmd (and the job steps under it), slurmctld, munged.
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    for _ in $(seq 50); do kill -0 "${pids[i]}" 2>/dev/null || break; sleep 0.2; done
    kill -9 "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
  done
  if ((rc != 0)) && [[ ${KEEP_LOGS:-} != 1 ]]; then
    local d f
    for d in munged slurmctld slurmd; do
      f=$work/log/$d.log
      [[ -s $f ]] || f=$work/log/$d.err
      [[ -s $f ]] && { say "--- last lines of $(basename "$f")"; tail -15 "$f" >&2; }
    done
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$work"/{munge,log,state,spool,run,out}
chmod 700 "$work"/munge

# Two free TCP ports for slurmctld and slurmd (a concurrent run elsewhere must not collide).
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ports=()
while ((${#ports[@]} < 2)); do
  p=$((20000 + RANDOM % 30000))
  port_free "$p" && [[ " ${ports[*]} " != *" $p "* ]] && ports+=("$p")
done

host=$(hostname -s)
getent hosts "$host" >/dev/null || skip "this machine's hostname '$host' does not resolve"
# slurmd -C prints what slurmd finds on this machine; the node is declared with exactly that
# memory so slurmd does not drain it, and with 2 CPUs whatever the machine has.
memory=$(slurmd -C 2>/dev/null | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
[[ -n $memory ]] || skip "slurmd -C does not run here: $(slurmd -C 2>&1 | head -1)"

dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
socket=$work/munge/munge.socket

export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
# One-node test cluster of tools/test-slurm.sh.
ClusterName=capsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups and no systemd: processes are tracked through /proc, tasks are not confined.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
# Finished jobs stay visible to scontrol long enough to read their exit codes.
MinJobAge=3600
NodeName=$host NodeAddr=127.0.0.1 NodeHostname=$host CPUs=2 RealMemory=$memory State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

# --- start munged, slurmctld and slurmd ----------------------------------------------------------
# Each daemon runs in the foreground (its pid is ours to stop) and logs to its log file; what it
# says before it has read its configuration goes to <name>.err.
started() {  # name pid: is the daemon still running a moment after its start?
  sleep 1
  kill -0 "$2" 2>/dev/null ||
    skip "$1 refused to start: $(cat "$work/log/$1.err" "$work/log/$1.log" 2>/dev/null | tail -3 | tr '\n' ' ')"
}
munged --foreground --force --key-file="$work/munge/munge.key" --socket="$socket" \
  --pid-file="$work/run/munged.pid" --seed-file="$work/munge/seed" \
  --log-file="$work/log/munged.log" 2>"$work/log/munged.err" &
pids+=($!)
started munged "${pids[-1]}"
slurmctld -D -i -f "$SLURM_CONF" >"$work/log/slurmctld.err" 2>&1 &
pids+=($!)
started slurmctld "${pids[-1]}"
slurmd -D -N "$host" -f "$SLURM_CONF" >"$work/log/slurmd.err" 2>&1 &
pids+=($!)
started slurmd "${pids[-1]}"

state=""
for _ in $(seq 60); do
  state=$(sinfo -h -N -n "$host" -o %T 2>/dev/null || true)
  [[ $state == idle ]] && break
  sleep 1
done
[[ $state == idle ]] ||
  skip "the node did not become idle within 60 s (sinfo says '${state:-nothing}': $(sinfo -h -N -o '%T %E' 2>&1 | head -1))"
say "slurm $(sinfo -V | cut -d' ' -f2): node $host idle (2 CPUs, ${memory} MB), ports ${ports[*]}"

# --- the sweep -----------------------------------------------------------------------------------
if (($# > 0)); then
  sweep=$(realpath -e "$1") || { say "no sweep file $1"; exit 2; }
else
  # 3 A100 counts x 2 profiles x 2 horizons x 2 seeds = 24 variants, a few seconds of work.
  sweep=$work/slurm-sweep.yaml
  cat >"$sweep" <<EOF
name: slurm-sweep
scenario: $repo/scenarios/tests/small.yaml
axes:
  - {name: a100, key: cluster.pools.a100.count, values: [1, 2, 3]}
  - name: policy
    choices:
      default: {}
      pack: {profile: gpu-binpack}
  - {name: horizon, key: simulation.horizon, values: [2h, 6h]}
seeds: [1, 2]
EOF
fi
name=$(basename "$sweep" .yaml)
variants=$("$capsim" sweep "$sweep" --list | sed -n "s/^# sweep .*, \([0-9]*\) variants\$/\1/p") && [[ -n $variants ]] ||
  fail "capsim sweep --list cannot read $sweep"

# Submitted from a scratch directory: the jobs' logs land there, not in the checkout.
cd "$work/out"
started_at=$(date +%s)
outer=$(SWEEP="$sweep" SHARDS="$shards" OUT="$work/out/results" CAPSIM="$capsim" \
  sbatch --parsable "$repo/docs/sweep-slurm.sh") || fail "sbatch docs/sweep-slurm.sh was refused"
say "submitted docs/sweep-slurm.sh as job $outer ($variants variants, $shards shards)"

# Every job the recipe made: the submitting job, the array's tasks and the merge job. Done when
# the queue is empty; each must then have COMPLETED with exit code 0:0.
while [[ -n $(squeue -h -o %i 2>/dev/null) ]]; do
  (($(date +%s) - started_at < timeout)) || { squeue >&2; fail "jobs still queued after ${timeout}s"; }
  sleep 2
done
jobs_report=$(scontrol -o show job)
say "jobs (id, name, state, exit code):"
awk '{ delete v; for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = substr($i, length(kv[1]) + 2) }
       id = ("ArrayTaskId" in v) ? v["ArrayJobId"] "_" v["ArrayTaskId"] " (" v["JobId"] ")" : v["JobId"]
       printf "  %-10s %-14s %-10s %s\n", id, v["JobName"], v["JobState"], v["ExitCode"] }' \
  <<<"$jobs_report" >&2
tasks=$(grep -c 'ArrayTaskId=' <<<"$jobs_report" || true)
merges=$(grep -c 'JobName=capsim-merge ' <<<"$jobs_report" || true)
bad=$(grep -v -c 'JobState=COMPLETED .*ExitCode=0:0' <<<"$jobs_report" || true)
((tasks == shards)) || fail "expected $shards array tasks, Slurm ran $tasks"
((merges == 1)) || fail "expected one merge job, Slurm ran $merges"
((bad == 0)) || { cat "$work"/out/*.log "$work"/out/results/*.log >&2 2>/dev/null || true
                  fail "$bad job(s) did not complete with exit code 0"; }
merged=$work/out/results/$name.db
[[ -s $merged ]] || fail "the merge job wrote no $merged"
slurm_seconds=$(($(date +%s) - started_at))

# --- the same sweep run whole, and the comparison ------------------------------------------------
"$capsim" sweep "$sweep" -j 2 --quiet -o "$work/whole.db" >&2 || fail "capsim sweep (whole) failed"

# Every table as text, rows in stored order, without the wall-clock columns and sweep_shard.
dump() {
  local db=$1 t cols
  for t in $(sqlite3 "$db" "SELECT name FROM sqlite_master WHERE type = 'table'
                            AND name <> 'sweep_shard' ORDER BY name"); do
    cols=$(sqlite3 "$db" "SELECT group_concat('quote(\"' || name || '\")', ' || ''|'' || ')
                          FROM pragma_table_info('$t')
                          WHERE '$t' <> 'run' OR name NOT IN ('wall_seconds', 'started_at')")
    echo "## $t"
    sqlite3 "$db" "SELECT $cols FROM \"$t\" ORDER BY rowid"
  done
}
dump "$merged" >"$work/merged.txt"
dump "$work/whole.db" >"$work/whole.txt"
if ! diff -u "$work/whole.txt" "$work/merged.txt" >"$work/diff.txt"; then
  head -40 "$work/diff.txt" >&2
  fail "the merged file differs from the sweep run whole (above: - whole, + merged)"
fi
"$capsim" compare "$merged" >"$work/compare-merged.txt"
"$capsim" compare "$work/whole.db" >"$work/compare-whole.txt"
diff -u "$work/compare-whole.txt" "$work/compare-merged.txt" >&2 ||
  fail "capsim compare prints different tables for the merged file and the whole sweep"

runs=$(sqlite3 "$merged" "SELECT count(*) FROM run")
((runs == variants)) || fail "the merged file has $runs runs for $variants variants"
shard_rows=$(sqlite3 "$merged" "SELECT count(*) FROM sweep_shard")
((shard_rows == shards)) || fail "the merged file names $shard_rows shards, not $shards"
rows=$(grep -vc '^## ' "$work/merged.txt")
say "array + merge took ${slurm_seconds}s; merged file: $runs runs from $shard_rows shards"
say "tables compared: $(grep '^## ' "$work/merged.txt" | cut -c4- | tr '\n' ' ')"
say "identical to the sweep run whole: $rows rows (summary: $(sqlite3 "$merged" \
  "SELECT count(*) FROM summary") rows, variant: $(sqlite3 "$merged" "SELECT count(*) FROM variant") rows); capsim compare prints the same table"
