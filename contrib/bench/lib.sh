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
#                      more process. Needs $BUILD.

secs() {
    s=$(date +%s.%N)
    "$@" > /dev/null
    e=$(date +%s.%N)
    echo "$e - $s" | bc -l | awk '{printf "%.4f", $1}'
}

peak_mb() {
    /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%.0f", $1/1024}'
}

secs_mb() {
    rssf=$(mktemp)
    s=$(date +%s.%N)
    if ! /usr/bin/time -f %M -o "$rssf" "$@" > /dev/null 2>&1; then
        rm -f "$rssf"
        return 1
    fi
    e=$(date +%s.%N)
    printf '%s %s\n' "$(echo "$e - $s" | bc -l | awk '{printf "%.4f", $1}')" \
        "$(tail -1 "$rssf" | awk '{printf "%.0f", $1/1024}')"
    rm -f "$rssf"
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
