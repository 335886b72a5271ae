#!/bin/bash
# outputs.sh - are two builds' answers byte-identical? The check each
# optimisation of a converter goes through before it is committed.
#
#   contrib/compare/outputs.sh OLD_XPROFS NEW_XPROFS LOGDIR...
#
# For every run of every LOGDIR (`xprofs ls`, hosts/ included, raw/ left
# out) it reads every file with both binaries, and trace_viewer.json also at
# full resolution, at ?resolution=8000, in 20 windows (4 widths at 5
# places of the run's span, each at resolutions 0 and 1000) and in the
# event-details request (full args) of the first and last event of every
# thread, and compares the bytes (md5) and the exit status. Prints one line per difference and a
# count; exits 1 if anything differs. Build the old binary from the commit
# to compare with, in another tree: make BUILD=/tmp/b-old /tmp/b-old/xprofs.
set -u
if [ $# -lt 3 ]; then
    echo "usage: $0 OLD_XPROFS NEW_XPROFS LOGDIR..." >&2
    exit 2
fi
OLD=$1
NEW=$2
shift 2

# One output: a line "same" or "differs: ..." (md5 and exit status of both).
one() { # LOGDIR PATH
    local a b
    a=$("$OLD" cat "$1" "$2" 2>/dev/null | md5sum | cut -c1-32; echo "rc=${PIPESTATUS[0]}")
    b=$("$NEW" cat "$1" "$2" 2>/dev/null | md5sum | cut -c1-32; echo "rc=${PIPESTATUS[0]}")
    if [ "$a" = "$b" ]; then
        echo same
    else
        echo "differs: $1 $2 ($(echo $a) vs $(echo $b))"
    fi
}

windows() { # LOGDIR PATH-of-trace_viewer.json
    local span lo hi f w
    span=$("$OLD" cat "$1" "$2?resolution=8000" 2>/dev/null |
        /usr/bin/python3 -c 'import json, sys; print(*json.load(sys.stdin)["fullTimespan"])' 2>/dev/null) ||
        return 0
    read -r lo hi <<< "$span"
    for f in 0 0.1 0.33 0.5 0.77; do
        for w in 0.0001 0.003 0.05 0.4; do
            read -r s e <<< "$(/usr/bin/python3 -c "print('%.6f %.6f' % ($lo + ($hi - $lo) * $f, $lo + ($hi - $lo) * ($f + $w)))")"
            one "$1" "$2?start_time_ms=$s&end_time_ms=$e&resolution=0"
            one "$1" "$2?start_time_ms=$s&end_time_ms=$e&resolution=1000"
        done
    done
}

details() { # LOGDIR PATH-of-trace_viewer.json
    # Event-details requests (full args) for the first and last complete
    # event of every thread of the whole-range answer, derived lines
    # included: up to 300 events. Events shown with 1 ps are left out: a
    # zero duration prints as 1 ps, so their lookup fails (as XProf's does).
    "$OLD" cat "$1" "$2?resolution=8000" 2>/dev/null | /usr/bin/python3 -c '
import json, sys, urllib.parse
first, last = {}, {}
for e in json.load(sys.stdin).get("traceEvents", []):
    if e.get("ph") == "X" and "uid" in e.get("args", {}) and e.get("dur", 0) > 1e-06:
        first.setdefault((e["pid"], e["tid"]), e)
        last[(e["pid"], e["tid"])] = e
picked = []
for k in first:
    picked += [first[k]] if first[k] is last[k] else [first[k], last[k]]
for e in picked[:300]:
    print("event_name=%s&start_time_ms=%r&duration_ms=%r&unique_id=%s" % (
        urllib.parse.quote(e["name"], safe=""), e["ts"] / 1000, e.get("dur", 0) / 1000,
        e["args"]["uid"]))
' 2>/dev/null | while read -r q; do one "$1" "$2?$q"; done
}

walk() { # LOGDIR DIR
    local kind size name path
    "$OLD" ls -l "$1" "$2" | while read -r kind size name; do
        [ "$name" = raw/ ] && continue
        path="${2:+$2/}${name%/}"
        if [ "$kind" = d ]; then
            walk "$1" "$path"
            continue
        fi
        one "$1" "$path"
        if [ "$name" = trace_viewer.json ]; then
            one "$1" "$path?resolution=8000"
            one "$1" "$path?resolution=0"
            windows "$1" "$path"
            details "$1" "$path"
        fi
    done
}

results=$(for logdir in "$@"; do walk "$logdir" ""; done)
grep '^differs:' <<< "$results"
total=$(grep -c . <<< "$results")
n=$(grep -c '^differs:' <<< "$results")
echo "$total outputs compared, $n differ"
[ "$n" = 0 ]
