#!/usr/bin/env python3
"""Layout check of the PetNN library: longest files, longest functions, cross-folder call circles.

Usage: config/check_layout.py [build-dir] [--top N] [--max-lines 600] [--max-function 100]

* files: line counts of the library sources (src/, layers/, ts/, include/), longest first;
* functions: C functions longer than --max-function lines (a top-level '{' ... '}' scan);
* circles: from `nm` on the library's object files, which folder defines and which uses every
  global symbol; a folder is src/<class>, layers/<family> or ts/<part>, plus include/; every
  strongly connected component of more than one folder in the "uses" graph is printed with one
  example symbol per edge. The registration files (src/sys/dlregis.c, layers/register.c) are the
  package's entry point, whose job is to name every class and type: their uses are not edges.

The exit status is 1 when a file is too long, a function is too long or a circle exists.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBDIRS = ("src", "layers", "ts", "include")
REGISTRATION = ("src/sys/dlregis.c", "layers/register.c")


def folder(path):
    parts = path.split("/")
    if parts[0] in ("src", "layers", "ts"):
        return "/".join(parts[:2]) if len(parts) > 2 else parts[0]
    return parts[0]


def sources():
    out = []
    for d in LIBDIRS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, d)):
            for f in files:
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(dirpath, f), ROOT))
    return sorted(out)


def long_functions(path, limit):
    """(name, first line, length) of top-level brace blocks longer than limit that follow a '(...)' line"""
    res, depth, start, name = [], 0, 0, None
    lines = open(os.path.join(ROOT, path), errors="replace").read().split("\n")
    for i, line in enumerate(lines):
        code = re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'|//.*', "", line)
        if depth == 0 and code.startswith("{") and i > 0:
            m = re.search(r"(\w+)\s*\(", lines[i - 1])
            name, start = (m.group(1) if m else None), i
        depth += code.count("{") - code.count("}")
        if depth == 0 and name and code.rstrip().endswith("}") and i > start:
            if i - start + 1 > limit:
                res.append((name, start + 1, i - start + 1))
            name = None
    return res


def objects(build):
    objdir = os.path.join(build, "CMakeFiles", "petnn.dir")
    objs = {}
    for dirpath, _, files in os.walk(objdir):
        for f in files:
            if f.endswith(".c.o"):
                full = os.path.join(dirpath, f)
                src = os.path.relpath(full, objdir)[: -len(".o")]
                if os.path.exists(os.path.join(ROOT, src)):  # not the object of a moved or removed file
                    objs[src] = full
    return objs


def symbols(obj):
    defined, used = set(), set()
    out = subprocess.run(["nm", "-g", obj], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            used.add(f[1])
        elif len(f) == 3 and f[1] in "TDBRVWC":
            defined.add(f[2])
    return defined, used


def circles(build):
    objs = objects(build)
    if not objs:
        sys.exit(f"no object files under {build}/CMakeFiles/petnn.dir: build the library first")
    definer, uses = {}, {}
    for src, obj in objs.items():
        d, u = symbols(obj)
        for s in d:
            definer[s] = src
        uses[src] = u
    edges = {}  # (folder a, folder b) -> example "file a -> symbol (file b)"
    for src, used in uses.items():
        if src in REGISTRATION:
            continue
        for s in sorted(used):
            if s in definer and folder(definer[s]) != folder(src):
                edges.setdefault((folder(src), folder(definer[s])), f"{src} -> {s} ({definer[s]})")
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    # Tarjan's strongly connected components
    index, low, stack, onstack, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        onstack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in onstack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                onstack.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [c for c in comps if len(c) > 1], edges, graph


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--max-lines", type=int, default=600)
    ap.add_argument("--max-function", type=int, default=100)
    a = ap.parse_args()
    bad = False

    counts = sorted(((sum(1 for _ in open(os.path.join(ROOT, f), errors="replace")), f) for f in sources()), reverse=True)
    print(f"longest library files (limit {a.max_lines} lines):")
    for n, f in counts[: a.top]:
        print(f"  {n:5d} {f}{'  TOO LONG' if n > a.max_lines else ''}")
    bad |= any(n > a.max_lines for n, f in counts)

    longf = [(n, f, name, line) for f in sources() if f.endswith(".c") for name, line, n in long_functions(f, a.max_function)]
    print(f"functions over {a.max_function} lines: {len(longf)}")
    for n, f, name, line in sorted(longf, reverse=True):
        print(f"  {n:5d} {f}:{line} {name}")
    bad |= bool(longf)

    comps, edges, graph = circles(a.build)
    print(f"cross-folder call circles (nm on {os.path.relpath(a.build, ROOT)}/CMakeFiles/petnn.dir): {len(comps)}")
    for comp in comps:
        print("  circle: " + " <-> ".join(comp))
        for x in comp:
            for y in sorted(graph[x]):
                if y in comp:
                    print(f"    {x} uses {y}: {edges[(x, y)]}")
    bad |= bool(comps)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
