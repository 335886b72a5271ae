#!/bin/sh
# bench_hw.sh - the rest of XProf's tools (issue 41) on generated profiles:
# memory_profile, pod_viewer, smart_suggestion and inference_profile (its
# answer for a training run: no requests) on GPU training profiles,
# perf_counters, utilization_viewer and kernel_utilization on TPU profiles
# with v6e counter samples (--counters v6e), 80 MB and 1 GB each; then
# memory_profile against overview_page on a profile with 10^7 allocation
# events (--alloc-events, about 1.8 GB), the issue's target being <=.
#
#   contrib/bench/bench_hw.sh BUILD_DIR             every size, then the 10^7 row
#   contrib/bench/bench_hw.sh BUILD_DIR SIZE_MB LOGDIR  from bench.sh: SIZE_MB only
#                                    (LOGDIR, the GPU one, is not used); the 10^7
#                                    row with the largest size of bench.sh (1000)
#
# Prints rows tool<TAB>profile<TAB>profile_MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB
# (one_file of lib.sh: cold = a fresh `xprofs cat` process, the median of 3
# on 200 MB or less; warm = one more). Each profile is deleted after use.
set -eu
BUILD=$(cd "${1:-build}" && pwd)
. "$(dirname "$0")/lib.sh"
DIR=$(mktemp -d /tmp/bench_hw.XXXXXX)
trap 'rm -rf "$DIR"' EXIT

# rows KIND LOGDIR FILES...
rows() {
    kind=$1
    logdir=$2
    shift 2
    mb=$(du -m "$(find "$logdir" -name '*.xplane.pb' | head -1)" | cut -f1)
    for f in "$@"; do
        one_file "$logdir" bench "$f" "$mb" | sed "s/^\([^\t]*\)\t/\1\t$kind\t/"
    done
}

SIZES=${2:-"80 1000"}
for size in $SIZES; do
    "$BUILD/xprofs-synth" --out "$DIR/g" --run bench --size-mb "$size" --gpus 4 --seed 42 \
        > /dev/null
    rows gpu "$DIR/g" memory_profile.json pod_viewer.json smart_suggestion.json \
        inference_profile.json
    rm -rf "$DIR/g"
    "$BUILD/xprofs-synth" --out "$DIR/t" --run bench --scenario tpu --counters v6e \
        --size-mb "$size" --seed 42 > /dev/null
    rows tpu-v6e "$DIR/t" perf_counters.json utilization_viewer.json kernel_utilization.json \
        pod_viewer.json smart_suggestion.json
    rm -rf "$DIR/t"
done
if [ -z "${2:-}" ] || [ "$2" -ge 1000 ]; then
    "$BUILD/xprofs-synth" --out "$DIR/a" --run bench --steps 2 --alloc-events 10000000 \
        > /dev/null
    rows alloc-1e7 "$DIR/a" overview_page.json memory_profile.json
    rm -rf "$DIR/a"
fi
