#!/bin/sh
# bench_cache.sh - the persistent cache (-o cache_dir, xprofs --cache-dir,
# xprofs precompute; issue 42) on generated profiles.
#
#   contrib/bench/bench_cache.sh BUILD_DIR                 80 MB, made here, and the 64 hosts
#   contrib/bench/bench_cache.sh BUILD_DIR SIZE_MB LOGDIR  one profile (from bench.sh); the
#                                                          64-host rows with the smallest size
#
# Rows tool<TAB>profile_MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB, as bench_steps.sh's:
# for the profile, each file read by a fresh `xprofs --cache-dir` process from a
# cache an earlier process filled (cold: the first such read, warm: the best of
# two more). For a 64-host generated session (`--hosts 64 --steps 2`), the
# precompute of one task of 8 (8 hosts), the combine step, the all-hosts
# overview_page.json of a fresh process from the cache (the hosts' op_stats),
# and a first all-hosts trace window.
set -eu
BUILD=$(cd "${1:-build}" && pwd)
. "$(dirname "$0")/lib.sh"

# from_cache LOGDIR RUN FILE MB CACHE: one row, the file read from CACHE.
from_cache() {
    "$BUILD/xprofs" --cache-dir "$5" cat "$1" "$2/$3" > /dev/null 2>&1 || return 0
    cold=$(secs_mb "$BUILD/xprofs" --cache-dir "$5" cat "$1" "$2/$3") || return 0
    w1=$(secs "$BUILD/xprofs" --cache-dir "$5" cat "$1" "$2/$3")
    w2=$(secs "$BUILD/xprofs" --cache-dir "$5" cat "$1" "$2/$3")
    warm=$(printf '%s\n%s\n' "$w1" "$w2" | sort -n | head -1)
    printf '%s (from cache_dir)\t%s\t%s\t%s\t%s\n' "$3" "$4" "${cold% *}" "$warm" "${cold#* }"
}

# bench LOGDIR MB
bench() {
    run=$("$BUILD/xprofs" ls "$1" | grep "/$" | head -1 | tr -d /)
    cache=$(mktemp -d /tmp/bench_cache.XXXXXX)
    # the full-resolution trace only on small profiles: at 1 GB its JSON is
    # about 9 GB of cache directory
    full=trace_viewer.json
    [ "$2" -le 200 ] || full=
    for f in overview_page.json framework_op_stats.json \
        'trace_viewer.json?start_time_ms=10&end_time_ms=11' $full; do
        from_cache "$1" "$run" "$f" "$2" "$cache/c"
    done
    rm -rf "$cache"
}

# hosts64: the 64-host rows.
hosts64() {
    dir=$(mktemp -d /tmp/bench_cache64.XXXXXX)
    "$BUILD/xprofs-synth" --out "$dir/l" --run r --hosts 64 --steps 2 --seed 42 > /dev/null 2>&1
    touch -d '1 hour ago' "$dir"/l/plugins/profile/r/*
    mb=$(du -m -s "$dir/l" | cut -f1)
    files=overview_page.json,framework_op_stats.json,kernel_stats.json,steps.csv
    t0=$(secs_mb "$BUILD/xprofs" precompute "$dir/l" r --task 0 --tasks 8 --files "$files" \
        --cache-dir "$dir/c")
    for t in 1 2 3 4 5 6 7; do
        "$BUILD/xprofs" precompute "$dir/l" r --task $t --tasks 8 --files "$files" \
            --cache-dir "$dir/c" > /dev/null
    done
    printf '64 hosts: precompute of one task of 8 (8 hosts, 4 files)\t%s\t%s\t-\t%s\n' "$mb" \
        "${t0% *}" "${t0#* }"
    cached=$(secs_mb "$BUILD/xprofs" --cache-dir "$dir/c" cat "$dir/l" r/overview_page.json)
    nocache=$(secs "$BUILD/xprofs" cat "$dir/l" r/overview_page.json)
    printf '64 hosts: overview_page.json combined from cached op_stats (no cache: %s s)\t%s\t%s\t-\t%s\n' \
        "$nocache" "$mb" "${cached% *}" "${cached#* }"
    comb=$(secs_mb "$BUILD/xprofs" precompute "$dir/l" r --all-hosts --files "$files" \
        --cache-dir "$dir/c")
    printf '64 hosts: combine step (precompute --all-hosts)\t%s\t%s\t-\t%s\n' "$mb" "${comb% *}" \
        "${comb#* }"
    # a trace window of all hosts: its index is not kept, so it reads the profiles
    win='r/trace_viewer.json?start_time_ms=1&end_time_ms=2'
    tw=$(secs_mb "$BUILD/xprofs" --cache-dir "$dir/c" cat "$dir/l" "$win")
    tw2=$(secs "$BUILD/xprofs" --cache-dir "$dir/c" cat "$dir/l" "$win")
    printf '64 hosts: first trace window of all hosts (reads the profiles), then from the cache\t%s\t%s\t%s\t%s\n' \
        "$mb" "${tw% *}" "$tw2" "${tw#* }"
    rm -rf "$dir"
}

if [ $# -ge 3 ]; then
    bench "$3" "$2"
    smallest=$(echo "${BENCH_SIZES:-80 1000}" | tr ' ' '\n' | sort -n | head -1)
    if [ "$2" -le "$smallest" ] || [ "$2" -le 100 ]; then
        hosts64
    fi
    exit 0
fi
DIR=$(mktemp -d /tmp/bench_cache.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
"$BUILD/xprofs-synth" --out "$DIR/p80" --run bench --size-mb 80 --gpus 4 --seed 42 > /dev/null 2>&1
touch -d '1 hour ago' "$DIR"/p80/plugins/profile/bench/*
mb=$(du -m "$(find "$DIR/p80" -name '*.xplane.pb' | head -1)" | cut -f1)
bench "$DIR/p80" "$mb"
hosts64
