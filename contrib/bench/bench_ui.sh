#!/bin/sh
# bench_ui.sh - the bundled page of xprofs-ui in headless Chromium, through the mount.
#
#   contrib/bench/bench_ui.sh BUILD_DIR                 80 MB, made here
#   contrib/bench/bench_ui.sh BUILD_DIR SIZE_MB LOGDIR  one profile (from bench.sh)
#
# Prints rows tool<TAB>profile_MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB (RSS "-"):
# the first contentful paint and the overview tab usable (its numbers and
# charts drawn), each from the navigation's start, for a fresh mount, server
# and browser (cold) and the same URL opened again (warm); page_paint.py
# measures. Profiles over 200 MB are left out (the page's target is the 80 MB
# one), and so is everything when chromium or FUSE is missing (said on stderr).
set -eu
BUILD=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)

bench() {
    if [ "$2" -gt 200 ]; then
        return 0
    fi
    if ! command -v chromium > /dev/null || [ ! -e /dev/fuse ]; then
        echo "bench_ui.sh: chromium or FUSE missing, no page rows" >&2
        return 0
    fi
    run=$("$BUILD/xprofs" ls "$1" | grep "/$" | head -1 | tr -d /)
    t=$(/usr/bin/python3 "$HERE/page_paint.py" "$BUILD" "$1" "$run") || {
        echo "bench_ui.sh: page_paint.py failed" >&2
        return 0
    }
    set -- $t "$2"
    printf 'page: first paint (xprofs-ui, mount, Chromium)\t%s\t%s\t%s\t-\n' "$5" "$1" "$2"
    printf 'page: overview interactive (report.json through the mount)\t%s\t%s\t%s\t-\n' "$5" "$3" "$4"
}

if [ $# -ge 3 ]; then
    bench "$3" "$2"
    exit 0
fi
DIR=$(mktemp -d /tmp/bench_ui.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
"$BUILD/xprofs-synth" --out "$DIR/p80" --run bench --size-mb 80 --gpus 4 --seed 42 > /dev/null 2>&1
mb=$(du -m "$(find "$DIR/p80" -name '*.xplane.pb' | head -1)" | cut -f1)
bench "$DIR/p80" "$mb"
