#!/bin/sh
# tpu_counter_ids.sh - regenerate src/tools/tpu_counter_ids_<chip>.inc, the
# TPU performance-counter tables XProf ships as C++ enums
# (openxla/xprof xprof/utils/tpu_counter_ids_<chip>.h), as data: one
# {"NAME", ID} entry a line, in the enum's order (XProf's names_only answer
# lists them in that order).
#
#   contrib/tpu_counter_ids.sh XPROF_GIT_DIR COMMIT   (both chips, v6e and v7x)
#
# It parses the enum as XProf's plugin/xprof/convert/counter_extractor.py
# does: line comments dropped, the body of the uint64_t enum split at commas,
# NAME = VALUE entries kept.
set -eu
git_dir=$1
commit=$2
out=$(dirname "$0")/../src/tools
for chip in v6e v7x; do
    src=xprof/utils/tpu_counter_ids_$chip.h
    {
        echo "/* TPU $chip performance counters: name and id, in the enum's order."
        echo " * Source: openxla/xprof $src at commit $commit"
        echo " * (the enum TpuCounterIds...), made by contrib/tpu_counter_ids.sh. Data only. */"
        git --git-dir="$git_dir" show "$commit:$src" |
            sed 's://.*::' | tr -d ' \n\t' |
            sed 's/.*uint64_t{\([^}]*\)}.*/\1/' | tr ',' '\n' |
            awk -F= 'NF == 2 && $2 ~ /^[0-9]+$/ { printf "{\"%s\", UINT64_C(%s)},\n", $1, $2 }'
    } >"$out/tpu_counter_ids_$chip.inc"
done
