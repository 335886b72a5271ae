#!/bin/sh
# bench_megascale.sh - megascale_stats.json on generated TPU profiles with
# Megascale DCN collectives (xprofs-synth --scenario tpu_dcn: two
# TensorCores, 64 while iterations and 12 DCN ops a step).
#
#   contrib/bench/bench_megascale.sh BUILD_DIR                 80 MB and 1 GB, made here
#   contrib/bench/bench_megascale.sh BUILD_DIR SIZE_MB LOGDIR  from bench.sh: a tpu_dcn
#                                    profile of SIZE_MB next to LOGDIR (the GPU one)
#
# Prints rows tool<TAB>profile_MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB<TAB>bare_s
# labelled "TPU DCN: ", with the profile's own bare walk as the ratio's base.
set -eu
BUILD=$(cd "${1:-build}" && pwd)
. "$(dirname "$0")/lib.sh"

# bench DIR SIZE_MB: generate (once) and measure
bench() {
    logdir=$1/tpu_dcn$2
    if [ ! -d "$logdir" ]; then
        "$BUILD/xprofs-synth" --out "$logdir" --run bench --scenario tpu_dcn --size-mb "$2" >&2
    fi
    file=$(find "$logdir" -name '*.xplane.pb' | head -1)
    mb=$(du -m "$file" | cut -f1)
    bare=$(for i in 1 2 3; do secs "$BUILD/xprofs-barewalk" "$file"; done | sort -n | head -1)
    printf 'TPU DCN: bare walk (baseline)\t%s\t%s\t-\t%s\t%s\n' "$mb" "$bare" \
        "$(peak_mb "$BUILD/xprofs-barewalk" "$file")" "$bare"
    one_file "$logdir" bench megascale_stats.json "$mb" |
        awk -v bare="$bare" -F '\t' -v OFS='\t' '{ $1 = "TPU DCN: " $1; print $0, bare }'
}

if [ $# -ge 3 ]; then
    bench "$(dirname "$3")" "$2"
    exit 0
fi
DIR=$(mktemp -d /tmp/bench_megascale.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
for size in 80 1000; do
    bench "$DIR" "$size"
done
