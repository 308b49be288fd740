#!/usr/bin/env bash
# End-to-end test of profiles/slurm against a real SLURM 22.05 on localhost.
#
#   tests/slurm/run_e2e.sh OUTDIR      (as root; tests/test_slurm.py runs it)
#
# Installs slurm-wlm + munge from Debian when absent, starts munged, slurmctld and slurmd
# in a throwaway configuration (ports, sockets, spool and logs under one temp dir), then:
#   1. runs a small configuration of the workflow (released HANNA correlations, rankings,
#      tables; StoryER wp200 textstats) through the SLURM executor (profiles/slurm) and
#      locally (profiles/default): results (csv, parquet, md) must be byte-identical;
#   2. SIGKILLs a second SLURM run while a job of its second wave runs, shows the lock,
#      unlocks, reruns to completion: results byte-identical again;
#   3. submits the GPU rule embed_texts to a GPU partition whose only node never comes
#      up, records what SLURM was asked for (scontrol show job), then cancels it;
#   4. with E2E_SHARDED=1 instead of 1-3 (tests/test_slurm.py's slow test sets it), runs a sharded
#      configuration (shards.stories: 5, a 14-story hanna-llm slice, BaryScore) through SLURM, one
#      CPU per shard job, and locally: byte-identical results, and the shards' start and end times
#      (sharded-slurm_jobs.txt) show them running side by side.
# Leaves work directories, logs and summaries in OUTDIR (times.tsv, compared.txt, killed.txt,
# *_jobs.txt, gpu_job.txt, gpu_sbatch.txt, daemons.txt). Exit 0: passed; 77: cannot run here
# (not root, no Debian packages); anything else: failed.
# Never hangs: every step is bounded by `timeout -s KILL`, all of them together by E2E_BUDGET
# seconds (default 1800), so an outer `timeout -s KILL` of E2E_BUDGET + 300 leaves the EXIT
# trap time to cancel the jobs and stop every daemon this script started, by PID.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
VENV_BIN=${VENV_BIN:-$REPO/.venv/bin}
STEP_LIMIT=${STEP_LIMIT:-900}   # seconds for one workflow run
BUDGET=${E2E_BUDGET:-1800}      # seconds for everything before the cleanup (which takes < 3 min)
DEADLINE=$((SECONDS + BUDGET))
B=results/hanna/released
TARGETS=("$B/correlations.csv" "$B/tables/tab6_borda.csv" "$B/tables/tab8_top5_story.csv"
         "$B/tables/tab9_top5_system.csv" "$B/tables/tab4_system_means.csv" results/wp200/computed/scores.parquet)
GPU_TARGET=results/wp200/computed/embeddings/all-minilm-l6-v2.safetensors
SHARDED_TARGETS=(results/mini/computed/scores/baryscore@all-minilm-l6-v2.parquet)

log() { printf '[e2e %(%H:%M:%S)T] %s\n' -1 "$*"; }
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
limit_of() { local left=$((DEADLINE - SECONDS)); echo $(($1 < left ? $1 : (left > 5 ? left : 5))); }
bounded() { local limit; limit=$(limit_of "$1"); shift; timeout -s KILL "$limit" "$@"; }

[ "$(id -u)" -eq 0 ] || skip "needs root to install SLURM and start munged, slurmctld and slurmd"
[ -x "$VENV_BIN/snakemake" ] || fail "no snakemake in $VENV_BIN (run make env)"

install_slurm() {
    local tools=(munged mungekey slurmctld slurmd sbatch squeue scontrol scancel sinfo)
    command -v "${tools[@]}" >/dev/null 2>&1 && return 0
    command -v apt-get >/dev/null || skip "SLURM is absent and this is not a Debian system (no apt-get)"
    log "installing slurm-wlm and munge from Debian"
    export DEBIAN_FRONTEND=noninteractive
    bounded 900 apt-get install -y slurm-wlm munge >"$OUT/apt.log" 2>&1 \
        || { bounded 300 apt-get update >>"$OUT/apt.log" 2>&1 \
             && bounded 900 apt-get install -y slurm-wlm munge >>"$OUT/apt.log" 2>&1; } \
        || skip "cannot install slurm-wlm and munge from Debian (see $OUT/apt.log)"
    command -v "${tools[@]}" >/dev/null 2>&1 || skip "slurm-wlm installed but its tools are missing"
}
install_slurm

