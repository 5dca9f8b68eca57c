#!/usr/bin/env python3
"""fs_ops.py — file system operations for the tests in tests/e2e/fs_*.sh.

Suites print one line per step, "name: result", where the result is a
value or the errno name the step failed with, so that the same suite run
on ext4 (a temp dir on the root file system) and on a Tarn mount can be
compared line by line:

  errno ROOT          POSIX behaviour and errno values (run as root)
  perm-setup ROOT     lay out files with owners and modes (as root)
  perm ROOT           what an unprivileged user may do there (as nobody)

Other commands exit 0 when their checks pass, and print what failed:

  unlinked ROOT       a file unlinked while open still reads; its space
                      comes back after the close
  holes ROOT          sparse files: holes read as zeros, SEEK_DATA/HOLE
  handles ROOT        files and directories found by file handle after the
                      kernel forgot them (NFS export); removed: ESTALE
  bigdir ROOT N       create N files, list them, remove them
  worker ROOT ID N    one of several concurrent workers (creates, writes,
                      renames, removes in ROOT); records what it left
  verify ROOT NW      check what the NW workers left (names, contents)
  hold PATH SECS      open PATH, unlink it (fsyncing the directory), keep
                      it open SECS seconds
  tmpfile-hold ROOT SECS
                      two O_TMPFILEs written and fsync'd, one named
                      (tmpfile-kept) by linkat first; held SECS seconds
  tmpfile-check ROOT  tmpfile-kept has all that was written to it
  fsync-writer ROOT LOG PREFIX
                      write and fsync files (and rename them, fsyncing the
                      directory) until killed; after each fsync returns,
                      log what must survive a crash to LOG (outside ROOT)
  verify-log ROOT LOG everything LOG says was synced is there
  region-writer PATH LOG SEED MB
                      rewrite regions of the existing file PATH (MB MiB)
                      in place, fsync after each, log each acknowledged one
  verify-regions PATH LOG
                      every region LOG acknowledges reads back
  fill PATH HOW MB    write up to MB MiB to PATH (HOW: write, writev, mmap,
                      close: write with no fsync before the close)
                      until the file system is full; prints the errno
                      that stopped it (at write, fsync or close) or "ok"
"""
import hashlib
import ctypes
import errno
import os
import random
import stat
import struct
import subprocess
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
AT_SYMLINK_FOLLOW = 0x400
RENAME_NOREPLACE, RENAME_EXCHANGE, RENAME_WHITEOUT = 1, 2, 4
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 1, 2


def renameat2(a, b, flags):
    if libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), flags) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def fallocate(fd, mode, off, length):
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    if libc.fallocate(fd, mode, off, length) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def getxattr_size(path, name, size):
    buf = ctypes.create_string_buffer(max(size, 1))
    n = libc.getxattr(path.encode(), name.encode(), buf, ctypes.c_size_t(size))
    if n < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return n


class Suite:
    def __init__(self, root):
        self.root = root

    def p(self, *names):
        return os.path.join(self.root, *names)

    def step(self, name, fn):
        try:
            v = fn()
            out = "ok" if v is None else v
        except OSError as e:
            out = errno.errorcode.get(e.errno, str(e.errno))
        print("%s: %s" % (name, out), flush=True)


# security.capability, revision 2: cap_net_bind_service (10) permitted and effective
VFS_CAP = struct.pack("<IIIII", 0x02000001, 1 << 10, 0, 0, 0)


def xattr_or_errno(path, name):
    try:
        return os.getxattr(path, name)
    except OSError as e:
        return errno.errorcode[e.errno]


