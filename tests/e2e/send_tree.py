#!/usr/bin/env python3
"""send_tree.py — file trees for the send/receive tests (tests/e2e/fs_send_*.sh).

  send_tree.py build ROOT           a tree with everything a file can have
  send_tree.py mutate ROOT STEP     the changes of step 1, 2, 3... (each different)
  send_tree.py bulk ROOT MIB        about MIB MiB of mixed files (large and 4 KiB)
  send_tree.py text ROOT MIB        about MIB MiB of compressible text (for -c / -w)
  send_tree.py manifest ROOT        print the tree's manifest (JSON) on stdout
  send_tree.py compare WANT GOT     WANT and GOT each a directory or a saved
                                    manifest: exit 0 when they are equal, else
                                    1 with the differences (the first 40)

The manifest holds, for every name under ROOT (".zfs" left out) and ROOT
itself ("."): the type, mode (with setuid/setgid/sticky), uid, gid,
mtime in nanoseconds, size, link count, the SHA-256 of a file's content,
a symlink's target, a device's rdev, every extended attribute (user.*
and the POSIX ACLs system.posix_acl_access/default, by value digest),
the data map of a regular file (its data segments by SEEK_DATA /
SEEK_HOLE: holes must stay holes), and the hard-link group of a file
(all names of its inode).  compare also checks that a file with holes
does not take more blocks than its data needs (holes not filled in).
Access times and ctimes are not compared (a receive need not keep them).

SEND_SCALE (default 1) multiplies the sizes and counts of build.
"""

import hashlib
import json
import os
import random
import stat
import struct
import sys

KIB = 1024
MIB = 1024 * KIB
SCALE = max(1, int(os.environ.get("SEND_SCALE", "1")))
ACL_A = "system.posix_acl_access"
ACL_D = "system.posix_acl_default"
# ACL entry tags (linux/posix_acl_xattr.h)
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 1, 2, 4, 8, 0x10, 0x20
NOID = 0xFFFFFFFF


# ---------------------------------------------------------------- writing

def data(rng, n):
    """n bytes of random data without zero runs (a zero block may become a hole)."""
    b = bytearray(rng.randbytes(n))
    for i in range(0, n, 512):
        b[i] |= 1
    return bytes(b)


def put(path, content, mode=None):
    with open(path, "wb") as f:
        f.write(content)
    if mode is not None:
        os.chmod(path, mode)


def pwrite(path, off, content, create=False):
    fd = os.open(path, os.O_WRONLY | (os.O_CREAT if create else 0), 0o644)
    try:
        os.pwrite(fd, content, off)
    finally:
        os.close(fd)


def truncate(path, size):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.ftruncate(fd, size)
    finally:
        os.close(fd)


def acl(ents):
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in ents)


def set_acl(path, name, users=(), groups=()):
    ents = [(USER_OBJ, 6, NOID)]
    ents += [(USER, p, u) for u, p in users]
    ents += [(GROUP_OBJ, 4, NOID)]
    ents += [(GROUP, p, g) for g, p in groups]
    ents += [(MASK, 6, NOID), (OTHER, 4, NOID)]
    os.setxattr(path, name, acl(ents))


def settime(path, sec, nsec, follow=True):
    ns = sec * 1000000000 + nsec
    os.utime(path, ns=(ns, ns), follow_symlinks=follow)


