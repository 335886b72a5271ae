#!/bin/sh
# make demo: write a demo LOGDIR with xprofs-synth, mount it at ./demo-mnt, show it.
set -eu
BUILD=${1:-build}
LOGDIR=$PWD/demo-logs
MNT=$PWD/demo-mnt

if mountpoint -q "$MNT" 2>/dev/null; then
    fusermount3 -u "$MNT"
fi
rm -rf "$LOGDIR"
mkdir -p "$MNT"
echo "== writing a demo profile (2 hosts, 2 GPUs each, ~8 MB) into $LOGDIR"
"$BUILD/xprofs-synth" --out "$LOGDIR" --run demo_run --size-mb 4 --hosts 2 --gpus 2 --seed 1
"$BUILD/xprofs-synth" --out "$LOGDIR" --run steps4 --scenario steps4
echo "== mounting $LOGDIR at $MNT"
"$BUILD/xprofs-mount" "$LOGDIR" "$MNT"
for i in 1 2 3 4 5 6 7 8 9 10; do
    mountpoint -q "$MNT" && break
    sleep 0.2
done
echo "== cat $MNT/demo_run/report.md"
cat "$MNT/demo_run/report.md"
echo "== ls -l $MNT/demo_run"
ls -l "$MNT/demo_run"
echo "== cat $MNT/demo_run/hosts.json"
cat "$MNT/demo_run/hosts.json"
echo "== jq '.hosts[] | {host, event_count, planes: [.planes[].name]}' $MNT/demo_run/summary.json"
jq -c '.hosts[] | {host, event_count, planes: [.planes[].name]}' "$MNT/demo_run/summary.json"
for f in overview_page.json steps.csv gpu_timeline.csv; do
    if [ -e "$MNT/demo_run/$f" ]; then
        echo "== head -c 600 $MNT/demo_run/$f"
        head -c 600 "$MNT/demo_run/$f"
        echo
    fi
done
echo
echo "The demo stays mounted. Try:"
echo "  ls $MNT/demo_run; jq .step_time_ms $MNT/demo_run/report.json"
echo "  cat '$MNT/demo_run/trace_viewer.json?start_time_ms=0&end_time_ms=5' | jq '.traceEvents | length'"
echo "Unmount with: fusermount3 -u $MNT"