def write(path, data, flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode=0o644):
    fd = os.open(path, flags, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def nlink(path):
    return os.lstat(path).st_nlink


def ftype(path):
    m = os.lstat(path).st_mode
    for t, n in ((stat.S_ISDIR, "dir"), (stat.S_ISREG, "file"), (stat.S_ISLNK, "link"),
                 (stat.S_ISFIFO, "fifo"), (stat.S_ISCHR, "chr")):
        if t(m):
            return n
    return "other"


# ---- the errno suite (compared with ext4) ----

def errno_suite(root):
    s = Suite(root)
    p, st = s.p, s.step
    # directories
    st("mkdir", lambda: os.mkdir(p("d")))
    st("mkdir-exists", lambda: os.mkdir(p("d")))
    st("mkdir-sub", lambda: os.mkdir(p("d", "sub")))
    st("dir-nlink", lambda: nlink(p("d")))
    st("rmdir-notempty", lambda: os.rmdir(p("d")))
    st("rmdir-dot", lambda: os.rmdir(p("d", "sub", ".")))
    st("mkdir-missing-parent", lambda: os.mkdir(p("nope", "x")))
    # files
    st("create-excl", lambda: os.close(os.open(p("f"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)))
    st("create-excl-again", lambda: os.open(p("f"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    st("open-missing", lambda: os.open(p("missing"), os.O_RDONLY))
    st("open-file-as-dir", lambda: os.open(p("f"), os.O_RDONLY | os.O_DIRECTORY))
    st("open-dir-write", lambda: os.open(p("d"), os.O_WRONLY))
    st("open-under-file", lambda: os.open(p("f", "x"), os.O_RDONLY))
    st("mkdir-over-file", lambda: os.mkdir(p("f")))
    st("write-read", lambda: (write(p("f"), b"hello world"), read(p("f")).decode())[1])
    st("append", lambda: (write(p("f"), b"+more", os.O_WRONLY | os.O_APPEND),
                          read(p("f")).decode())[1])
    st("pwrite-past-end", lambda: (os.truncate(p("f"), 0), _pwrite(p("f"), b"z", 100),
                                   os.stat(p("f")).st_size)[2])
    st("hole-reads-zero", lambda: read(p("f"))[:100] == bytes(100))
    st("truncate-up", lambda: (os.truncate(p("f"), 5000), os.stat(p("f")).st_size)[1])
    st("truncate-down", lambda: (os.truncate(p("f"), 10), os.stat(p("f")).st_size)[1])
    st("o-trunc", lambda: (os.close(os.open(p("f"), os.O_WRONLY | os.O_TRUNC)),
                           os.stat(p("f")).st_size)[1])
    st("truncate-dir", lambda: os.truncate(p("d"), 0))
    st("ftruncate-rdonly", lambda: _ftrunc_ro(p("f")))
    st("unlink-dir", lambda: os.unlink(p("d")))
    st("rmdir-file", lambda: os.rmdir(p("f")))
    st("unlink-missing", lambda: os.unlink(p("missing")))
    # names
    st("name-255", lambda: (write(p("n" * 255), b""), os.unlink(p("n" * 255)))[1])
    st("name-256", lambda: write(p("n" * 256), b""))
    st("lookup-256", lambda: os.stat(p("n" * 256)))
    # hard links
    st("link", lambda: os.link(p("f"), p("f2")))
    st("link-nlink", lambda: nlink(p("f")))
    st("link-exists", lambda: os.link(p("f"), p("f2")))
    st("link-dir", lambda: os.link(p("d"), p("d2")))
    st("link-missing", lambda: os.link(p("missing"), p("x")))
    st("unlink-link", lambda: (os.unlink(p("f2")), nlink(p("f")))[1])
    # symlinks
    st("symlink", lambda: os.symlink("f", p("s")))
    st("readlink", lambda: os.readlink(p("s")))
    st("symlink-type", lambda: ftype(p("s")))
    st("symlink-follow", lambda: ftype(os.path.realpath(p("s"))))
    st("readlink-file", lambda: os.readlink(p("f")))
    st("symlink-exists", lambda: os.symlink("x", p("s")))
    st("symlink-dangling", lambda: (os.symlink("nowhere", p("dang")), os.open(p("dang"), 0))[1])
    st("symlink-loop", lambda: (os.symlink("loop2", p("loop1")), os.symlink("loop1", p("loop2")),
                                os.open(p("loop1"), 0))[2])
    st("symlink-long", lambda: (os.symlink("t" * 4000, p("longlink")),
                                len(os.readlink(p("longlink"))))[1])
    # rename
    rename_suite(s)
    # extended attributes
    xattr_suite(s)
    # times, owners, modes
    st("utime-ns", lambda: (os.utime(p("f"), ns=(1000000001, 2000000002)),
                            (os.stat(p("f")).st_atime_ns, os.stat(p("f")).st_mtime_ns))[1])
    st("utime-now", lambda: (os.utime(p("f")), os.stat(p("f")).st_mtime_ns > 2000000002)[1])
    st("ctime-on-chmod", lambda: _ctime_moves(p("f"), lambda: os.chmod(p("f"), 0o600)))
    st("mtime-on-create", lambda: _mtime_moves(p("d"), lambda: write(p("d", "new"), b"")))
    st("mtime-on-write", lambda: _mtime_moves(p("f"), lambda: write(p("f"), b"x",
                                                                     os.O_WRONLY)))
    st("chmod", lambda: (os.chmod(p("f"), 0o4751), oct(os.stat(p("f")).st_mode))[1])
    st("chown", lambda: (os.chown(p("f"), 1234, 5678),
                         (os.stat(p("f")).st_uid, os.stat(p("f")).st_gid))[1])
    st("chown-clears-suid", lambda: (os.chmod(p("f"), 0o6755), os.chown(p("f"), 1, 1),
                                     oct(os.stat(p("f")).st_mode))[2])
    st("chown-keeps-sgid-no-xgrp", lambda: (os.chmod(p("f"), 0o6745), os.chown(p("f"), 2, 2),
                                            oct(os.stat(p("f")).st_mode))[2])
    # root has CAP_FSETID: its writes and truncates keep the bits
    st("root-write-keeps-suid", lambda: (os.chmod(p("f"), 0o6755),
                                         write(p("f"), b"xy", os.O_WRONLY | os.O_APPEND),
                                         oct(os.stat(p("f")).st_mode))[2])
    st("root-truncate-keeps-suid", lambda: (os.truncate(p("f"), 1),
                                            oct(os.stat(p("f")).st_mode))[1])
    st("root-otrunc-keeps-suid", lambda: (write(p("f"), b"z"), oct(os.stat(p("f")).st_mode))[1])
    # but a write takes security.capability away, even root's
    st("write-drops-capability", lambda: (os.setxattr(p("f"), "security.capability", VFS_CAP),
                                          os.getxattr(p("f"), "security.capability") == VFS_CAP,
                                          write(p("f"), b"w", os.O_WRONLY | os.O_APPEND),
                                          xattr_or_errno(p("f"), "security.capability"))[1:4:2])
    # special files
    st("mkfifo", lambda: (os.mkfifo(p("fifo")), ftype(p("fifo")))[1])
    st("mknod-chr", lambda: (os.mknod(p("null"), stat.S_IFCHR | 0o666, os.makedev(1, 3)),
                             ftype(p("null")), os.major(os.stat(p("null")).st_rdev),
                             os.minor(os.stat(p("null")).st_rdev))[1:])
    st("mknod-exists", lambda: os.mknod(p("fifo"), stat.S_IFIFO | 0o644))
    # listing
    st("listdir", lambda: sorted(os.listdir(p("d"))))
    st("scandir-types", lambda: sorted((e.name, e.is_dir(follow_symlinks=False),
                                        e.is_symlink()) for e in os.scandir(root)))
    st("statvfs-namemax", lambda: os.statvfs(root).f_namemax)
    # open files
    st("unlink-open", lambda: _unlink_open(p("uo")))
    st("birth-time", lambda: _birth(p("born")))
    st("tmpfile", lambda: _tmpfile(root, p("tmpnamed"), False))
    st("tmpfile-excl-link", lambda: _tmpfile(root, p("tmpexcl"), True))
    st("tmpfile-in-file", lambda: os.open(p("f"), os.O_TMPFILE | os.O_RDWR, 0o600))
    st("fallocate", lambda: _falloc(p("fa")))
    st("punch-hole", lambda: _punch(p("fa")))


def _pwrite(path, data, off):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, data, off)
    finally:
        os.close(fd)


def _ftrunc_ro(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)


def _ctime_moves(path, fn):
    before = os.stat(path).st_ctime_ns
    time.sleep(0.01)
    fn()
    return os.stat(path).st_ctime_ns > before


def _mtime_moves(path, fn):
    before = os.stat(path).st_mtime_ns
    time.sleep(0.01)
    fn()
    return os.stat(path).st_mtime_ns > before


def _unlink_open(path):
    write(path, b"data" * 1000)
    fd = os.open(path, os.O_RDWR)
    try:
        os.unlink(path)
        n = os.fstat(fd).st_nlink
        os.pwrite(fd, b"more", 4000)
        return (n, os.pread(fd, 8, 3996), os.path.exists(path))
    finally:
        os.close(fd)


def _birth(path):
    """statx's birth time (stat %W): the create's, kept by writes and chmod."""
    def born():
        out = subprocess.run(["stat", "-c", "%W", path], capture_output=True, text=True,
                             check=True).stdout.strip()
        return int(out) if out.isdigit() else None
    t0 = time.time()
    write(path, b"new")
    b0 = born()
    time.sleep(1.1)
    write(path, b"more", os.O_WRONLY | os.O_APPEND)
    os.chmod(path, 0o600)
    return (b0 is not None and int(t0) <= b0 <= time.time(), born() == b0)


def _tmpfile(root, name, excl):
    """O_TMPFILE: no name until linkat names it (never, with O_EXCL)."""
    before = sorted(os.listdir(root))
    fd = os.open(root, os.O_TMPFILE | os.O_RDWR | (os.O_EXCL if excl else 0), 0o640)
    try:
        os.write(fd, b"tmp" * 1000)
        st0 = os.fstat(fd)
        unnamed = (st0.st_nlink, oct(st0.st_mode), sorted(os.listdir(root)) == before)
        src = ("/proc/self/fd/%d" % fd).encode()
        if libc.linkat(AT_FDCWD, src, AT_FDCWD, name.encode(), AT_SYMLINK_FOLLOW) != 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        return (unnamed, os.fstat(fd).st_nlink, read(name) == b"tmp" * 1000)
    finally:
        os.close(fd)


def _falloc(path):
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.posix_fallocate(fd, 0, 1 << 20)
        fallocate(fd, FALLOC_FL_KEEP_SIZE, 1 << 20, 1 << 20)
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def _punch(path):
    fd = os.open(path, os.O_RDWR)
    try:
        os.pwrite(fd, b"\xff" * (1 << 20), 0)
        fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 8192)
        data = os.pread(fd, 16384, 0)
        return (os.fstat(fd).st_size, data[:4096] == b"\xff" * 4096,
                data[4096:12288] == bytes(8192), data[12288:] == b"\xff" * 4096)
    finally:
        os.close(fd)


def rename_suite(s):
    p, st = s.p, s.step
    os.mkdir(p("r"))
    os.mkdir(p("r", "a"))
    os.mkdir(p("r", "b"))
    os.mkdir(p("r", "a", "x"))
    write(p("r", "f1"), b"one")
    write(p("r", "f2"), b"two")
    os.mkdir(p("r", "full"))
    write(p("r", "full", "in"), b"")
    os.mkdir(p("r", "empty"))
    st("rename-file", lambda: (os.rename(p("r", "f1"), p("r", "g1")), read(p("r", "g1")))[1])
    st("rename-back", lambda: os.rename(p("r", "g1"), p("r", "f1")))
    st("rename-missing", lambda: os.rename(p("r", "nope"), p("r", "x")))
    st("rename-over-file", lambda: (os.rename(p("r", "f2"), p("r", "f1")), read(p("r", "f1")),
                                    os.path.exists(p("r", "f2")))[1:])
    st("rename-dir-across", lambda: (os.rename(p("r", "a", "x"), p("r", "b", "x")),
                                     nlink(p("r", "a")), nlink(p("r", "b")))[1:])
    st("rename-into-self", lambda: os.rename(p("r", "b"), p("r", "b", "x", "y")))
    st("rename-file-over-dir", lambda: os.rename(p("r", "f1"), p("r", "empty")))
    st("rename-dir-over-file", lambda: os.rename(p("r", "empty"), p("r", "f1")))
    st("rename-dir-over-full", lambda: os.rename(p("r", "b"), p("r", "full")))
    st("rename-dir-over-empty", lambda: (os.rename(p("r", "b"), p("r", "empty")),
                                         sorted(os.listdir(p("r"))), nlink(p("r")))[1:])
    write(p("r", "h"), b"h")
    os.link(p("r", "h"), p("r", "h2"))
    st("rename-same-inode", lambda: (os.rename(p("r", "h"), p("r", "h2")),
                                     os.path.exists(p("r", "h")), nlink(p("r", "h2")))[1:])
    st("rename-noreplace", lambda: renameat2(p("r", "h"), p("r", "f1"), RENAME_NOREPLACE))
    st("rename-noreplace-new", lambda: (renameat2(p("r", "h"), p("r", "h3"), RENAME_NOREPLACE),
                                        os.path.exists(p("r", "h3")))[1])
    st("rename-exchange", lambda: (renameat2(p("r", "h3"), p("r", "empty"), RENAME_EXCHANGE),
                                   ftype(p("r", "h3")), ftype(p("r", "empty")))[1:])
    st("rename-exchange-missing", lambda: renameat2(p("r", "h3"), p("r", "zz"), RENAME_EXCHANGE))
    st("rename-exchange-noreplace", lambda: renameat2(p("r", "h3"), p("r", "f1"),
                                                      RENAME_EXCHANGE | RENAME_NOREPLACE))
    st("rename-whiteout", lambda: (renameat2(p("r", "h2"), p("r", "w"), RENAME_WHITEOUT),
                                   ftype(p("r", "h2")), os.stat(p("r", "h2")).st_rdev,
                                   read(p("r", "w")))[1:])
    os.mkdir(p("r", "xd"))
    write(p("r", "a", "xf"), b"xf")
    st("rename-exchange-dir-nlink", lambda: (renameat2(p("r", "xd"), p("r", "a", "xf"),
                                                       RENAME_EXCHANGE),
                                             nlink(p("r")), nlink(p("r", "a")),
                                             ftype(p("r", "xd")), ftype(p("r", "a", "xf")))[1:])
    # the replaced file loses its name but lives while open
    write(p("r", "victim"), b"victim")
    fd = os.open(p("r", "victim"), os.O_RDONLY)
    try:
        st("rename-over-open", lambda: (os.rename(p("r", "f1"), p("r", "victim")),
                                        os.fstat(fd).st_nlink, os.pread(fd, 6, 0))[1:])
    finally:
        os.close(fd)


def xattr_suite(s):
    p, st = s.p, s.step
    f = p("f")
    st("xattr-set", lambda: os.setxattr(f, "user.a", b"1"))
    st("xattr-get", lambda: os.getxattr(f, "user.a"))
    st("xattr-create-exists", lambda: os.setxattr(f, "user.a", b"2", os.XATTR_CREATE))
    st("xattr-replace-missing", lambda: os.setxattr(f, "user.b", b"2", os.XATTR_REPLACE))
    st("xattr-replace", lambda: (os.setxattr(f, "user.a", b"22", os.XATTR_REPLACE),
                                 os.getxattr(f, "user.a"))[1])
    st("xattr-get-missing", lambda: os.getxattr(f, "user.b"))
    st("xattr-size-query", lambda: getxattr_size(f, "user.a", 0))
    st("xattr-erange", lambda: getxattr_size(f, "user.a", 1))
    st("xattr-empty-value", lambda: (os.setxattr(f, "user.e", b""), os.getxattr(f, "user.e"))[1])
    st("xattr-1k", lambda: (os.setxattr(f, "user.k", b"v" * 1000),
                            len(os.getxattr(f, "user.k")))[1])
    st("xattr-list", lambda: sorted(x for x in os.listxattr(f) if x.startswith("user.")))
    st("xattr-trusted", lambda: (os.setxattr(f, "trusted.t", b"t"), os.getxattr(f, "trusted.t"))[1])
    st("xattr-security", lambda: (os.setxattr(f, "security.s", b"s"),
                                  os.getxattr(f, "security.s"))[1])
    st("xattr-bad-namespace", lambda: os.setxattr(f, "bogus.x", b"1"))
    st("xattr-name-too-long", lambda: os.setxattr(f, "user." + "n" * 251, b"1"))
    st("xattr-symlink-user", lambda: os.setxattr(p("s"), "user.x", b"1", follow_symlinks=False))
    st("xattr-dir", lambda: (os.setxattr(p("d"), "user.d", b"dir"), os.getxattr(p("d"), "user.d"))[1])
    st("xattr-remove", lambda: os.removexattr(f, "user.a"))
    st("xattr-remove-missing", lambda: os.removexattr(f, "user.a"))
    st("xattr-list-after", lambda: sorted(x for x in os.listxattr(f) if x.startswith("user.")))


# ---- the permission suite (as nobody; compared with ext4) ----

PERM_GID = 4242
NOBODY_UID = 65534
ACL_ACCESS, ACL_DEFAULT = "system.posix_acl_access", "system.posix_acl_default"
A_USER_OBJ, A_USER, A_GROUP_OBJ, A_GROUP, A_MASK, A_OTHER = 1, 2, 4, 8, 0x10, 0x20


def acl(*entries):
    """An ACL in Linux's xattr form from (tag, perm[, id]) tuples (sorted here)."""
    out = struct.pack("<I", 2)
    for e in sorted(entries, key=lambda e: (e[0], e[2] if len(e) > 2 else 0xFFFFFFFF)):
        out += struct.pack("<HHI", e[0], e[1], e[2] if len(e) > 2 else 0xFFFFFFFF)
    return out


def acl_text(path, name=ACL_ACCESS):
    """An ACL as comparable text: tag:id:perm per entry."""
    v = os.getxattr(path, name)
    n = (len(v) - 4) // 8
    ents = [struct.unpack_from("<HHI", v, 4 + 8 * i) for i in range(n)]
    return " ".join("%x:%s:%o" % (t, "" if i == 0xFFFFFFFF else i, p) for t, p, i in ents)


def perm_setup(root):
    os.chmod(root, 0o755)
    for d, m in (("pub", 0o777), ("sticky", 0o1777), ("priv", 0o700), ("ro", 0o755),
                 ("sgid", 0o2777)):
        os.mkdir(os.path.join(root, d))
        os.chmod(os.path.join(root, d), m)
    os.chown(os.path.join(root, "sgid"), 0, PERM_GID)
    for f, m in (("f600", 0o600), ("f644", 0o644), ("f666", 0o666), ("suid", 0o6777),
                 ("suid-trunc", 0o6777), ("suid-otrunc", 0o6777), ("sgid-noxgrp", 0o2666),
                 ("sgid-noxgrp-mine", 0o2666),
                 ("sticky/rootfile", 0o666), ("priv/inner", 0o644)):
        write(os.path.join(root, f), b"secret")
        os.chmod(os.path.join(root, f), m)
    os.chown(os.path.join(root, "sgid-noxgrp-mine"), 0, NOBODY_UID)   # nobody's group
    # nobody's own set-group-ID files, one in a group nobody is not in
    for f, g in (("acl-sgid-foreign", PERM_GID), ("acl-sgid-mine", NOBODY_UID)):
        write(os.path.join(root, f), b"")
        os.chown(os.path.join(root, f), NOBODY_UID, g)
        os.chmod(os.path.join(root, f), 0o2775)
    # POSIX ACLs: a named user let in, a named user kept out, a mask that
    # caps a named user, a directory whose default ACL new inodes inherit
    for f, m in (("acl-r", 0o600), ("acl-deny", 0o644), ("acl-mask", 0o600)):
        write(os.path.join(root, f), b"secret")
        os.chmod(os.path.join(root, f), m)
    os.setxattr(os.path.join(root, "acl-r"), ACL_ACCESS, acl(
        (A_USER_OBJ, 6), (A_USER, 4, NOBODY_UID), (A_GROUP_OBJ, 0), (A_MASK, 4), (A_OTHER, 0)))
    os.setxattr(os.path.join(root, "acl-deny"), ACL_ACCESS, acl(
        (A_USER_OBJ, 6), (A_USER, 0, NOBODY_UID), (A_GROUP_OBJ, 4), (A_MASK, 4), (A_OTHER, 4)))
    os.setxattr(os.path.join(root, "acl-mask"), ACL_ACCESS, acl(
        (A_USER_OBJ, 6), (A_USER, 6, NOBODY_UID), (A_GROUP_OBJ, 0), (A_MASK, 4), (A_OTHER, 0)))
    d = os.path.join(root, "acl-dir")
    os.mkdir(d)
    os.chmod(d, 0o750)
    both = ((A_USER_OBJ, 7), (A_USER, 7, NOBODY_UID), (A_GROUP_OBJ, 5), (A_MASK, 7),
            (A_OTHER, 0))
    os.setxattr(d, ACL_ACCESS, acl(*both))
    os.setxattr(d, ACL_DEFAULT, acl(*both))


def perm_suite(root):
    s = Suite(root)
    p, st = s.p, s.step
    st("whoami", lambda: (os.getuid(), os.getgid()))
    st("read-600", lambda: read(p("f600")))
    st("read-644", lambda: read(p("f644")))
    st("write-644", lambda: write(p("f644"), b"x", os.O_WRONLY))
    st("write-666", lambda: write(p("f666"), b"x", os.O_WRONLY))
    st("trunc-open-644", lambda: os.open(p("f644"), os.O_RDONLY | os.O_TRUNC))
    st("truncate-644", lambda: os.truncate(p("f644"), 0))
    st("create-in-ro", lambda: write(p("ro", "x"), b""))
    st("mkdir-in-ro", lambda: os.mkdir(p("ro", "d")))
    st("create-in-pub", lambda: write(p("pub", "x"), b"mine"))
    st("owner-of-new", lambda: (os.stat(p("pub", "x")).st_uid, os.stat(p("pub", "x")).st_gid))
    st("list-priv", lambda: os.listdir(p("priv")))
    st("stat-in-priv", lambda: os.stat(p("priv", "inner")))
    st("unlink-sticky-other", lambda: os.unlink(p("sticky", "rootfile")))
    st("rename-sticky-other", lambda: os.rename(p("sticky", "rootfile"), p("sticky", "r2")))
    st("create-in-sticky", lambda: write(p("sticky", "mine"), b""))
    st("unlink-sticky-own", lambda: os.unlink(p("sticky", "mine")))
    st("chmod-other", lambda: os.chmod(p("f644"), 0o777))
    st("chown-other", lambda: os.chown(p("f666"), os.getuid(), -1))
    st("utime-now-writable", lambda: os.utime(p("f666")))
    st("utime-set-not-owner", lambda: os.utime(p("f666"), ns=(1, 1)))
    st("setxattr-not-writable", lambda: os.setxattr(p("f644"), "user.x", b"1"))
    st("setxattr-writable", lambda: os.setxattr(p("f666"), "user.x", b"1"))
    st("getxattr-not-readable", lambda: os.getxattr(p("f600"), "user.x"))
    st("sgid-dir-file-gid", lambda: (write(p("sgid", "f"), b""), os.stat(p("sgid", "f")).st_gid)[1])
    st("sgid-dir-mkdir", lambda: (os.mkdir(p("sgid", "d")),
                                  oct(os.stat(p("sgid", "d")).st_mode),
                                  os.stat(p("sgid", "d")).st_gid)[1:])
    st("write-kills-suid", lambda: (write(p("suid"), b"x", os.O_WRONLY),
                                    oct(os.stat(p("suid")).st_mode))[1])
    st("write-again-after-kill", lambda: (write(p("suid"), b"yz", os.O_WRONLY | os.O_APPEND),
                                          oct(os.stat(p("suid")).st_mode), read(p("suid")))[1:])
    st("truncate-kills-suid", lambda: (os.truncate(p("suid-trunc"), 2),
                                       oct(os.stat(p("suid-trunc")).st_mode),
                                       read(p("suid-trunc")))[1:])
    st("open-trunc-kills-suid", lambda: (os.close(os.open(p("suid-otrunc"),
                                                          os.O_WRONLY | os.O_TRUNC)),
                                         oct(os.stat(p("suid-otrunc")).st_mode),
                                         os.stat(p("suid-otrunc")).st_size)[1:])
    # set-group-ID without group execute: Linux clears it for a writer outside the group
    st("write-sgid-no-xgrp-other-group", lambda: (write(p("sgid-noxgrp"), b"x", os.O_WRONLY),
                                                  oct(os.stat(p("sgid-noxgrp")).st_mode))[1])
    st("write-sgid-no-xgrp-own-group", lambda: (write(p("sgid-noxgrp-mine"), b"x", os.O_WRONLY),
                                                oct(os.stat(p("sgid-noxgrp-mine")).st_mode))[1])
    st("hardlink-other", lambda: os.link(p("f644"), p("pub", "hl")))
    st("hardlink-own", lambda: (os.link(p("pub", "x"), p("pub", "hl2")), nlink(p("pub", "x")))[1])
    st("chmod-own", lambda: (os.chmod(p("pub", "x"), 0o640), oct(os.stat(p("pub", "x")).st_mode))[1])
    st("chmod-own-sgid-foreign-group", lambda: (os.chmod(p("sgid", "f"), 0o2755),
                                                oct(os.stat(p("sgid", "f")).st_mode))[1])
    st("chown-own-to-root", lambda: os.chown(p("pub", "x"), 0, -1))
    st("rename-into-ro", lambda: os.rename(p("pub", "x"), p("ro", "x")))
    st("rmdir-in-root", lambda: os.rmdir(p("priv")))
    st("exec-traverse-priv", lambda: os.open(p("priv", "inner"), os.O_RDONLY))
    st("acl-read-granted", lambda: read(p("acl-r")))
    st("acl-mode-shows-mask", lambda: oct(os.stat(p("acl-r")).st_mode))
    st("acl-read-denied-named", lambda: read(p("acl-deny")))
    st("acl-read-under-mask", lambda: read(p("acl-mask")))
    st("acl-write-over-mask", lambda: write(p("acl-mask"), b"x", os.O_WRONLY))
    st("acl-set-not-owner", lambda: os.setxattr(p("acl-r"), ACL_ACCESS, acl(
        (A_USER_OBJ, 7), (A_GROUP_OBJ, 7), (A_OTHER, 7))))
    st("acl-create-in-dir", lambda: (write(p("acl-dir", "f"), b"x", mode=0o666),
                                     oct(os.stat(p("acl-dir", "f")).st_mode),
                                     acl_text(p("acl-dir", "f")))[1:])
    st("acl-mkdir-in-dir", lambda: (os.mkdir(p("acl-dir", "d"), 0o777),
                                    oct(os.stat(p("acl-dir", "d")).st_mode),
                                    acl_text(p("acl-dir", "d")),
                                    acl_text(p("acl-dir", "d"), ACL_DEFAULT))[1:])
    st("acl-chmod-own", lambda: (os.chmod(p("acl-dir", "f"), 0o604),
                                 acl_text(p("acl-dir", "f")))[1])
    st("acl-set-own", lambda: (os.setxattr(p("acl-dir", "f"), ACL_ACCESS, acl(
        (A_USER_OBJ, 6), (A_GROUP_OBJ, 4), (A_OTHER, 0))),
        oct(os.stat(p("acl-dir", "f")).st_mode))[1])
    st("acl-equiv-not-kept", lambda: acl_text(p("acl-dir", "f")))
    st("acl-default-on-file", lambda: os.setxattr(p("acl-dir", "f"), ACL_DEFAULT, acl(
        (A_USER_OBJ, 6), (A_GROUP_OBJ, 4), (A_OTHER, 0))))
    st("acl-invalid", lambda: os.setxattr(p("acl-dir", "f"), ACL_ACCESS, b"\x02\0\0\0bad"))
    st("acl-remove-own", lambda: (os.removexattr(p("acl-dir", "d"), ACL_DEFAULT),
                                  os.mkdir(p("acl-dir", "d", "e"), 0o777),
                                  oct(os.stat(p("acl-dir", "d", "e")).st_mode))[2])
    # an owner outside the file's group who sets an access ACL loses set-group-ID
    sgid_acl = acl((A_USER_OBJ, 7), (A_USER, 4, 1234), (A_GROUP_OBJ, 5), (A_MASK, 5),
                   (A_OTHER, 5))
    st("acl-set-sgid-foreign-group", lambda: (os.setxattr(p("acl-sgid-foreign"), ACL_ACCESS,
                                                          sgid_acl),
                                              oct(os.stat(p("acl-sgid-foreign")).st_mode))[1])
    st("acl-set-sgid-own-group", lambda: (os.setxattr(p("acl-sgid-mine"), ACL_ACCESS, sgid_acl),
                                          oct(os.stat(p("acl-sgid-mine")).st_mode))[1])


# ---- other checks ----

class Checks:
    def __init__(self):
        self.failed = 0

    def eq(self, what, got, want):
        if got != want:
            print("FAIL %s: got %r, want %r" % (what, got, want), flush=True)
            self.failed += 1

    def true(self, what, cond):
        if not cond:
            print("FAIL %s" % what, flush=True)
            self.failed += 1

    def done(self):
        sys.exit(1 if self.failed else 0)


def free_bytes(root):
    v = os.statvfs(root)
    return v.f_bfree * v.f_frsize


class FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int),
                ("f_handle", ctypes.c_ubyte * 128)]


def name_to_handle(path):
    fh = FileHandle()
    fh.handle_bytes = 128
    mount_id = ctypes.c_int()
    if libc.name_to_handle_at(AT_FDCWD, path.encode(), ctypes.byref(fh),
                              ctypes.byref(mount_id), 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return fh


def open_by_handle(mount_fd, fh, flags=os.O_RDONLY):
    fd = libc.open_by_handle_at(mount_fd, ctypes.byref(fh), flags)
    if fd < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return fd


def drop_kernel_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("2\n")


def handles(root):
    """File handles (what an NFS server gives its clients): a file and a
    nested directory found again by handle after the kernel forgot them,
    a removed file's handle stale."""
    c = Checks()
    d = os.path.join(root, "handles", "deep", "er")
    os.makedirs(d)
    f = os.path.join(d, "file")
    write(f, b"found by handle")
    gone = os.path.join(root, "handles", "gone")
    write(gone, b"x")
    hf, hd, hg = name_to_handle(f), name_to_handle(d), name_to_handle(gone)
    c.true("handles have bytes", hf.handle_bytes > 0 and hd.handle_bytes > 0)
    os.unlink(gone)
    drop_kernel_caches()
    mfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = open_by_handle(mfd, hf)
        c.eq("file by handle", os.read(fd, 100), b"found by handle")
        c.eq("same inode", os.fstat(fd).st_ino, os.stat(f).st_ino)
        os.close(fd)
        drop_kernel_caches()
        fd = open_by_handle(mfd, hd, os.O_RDONLY | os.O_DIRECTORY)
        c.eq("directory by handle", sorted(os.listdir(fd)), ["file"])
        os.close(fd)
        try:
            open_by_handle(mfd, hg)
            c.true("removed file's handle is stale", False)
        except OSError as e:
            c.eq("removed file's handle is stale", errno.errorcode.get(e.errno), "ESTALE")
    except OSError as e:
        c.true("open_by_handle_at: %s" % e, False)
    os.close(mfd)
    c.done()


def force_txgs(root, n=4):
    """Sync n txgs (frees are deferred a few txgs): an fsync after a
    change the intent log does not record (an xattr too large for a log
    record, over 16 KiB) syncs the txg."""
    for i in range(n):
        fd = os.open(os.path.join(root, ".txg-nudge"), os.O_CREAT | os.O_WRONLY, 0o644)
        os.pwrite(fd, b"%d" % i, 0)
        os.setxattr(fd, "user.txg-nudge", b"%d" % i * 20000)
        os.fsync(fd)
        os.close(fd)


def unlinked(root):
    c = Checks()
    size = 32 << 20
    data = os.urandom(1 << 20) * 32
    force_txgs(root)
    before = free_bytes(root)
    path = os.path.join(root, "unlinked")
    write(path, data)
    fd = os.open(path, os.O_RDWR)
    os.fsync(fd)
    force_txgs(root)
    used = before - free_bytes(root)
    c.true("the file takes space (%d bytes)" % used, used >= size // 2)
    os.unlink(path)
    c.eq("gone from the directory", os.path.exists(path), False)
    c.eq("nlink after unlink", os.fstat(fd).st_nlink, 0)
    c.true("reads back after unlink", os.pread(fd, size, 0) == data)
    os.pwrite(fd, b"still writable", 0)
    c.eq("writes after unlink", os.pread(fd, 14, 0), b"still writable")
    force_txgs(root)
    c.true("space kept while open", before - free_bytes(root) >= size // 2)
    os.close(fd)
    freed = False
    for _ in range(40):
        force_txgs(root, 1)
        if before - free_bytes(root) < size // 4:
            freed = True
            break
        time.sleep(0.1)
    c.true("space comes back after close (used %d)" % (before - free_bytes(root)), freed)
    os.unlink(os.path.join(root, ".txg-nudge"))
    c.done()


def holes(root):
    c = Checks()
    path = os.path.join(root, "sparse")
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    os.pwrite(fd, b"A" * 4096, 0)
    os.pwrite(fd, b"B" * 4096, 64 << 20)
    os.fsync(fd)
    force_txgs(root, 2)         # st_blocks is exact once the txg synced
    st = os.fstat(fd)
    c.eq("size", st.st_size, (64 << 20) + 4096)
    c.true("allocated much less than the size (%d blocks)" % st.st_blocks,
           st.st_blocks * 512 < 8 << 20)
    c.eq("hole reads zeros", os.pread(fd, 1 << 20, 32 << 20), bytes(1 << 20))
    c.eq("data at 0", os.pread(fd, 4, 0), b"AAAA")
    c.eq("data at 64M", os.pread(fd, 4, 64 << 20), b"BBBB")
    c.eq("SEEK_DATA 0", os.lseek(fd, 0, os.SEEK_DATA), 0)
    h = os.lseek(fd, 0, os.SEEK_HOLE)
    c.true("SEEK_HOLE after the first data (%d)" % h, 4096 <= h <= 1 << 20)
    d = os.lseek(fd, h, os.SEEK_DATA)
    c.true("SEEK_DATA finds the last data (%d)" % d, (63 << 20) <= d <= 64 << 20)
    c.eq("SEEK_HOLE at the end", os.lseek(fd, d, os.SEEK_HOLE), st.st_size)
    try:
        os.lseek(fd, st.st_size + 1, os.SEEK_DATA)
        c.true("SEEK_DATA past the end gives ENXIO", False)
    except OSError as e:
        c.eq("SEEK_DATA past the end", errno.errorcode[e.errno], "ENXIO")
    # truncate up makes a hole; punching one frees space
    os.ftruncate(fd, 128 << 20)
    c.eq("truncate up reads zeros", os.pread(fd, 4096, 100 << 20), bytes(4096))
    os.pwrite(fd, os.urandom(4 << 20), 8 << 20)
    os.fsync(fd)
    force_txgs(root, 2)
    b1 = os.fstat(fd).st_blocks
    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 8 << 20, 4 << 20)
    os.fsync(fd)
    c.eq("punched range reads zeros", os.pread(fd, 4 << 20, 8 << 20), bytes(4 << 20))
    c.eq("size kept by the punch", os.fstat(fd).st_size, 128 << 20)
    # the punch went to the intent log: the space it frees shows once its
    # txg is on disk (as on ZFS); the kernel forgets the block count of an
    # open file only at its close
    os.close(fd)
    force_txgs(root)
    b2 = os.stat(path).st_blocks
    c.true("punch frees blocks (%d -> %d)" % (b1, b2), b2 < b1)
    os.unlink(os.path.join(root, ".txg-nudge"))
    c.done()


def bigdir(root, n):
    c = Checks()
    d = os.path.join(root, "bigdir")
    os.mkdir(d)
    t0 = time.time()
    for i in range(n):
        os.close(os.open(os.path.join(d, "file-%06d" % i), os.O_CREAT | os.O_WRONLY, 0o644))
    t1 = time.time()
    names = os.listdir(d)
    t2 = time.time()
    c.eq("entries listed", len(names), n)
    c.eq("no duplicates", len(set(names)), n)
    c.eq("lookups", all(os.path.exists(os.path.join(d, "file-%06d" % i))
                        for i in range(0, n, max(1, n // 100))), True)
    print("# created %d files in %.1f s, listed in %.2f s" % (n, t1 - t0, t2 - t1))
    c.done()


def worker(root, wid, n):
    """Create, write, rename, remove in one shared directory; record the end state."""
    rnd = random.Random(wid)
    mine = {}                   # name -> content
    for i in range(n):
        op = rnd.random()
        if op < 0.45 or not mine:
            name = "w%d-%d" % (wid, i)
            data = ("%d:%d:" % (wid, i)).encode() * rnd.randint(1, 200)
            write(os.path.join(root, name), data)
            mine[name] = data
        elif op < 0.7:
            old = rnd.choice(sorted(mine))
            new = "w%d-r%d" % (wid, i)
            os.rename(os.path.join(root, old), os.path.join(root, new))
            mine[new] = mine.pop(old)
        elif op < 0.85:
            name = rnd.choice(sorted(mine))
            os.unlink(os.path.join(root, name))
            del mine[name]
        else:
            name = rnd.choice(sorted(mine))
            got = read(os.path.join(root, name))
            if got != mine[name]:
                print("FAIL worker %d: %s has %r" % (wid, name, got[:40]))
                sys.exit(1)
            # listing while others change the directory: our files are all there
            names = set(os.listdir(root))
            missing = [x for x in mine if x not in names]
            if missing:
                print("FAIL worker %d: listing misses %s" % (wid, missing[:5]))
                sys.exit(1)
    with open(os.path.join(root, "..", "expect-%d" % wid), "w") as f:
        for name in sorted(mine):
            f.write("%s %s\n" % (name, mine[name].hex()))


def verify(root, nw):
    c = Checks()
    expect = {}
    for w in range(nw):
        for line in open(os.path.join(root, "..", "expect-%d" % w)):
            name, hexdata = line.split()
            expect[name] = bytes.fromhex(hexdata)
    names = os.listdir(root)
    c.eq("no duplicate names", len(names), len(set(names)))
    c.eq("names left that should not be", sorted(set(names) - set(expect))[:20], [])
    c.eq("names missing", sorted(set(expect) - set(names))[:20], [])
    bad = [x for x in expect if x in names and read(os.path.join(root, x)) != expect[x]]
    c.eq("contents", bad, [])
    c.done()


def hold(path, secs):
    fd = os.open(path, os.O_RDONLY)
    os.unlink(path)
    dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(dfd)               # the unlink is durable: a crash now leaves it in the unlinked set
    os.close(dfd)
    print("held", flush=True)
    time.sleep(float(secs))
    os.close(fd)


def tmpfile_hold(root, secs):
    """Two O_TMPFILEs: one named by linkat and fsync'd (after another write),
    one written and fsync'd but never named; then held open SECS seconds."""
    kept = os.open(root, os.O_TMPFILE | os.O_RDWR, 0o644)
    lost = os.open(root, os.O_TMPFILE | os.O_RDWR, 0o644)
    for fd in (kept, lost):
        os.write(fd, TMP_DATA)
    os.fsync(lost)
    src = ("/proc/self/fd/%d" % kept).encode()
    dst = os.path.join(root, "tmpfile-kept").encode()
    if libc.linkat(AT_FDCWD, src, AT_FDCWD, dst, AT_SYMLINK_FOLLOW) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    os.write(kept, b"tail")
    os.fsync(kept)
    print("held", flush=True)
    time.sleep(float(secs))


TMP_DATA = bytes(range(256)) * 4096


def fsync_writer(root, log, prefix):
    rnd = random.Random(prefix)
    lf = open(log, "a")
    names = []
    i = 0
    dfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        while True:
            i += 1
            if i % 5 == 0 and names:
                old = names.pop(rnd.randrange(len(names)))
                new = "%s-r%d" % (prefix, i)
                # in flight: once another writer's fsync commits it, it
                # may survive a crash before it is acknowledged here
                lf.write("P %s %s\n" % (old, new))
                lf.flush()
                os.rename(os.path.join(root, old), os.path.join(root, new))
                os.fsync(dfd)
                names.append(new)
                lf.write("R %s %s\n" % (old, new))
            else:
                name = "%s-%d" % (prefix, i)
                data = os.urandom(rnd.randint(1, 512 << 10))
                fd = os.open(os.path.join(root, name), os.O_CREAT | os.O_WRONLY, 0o644)
                os.write(fd, data)
                os.fsync(fd)
                os.close(fd)
                names.append(name)
                lf.write("W %s %s\n" % (name, hashlib.sha256(data).hexdigest()))
            lf.flush()
            os.fsync(lf.fileno())
    except OSError as e:
        print("writer stopped after %d operations: %s" % (i, e), flush=True)


def region_writer(path, log, seed, size_mb):
    """Rewrite regions of one existing file in place, fsync after each
    (the intent log's case: no create, no rename); log each acknowledged
    region's offset, length and digest.  Regions never overlap: the file
    is cut into 64 KiB slots, each written at most once, at a random
    offset and length inside its slot."""
    rnd = random.Random(seed)
    lf = open(log, "a")
    slots = list(range((size_mb << 20) // 65536))
    rnd.shuffle(slots)
    fd = os.open(path, os.O_WRONLY)
    n = 0
    try:
        for slot in slots:
            off = slot * 65536 + rnd.randrange(0, 32768)
            data = os.urandom(rnd.randint(1, 32768))
            os.pwrite(fd, data, off)
            os.fsync(fd)
            n += 1
            lf.write("%d %d %s\n" % (off, len(data), hashlib.sha256(data).hexdigest()))
            lf.flush()
            os.fsync(lf.fileno())
    except OSError as e:
        print("region writer stopped after %d writes: %s" % (n, e), flush=True)


def verify_regions(path, log):
    bad = 0
    n = 0
    with open(path, "rb") as f:
        for line in open(log):
            parts = line.split()
            if len(parts) != 3:
                continue        # a torn last line: not acknowledged
            off, length, digest = int(parts[0]), int(parts[1]), parts[2]
            f.seek(off)
            if hashlib.sha256(f.read(length)).hexdigest() != digest:
                bad += 1
                if bad <= 5:
                    print("region %d+%d differs" % (off, length))
            n += 1
    if n == 0:
        print("no acknowledged regions in %s" % log)
        sys.exit(1)
    if bad:
        print("%d of %d acknowledged regions differ" % (bad, n))
        sys.exit(1)


def verify_log(root, log):
    c = Checks()
    want = {}
    gone = set()
    n = 0
    pending = None              # a rename not acknowledged yet
    inflight = []               # renames a crash cut: either name is right
    for line in open(log):
        f = line.split()
        if len(f) != 3:
            continue            # a torn last line: not acknowledged
        if pending is not None and not (f[0] == "R" and (f[1], f[2]) == pending):
            inflight.append(pending)
        pending = None
        if f[0] == "P":
            pending = (f[1], f[2])
            continue
        n += 1
        if f[0] == "W":
            want[f[1]] = f[2]
            gone.discard(f[1])
        else:
            want[f[2]] = want.pop(f[1])
            gone.add(f[1])
    if pending is not None:
        inflight.append(pending)
    for old, new in inflight:
        if old in want and not os.path.exists(os.path.join(root, old)):
            want[new] = want.pop(old)       # it happened
    bad = []
    for name, sha in sorted(want.items()):
        try:
            got = hashlib.sha256(read(os.path.join(root, name))).hexdigest()
        except OSError as e:
            got = errno.errorcode.get(e.errno, str(e.errno))
        if got != sha:
            bad.append((name, got[:16]))
    c.eq("synced files intact (%d logged operations)" % n, bad, [])
    c.eq("renamed-away names gone", sorted(x for x in gone if os.path.exists(os.path.join(root, x))), [])
    print("# %d synced files checked" % len(want))
    c.done()


def fill(path, how, mb):
    chunk = os.urandom(1 << 20)
    stage = "open"
    try:
        fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
        try:
            stage = "write" if how == "close" else how
            if how in ("write", "close"):
                for _ in range(mb):
                    os.write(fd, chunk)
            elif how == "writev":
                for _ in range(mb // 4):
                    os.writev(fd, [chunk] * 4)
            elif how == "mmap":
                import mmap
                os.ftruncate(fd, mb << 20)
                m = mmap.mmap(fd, mb << 20)
                try:
                    for i in range(mb):
                        m[i << 20:(i + 1) << 20] = chunk
                    stage = "msync"
                    m.flush()
                finally:
                    m.close()
            if how != "close":      # "close": no fsync, close must report
                stage = "fsync"
                os.fsync(fd)
        except OSError:
            try:
                os.close(fd)
            except OSError:
                pass
            raise
        stage = "close"
        os.close(fd)
        print("ok")
    except OSError as e:
        print("%s at %s" % (errno.errorcode.get(e.errno, e.errno), stage))


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    cmd, root = sys.argv[1], sys.argv[2]
    if cmd == "errno":
        errno_suite(root)
    elif cmd == "perm-setup":
        perm_setup(root)
    elif cmd == "perm":
        perm_suite(root)
    elif cmd == "unlinked":
        unlinked(root)
    elif cmd == "holes":
        holes(root)
    elif cmd == "handles":
        handles(root)
    elif cmd == "bigdir":
        bigdir(root, int(sys.argv[3]))
    elif cmd == "worker":
        worker(root, int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "verify":
        verify(root, int(sys.argv[3]))
    elif cmd == "hold":
        hold(root, sys.argv[3])
    elif cmd == "tmpfile-hold":
        tmpfile_hold(root, sys.argv[3])
    elif cmd == "tmpfile-check":
        got = read(os.path.join(root, "tmpfile-kept"))
        if got != TMP_DATA + b"tail":
            print("tmpfile-kept: %d bytes, not the %d written" % (len(got), len(TMP_DATA) + 4))
            sys.exit(1)
    elif cmd == "fsync-writer":
        fsync_writer(root, sys.argv[3], sys.argv[4])
    elif cmd == "region-writer":
        region_writer(root, sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif cmd == "verify-regions":
        verify_regions(root, sys.argv[3])
    elif cmd == "verify-log":
        verify_log(root, sys.argv[3])
    elif cmd == "fill":
        fill(root, sys.argv[3], int(sys.argv[4]))
    else:
        print("unknown command %s" % cmd)
        sys.exit(2)


if __name__ == "__main__":
    main()