def build(root):
    """Everything a file can have, under root."""
    rng = random.Random(2901)
    j = lambda *p: os.path.join(root, *p)
    # sizes around block boundaries, and 4 KiB files
    os.mkdir(j("sizes"))
    for n in (0, 1, 511, 512, 513, 4095, 4096, 4097, 65535, 65536, 131071,
              131072, 131073, 262145, MIB - 1, MIB + 1):
        put(j("sizes", "s%d" % n), data(rng, n))
    os.mkdir(j("small"))
    for i in range(100 * SCALE):
        put(j("small", "f%04d" % i), data(rng, 4 * KIB))
    # large files
    os.mkdir(j("large"))
    for i in range(2):
        put(j("large", "big%d" % i), data(rng, 4 * MIB * SCALE + 12345 * i))
    # sparse files: holes by seek and by truncate
    os.mkdir(j("sparse"))
    pwrite(j("sparse", "mid"), 0, data(rng, 64 * KIB), create=True)
    pwrite(j("sparse", "mid"), 5 * MIB, data(rng, 100 * KIB))
    truncate(j("sparse", "mid"), 6 * MIB)
    truncate(j("sparse", "allhole"), 50 * MIB)
    put(j("sparse", "tail"), data(rng, 10000))
    truncate(j("sparse", "tail"), 20 * MIB)
    pwrite(j("sparse", "lead"), 3 * MIB + 17, data(rng, 5000), create=True)
    pwrite(j("sparse", "many"), 0, b"\1", create=True)
    for k in range(1, 9):
        pwrite(j("sparse", "many"), k * MIB + k, data(rng, 300))
    put(j("empty"), b"")
    # hard links, in one directory and across directories
    os.mkdir(j("links"))
    put(j("links", "a"), data(rng, 3000))
    os.link(j("links", "a"), j("links", "a2"))
    os.link(j("links", "a"), j("sizes", "a3"))
    put(j("links", "b"), data(rng, 200 * KIB))
    os.link(j("links", "b"), j("links", "b2"))
    # symlinks: relative, absolute, dangling, long, to a directory
    os.symlink("a", j("links", "sym_rel"))
    os.symlink("/etc/hostname", j("links", "sym_abs"))
    os.symlink("nowhere/at/all", j("links", "sym_dangling"))
    os.symlink("x" * 1000, j("links", "sym_long"))
    os.symlink("../sizes", j("links", "sym_dir"))
    # fifos, sockets, devices
    os.mkdir(j("special"))
    os.mkfifo(j("special", "fifo"))
    os.mknod(j("special", "chr"), 0o620 | stat.S_IFCHR, os.makedev(1, 3))
    os.mknod(j("special", "blk"), 0o640 | stat.S_IFBLK, os.makedev(7, 200))
    os.mknod(j("special", "sock"), 0o755 | stat.S_IFSOCK)
    # directories deep and wide
    d = j("deep")
    for i in range(40):
        d = os.path.join(d, "d%02d" % i)
    os.makedirs(d)
    put(os.path.join(d, "bottom"), b"at the bottom\n")
    os.mkdir(j("wide"))
    for i in range(600 * SCALE):
        if i % 3 == 0:
            os.mkdir(j("wide", "e%05d" % i))
        else:
            put(j("wide", "e%05d" % i), b"%d\n" % i)
    # modes and owners (chown first: it clears setuid/setgid)
    os.mkdir(j("perm"))
    owners = [(1000, 1000), (65534, 65534), (123456, 654321), (0, 5), (4000000000, 7)]
    modes = [0o4755, 0o2750, 0o6711, 0o0, 0o444, 0o600, 0o777, 0o1755]
    for i, (uid, gid) in enumerate(owners):
        for k, m in enumerate(modes):
            p = j("perm", "u%d_m%o" % (i, m))
            put(p, b"%d %d\n" % (i, k))
            os.chown(p, uid, gid)
            os.chmod(p, m)
    os.mkdir(j("perm", "sticky"))
    os.chmod(j("perm", "sticky"), 0o1777)
    os.mkdir(j("perm", "sgid"))
    os.chown(j("perm", "sgid"), 1000, 2000)
    os.chmod(j("perm", "sgid"), 0o2775)
    os.lchown(j("links", "sym_rel"), 1000, 1001)
    os.chown(j("special", "fifo"), 321, 654)
    # extended attributes, small to larger than inline, on files and dirs
    os.mkdir(j("xattr"))
    p = j("xattr", "f")
    put(p, b"with attributes\n")
    os.setxattr(p, "user.empty", b"")
    os.setxattr(p, "user.small", b"v")
    os.setxattr(p, "user.mid", data(rng, 200))
    os.setxattr(p, "user.big", data(rng, 4000))
    os.setxattr(p, "user.huge", data(rng, 60000))
    for i in range(30):
        os.setxattr(j("xattr"), "user.n%02d" % i, b"dir attribute %d" % i)
    os.setxattr(j("sizes", "s0"), "user.on_empty", b"yes")
    os.setxattr(root, "user.root", b"on the root")
    # POSIX ACLs: access ACLs, a default ACL and a file inheriting it
    os.mkdir(j("acl"))
    put(j("acl", "f"), b"acl\n")
    set_acl(j("acl", "f"), ACL_A, users=[(1000, 6), (2000, 4)], groups=[(3000, 4)])
    os.mkdir(j("acl", "inherit"))
    set_acl(j("acl", "inherit"), ACL_D, users=[(1234, 7)], groups=[(4321, 5)])
    set_acl(j("acl", "inherit"), ACL_A, users=[(1234, 7)])
    put(j("acl", "inherit", "child"), b"inherits\n")
    os.mkdir(j("acl", "inherit", "subdir"))
    # times with nanoseconds, set last (bottom up: entries change dir mtimes)
    set_times(root, rng)


def set_times(root, rng):
    stamps = [(981173106, 123456789), (1, 1), (4102444800, 999999999),
              (1700000000, 0), (1234567890, 500000001)]
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        if ".zfs" in dirpath.split(os.sep):
            continue
        for n in filenames + dirnames:
            if n == ".zfs":
                continue
            s = rng.choice(stamps)
            settime(os.path.join(dirpath, n), s[0] + rng.randrange(1000), s[1],
                    follow=False)
    settime(root, 1500000000, 424242424)


