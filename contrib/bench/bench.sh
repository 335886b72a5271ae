#!/bin/sh
# make bench: the benchmark table of docs/performance.md.
#
#   contrib/bench/bench.sh BUILD_DIR
#
# Generates profiles with xprofs-synth (BENCH_SIZES, default "80 1000" MB, and
# BENCH_TRACE_SIZES, default "1700" MB, where only the bare walk and the trace
# viewer are measured; BENCH_TPU_SIZES, default "80" MB, of the grown tpu
# scenario, where the trace viewer and overview_page are) under BENCH_DIR
# (default /tmp/xprofs-bench), then measures, for each:
#   - the bare walk (contrib/bench/barewalk.c): the baseline every ratio uses,
#   - before and after all else, how fast a new process gets fresh memory
#     (contrib/bench/freshmem.c), which the tools pay for every byte they
#     hold and the bare walk does not: right after another process freed
#     its memory, and after the machine sat idle IDLE_S (default 15) seconds,
#   - the reader: full decode of every event with 2 threads (`xprofs check -j 2`),
#   - the trace viewer's floor (contrib/bench/model.c): decoding, grouping and
#     deriving XProf's GPU lines, the session model every trace event comes
#     from, before the trace viewer's own work (best of 3, as the bare walk),
#   - `ls -l` of a run and of the root in a mounted LOGDIR of 1,000 runs,
#   - every contrib/bench/bench_*.sh of the tools, called as
#     bench_x.sh BUILD_DIR SIZE_MB LOGDIR, printing rows
#     tool<TAB>profile_MB<TAB>cold_s<TAB>warm_s<TAB>peak_rss_MB.
# Cold = first read after mounting/starting; warm = the same read again.
# The table goes to bench-out/bench.md and between the bench markers of docs/performance.md.
set -eu
. "$(dirname "$0")/lib.sh"
BUILD=$(cd "${1:-build}" && pwd)
SIZES=${BENCH_SIZES:-"80 1000"}
TRACE_SIZES=${BENCH_TRACE_SIZES-"1700"}
TPU_SIZES=${BENCH_TPU_SIZES-"80"}
DIR=${BENCH_DIR:-/tmp/xprofs-bench}
OUT=${BENCH_OUT:-$PWD/bench-out}
mkdir -p "$DIR" "$OUT"
ROWS=$OUT/rows.tsv
: > "$ROWS"

# best-of-3 wall seconds of a command
best3() {
    for i in 1 2 3; do
        secs "$@"
    done | sort -n | head -1
}

# fresh memory: "FIRST_TOUCH REWRITE" GB/s of 512 MiB, after IDLE_S seconds
# idle, then the median of 3 processes each started as the one before it
# freed its memory: "IDLE_FIRST RECYCLED_FIRST REWRITE".
IDLE_S=${IDLE_S:-15}
fresh_mem() {
    sleep "$IDLE_S"
    idle=$("$BUILD/xprofs-freshmem")
    recycled=$(for i in 1 2 3; do
        "$BUILD/xprofs-freshmem"
    done | sort -n | sed -n 2p)
    echo "${idle% *} $recycled"
}
# "GB/s" -> "seconds per GB" with two decimals
per_gb() {
    echo "1 / $1" | bc -l | awk '{printf "%.2f", $1}'
}
fresh_before=$(fresh_mem)

# profile SIZE: generate the profile once; set logdir, file, mb; bare walk row.
profile() {
    logdir=$DIR/p$1
    if [ ! -d "$logdir" ]; then
        echo "generating a $1 MB profile in $logdir" >&2
        "$BUILD/xprofs-synth" --out "$logdir" --run bench --size-mb "$1" --gpus 4 --seed 42 >&2
    fi
    file=$(find "$logdir" -name '*.xplane.pb' | head -1)
    mb=$(du -m "$file" | cut -f1)
    bare=$(best3 "$BUILD/xprofs-barewalk" "$file")
    echo "$bare" > "$OUT/bare_$1"
    printf 'bare walk (baseline)\t%s\t%s\t%s\t%s\n' "$mb" "$bare" "-" \
        "$(peak_mb "$BUILD/xprofs-barewalk" "$file")" >> "$ROWS"
}

# model_row [LABEL_PREFIX [BARE]]: the trace viewer's floor on $file.
model_row() {
    model=$(best3 "$BUILD/xprofs-model" "$file")
    printf '%s\t%s\t%s\t%s\t%s%s\n' "${1:-}trace viewer's floor: decode, grouping, derived lines" \
        "$mb" "$model" "-" "$(peak_mb "$BUILD/xprofs-model" "$file")" "${2:+	$2}" >> "$ROWS"
}

for size in $SIZES; do
    profile "$size"
    dec=$(best3 "$BUILD/xprofs" check -j 2 "$file")
    printf 'reader: full decode (2 threads)\t%s\t%s\t%s\t%s\n' "$mb" "$dec" "-" \
        "$(peak_mb "$BUILD/xprofs" check -j 2 "$file")" >> "$ROWS"
    dec1=$(best3 "$BUILD/xprofs" check -j 1 "$file")
    printf 'reader: full decode (1 thread)\t%s\t%s\t%s\t%s\n' "$mb" "$dec1" "-" "-" >> "$ROWS"
    model_row
    for b in "$(dirname "$0")"/bench_*.sh; do
        [ -e "$b" ] || continue
        # Keep tool rows only: the scripts' own baseline, ratio and comparison
        # rows are computed here once for all.
        sh "$b" "$BUILD" "$mb" "$logdir" | grep -v -e '^#' -e '^barewalk' -e '(target)' >> "$ROWS" ||
            echo "$b failed" >&2
    done
