# lib.sh - helpers shared by the benchmark scripts (sourced, not run).
#
#   secs CMD...        wall seconds of one run of CMD (output discarded)
#   peak_mb CMD...     peak RSS of CMD in MB
#   secs_mb CMD...     "wall_seconds peak_rss_MB" of one run of CMD (fails if CMD does)
#   cold_mb LOGDIR PATH MB
#                      "wall_seconds peak_rss_MB" of `xprofs cat LOGDIR PATH` in a fresh
#                      process: on profiles of 200 MB or less the median time of 3 such
#                      processes (this shared machine is noisy) and the largest RSS
#   one_file LOGDIR RUN FILE MB
#                      a row tool<TAB>MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB for
#                      `xprofs cat LOGDIR RUN/FILE` (nothing if the file can't be read):
#                      cold = a fresh process converting from scratch (on profiles
#                      of 200 MB or less the median of 3 such processes, since this
#                      shared machine is noisy; peak RSS the largest), warm = one
#                      more process.
# All time with $BUILD/xprofs-timeit (contrib/bench/timeit.c): the clock
# holds the command and its process start only.

secs() {
    "$BUILD/xprofs-timeit" "$@" | cut -d' ' -f1
}

peak_mb() {
    "$BUILD/xprofs-timeit" "$@" | cut -d' ' -f2
}

secs_mb() {
    timeit_out=$("$BUILD/xprofs-timeit" "$@" 2> /dev/null) || return 1
    echo "$timeit_out"
}

cold_mb() {
    first=$(secs_mb "$BUILD/xprofs" cat "$1" "$2") || return 1
    if [ "$3" -gt 200 ]; then
        echo "$first"
        return 0
    fi
    (
        echo "$first"
        secs_mb "$BUILD/xprofs" cat "$1" "$2"
        secs_mb "$BUILD/xprofs" cat "$1" "$2"
    ) | sort -n | awk '{ t[NR] = $1; if ($2 > m) m = $2 } END { print t[2], m }'
}

one_file() {
    path="$2/$3"
    cold_rss=$(cold_mb "$1" "$path" "$4") || return 0
    warm=$(secs "$BUILD/xprofs" cat "$1" "$path")
    printf '%s\t%s\t%s\t%s\t%s\n' "$3" "$4" "${cold_rss% *}" "$warm" "${cold_rss#* }"
}
