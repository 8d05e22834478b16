#!/usr/bin/env python3
"""List the GPU code embedded in an executable or shared object.

Reads the .nv_fatbin section's fat-binary containers (the layout nvcc
writes: a 16-byte container header with magic 0xBA55ED50, then entries
whose header gives the kind - 1 PTX, 2 machine code - and the SM version)
and prints one line per kind and architecture with how many entries carry
it, e.g. "sm_90 machine code: 12" and "compute_100 PTX: 12". For machines
without cuobjdump; the counts match `cuobjdump --list-elf / --list-ptx`.

usage: fatbin.py FILE    exit 1 when FILE holds no fat binary
"""
import struct
import subprocess
import sys


def fatbin_section(path):
    out = subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.replace("[ ", "[").split()
        if ".nv_fatbin" in parts:
            i = parts.index(".nv_fatbin")
            off, size = int(parts[i + 3], 16), int(parts[i + 4], 16)
            with open(path, "rb") as f:
                f.seek(off)
                return f.read(size)
    return b""


def entries(data):
    found = {}
    pos = 0
    while pos + 16 <= len(data):
        magic, _, hsize, fsize = struct.unpack_from("<IHHQ", data, pos)
        if magic != 0xBA55ED50:
            pos += 8  # containers are 8-byte aligned
            continue
        p, end = pos + hsize, pos + hsize + fsize
        while p + 32 <= end:
            kind, _, ehead, padded = struct.unpack_from("<HHII", data, p)
            sm = struct.unpack_from("<I", data, p + 28)[0]
            found[(kind, sm)] = found.get((kind, sm), 0) + 1
            if ehead == 0:
                break
            p += ehead + padded
        pos = end
    return found


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    found = entries(fatbin_section(sys.argv[1]))
    if not found:
        print("no fat binary in", sys.argv[1])
        return 1
    for (kind, sm), n in sorted(found.items(), key=lambda x: (x[0][1], x[0][0])):
        if kind == 1:
            print("compute_%d PTX: %d" % (sm, n))
        else:
            print("sm_%d machine code: %d" % (sm, n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