# --- the throwaway cluster -------------------------------------------------------------
STATE=$(mktemp -d /tmp/storyeval-slurm.XXXXXX)
chmod 755 "$STATE"  # munged runs as user munge and must reach its own subdirectory
DAEMONS=()          # PIDs in start order; the trap stops them in reverse
RUN_GROUP=""        # process group of a background workflow run

cancel_all_jobs() {  # cancel every job of this cluster and wait until their steps have exited
    bounded 20 scancel --quiet -u root 2>/dev/null || true
    wait_until 60 jobs_gone
}

jobs_gone() {  # nothing queued, and no job step left (each holds a socket in the spool dir)
    queue_empty && [ -z "$(find "$STATE/slurmd" -maxdepth 1 -type s)" ]
}

our_leftovers() {  # PIDs of processes that carry this cluster's SLURM_CONF (job steps), but not us
    local proc
    for proc in /proc/[0-9]*; do
        [ "${proc#/proc/}" != $$ ] || continue
        tr '\0' '\n' 2>/dev/null <"$proc/environ" | grep -qxF "SLURM_CONF=$STATE/slurm.conf" && echo "${proc#/proc/}"
    done
    return 0
}

cleanup() {
    local rc=$? index pid
    trap - EXIT INT TERM
    [ -z "$RUN_GROUP" ] || kill -KILL -- "-$RUN_GROUP" 2>/dev/null || true
    # Jobs first: their steps outlive slurmd.
    [ ${#DAEMONS[@]} -lt 3 ] || cancel_all_jobs || echo "cleanup: jobs still running after scancel" >&2
    for ((index = ${#DAEMONS[@]} - 1; index >= 0; index--)); do
        pid=${DAEMONS[index]}
        kill -TERM "$pid" 2>/dev/null || continue
        for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    for pid in $(our_leftovers); do kill -KILL "$pid" 2>/dev/null && echo "cleanup: killed leftover PID $pid" >&2; done
    cp -r "$STATE/log" "$OUT/slurm-daemon-logs" 2>/dev/null || true
    rm -rf "$STATE"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_ports() {  # N unused TCP ports on localhost
    "$VENV_BIN/python" - "$1" <<'EOF'
import socket, sys
sockets = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in sockets))
EOF
}

start_cluster() {
    local host cpus mem ports
    host=$(hostname -s)
    cpus=$(nproc)
    mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 8 / 10 ))
    read -r -a ports <<<"$(free_ports 3)"
    mkdir -p "$STATE"/{munge,slurmctld,slurmd,log}
    chown munge:munge "$STATE/munge"
    chmod 755 "$STATE/munge"  # munged: its socket directory must be searchable by all
    sed -e "s|@STATE@|$STATE|g" -e "s|@HOST@|$host|g" -e "s|@CPUS@|$cpus|g" -e "s|@MEM_MB@|$mem|g" \
        -e "s|@CTLD_PORT@|${ports[0]}|" -e "s|@SLURMD_PORT@|${ports[1]}|" -e "s|@ABSENT_PORT@|${ports[2]}|" \
        "$REPO/tests/slurm/slurm.conf.in" >"$STATE/slurm.conf"
    export SLURM_CONF=$STATE/slurm.conf
    cp "$SLURM_CONF" "$OUT/slurm.conf"
    # Inside a job, the jobstep plugin runs `srun` with every SLURM_* variable removed, so
    # srun finds no configuration outside /etc/slurm: this shim puts SLURM_CONF back.
    mkdir -p "$STATE/bin"
    printf '#!/bin/sh\nSLURM_CONF=%s exec %s "$@"\n' "$SLURM_CONF" "$(command -v srun)" >"$STATE/bin/srun"
    chmod 755 "$STATE/bin/srun"
    export PATH=$STATE/bin:$PATH

    log "starting munged, slurmctld, slurmd (state in $STATE)"
    bounded 30 setpriv --reuid=munge --regid=munge --clear-groups \
        mungekey --create --keyfile="$STATE/munge/munge.key"
    setpriv --reuid=munge --regid=munge --clear-groups munged --foreground \
        --socket="$STATE/munge/munge.socket" --key-file="$STATE/munge/munge.key" \
        --pid-file="$STATE/munge/munged.pid" --seed-file="$STATE/munge/munged.seed" \
        --log-file="$STATE/munge/munged.log" >"$STATE/log/munged.out" 2>&1 &
    DAEMONS+=($!)
    wait_for 30 "munged socket" test -S "$STATE/munge/munge.socket"
    slurmctld -D -i >"$STATE/log/slurmctld.out" 2>&1 &
    DAEMONS+=($!)
    wait_for 60 "slurmctld" bounded 10 scontrol ping
    slurmd -D >"$STATE/log/slurmd.out" 2>&1 &
    DAEMONS+=($!)
    wait_for 120 "node $host idle" node_idle "$host"
    printf 'munged %s\nslurmctld %s\nslurmd %s\nstate %s\n' "${DAEMONS[@]}" "$STATE" >"$OUT/daemons.txt"
    bounded 20 sinfo | tee "$OUT/sinfo.txt"
}

wait_until() {  # wait_until SECONDS COMMAND...: poll COMMAND (itself bounded); false on timeout
    local limit start=$SECONDS
    limit=$(limit_of "$1")
    shift
    until "$@" >/dev/null 2>&1; do
        ((SECONDS - start < limit)) || return 1
        sleep 1
    done
}

wait_for() {  # wait_for SECONDS WHAT COMMAND...: as wait_until, but fails the test, and early
    local limit what=$2 start=$SECONDS
    limit=$(limit_of "$1")
    shift 2
    until "$@" >/dev/null 2>&1; do
        ((SECONDS - start < limit)) || fail "$what not ready after ${limit}s"
        for pid in "${DAEMONS[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a daemon (PID $pid) died; see $STATE/log"; done
        [ -z "$RUN_GROUP" ] || kill -0 "$RUN_GROUP" 2>/dev/null || fail "the background run ended before $what"
        sleep 1
    done
}

node_idle() { [ "$(bounded 10 sinfo -h -N -n "$1" -o %t)" = idle ]; }
queue_empty() { [ -z "$(bounded 10 squeue -h -o %i)" ]; }

# --- the workflow ----------------------------------------------------------------------
make_workdir() {  # a work directory with the small configuration: mirrors only, one text dataset
    mkdir -p "$OUT/$1"
    "$VENV_BIN/python" - "$REPO" "$OUT/$1/config.yaml" <<'EOF'
import sys, yaml
repo, target = sys.argv[1:]
config = yaml.safe_load(open(f"{repo}/config.yaml"))
shared = f"{repo}/../shared/data"
config["data"].update(mirrors={"hanna": [f"{shared}/hanna"], "storyer": [f"{shared}/storyer"]}, allow_download=False)
config["hanna"]["annotations"] = "skip"
config["datasets"] = {"wp200": {**config["datasets"]["wp200"], "metrics": ["textstats"]}}  # no model, no training
if target.split("/")[-2].startswith("sharded"):  # 14 stories of hanna-llm in 3 shards; one core per shard job
    config["datasets"] = {"mini": {"kind": "hanna-llm", "file": "hanna/stories_llm", "max_prompts": 2,
                                   "metrics": ["baryscore"]}}
    config["shards"] = {"stories": 5}
    config["metric_params"]["baryscore"] = {"processes": 1}
    config["storyer_evaluator"]["reasons"]["datasets"] = []
open(target, "w").write(yaml.safe_dump(config, allow_unicode=True))
EOF
    echo "$OUT/$1"
}

make_test_profile() {  # profiles/slurm plus what this throwaway cluster needs
    mkdir -p "$OUT/profile"
    "$VENV_BIN/python" - "$REPO/profiles/slurm/config.yaml" "$OUT/profile/config.yaml" <<'EOF'
import sys, yaml
source, target = sys.argv[1:]
profile = yaml.safe_load(open(source))
profile["set-resources"]["embed_texts"]["slurm_partition"] = "gpu"  # the GPU partition of slurm.conf.in
profile["set-resources"]["embed_shard"] = {"gpu": 0, "mem_mb": 4000, "runtime": 30}  # no GPU node comes up here
profile["set-threads"] = {"embed_shard": 1, "neural_metric_shard": 1}  # two shard jobs side by side on 2 CPUs
# The plugin checks 1 s after a wave's submission, then 10 s later for each check that finds no job ended: a wave
# of jobs that take a few seconds waits about 12 s instead of 20 (quiet: the test's runs 137 s instead of 155).
profile.update({"slurm-status-command": "squeue",  # no accounting database here
                "slurm-init-seconds-before-status-checks": 1, "latency-wait": 5})
open(target, "w").write(yaml.safe_dump(profile))
EOF
}

snakemake_in() {  # snakemake_in WORKDIR PROFILE: sets SNAKEMAKE, the command line of a run in WORKDIR
    SNAKEMAKE=(env -C "$1" MPLBACKEND=Agg "$VENV_BIN/snakemake" -s "$REPO/Snakefile" --directory "$1"
               --workflow-profile "$2")
}

run_in() {  # run_in LIMIT WORKDIR PROFILE ARGS...: a run killed after LIMIT seconds
    local limit=$1
    snakemake_in "$2" "$3"
    shift 3
    bounded "$limit" "${SNAKEMAKE[@]}" "$@"
}

timed_run() {  # timed_run NAME PROFILE ARGS...: a run in workdir NAME, its wall time to times.tsv
    local name=$1 profile=$2 start end
    shift 2
    log "run $name"
    start=$(date +%s.%N)
    run_in "$STEP_LIMIT" "$OUT/$name" "$profile" "$@" >"$OUT/$name.log" 2>&1 \
        || { tail -40 "$OUT/$name.log" >&2; fail "run $name failed or ran out of time (log: $OUT/$name.log)"; }
    end=$(date +%s.%N)
    awk -v name="$name" -v start="$start" -v end="$end" 'BEGIN { printf "%s\t%.1f\n", name, end - start }' \
        | tee -a "$OUT/times.tsv"
}

start_background() {  # start_background LOG WORKDIR PROFILE ARGS...: a run in the background
    local name=$1
    snakemake_in "$2" "$3"
    shift 3
    log "background run $name"
    # timeout leads its own process group: killing the group also kills the local jobs.
    timeout -s KILL "$(limit_of "$STEP_LIMIT")" "${SNAKEMAKE[@]}" "$@" >"$OUT/$name.log" 2>&1 &
    RUN_GROUP=$!
}

kill_background() {  # SIGKILL, as a lost session or an OOM killer would
    kill -KILL -- "-$RUN_GROUP" 2>/dev/null || true
    wait "$RUN_GROUP" 2>/dev/null || true
    RUN_GROUP=""
}

wait_for_job() {  # wait_for_job SECONDS STATES [RULES]: "ID COMMENT" of a job in STATES (of a rule matching RULES)
    local limit states=$2 rules=${3:-.} start=$SECONDS job
    limit=$(limit_of "$1")
    while :; do
        job=$(bounded 10 squeue -h -t "$states" -o '%i %k' 2>/dev/null | grep -E " rule_($rules)" | head -1 || true)
        [ -n "$job" ] && { echo "$job"; return; }
        [ -n "$RUN_GROUP" ] && ! kill -0 "$RUN_GROUP" 2>/dev/null && fail "the workflow ended before a job reached $states"
        ((SECONDS - start < limit)) || fail "no job reached $states after ${limit}s"
        sleep 1
    done
}

compare_results() {  # compare_results A B: every csv/parquet/md under results/ of A equals B's
    local left=$OUT/$1 right=$OUT/$2 files
    files=$(cd "$left" && find results -type f \( -name '*.csv' -o -name '*.parquet' -o -name '*.md' \) | sort)
    [ -n "$files" ] || fail "$1 produced no results"
    diff <(echo "$files") <(cd "$right" && find results -type f \( -name '*.csv' -o -name '*.parquet' -o -name '*.md' \) | sort) \
        || fail "$1 and $2 produced different sets of result files"
    while read -r file; do
        cmp -s "$left/$file" "$right/$file" || fail "$file differs between $1 and $2"
    done <<<"$files"
    log "$1 = $2: $(echo "$files" | wc -l) result files byte-identical"
    echo "$files" >"$OUT/compared.txt"
}

record_jobs() { bounded 20 scontrol show jobs -o >"$OUT/$1_jobs.txt"; }

start_cluster
make_test_profile
SLURM_PROFILE=$OUT/profile
LOCAL_PROFILE=$REPO/profiles/default
: >"$OUT/times.tsv"

if [ "${E2E_SHARDED:-0}" = 1 ]; then
    # 4. Sharded: the shards of one metric are separate SLURM jobs that run at the same time.
    make_workdir sharded-slurm >/dev/null
    timed_run sharded-slurm "$SLURM_PROFILE" "${SHARDED_TARGETS[@]}"
    record_jobs sharded-slurm
    make_workdir sharded-local >/dev/null
    timed_run sharded-local "$LOCAL_PROFILE" --cores 2 "${SHARDED_TARGETS[@]}"
    compare_results sharded-local sharded-slurm
else
    # 1. The same small configuration through SLURM and locally.
    make_workdir slurm >/dev/null
    timed_run slurm "$SLURM_PROFILE" "${TARGETS[@]}"
    record_jobs slurm
    make_workdir local >/dev/null
    timed_run local "$LOCAL_PROFILE" --cores 2 "${TARGETS[@]}"
    compare_results local slurm

    # 2. Killed (SIGKILL) while a SLURM job of its second wave runs, unlocked, resumed: the
    #    finished first wave is kept, the interrupted job and the rest are (re)run.
    make_workdir resumed >/dev/null
    start_background killed "$OUT/resumed" "$SLURM_PROFILE" "${TARGETS[@]}"
    wait_for 300 "the first SLURM outputs" test -e "$OUT/resumed/$B/scores.parquet"
    # A job that reads normalise_hanna's outputs: Snakemake submits it only once it has seen that job end, so the
    # first wave is recorded as done. (wp200's metric job is in the first wave: killed beside it, normalise_hanna can
    # have written its files before Snakemake's status check saw it end, and is rightly rerun as incomplete.)
    found=$(wait_for_job 300 RUNNING 'correlations|system_means|confounds')
    read -r job comment <<<"$found"
    kill_background
    state=$(bounded 10 squeue -h -j "$job" -o %T || true)
    missing=0
    for target in "${TARGETS[@]}"; do [ -e "$OUT/resumed/$target" ] || missing=$((missing + 1)); done
    {
        echo "killed during SLURM job $job $comment (${state:-gone}); targets missing: $missing of ${#TARGETS[@]};" \
            "results present:"
        (cd "$OUT/resumed" && find results -type f | sort)
    } >"$OUT/killed.txt"
    [ "$missing" -gt 0 ] || fail "the run had finished before it was killed: nothing to resume"
    cancel_all_jobs || fail "the killed run's jobs outlived scancel"  # its orphans, as a user would
    if run_in 120 "$OUT/resumed" "$SLURM_PROFILE" "${TARGETS[@]}" >"$OUT/locked.log" 2>&1; then
        fail "a rerun without --unlock succeeded although the killed run left its lock"
    fi
    grep -q "cannot be locked" "$OUT/locked.log" || fail "the rerun failed, but not on the lock (see $OUT/locked.log)"
    run_in 120 "$OUT/resumed" "$SLURM_PROFILE" --unlock >"$OUT/unlock.log" 2>&1 || fail "--unlock failed"
    timed_run resumed "$SLURM_PROFILE" "${TARGETS[@]}"
    record_jobs resumed
    compare_results local resumed

    # 3. The GPU rule's resources reach sbatch, on a node without GPU: submitted, pending, cancelled.
    cp -a "$OUT/slurm" "$OUT/gpu"  # its texts are there, so embed_texts is the only job
    start_background gpu "$OUT/gpu" "$SLURM_PROFILE" --verbose "$GPU_TARGET"
    found=$(wait_for_job 300 PENDING,RUNNING embed_texts)
    read -r job comment <<<"$found"
    sleep 2
    bounded 20 scontrol show job "$job" >"$OUT/gpu_job.txt"
    kill_background
    cancel_all_jobs || fail "the GPU job outlived scancel"
    grep -h "sbatch call" "$OUT/gpu.log" >"$OUT/gpu_sbatch.txt" || fail "no sbatch call in $OUT/gpu.log"
    requested=$(grep -oE '(Partition|JobState|TresPerJob|MinMemoryNode|TimeLimit)=[^ ]*' "$OUT/gpu_job.txt" | xargs)
    log "GPU job $job: $requested"
    grep -q "JobState=PENDING" "$OUT/gpu_job.txt" || fail "the GPU job was not pending (see $OUT/gpu_job.txt)"
fi
log "passed; wall times (s):"
cat "$OUT/times.tsv"
