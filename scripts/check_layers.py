#!/usr/bin/env python3
"""check_layers.py SRCDIR: check every #include "..." against the layer map.

The map (docs/DESIGN.md, "Layer order"), lowest first:

    lib/util < lib/vdev < lib/space < lib/zio < lib/arc < lib/dmu < lib/zap < lib/zil
      < lib/spa < lib/dsl < lib/posix < fuse/ < host/ < cmd/ < tests/, bench/

A file may include a header of its own folder or of a folder ranked below
it.  cmd/ is one rank (cmd/tarnd uses cmd/tarn's headers), tests/ and bench/
another.  A private header (X_impl.h) may be included only from its own
folder, and from white-box tests of its layer: tests/unit/L/ for lib/L
(tests/unit/host/ for host/), and the fuzz drivers (tests/fuzz/), each written by the layer whose parser it
feeds.

The build already refuses an upward include inside lib/ (each layer is
compiled with its own and lower include folders only, see meson.build);
this check also covers private headers, fuse/, cmd/, tests/ and bench/.
Run as the unit test `layers`; prints each violation and exits 1, else 0.
"""
import os
import re
import sys

LIB_LAYERS = ['util', 'vdev', 'space', 'zio', 'arc', 'dmu', 'zap', 'zil', 'spa', 'dsl', 'posix']
TOP_RANKS = {'fuse': len(LIB_LAYERS), 'host': len(LIB_LAYERS) + 1,
             'cmd': len(LIB_LAYERS) + 2,
             'tests': len(LIB_LAYERS) + 3, 'bench': len(LIB_LAYERS) + 3}
ROOTS = ['lib', 'fuse', 'host', 'cmd', 'tests', 'bench']
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def rank(path):
    """The rank of a file (path relative to the source root), or None."""
    parts = path.split('/')
    if parts[0] == 'lib' and len(parts) > 2 and parts[1] in LIB_LAYERS:
        return LIB_LAYERS.index(parts[1])
    return TOP_RANKS.get(parts[0])


def private_ok(includer, header):
    """May includer use the private header (a *_impl.h)?"""
    hdir = os.path.dirname(header)
    if os.path.dirname(includer) == hdir:
        return True
    parts = header.split('/')
    if parts[0] == 'host' and includer.startswith('tests/unit/host/'):
        return True
    if parts[0] == 'lib':
        if includer.startswith('tests/unit/' + parts[1] + '/'):
            return True
        if includer.startswith('tests/fuzz/'):
            return True
    return False


def sources(src):
    for root in ROOTS:
        for dirpath, _, names in os.walk(os.path.join(src, root)):
            for n in sorted(names):
                if n.endswith('.c') or n.endswith('.h'):
                    yield os.path.relpath(os.path.join(dirpath, n), src)


def resolve(includer, name, headers):
    """The header an include names: the includer's folder first (as the
    compiler does for quotes), then any header whose path ends in name."""
    local = os.path.normpath(os.path.join(os.path.dirname(includer), name))
    if local in headers:
        return [local]
    return [h for h in headers if h == name or h.endswith('/' + name)]


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else '.'
    files = list(sources(src))
    headers = set(f for f in files if f.endswith('.h'))
    bad = 0
    for f in files:
        r = rank(f)
        if r is None:
            continue
        with open(os.path.join(src, f), encoding='utf-8', errors='replace') as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                found = resolve(f, m.group(1), headers)
                if len(found) != 1:
                    print('%s:%d: "%s" names %s header in the tree' %
                          (f, lineno, m.group(1), 'no' if not found else 'more than one'))
                    bad += 1
                    continue
                h = found[0]
                hr = rank(h)
                if hr is None or hr > r:
                    print('%s:%d: includes %s, a layer above it' % (f, lineno, h))
                    bad += 1
                elif h.endswith('_impl.h') and not private_ok(f, h):
                    print('%s:%d: includes %s, private to %s/' %
                          (f, lineno, h, os.path.dirname(h)))
                    bad += 1
    if bad:
        print('%d include(s) break the layer map (docs/DESIGN.md, "Layer order")' % bad)
        return 1
    print('%d files: every #include "..." keeps the layer map' % len(files))
    return 0


if __name__ == '__main__':
    sys.exit(main())
