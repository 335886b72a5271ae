#!/bin/sh
# bench_gpu.sh - gpu_timeline.csv and kernel_launchers.csv on generated profiles.
#
#   contrib/bench/bench_gpu.sh BUILD_DIR                 80 MB and 1 GB, made here
#   contrib/bench/bench_gpu.sh BUILD_DIR SIZE_MB LOGDIR  one profile (from bench.sh)
#
# Prints rows tool<TAB>profile_MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB. Each
# read is one `xprofs cat` process (the converter core, no FUSE): cold = the
# first read of the file, warm = the best of two more; peak RSS of the cold
# run. The trace viewer's cold time is printed alongside for the target
# (gpu_timeline cold <= trace viewer cold) when that tool exists.
set -eu
BUILD=$(cd "${1:-build}" && pwd)
. "$(dirname "$0")/lib.sh"

# bench LOGDIR MB
bench() {
    run=$("$BUILD/xprofs" ls "$1" | grep "/$" | head -1 | tr -d /)
    for f in gpu_timeline.csv kernel_launchers.csv; do
        one_file "$1" "$run" "$f" "$2"
    done
    # The target: the trace viewer's cold time on the same profile (one read).
    if "$BUILD/xprofs" ls "$1" "$run" | grep -qx trace_viewer.json; then
        printf 'trace_viewer.json (target)\t%s\t%s\t-\t-\n' "$2" \
            "$(secs "$BUILD/xprofs" cat "$1" "$run/trace_viewer.json")"
    fi
}

if [ $# -ge 3 ]; then
    bench "$3" "$2"
    exit 0
fi
DIR=$(mktemp -d /tmp/bench_gpu.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
for size in 80 1000; do
    "$BUILD/xprofs-synth" --out "$DIR/p$size" --run bench --size-mb "$size" --gpus 4 \
        --seed 42 > /dev/null
    mb=$(du -m "$(find "$DIR/p$size" -name '*.xplane.pb' | head -1)" | cut -f1)
    bench "$DIR/p$size" "$mb"
    rm -rf "$DIR/p$size"
done
