#!/bin/sh
# bench_agent.sh - XProf's agent commands (the files of a run's cli/) on
# generated profiles.
#
#   contrib/bench/bench_agent.sh BUILD_DIR                 80 MB and 1 GB, made here
#   contrib/bench/bench_agent.sh BUILD_DIR SIZE_MB LOGDIR  one profile (from bench.sh)
#
# Prints rows tool<TAB>profile_MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB, one per
# command: `xprofs cat LOGDIR RUN/cli/COMMAND.json` is the same engine and the
# same bytes as `xprofs COMMAND RUN` (tests/e2e/test_agent_cli.py checks it),
# without the process per flag set. Cold and warm as lib.sh's one_file says.
set -eu
BUILD=$(cd "${1:-build}" && pwd)
. "$(dirname "$0")/lib.sh"

# bench LOGDIR MB
bench() {
    run=$("$BUILD/xprofs" ls "$1" | grep "/$" | head -1 | tr -d /)
    for f in $("$BUILD/xprofs" ls "$1" "$run/cli"); do
        one_file "$1" "$run" "cli/$f" "$2"
    done
}

if [ $# -ge 3 ]; then
    bench "$3" "$2"
    exit 0
fi
DIR=$(mktemp -d /tmp/bench_agent.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
for size in ${BENCH_AGENT_SIZES:-80 1000}; do
    "$BUILD/xprofs-synth" --out "$DIR/p$size" --run bench --size-mb "$size" --gpus 4 \
        --seed 42 > /dev/null 2>&1
    mb=$(du -m "$(find "$DIR/p$size" -name '*.xplane.pb' | head -1)" | cut -f1)
    printf 'bare walk\t%s\t%s\n' "$mb" \
        "$(secs "$BUILD/xprofs-barewalk" "$(find "$DIR/p$size" -name '*.xplane.pb' | head -1)")"
    bench "$DIR/p$size" "$mb"
    rm -rf "$DIR/p$size"
done
