# lib.sh - helpers shared by the benchmark scripts (sourced, not run).
#
#   secs CMD...        wall seconds of one run of CMD (output discarded)
#   peak_mb CMD...     peak RSS of CMD in MB
#   one_file LOGDIR RUN FILE MB
#                      a row tool<TAB>MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB for
#                      `xprofs cat LOGDIR RUN/FILE` (nothing if the file can't be read):
#                      cold = first read, warm = best of two more. Needs $BUILD.

secs() {
    s=$(date +%s.%N)
    "$@" > /dev/null
    e=$(date +%s.%N)
    echo "$e - $s" | bc -l | awk '{printf "%.4f", $1}'
}

peak_mb() {
    /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%.0f", $1/1024}'
}

one_file() {
    path="$2/$3"
    if ! "$BUILD/xprofs" cat "$1" "$path" > /dev/null 2>&1; then
        return 0
    fi
    cold=$(secs "$BUILD/xprofs" cat "$1" "$path")
    w1=$(secs "$BUILD/xprofs" cat "$1" "$path")
    w2=$(secs "$BUILD/xprofs" cat "$1" "$path")
    warm=$(printf '%s\n%s\n' "$w1" "$w2" | sort -n | head -1)
    rss=$(peak_mb "$BUILD/xprofs" cat "$1" "$path")
    printf '%s\t%s\t%s\t%s\t%s\n' "$3" "$4" "$cold" "$warm" "$rss"
}
