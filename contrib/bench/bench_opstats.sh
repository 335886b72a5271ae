#!/bin/sh
# bench_opstats.sh - overview_page, input_pipeline_analyzer, framework_op_stats,
# kernel_stats, hlo_stats, op_profile and roofline_model on generated profiles.
#
#   contrib/bench/bench_opstats.sh BUILD_DIR                 80 MB and 1 GB, made here
#   contrib/bench/bench_opstats.sh BUILD_DIR SIZE_MB LOGDIR  one profile (from bench.sh)
#
# Prints rows tool<TAB>profile_MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB. Each
# read is one `xprofs cat` process (the converter core, no FUSE), so every
# read builds op_stats again: cold = the first read (profile file not yet in
# the page cache for the first tool), warm = the best of two more. Rows named
# "<tool> (op_stats cached)" read through a FUSE mount when one can be made:
# overview_page.json first, then the tool, timed alone (op_stats already built
# in the mount's snapshot); warm is a second read (kernel page cache).
set -eu
BUILD=$(cd "${1:-build}" && pwd)
. "$(dirname "$0")/lib.sh"
TOOLS="overview_page.json input_pipeline_analyzer.json framework_op_stats.json kernel_stats.json framework_op_stats.csv kernel_stats.csv hlo_stats.json op_profile.json roofline_model.json"

# mounted LOGDIR RUN MB: the tools once op_stats exists in the mount
mounted() {
    [ -x "$BUILD/xprofs-mount" ] && [ -e /dev/fuse ] && command -v fusermount3 > /dev/null ||
        return 0
    mnt=$(mktemp -d /tmp/bench_opstats_mnt.XXXXXX)
    "$BUILD/xprofs-mount" "$1" "$mnt" -f > /dev/null 2>&1 &
    pid=$!
    i=0
    while ! mountpoint -q "$mnt" && [ $i -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    if mountpoint -q "$mnt"; then
        cat "$mnt/$2/overview_page.json" > /dev/null
        for f in $TOOLS; do
            cold=$(secs cat "$mnt/$2/$f")
            warm=$(secs cat "$mnt/$2/$f")
            printf '%s (op_stats cached)\t%s\t%s\t%s\t-\n' "$f" "$3" "$cold" "$warm"
        done
        fusermount3 -u "$mnt" || true
    fi
    wait "$pid" 2> /dev/null || true
    rmdir "$mnt" 2> /dev/null || true
}

# bench LOGDIR MB
bench() {
    run=$("$BUILD/xprofs" ls "$1" | grep "/$" | head -1 | tr -d /)
    for f in $TOOLS; do
        one_file "$1" "$run" "$f" "$2"
    done
    mounted "$1" "$run" "$2"
}

if [ $# -ge 3 ]; then
    bench "$3" "$2"
    exit 0
fi
DIR=$(mktemp -d /tmp/bench_opstats.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
for size in 80 1000; do
    "$BUILD/xprofs-synth" --out "$DIR/p$size" --run bench --size-mb "$size" --gpus 4 \
        --seed 42 > /dev/null 2>&1
    mb=$(du -m "$(find "$DIR/p$size" -name '*.xplane.pb' | head -1)" | cut -f1)
    bench "$DIR/p$size" "$mb"
    rm -rf "$DIR/p$size"
done
