#!/bin/sh
# Issue 34's size limits: no function over 120 lines and no file over 1,200
# lines in the C and CUDA sources, so that a reader can hold a function and
# find a file's job from its name. A function's length is the number of lines
# from its opening `{` at column 0 to its closing `}` at column 0 (the
# project's style puts both there). Generated files (a first lines' "do not
# edit") and tests/fixtures are left out; build outputs are not scanned.
#
# What is still over sits in tools/size-allowlist.txt, one path a line with
# the reason and the issue. The list only shrinks: a listed path that fits
# again, or that no longer exists, fails the check until its line goes.
#   sh tools/check-size.sh [ROOT]   (default: this tree)
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2
MAX_FILE=1200
MAX_FUNC=120
ALLOW=tools/size-allowlist.txt
[ -f "$ALLOW" ] || { echo "check-size: $ALLOW is missing" >&2; exit 2; }

files=$(find common models topologies profile frameworks calibrate sim cluster inputs trainer \
             reports cli api include bench tests tools \
             -path tests/fixtures -prune -o \
             -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \
                        -o -name '*.inc' \) -print 2>/dev/null | sort)

# One line per excess: "path where: what", from one awk pass over them all.
over=$(for f in $files; do
           head -n 3 "$f" | grep -qi 'do not edit' && continue
           echo "$f"
       done | xargs awk -v maxfile="$MAX_FILE" -v maxfunc="$MAX_FUNC" '
    function flush() {
        if (name != "" && FNR_last > maxfile)
            printf "%s %s: %d lines in the file (limit %d)\n", name, name, FNR_last, maxfile
    }
    FNR == 1 { flush(); name = FILENAME; open = 0 }
    { FNR_last = FNR }
    /^\{/ { open = FNR }
    /^\}/ && open {
        if (FNR - open > maxfunc)
            printf "%s %s:%d: a function of %d lines (limit %d)\n", FILENAME, FILENAME,
                   open, FNR - open, maxfunc
        open = 0
    }
    END { flush() }')

fail=0
# Over a limit and not on the list.
echo "$over" | while IFS= read -r line; do
    [ -n "$line" ] || continue
    path=${line%% *}
    grep -q "^$path[[:space:]]" "$ALLOW" && continue
    echo "check-size: ${line#* } (split it; see $ALLOW)"
    echo x
done > "${TMPDIR:-/tmp}/check-size.$$"
# On the list and no longer over: the list only shrinks.
grep -v '^[[:space:]]*#' "$ALLOW" | grep -v '^[[:space:]]*$' | while read -r path rest; do
    if ! printf '%s\n' "$over" | grep -q "^$path "; then
        echo "check-size: $ALLOW lists $path, which is within the limits now (or gone): remove its line"
        echo x
    fi
    case "$rest" in
    *"issue "[0-9]*) ;;
    *) echo "check-size: $ALLOW: $path: give the reason and the issue (\"... (issue N)\")"; echo x ;;
    esac
done >> "${TMPDIR:-/tmp}/check-size.$$"
grep -v '^x$' "${TMPDIR:-/tmp}/check-size.$$"
grep -q '^x$' "${TMPDIR:-/tmp}/check-size.$$" && fail=1
rm -f "${TMPDIR:-/tmp}/check-size.$$"
[ "$fail" = 0 ] || exit 1
n=$(grep -cv '^[[:space:]]*\(#\|$\)' "$ALLOW")
echo "check-size: no function over $MAX_FUNC lines, no file over $MAX_FILE lines ($n allowlisted in $ALLOW)"
