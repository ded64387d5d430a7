# Shared by the bench/compare_*.sh scripts: sourced after they define die() and set PY,
# STOKER, LOGS (a fresh temp folder) and KEEP_LOGS (python_loader_setup sets the last three).

cleanup() { if [[ $KEEP_LOGS -eq 0 && -n ${LOGS:-} ]]; then rm -rf "$LOGS"; fi; }
trap cleanup EXIT
fail() { KEEP_LOGS=1; die "$* (logs kept in $LOGS)"; }

# quoted CMD... -> the command as a copy-pasteable shell line
quoted() {
  local out='' a
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./:=,+@%-]+$ ]]; then out+="$a "; else out+="'${a//\'/\'\\\'\'}' "; fi
  done
  echo "${out% }"
}

# last_err ID -> the last non-empty stderr line of run ID (cut to 300 characters)
last_err() { grep -v '^[[:space:]]*$' "$LOGS/$1.err" | tail -n1 | cut -c1-300 || true; }

# run_logged ID WHAT CMD... : runs CMD within RUN_TIMEOUT seconds (default 1800), its stdout and
# stderr in $LOGS/ID.{out,err}. Says the command first, numbered "[n/RUNS_TOTAL]" (RUN_NO counts
# the runs), and warns when LAST_BUSY (cpu_busy's figure, where a script takes it) says other work
# held the CPUs. A non-zero exit or the timeout fails the script with WHAT, why, CMD's last error
# line and CMD.
RUN_NO=0
run_logged() {
  local id=$1 what=$2; shift 2
  local cmd_line rc=0 why last limit=${RUN_TIMEOUT:-1800}
  cmd_line=$(quoted "$@")
  RUN_NO=$((RUN_NO + 1))
  if [[ ${LAST_BUSY:-0} -gt 10 ]]; then
    echo "[warn] CPUs ${LAST_BUSY} % busy with other work before the $what run: the numbers will be skewed" >&2
  fi
  echo "[$RUN_NO${RUNS_TOTAL:+/$RUNS_TOTAL}] $cmd_line" >&2
  timeout "$limit" "$@" >"$LOGS/$id.out" 2>"$LOGS/$id.err" || rc=$?
  if [[ $rc -ne 0 ]]; then
    why="exited $rc"
    [[ $rc -eq 124 ]] && why="timed out after ${limit}s"
    last=$(last_err "$id")
    fail "$what $why${last:+ [$last]}: $cmd_line"
  fi
}

# synthetic_or_given_data: with DATA set (--data), checks it is a folder; else generates
# IMAGES synthetic JPEGs once into bench/.data/synthetic-IMAGES (reused by later runs) with
# `stoker bench generate`. Sets DATA (the image-folder root) and GEN_CMD (for the report).
synthetic_or_given_data() {
  if [[ -n $DATA ]]; then
    [[ -d $DATA ]] || die "--data '$DATA' is not a directory"
    GEN_CMD="(given with --data)"
    return
  fi
  local cache_dir=bench/.data/synthetic-$IMAGES
  mkdir -p "$cache_dir"
  local gen=("$STOKER" bench generate --synthetic "$IMAGES" --cache-dir "$cache_dir")
  GEN_CMD=$(quoted "${gen[@]}")
  echo "[gen] $GEN_CMD" >&2
  if ! timeout 1800 "${gen[@]}" >"$LOGS/generate.out" 2>"$LOGS/generate.err"; then
    local last
    last=$(last_err generate)
    fail "dataset generation failed${last:+ [$last]}: $GEN_CMD"
  fi
  # The generator prints the data folder: a JSON object with "data", or a line that is a folder.
  DATA=$("$PY" - "$LOGS/generate.out" "$cache_dir" <<'PYEOF'
import json, os, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
cands = []
for i, ch in enumerate(text):
    if ch == "{":
        try:
            obj, _ = json.JSONDecoder().raw_decode(text[i:])
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("data"), str):
            cands.append(obj["data"])
        break
for line in reversed(text.splitlines()):
    line = line.strip()
    for token in (line, line.split()[-1] if line.split() else ""):
        if token and os.path.isdir(token):
            cands.append(token)
cands.append(sys.argv[2])
print(next(c for c in cands if os.path.isdir(c)))
PYEOF
  ) || fail "could not find the generated data folder"
}