# ---------------------------------------------------------------- changes

def mutate(root, step):
    """The changes of one step: every kind of change, different per step."""
    rng = random.Random(2900 + step)
    j = lambda *p: os.path.join(root, *p)
    t = "s%d" % step
    # append, overwrite in the middle, truncate shorter and longer
    with open(j("large", "big0"), "ab") as f:
        f.write(data(rng, 300 * KIB + step))
    pwrite(j("large", "big1"), 1 * MIB + step * 4096 + 7, data(rng, 50 * KIB))
    truncate(j("sizes", "s%d" % (MIB + 1)), 100000 - step)
    truncate(j("sizes", "s4097"), 8 * MIB + step)   # a hole at the end
    pwrite(j("sparse", "mid"), 2 * MIB, data(rng, 4096))   # data into a hole
    # delete, rename (same dir and across), new files
    os.unlink(j("small", "f%04d" % (step * 3)))
    os.rename(j("small", "f%04d" % (step * 3 + 1)), j("small", "r%s" % t))
    os.rename(j("small", "f%04d" % (step * 3 + 2)), j("wide", "moved_%s" % t))
    put(j("new_%s" % t), data(rng, 12345))
    # hard links: a new one, one removed, a rename over a link
    os.link(j("links", "b"), j("wide", "b_link_%s" % t))
    if step == 1:
        os.unlink(j("links", "a2"))
    # attributes: chmod, chown, xattrs set, changed and removed, ACLs
    os.chmod(j("perm", "u0_m444"), 0o640 + step)
    os.chown(j("perm", "u1_m600"), 1000 + step, 2000 + step)
    os.setxattr(j("xattr", "f"), "user.small", b"changed in " + t.encode())
    os.setxattr(j("xattr", "f"), "user.new_" + t, data(rng, 1000 * step))
    if step == 1:
        os.removexattr(j("xattr", "f"), "user.empty")
    os.setxattr(j("large", "big0"), "user.big_" + t, data(rng, 5000))
    set_acl(j("acl", "f"), ACL_A, users=[(1000 + step, 4)], groups=[(3000, 6)])
    # a directory replaced by a file, and a file by a directory
    victim = j("wide", "e%05d" % (3 * step))
    if os.path.isdir(victim):
        os.rmdir(victim)
    else:
        os.unlink(victim)
    put(victim, b"was a directory\n")
    victim = j("wide", "e%05d" % (3 * step + 1))
    os.unlink(victim)
    os.mkdir(victim)
    put(os.path.join(victim, "inside"), b"was a file\n")
    # a whole subtree gone, a symlink retargeted, a new deep directory
    if step == 2:
        import shutil
        shutil.rmtree(j("deep", "d00", "d01", "d02", "d03", "d04", "d05", "d06"))
    os.unlink(j("links", "sym_rel"))
    os.symlink("b2" if step % 2 else "a", j("links", "sym_rel"))
    os.makedirs(j("made_%s" % t, "x", "y"))
    put(j("made_%s" % t, "x", "y", "z"), data(rng, 777))
    settime(j("made_%s" % t), 1600000000 + step, 1000 + step)
    settime(j("sizes", "s1"), 1111111111, step)


# ---------------------------------------------------------------- bulk

