#!/bin/sh
# layers.sh - the floor plan of src/ and its check.
#
#   contrib/layers.sh [SRC]          per folder: its layer, files, lines, and
#                                    includes of a folder not below it (0)
#   contrib/layers.sh --check [SRC]  the same, exit 1 if any include runs up
#
# A file may include a header of its own folder ("name.h") or of a folder on
# a lower layer ("base/name.h"); folders on the same layer do not include one
# another. The generated protobuf headers (*.pb-c.h) count as the reader's.
# Each violation is printed as FILE:LINE: the include and why.
set -eu

check=0
if [ "${1:-}" = --check ]; then
    check=1
    shift
fi
SRC=${1:-src}

# folder layer, lowest first: the table docs/design.md draws.
LAYERS='base 0
out 1
remote 1
reader 1
session 2
store 2
hlo 3
xplane 4
op_stats 5
memory 5
trace 5
tracelens 5
tools 6
agent 7
vfs 8
fs 9
cli 9'

bad=$(mktemp)
trap 'rm -f "$bad"' EXIT

for dir in "$SRC"/*/; do
    dir=${dir%/}
    name=${dir##*/}
    level=$(echo "$LAYERS" | awk -v d="$name" '$1 == d { print $2 }')
    if [ -z "$level" ]; then
        echo "$dir: folder not in the layer table of contrib/layers.sh" >>"$bad"
        continue
    fi
    for f in "$dir"/*.c "$dir"/*.h; do
        [ -e "$f" ] || continue
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
            sed 's/^\([0-9]*\):.*"\([^"]*\)".*/\1 \2/' |
            while read -r line inc; do
                case $inc in
                */*)
                    to=${inc%%/*}
                    tl=$(echo "$LAYERS" | awk -v d="$to" '$1 == d { print $2 }')
                    if [ ! -f "$SRC/$inc" ]; then
                        echo "$f:$line: \"$inc\": no such header" >>"$bad"
                    elif [ "$to" = "$name" ]; then
                        echo "$f:$line: \"$inc\": own folder, include it as \"${inc#*/}\"" >>"$bad"
                    elif [ -z "$tl" ] || [ "$tl" -ge "$level" ]; then
                        echo "$f:$line: \"$inc\": $to (layer $tl) is not below $name (layer $level)" >>"$bad"
                    fi
                    ;;
                *.pb-c.h)
                    if [ "$level" -lt 1 ]; then
                        echo "$f:$line: \"$inc\": protobuf headers are the reader's (layer 1)" >>"$bad"
                    fi
                    ;;
                *)
                    if [ ! -f "$dir/$inc" ]; then
                        echo "$f:$line: \"$inc\": not in $name/; name its folder" >>"$bad"
                    fi
                    ;;
                esac
            done
    done
done

printf '%-10s %5s %5s %7s %9s\n' folder layer files lines upward
echo "$LAYERS" | while read -r name level; do
    dir=$SRC/$name
    [ -d "$dir" ] || continue
    files=$(ls "$dir"/*.c "$dir"/*.h 2>/dev/null | wc -l)
    lines=$(cat "$dir"/*.c "$dir"/*.h 2>/dev/null | wc -l)
    up=$(grep -c "^$dir/" "$bad" || true)
    printf '%-10s %5s %5d %7d %9d\n' "$name" "$level" "$files" "$lines" "$up"
done

if [ -s "$bad" ]; then
    echo
    cat "$bad"
    [ "$check" = 1 ] && exit 1
fi
exit 0