done

for size in $TRACE_SIZES; do
    profile "$size"
    model_row
    sh "$(dirname "$0")/bench_trace.sh" "$BUILD" "$mb" "$logdir" |
        grep -v -e '^#' -e '^barewalk' -e '(target)' >> "$ROWS" || echo "bench_trace.sh failed" >&2
done

# TPU profiles (no derived GPU lines, many steps): rows labelled "TPU: ",
# with their own bare walk as a sixth column for the ratio.
for size in $TPU_SIZES; do
    logdir=$DIR/tpu$size
    if [ ! -d "$logdir" ]; then
        echo "generating a $size MB TPU profile in $logdir" >&2
        "$BUILD/xprofs-synth" --out "$logdir" --run bench --scenario tpu --size-mb "$size" >&2
    fi
    file=$(find "$logdir" -name '*.xplane.pb' | head -1)
    mb=$(du -m "$file" | cut -f1)
    bare=$(best3 "$BUILD/xprofs-barewalk" "$file")
    printf 'TPU: bare walk (baseline)\t%s\t%s\t-\t%s\t%s\n' "$mb" "$bare" \
        "$(peak_mb "$BUILD/xprofs-barewalk" "$file")" "$bare" >> "$ROWS"
    model_row "TPU: " "$bare"
    {
        sh "$(dirname "$0")/bench_trace.sh" "$BUILD" "$mb" "$logdir" ||
            echo "bench_trace.sh failed (TPU)" >&2
        for f in overview_page.json framework_op_stats.json; do
            one_file "$logdir" bench "$f" "$mb"
        done
    } | grep -v -e '^#' -e '^barewalk' -e '(target)' |
        awk -v bare="$bare" -F '\t' -v OFS='\t' '{ $1 = "TPU: " $1; print $0, bare }' >> "$ROWS"
done

# ls -l on a LOGDIR of 1,000 runs (hard links to one small profile).
many=$DIR/many
if [ ! -d "$many/plugins/profile/run0999" ]; then
    rm -rf "$many"
    "$BUILD/xprofs-synth" --out "$DIR/one" --run one --size-mb 1 --seed 3 >&2
    src=$(find "$DIR/one" -name '*.xplane.pb' | head -1)
    i=0
    while [ $i -lt 1000 ]; do
        d=$(printf '%s/plugins/profile/run%04d' "$many" $i)
        mkdir -p "$d"
        ln "$src" "$d/host.xplane.pb"
        i=$((i + 1))
    done
fi
mnt=$DIR/mnt
mkdir -p "$mnt"
"$BUILD/xprofs-mount" "$many" "$mnt"
sleep 0.5
t_run=$(best3 ls -l "$mnt/run0500")
t_root=$(best3 ls -l "$mnt")
fusermount3 -u "$mnt"
printf 'ls -l of one run (1,000 runs mounted)\t-\t%s\t-\t-\n' "$t_run" >> "$ROWS"
printf 'ls -l of the root (1,000 runs)\t-\t%s\t-\t-\n' "$t_root" >> "$ROWS"

fresh_after=$(fresh_mem)

# The table: ratio = cold time / bare walk of the same profile size.
{
    echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores; profiles from xprofs-synth (4 GPUs, seed 42;"
    echo "TPU rows: \`--scenario tpu --size-mb\`, two TensorCores, 64 while iterations a step)."
    set -- $fresh_before $fresh_after
    echo "Fresh memory (xprofs-freshmem: first touch of 512 MiB in a new process), before the rows"
    echo "and after: $(per_gb "$1") and $(per_gb "$4") s per GB after ${IDLE_S} s idle, $(per_gb "$2") and"
    echo "$(per_gb "$5") s per GB right after another process freed its memory (writing it"
    echo "again: $(per_gb "$6") s per GB). Every tool pays it for each byte it holds; the bare walk"
    echo "holds none."
    echo
    echo "| what | profile MB | cold s | warm s | peak RSS MB | cold / bare walk |"
    echo "| --- | --- | --- | --- | --- | --- |"
    while IFS="$(printf '\t')" read -r tool mb cold warm rss own_bare; do
        ratio="-"
        if [ -n "$own_bare" ]; then
            ratio=$(echo "$cold / $own_bare" | bc -l | awk '{printf "%.2f", $1}')
        elif [ "$mb" != "-" ]; then
            for size in $SIZES $TRACE_SIZES; do
                f=$(find "$DIR/p$size" -name '*.xplane.pb' | head -1)
                if [ "$(du -m "$f" | cut -f1)" = "$mb" ]; then
                    bare=$(cat "$OUT/bare_$size")
                    ratio=$(echo "$cold / $bare" | bc -l | awk '{printf "%.2f", $1}')
                fi
            done
        fi
        echo "| $tool | $mb | $cold | $warm | $rss | $ratio |"
    done < "$ROWS"
} > "$OUT/bench.md"
cat "$OUT/bench.md"

if [ -f docs/performance.md ]; then
    awk -v table="$OUT/bench.md" '
        /<!-- bench:start -->/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
        /<!-- bench:end -->/ { skip = 0 }
        !skip { print }
    ' docs/performance.md > docs/performance.md.new && mv docs/performance.md.new docs/performance.md
fi