def bulk(root, mib):
    """About mib MiB: 3/4 in large files, 1/4 in 4 KiB files, a few dirs."""
    rng = random.Random(2929)
    large = mib * MIB * 3 // 4
    n = 0
    while large > 0:
        sz = min(large, 8 * MIB)
        put(os.path.join(root, "L%03d" % n), data(rng, sz))
        large -= sz
        n += 1
    small = mib * MIB // 4 // (4 * KIB)
    for i in range(small):
        d = os.path.join(root, "d%02d" % (i // 512))
        if i % 512 == 0:
            os.mkdir(d)
        put(os.path.join(d, "s%05d" % i), data(rng, 4 * KIB))


def text(root, mib):
    """About mib MiB of compressible text, in 1 MiB files."""
    rng = random.Random(2930)
    words = [b"alpha", b"bravo", b"charlie", b"delta", b"echo", b"foxtrot", b"golf"]
    for i in range(mib):
        out = bytearray()
        while len(out) < MIB:
            out += b" ".join(rng.choice(words) for _ in range(12))
            out += b" %d\n" % rng.randrange(1000000)
        put(os.path.join(root, "t%03d.txt" % i), bytes(out[:MIB]))


# ---------------------------------------------------------------- manifest

def xattrs(path, islink):
    names = set()
    try:
        names = set(os.listxattr(path, follow_symlinks=False))
    except OSError:
        pass
    if not islink:
        for n in (ACL_A, ACL_D):
            try:
                os.getxattr(path, n)
                names.add(n)
            except OSError:
                pass
    out = {}
    for n in sorted(names):
        try:
            v = os.getxattr(path, n, follow_symlinks=False)
        except OSError as e:
            out[n] = "error %d" % e.errno
            continue
        out[n] = v.hex() if len(v) <= 64 else "sha256:" + hashlib.sha256(v).hexdigest()
    return out


def file_info(path, e):
    h = hashlib.sha256()
    segs = []
    with open(path, "rb") as f:
        while True:
            b = f.read(MIB)
            if not b:
                break
            h.update(b)
        fd = f.fileno()
        off = 0
        while off < e["size"]:
            try:
                d = os.lseek(fd, off, os.SEEK_DATA)
            except OSError:
                break           # ENXIO: no data after off
            hole = os.lseek(fd, d, os.SEEK_HOLE)
            if hole > d:        # (an empty segment holds no data: not kept)
                segs.append([d, hole])
            off = max(hole, d + 1)
    e["sha256"] = h.hexdigest()
    e["data"] = segs


def manifest(root):
    ents = {}
    inodes = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == root and ".zfs" in dirnames:
            dirnames.remove(".zfs")
        dirnames.sort()
        names = [dirpath] + [os.path.join(dirpath, n) for n in sorted(filenames)]
        for p in names:
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            fmt = stat.S_IFMT(st.st_mode)
            e = {"type": {stat.S_IFREG: "f", stat.S_IFDIR: "d", stat.S_IFLNK: "l",
                          stat.S_IFCHR: "c", stat.S_IFBLK: "b", stat.S_IFIFO: "p",
                          stat.S_IFSOCK: "s"}.get(fmt, "?"),
                 "mode": "%o" % stat.S_IMODE(st.st_mode), "uid": st.st_uid,
                 "gid": st.st_gid, "mtime_ns": st.st_mtime_ns, "nlink": st.st_nlink}
            if fmt != stat.S_IFDIR:
                e["size"] = st.st_size
            if fmt == stat.S_IFREG:
                file_info(p, e)
                e["blocks"] = st.st_blocks
                inodes.setdefault(st.st_ino, []).append(rel)
            elif fmt == stat.S_IFLNK:
                e["target"] = os.readlink(p)
            elif fmt in (stat.S_IFCHR, stat.S_IFBLK):
                e["rdev"] = "%d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
            e["_ino"] = st.st_ino
            e["xattr"] = xattrs(p, fmt == stat.S_IFLNK)
            ents[rel] = e
    for rels in inodes.values():
        if len(rels) > 1:
            for r in rels:
                ents[r]["links"] = sorted(rels)
    for e in ents.values():
        del e["_ino"]
    return ents


def load(arg):
    if os.path.isdir(arg):
        return manifest(arg)
    with open(arg) as f:
        return json.load(f)


def holes_filled(e):
    """A file with holes whose blocks are more than its data can explain."""
    if e["type"] != "f" or e["size"] == 0:
        return False
    data_bytes = sum(b - a for a, b in e["data"])
    if data_bytes >= e["size"]:
        return False
    return e["blocks"] * 512 > data_bytes + data_bytes // 4 + 256 * KIB


def compare(want, got):
    diffs = []
    for rel in sorted(set(want) | set(got)):
        if rel not in got:
            diffs.append("%s: missing" % rel)
            continue
        if rel not in want:
            diffs.append("%s: unexpected (%s)" % (rel, got[rel]["type"]))
            continue
        w, g = want[rel], got[rel]
        for k in sorted(set(w) | set(g)):
            if k == "blocks":
                continue
            if w.get(k) != g.get(k):
                wv, gv = str(w.get(k)), str(g.get(k))
                diffs.append("%s: %s: want %s, got %s" % (rel, k, wv[:300], gv[:300]))
        if holes_filled(g):
            diffs.append("%s: holes filled in: %d blocks for %d data bytes of %d"
                         % (rel, g["blocks"], sum(b - a for a, b in g["data"]), g["size"]))
    return diffs


def main():
    a = sys.argv[1:]
    if len(a) < 2:
        sys.exit(__doc__)
    op = a[0]
    if op == "build":
        build(a[1])
    elif op == "mutate":
        mutate(a[1], int(a[2]))
    elif op == "bulk":
        bulk(a[1], int(a[2]))
    elif op == "text":
        text(a[1], int(a[2]))
    elif op == "manifest":
        json.dump(manifest(a[1]), sys.stdout, indent=0, sort_keys=True)
    elif op == "compare":
        diffs = compare(load(a[1]), load(a[2]))
        for d in diffs[:40]:
            print(d)
        if len(diffs) > 40:
            print("... and %d more differences" % (len(diffs) - 40))
        sys.exit(1 if diffs else 0)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
