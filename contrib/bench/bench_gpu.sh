#!/bin/sh
# bench_gpu.sh - the TraceLens tables (gpu_timeline, kernel_launchers) on generated profiles.
#
#   contrib/bench/bench_gpu.sh BUILD_DIR                 80 MB and 1 GB, made here
#   contrib/bench/bench_gpu.sh BUILD_DIR SIZE_MB LOGDIR  one profile (from bench.sh)
#
# Prints rows tool<TAB>profile_MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB. Each
# read is one `xprofs cat` process (the converter core, no FUSE): cold = the
# first read of the file (and its peak RSS), warm = one more. Covers
# gpu_timeline.csv / .json, the three kernel_launchers tables and xla_summary.csv;
# run alone, it also prints the trace viewer's times (resolution=8000, what the
# UI asks for) for the target (each table cold <= trace viewer cold); bench.sh
# has them from bench_trace.sh.
set -eu
BUILD=$(cd "${1:-build}" && pwd)
. "$(dirname "$0")/lib.sh"

# bench LOGDIR MB
bench() {
    run=$("$BUILD/xprofs" ls "$1" | grep "/$" | head -1 | tr -d /)
    for f in gpu_timeline.csv gpu_timeline.json kernel_launchers.csv \
        kernel_launchers_summary.csv kernel_launchers_summary_by_category.csv \
        xla_summary.csv; do
        one_file "$1" "$run" "$f" "$2"
    done
    # The target: the trace viewer at the resolution the UI asks for, on the
    # same profile (cold = first read, as for the rows above).
    if [ "${3:-}" = target ] && "$BUILD/xprofs" ls "$1" "$run" | grep -qx trace_viewer.json; then
        one_file "$1" "$run" "trace_viewer.json?resolution=8000" "$2" |
            sed 's/^trace_viewer.json?resolution=8000/& (target)/'
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
    bench "$DIR/p$size" "$mb" target
    rm -rf "$DIR/p$size"
done
