#!/bin/sh
# bench_remote.sh - a LOGDIR in an object store (issue 43): s3rver on loopback.
#
#   contrib/bench/bench_remote.sh BUILD_DIR                 a 280 MB profile, made here
#   contrib/bench/bench_remote.sh BUILD_DIR SIZE_MB LOGDIR  one profile (from bench.sh)
#
# Prints rows tool<TAB>profile_MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB, each
# read one `xprofs cat s3://...` process: cold = an empty cache directory (the
# listing, the copy in parallel 8 MiB ranges, then the tool), warm = the same
# read again, the copy kept (size and ETag unchanged). The raw/ row is the copy
# alone, its MB/s in the name. Prints nothing without s3rver (make deps).
set -eu
BUILD=$(cd "${1:-build}" && pwd)
. "$(dirname "$0")/lib.sh"
S3RVER=$(cd "$(dirname "$0")/../.." && pwd)/build/npm/node_modules/.bin/s3rver
[ -x "$S3RVER" ] || exit 0
command -v curl > /dev/null || exit 0

# bench LOGDIR MB
bench() {
    work=$(mktemp -d /tmp/bench_remote.XXXXXX)
    port=$((20000 + $$ % 20000))
    NODE_OPTIONS=--openssl-legacy-provider "$S3RVER" -d "$work/data" -a 127.0.0.1 -p "$port" \
        --silent --configure-bucket bench > /dev/null 2>&1 &
    pid=$!
    trap 'kill $pid 2> /dev/null; rm -rf "$work"' EXIT
    for _ in $(seq 100); do
        curl -s -o /dev/null "http://127.0.0.1:$port/" && break
        sleep 0.1
    done
    (cd "$1" && find . -type f | sed 's|^\./||') | while read -r f; do
        curl -s -f -o /dev/null -X PUT --data-binary "@$1/$f" "http://127.0.0.1:$port/bench/l/$f"
    done
    run=$("$BUILD/xprofs" ls "$1" | grep "/$" | head -1 | tr -d /)
    raw=$("$BUILD/xprofs" ls "$1" "$run/raw" | grep xplane | head -1)
    export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
    export XPROFS_ENDPOINT="http://127.0.0.1:$port"
    for f in overview_page.json "raw/$raw"; do
        rm -rf "$work/cache"
        cold=$(XPROFS_CACHE_DIR="$work/cache" secs_mb "$BUILD/xprofs" cat s3://bench/l "$run/$f") ||
            continue
        warm=$(XPROFS_CACHE_DIR="$work/cache" secs "$BUILD/xprofs" cat s3://bench/l "$run/$f")
        name="$f from s3:// (loopback)"
        case $f in raw/*)
            name="raw/ copy from s3:// (loopback, $(echo "$2 / ${cold% *}" | bc) MB/s)" ;;
        esac
        printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$2" "${cold% *}" "$warm" "${cold#* }"
    done
    kill $pid 2> /dev/null || true
    wait $pid 2> /dev/null || true
    rm -rf "$work"
    trap - EXIT
}

if [ $# -ge 3 ]; then
    bench "$3" "$2"
    exit 0
fi
DIR=$(mktemp -d /tmp/bench_remote_p.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
"$BUILD/xprofs-synth" --out "$DIR/p" --run bench --size-mb 280 --seed 5 > /dev/null
mb=$(du -m "$(find "$DIR/p" -name '*.xplane.pb' | head -1)" | cut -f1)
bench "$DIR/p" "$mb"
trap 'rm -rf "$DIR"' EXIT # bench's own trap replaced this one
one_file "$DIR/p" bench overview_page.json "$mb" | sed 's/^overview_page.json/& (local disk)/'
