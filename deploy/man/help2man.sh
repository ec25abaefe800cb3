#!/bin/sh
# Makes a man page from a built binary's --help and --version (help2man) with the extra
# sections of INCLUDE, then lets the long option specs (--port=NAME,type=vxlan,...) break
# after their commas (\:), which troff would otherwise leave wider than the page.
#   help2man.sh HELP2MAN BINARY INCLUDE OUTPUT
set -eu
help2man=$1 binary=$2 include=$3 output=$4
"$help2man" --no-info --section=8 --manual='System Administration' \
  --include="$include" --output="$output.tmp" "$binary"
sed -e '/^[^.]/s/,\([^ ]\)/,\\:\1/g' -e '/^\.TH /a .ad l' "$output.tmp" > "$output"
rm -f "$output.tmp"
