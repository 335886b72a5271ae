#!/bin/sh
# fuzz_campaign.sh FUZZ_BUILD TOOL_SEEDS SECONDS - the mutation campaign of
# `make attack`: each libFuzzer target of `make fuzz` (ASan+UBSan, clang) for
# SECONDS on its seeds (our generator's profiles, the Chrome-trace seeds, the
# query seeds, the corpus's HLO protos where ../shared/corpus is there), in a fresh work directory under /tmp. Prints per target the
# inputs tried and the failures (crash, leak, timeout or out-of-memory
# artifacts); exits 1 if any target failed.
set -u

FB=${1:?FUZZ_BUILD}
SEEDS=${2:?TOOL_SEEDS}
SECS=${3:-60}
WORK=$(mktemp -d /tmp/xprofs-fuzz-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
status=0
total_runs=0
total_fail=0

# run TARGET SEED_DIR MAX_LEN
run() {
    t=$1
    mkdir -p "$WORK/$t/corpus" "$WORK/$t/artifacts"
    cp -r "$2"/. "$WORK/$t/corpus/" 2>/dev/null
    XPROFS_FUZZ_PROFILE="$SEEDS/steps4.xplane.pb" "$FB/$t" -max_total_time="$SECS" \
        -max_len="$3" -timeout=60 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$WORK/$t/artifacts/" "$WORK/$t/corpus" >"$WORK/$t/log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/$t/log" | tail -1)
    [ -n "$runs" ] || runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$WORK/$t/log" | tail -1)
    [ -n "$runs" ] || runs=0
    fails=$(ls "$WORK/$t/artifacts" | wc -l)
    if [ "$rc" -ne 0 ] && [ "$fails" -eq 0 ]; then
        fails=1
    fi
    echo "$t: $runs inputs tried, $fails failures"
    if [ "$fails" -ne 0 ]; then
        status=1
        mkdir -p fuzz-failures/$t && cp "$WORK/$t/artifacts"/* fuzz-failures/$t/ 2>/dev/null
        grep -m1 -A12 "ERROR:\|runtime error" "$WORK/$t/log" | sed 's/^/    /'
        echo "    inputs kept in fuzz-failures/$t/"
    fi
    total_runs=$((total_runs + runs))
    total_fail=$((total_fail + fails))
}

mkdir -p "$WORK/query-seeds"
i=0
while IFS= read -r line; do
    i=$((i + 1))
    printf '%s' "$line" >"$WORK/query-seeds/$i"
done <tests/fuzz/query-seeds.txt

run fuzz_reader "$SEEDS" 4000000
run fuzz_tools "$SEEDS" 1000000
run fuzz_ctrace "$FB/ctrace-seeds" 200000
run fuzz_query "$WORK/query-seeds" 4096
mkdir -p "$WORK/hlo-seeds"
for f in ../shared/corpus/*/plugins/profile/*/*.hlo_proto.pb; do
    [ -e "$f" ] && cp "$f" "$WORK/hlo-seeds/"
done
run fuzz_hlo "$WORK/hlo-seeds" 200000
echo "mutation campaign: $total_runs inputs tried, $total_fail failures"
exit $status
