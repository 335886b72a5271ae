#!/bin/sh
# bench_steps.sh - steps.csv and regions.csv on generated profiles.
#
#   contrib/bench/bench_steps.sh BUILD_DIR                 80 MB and 1 GB, made here
#   contrib/bench/bench_steps.sh BUILD_DIR SIZE_MB LOGDIR  one profile (from bench.sh)
#
# Prints rows tool<TAB>profile_MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB. Each
# read is one `xprofs cat` process (the converter core, no FUSE): cold = the
# first read of the file, warm = the best of two more (page cache warm); peak
# RSS of a separate run. Run alone, it also prints trace_viewer.json of the
# same profile for the target (steps.csv cold <= trace viewer cold), when
# that tool exists; under bench.sh another script prints that row.
set -eu
BUILD=$(cd "${1:-build}" && pwd)
. "$(dirname "$0")/lib.sh"

# bench LOGDIR MB WITH_TRACE_VIEWER
bench() {
    run=$("$BUILD/xprofs" ls "$1" | grep "/$" | head -1 | tr -d /)
    files="steps.csv regions.csv"
    if [ "$3" = 1 ] && "$BUILD/xprofs" ls "$1" "$run" | grep -qx trace_viewer.json; then
        files="$files trace_viewer.json"
    fi
    for f in $files; do
        one_file "$1" "$run" "$f" "$2"
    done
}

if [ $# -ge 3 ]; then
    bench "$3" "$2" 0
    exit 0
fi
DIR=$(mktemp -d /tmp/bench_steps.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
for size in 80 1000; do
    "$BUILD/xprofs-synth" --out "$DIR/p$size" --run bench --size-mb "$size" --gpus 4 \
        --seed 42 > /dev/null 2>&1
    mb=$(du -m "$(find "$DIR/p$size" -name '*.xplane.pb' | head -1)" | cut -f1)
    bench "$DIR/p$size" "$mb" 1
    rm -rf "$DIR/p$size"
done
