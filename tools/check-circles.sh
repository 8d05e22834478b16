#!/bin/sh
# No include circle between modules (issue 34): a module is a source file
# with its header (x.c + x.h, likewise .cu/.cuh/.inc) and its private
# header, if any (xInt.h, shared by the files that make up x, as SQLite's
# whereInt.h: sim/costsInt.h for sim/cost*.c), and module A uses
# module B when a file of A includes a file of B ("dir/b.h" from the root or
# include/, or a name beside the including file). The graph of these uses
# must have no cycle; a cycle fails, named with the file and line of each
# include that closes it.
#
# Circles known and not yet broken sit in tools/circles-allowlist.txt, one a
# line: the modules of the circle (its strongly connected component, in any
# order), a colon, why and the issue. A new module joining a listed circle
# fails, and so does a listed circle that is gone (the list only shrinks).
#   sh tools/check-circles.sh [ROOT]   (default: this tree)
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2
ALLOW=tools/circles-allowlist.txt
[ -f "$ALLOW" ] || { echo "check-circles: $ALLOW is missing" >&2; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

find common models topologies profile frameworks calibrate sim run plan validate cluster inputs trainer \
     reports commands cli api include bench tests tools \
     -path tests/fixtures -prune -o \
     -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \
                -o -name '*.inc' \) -print 2>/dev/null | sort > "$tmp/files"
# file:line:text of every quoted include
xargs grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' < "$tmp/files" \
    > "$tmp/includes" || true

awk -v allow="$ALLOW" '
function module(path) { sub(/\.(c|h|cu|cuh|inc)$/, "", path); sub(/Int$/, "", path); return path }
function dir(path) { return path ~ /\// ? substr(path, 1, match(path, /\/[^\/]*$/) - 1) : "." }
# Tarjan: strongly connected components of the module graph.
function visit(v,    i, w) {
    index_of[v] = lowlink[v] = ++counter
    stack[++sp] = v; on_stack[v] = 1
    for (i = 1; i <= nout[v]; i++) {
        w = out[v, i]
        if (!(w in index_of)) {
            visit(w)
            if (lowlink[w] < lowlink[v]) lowlink[v] = lowlink[w]
        } else if (on_stack[w] && index_of[w] < lowlink[v]) {
            lowlink[v] = index_of[w]
        }
    }
    if (lowlink[v] == index_of[v]) {
        ncomp++; comp_size[ncomp] = 0
        do {
            w = stack[sp--]; on_stack[w] = 0
            comp_of[w] = ncomp; comp_size[ncomp]++
        } while (w != v)
    }
}
# The modules of component k, sorted, space separated.
function members(k,    m, list, n, i, j, t) {
    n = 0
    for (m in comp_of) if (comp_of[m] == k) list[++n] = m
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && list[j - 1] > list[j]; j--) { t = list[j]; list[j] = list[j - 1]; list[j - 1] = t }
    t = list[1]
    for (i = 2; i <= n; i++) t = t " " list[i]
    first_member = list[1]
    return t
}
# A shortest cycle through start inside its component, each edge with the
# include that makes it.
function cycle(start,    q, head, tail, v, w, i, prev, seen, path, k) {
    head = 1; tail = 0; q[++tail] = start
    while (head <= tail) {
        v = q[head++]
        for (i = 1; i <= nout[v]; i++) {
            w = out[v, i]
            if (comp_of[w] != comp_of[start]) continue
            if (w == start) {
                path = "  " v " -> " start "   (" why[v, start] ")"
                for (k = v; k != start; k = prev[k])
                    path = "  " prev[k] " -> " k "   (" why[prev[k], k] ")\n" path
                return path
            }
            if (!(w in seen)) { seen[w] = 1; prev[w] = v; q[++tail] = w }
        }
    }
    return ""
}
FILENAME == ARGV[1] { exists[$0] = 1; mod[module($0)] = 1; next }
FILENAME == ARGV[2] {
    # path:line:#include "target"
    file = $0; sub(/:.*/, "", file)
    rest = substr($0, length(file) + 2); line = rest; sub(/:.*/, "", line)
    target = rest; sub(/^[^"]*"/, "", target); sub(/".*/, "", target)
    if (target in exists) t = target
    else if (("include/" target) in exists) t = "include/" target
    else if ((dir(file) "/" target) in exists) t = dir(file) "/" target
    else next
    a = module(file); b = module(t)
    if (a == b || ((a, b) in why)) next
    why[a, b] = file ":" line " includes " t
    out[a, ++nout[a]] = b
    next
}
{   # the allowlist
    if ($0 ~ /^[[:space:]]*(#|$)/) next
    if (index($0, ":") == 0) { printf "check-circles: %s: \"MODULES: why (issue N)\": %s\n", allow, $0; bad = 1; next }
    names = substr($0, 1, index($0, ":") - 1); reason = substr($0, index($0, ":") + 1)
    n = split(names, part, /[[:space:]]+/); key = ""
    for (i = 1; i <= n; i++) if (part[i] != "") { sorted[++ns] = part[i] }
    for (i = 2; i <= ns; i++)
        for (j = i; j > 1 && sorted[j - 1] > sorted[j]; j--) { tt = sorted[j]; sorted[j] = sorted[j - 1]; sorted[j - 1] = tt }
    for (i = 1; i <= ns; i++) key = key (i > 1 ? " " : "") sorted[i]
    ns = 0
    listed[key] = 1
    if (reason !~ /issue [0-9]+/) { printf "check-circles: %s: %s: give the reason and the issue (\"... (issue N)\")\n", allow, key; bad = 1 }
}
END {
    for (m in mod) if (!(m in index_of)) visit(m)
    found = 0
    for (k = 1; k <= ncomp; k++) {
        if (comp_size[k] < 2) continue
        key = members(k); seen_key[key] = 1
        if (key in listed) { known++; continue }
        printf "check-circles: an include circle between %s:\n%s\n", key, cycle(first_member)
        bad = 1
    }
    for (key in listed) if (!(key in seen_key)) {
        printf "check-circles: %s lists the circle %s, which is gone (or has other members now): remove or fix its line\n", allow, key
        bad = 1
    }
    if (bad) exit 1
    printf "check-circles: no include circle between modules (%d allowlisted in %s)\n", known + 0, allow
}' "$tmp/files" "$tmp/includes" "$ALLOW"
