# Shared by the bench/compare_*.sh scripts: sourced after they define die() and set PY,
# STOKER, LOGS (a fresh temp folder) and KEEP_LOGS.

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
