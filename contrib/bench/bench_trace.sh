#!/bin/sh
# bench_trace.sh - trace_viewer.json on generated profiles.
#
#   contrib/bench/bench_trace.sh BUILD_DIR                 80 MB and 1.7 GB, made here
#   contrib/bench/bench_trace.sh BUILD_DIR SIZE_MB LOGDIR  one profile (from bench.sh)
#
# Prints rows tool<TAB>profile_MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB, then
# the same times as ratios to the bare wire walk (xprofs-barewalk). Rows:
#   trace_viewer.json?resolution=8000   the whole range as the UI first asks
#   ... (after N s idle)                the same from a process started after the
#                                       machine sat idle IDLE_S (default 15) seconds
#   trace_viewer.json                   full resolution, and a row with the MB/s of
#                                       JSON it writes
#   window (new) / window (repeated)    through the mount when FUSE is here:
#                                       the index is built once per session,
#                                       a new window is computed from it, a
#                                       repeated one is served from the cache
#   full, mount (first byte / whole)    the full-resolution file's first read
#                                       through the mount (up to 200 MB)
# Each `xprofs cat` is a fresh process, so its cold time includes reading the
# profile and building the index (on profiles up to 200 MB the median of
# three such processes); warm = one more such run.
set -eu
BUILD=$(cd "${1:-build}" && pwd)
IDLE_S=${IDLE_S:-15}
. "$(dirname "$0")/lib.sh"


row() { printf '%s\t%s\t%s\t%s\t%s\n' "$@"; }

# cat_row LOGDIR RUN FILE MB LABEL
cat_row() {
    path="$2/$3"
    cold_rss=$(cold_mb "$1" "$path" "$4")
    cold=${cold_rss% *}
    warm=$(secs "$BUILD/xprofs" cat "$1" "$path")
    row "$5" "$4" "$cold" "$warm" "${cold_rss#* }"
    printf '%s\t%s\t%s\n' "$5" "$cold" "$warm" >> "$RATIOS"
}

# mount_rows LOGDIR RUN MB: windows through a live mount (index kept warm).
mount_rows() {
    if [ ! -e /dev/fuse ] || [ ! -x "$BUILD/xprofs-mount" ]; then
        echo "# windows: FUSE not available, skipped" >&2
        return 0
    fi
    mnt=$(mktemp -d /tmp/bench_trace_mnt.XXXXXX)
    "$BUILD/xprofs-mount" "$1" "$mnt" -f > /dev/null 2>&1 &
    pid=$!
    i=0
    while ! mountpoint -q "$mnt" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    # Time open+read inside one process, so process start-up is not counted.
    python3 - "$mnt/$2/trace_viewer.json" "$3" <<'PY'
import json, sys, time
base, mb = sys.argv[1], sys.argv[2]
span = json.loads(open(base + "?resolution=8000", "rb").read())["fullTimespan"]
# The index is complete once a request has read every level (the mount may
# still be completing it in the background after the zoomed-out one).
open(base + "?start_time_ms=%.6f&end_time_ms=%.6f&resolution=0" % (span[0], span[0]), "rb").read()
news, reps = [], []
for frac in (0.3, 0.5, 0.7):
    a = span[0] + (span[1] - span[0]) * frac
    q = "%s?start_time_ms=%.6f&end_time_ms=%.6f&resolution=8000" % (base, a, a + 1)
    t = time.time(); open(q, "rb").read(); news.append(time.time() - t)
    t = time.time(); open(q, "rb").read(); reps.append(time.time() - t)
print("trace_viewer.json window 1ms (new / repeated, warm index)\t%s\t%.4f\t%.4f\t-"
      % (mb, sorted(news)[1], sorted(reps)[1]))
if int(mb) <= 200:
    # A big file streams on its first read: its first byte comes long
    # before its last.
    t = time.time()
    with open(base + "?resolution=0", "rb") as f:
        f.read(1)
        first = time.time() - t
        while f.read(1 << 20):
            pass
    print("trace_viewer.json full, mount (first byte / whole file, warm index)\t%s\t%.3f\t%.3f\t-"
          % (mb, first, time.time() - t))
PY
    fusermount3 -u "$mnt" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rmdir "$mnt"
}

# bench LOGDIR MB
bench() {
    run=$("$BUILD/xprofs" ls "$1" | grep "/$" | head -1 | tr -d /)
    xplane=$(find "$1" -name '*.xplane.pb' | head -1)
    RATIOS=$(mktemp)
    bare=$("$BUILD/xprofs-barewalk" "$xplane" | awk '{print $3}')
    row "barewalk" "$2" "$bare" "$bare" "-"
    cat_row "$1" "$run" "trace_viewer.json?resolution=8000" "$2" "trace_viewer.json?resolution=8000"
    cat_row "$1" "$run" "trace_viewer.json?start_time_ms=1&end_time_ms=2&resolution=8000" "$2" \
        "trace_viewer.json window 1ms (cold process)"
    if [ "$2" -le 200 ]; then
        # After the machine sat idle: the memory a process touches first
        # is then fresh to the host too (see README, Performance).
        sleep "$IDLE_S"
        idle=$(secs_mb "$BUILD/xprofs" cat "$1" "$run/trace_viewer.json?resolution=8000")
        row "trace_viewer.json?resolution=8000 (after ${IDLE_S} s idle)" "$2" "${idle% *}" "-" \
            "${idle#* }"
        cat_row "$1" "$run" "trace_viewer.json" "$2" "trace_viewer.json (full resolution)"
        bytes=$("$BUILD/xprofs" cat "$1" "$run/trace_viewer.json" | wc -c)
        full=$(tail -1 "$RATIOS" | cut -f2)
        row "trace_viewer.json (full resolution): $((bytes / 1000000)) MB of JSON at $(echo \
            "$bytes / 1000000 / $full" | bc -l | awk '{printf "%.0f", $1}') MB/s, cold" "$2" \
            "$full" "-" "-"
    fi
    mount_rows "$1" "$run" "$2"
    while IFS="$(printf '\t')" read -r label cold warm; do
        printf '# ratio to barewalk\t%s\t%s\t%s\n' "$label" \
            "$(echo "$cold / $bare" | bc -l | awk '{printf "%.1f", $1}')" \
            "$(echo "$warm / $bare" | bc -l | awk '{printf "%.1f", $1}')"
    done < "$RATIOS"
    rm -f "$RATIOS"
}

if [ $# -ge 3 ]; then
    bench "$3" "$2"
    exit 0
fi
DIR=$(mktemp -d /tmp/bench_trace.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
for size in 80 1700; do
    "$BUILD/xprofs-synth" --out "$DIR/p$size" --run bench --size-mb "$size" --gpus 4 \
        --seed 42 > /dev/null
    mb=$(du -m "$(find "$DIR/p$size" -name '*.xplane.pb' | head -1)" | cut -f1)
    bench "$DIR/p$size" "$mb"
    rm -rf "$DIR/p$size"
done