# publish_report: prints $REPORT, copies it to $OUT when --out was given, and names the kept
# logs folder.
publish_report() {
  cat "$REPORT"
  if [[ -n $OUT ]]; then
    mkdir -p "$(dirname "$OUT")"
    cp "$REPORT" "$OUT" || die "cannot write $OUT"
    echo "[out] wrote $OUT" >&2
  fi
  if [[ $KEEP_LOGS -eq 1 ]]; then echo "[logs] $LOGS" >&2; fi
}

# cpu_busy -> percent of all CPUs busy over 2 s (from /proc/stat), taken while none of our
# runs is going: other work on the machine. (The load average lags a minute behind, so right
# after a run it still counts that run.)
cpu_busy() {
  local a b
  a=$(head -n1 /proc/stat); sleep 2; b=$(head -n1 /proc/stat)
  awk -v a="$a" -v b="$b" 'BEGIN {
    n = split(a, x, " "); split(b, y, " "); tot = 0; idle = 0
    for (i = 2; i <= n; i++) { d = y[i] - x[i]; tot += d; if (i == 5 || i == 6) idle += d }
    printf "%.0f", ((tot > 0) ? 100 * (tot - idle) / tot : 0) }'
}

# warn_if_loaded: other work on the machine skews every number, so say so when the load
# average is above 0.5 before the runs (the report records it too). Sets LOAD_START.
warn_if_loaded() {
  LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
  if awk -v l="${LOAD_START%% *}" 'BEGIN { exit !(l > 0.5) }'; then
    echo "[warn] load average is $LOAD_START before the runs: other work on this machine will skew the numbers" >&2
  fi
}

# python_loader_setup NAME ARGS... : the options and set-up of the scripts that time the Python
# package's loader on a JPEG folder: --images N (default 2000), --seconds S (15), --rounds R (3),
# --workers W (2), --data DIR, --build DIR (build), --venv DIR (.venv) into IMAGES,
# SECONDS_PER_RUN, ROUNDS, WORKERS, DATA, BUILD and VENV; then STOKER and the venv checked, LOGS
# made (/tmp/stoker-NAME.*), DATA generated or checked, its pages read once, and the load noted.
python_loader_setup() {
  local name=$1; shift
  IMAGES=2000 SECONDS_PER_RUN=15 ROUNDS=3 WORKERS=2 DATA= BUILD=build VENV=.venv KEEP_LOGS=0
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --images) IMAGES=$2; shift 2 ;;
      --seconds) SECONDS_PER_RUN=$2; shift 2 ;;
      --rounds) ROUNDS=$2; shift 2 ;;
      --workers) WORKERS=$2; shift 2 ;;
      --data) DATA=$2; shift 2 ;;
      --build) BUILD=$2; shift 2 ;;
      --venv) VENV=$2; shift 2 ;;
      *) die "unknown option '$1' (see the comment at the top of this script)" ;;
    esac
  done
  STOKER=$BUILD/src/stoker
  [[ -x $STOKER ]] || die "$STOKER not found: build it first (bash scripts/build.sh)"
  [[ -x $VENV/bin/python ]] || die "$VENV/bin/python not found: run bash scripts/install_python.sh first"
  LOGS=$(mktemp -d "/tmp/stoker-$name.XXXXXX")
  synthetic_or_given_data
  find -L "$DATA" -type f -iname '*.jpg' -print0 | xargs -0 cat >/dev/null  # page cache warm for every run
  warn_if_loaded
}
