#!/bin/sh
# make bench-instr: instructions, the steady companion of make bench's times.
#
#   contrib/bench/instructions.sh BUILD_DIR [PATH...]
#
# Times on this shared virtual machine drift by a third from one hour to the
# next (and the bare walk itself is bimodal), so a change of a few percent
# cannot be seen in make bench. This counts the instructions a command
# executes, on all its threads, with valgrind's cachegrind (no cache
# simulation): the same build on the same profile gives the same count to
# a few parts in a million. It measures work, not wall time: page clearing
# by the kernel and the parallelism of two cores are not in it.
#
# Rows: bare walk, then `xprofs cat LOGDIR bench/PATH` for each PATH
# (default: trace_viewer.json?resolution=8000 and overview_page.json), on
# the 80 MB GPU and TPU profiles of make bench (BENCH_DIR, made here when
# missing), each with its ratio to that profile's bare walk:
#   what<TAB>profile<TAB>instructions<TAB>ratio to bare walk
# Under valgrind a run is 20-50 times slower: about a minute a row.
set -eu
BUILD=$(cd "${1:-build}" && pwd)
[ $# -gt 0 ] && shift
DIR=${BENCH_DIR:-/tmp/xprofs-bench}

if ! command -v valgrind > /dev/null 2>&1; then
    echo "instructions.sh: valgrind is needed (apt-get install valgrind)" >&2
    exit 1
fi
if [ $# -eq 0 ]; then
    set -- 'trace_viewer.json?resolution=8000' overview_page.json
fi

# instructions CMD...: the instructions CMD executes, all threads.
instructions() {
    out=$(mktemp /tmp/xprofs-cg.XXXXXX)
    # One process, as make bench measures it (no re-execution for the
    # huge-page malloc: valgrind replaces malloc anyway).
    XPROFS_MALLOC=1 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        --log-file="$out" "$@" > /dev/null
    sed -n 's/.*I *refs: *//p' "$out" | tr -d ,
    rm -f "$out"
}

# row LABEL PROFILE COUNT BARE
row() {
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(echo "$3 / $4" | bc -l | awk '{printf "%.2f", $1}')"
}

printf 'what\tprofile\tinstructions\tratio to bare walk\n'
for kind in gpu tpu; do
    if [ $kind = gpu ]; then
        logdir=$DIR/p80
        [ -d "$logdir" ] || "$BUILD/xprofs-synth" --out "$logdir" --run bench --size-mb 80 \
            --gpus 4 --seed 42 > /dev/null
    else
        logdir=$DIR/tpu80
        [ -d "$logdir" ] || "$BUILD/xprofs-synth" --out "$logdir" --run bench --scenario tpu \
            --size-mb 80 > /dev/null
    fi
    file=$(find "$logdir" -name '*.xplane.pb' | head -1)
    label="$(du -m "$file" | cut -f1) MB $kind"
    bare=$(instructions "$BUILD/xprofs-barewalk" "$file")
    row "bare walk" "$label" "$bare" "$bare"
    for path in "$@"; do
        row "$path" "$label" "$(instructions "$BUILD/xprofs" cat "$logdir" "bench/$path")" "$bare"
    done
done
