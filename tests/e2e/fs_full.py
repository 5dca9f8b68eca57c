#!/usr/bin/env python3
"""fs_full.py — fill a file system with several writers and check, byte for
byte, that it holds what each writer was told succeeded.

  fs_full.py fill DIR MANIFEST SEED [NWRITERS]
  fs_full.py check DIR MANIFEST [crashed]

fill: NWRITERS processes (default 5), one per way of writing — write,
writev, O_APPEND, truncate-up then pwrite, and mmap (truncate-up, stores,
msync) — each write files of random sizes (64 KiB .. 24 MiB) in random
chunks until the file system says it is full (or 64 files).  Every file's
bytes are a stream derived from its name, so the checker can regenerate
them.  Each writer fsyncs (msync) every few chunks and at the end, and
records per file: `acked` (bytes up to the last successful fsync or, for
a close that succeeded, every byte write(2) accepted), `written` (what
write(2) or the stores took) and where the first error came: at write(2)
("write"), or only at fsync/msync/close ("sync").  The manifest (JSON)
lists every file.  Exit status 0 when every writer ended on ENOSPC or
EDQUOT (or its file limit) and no other error; prints a summary line.

check: for every file of the manifest, through DIR: the first `acked`
bytes equal the stream; every byte after them up to the size is the
stream's or zero (a write that failed late leaves a hole, never other
data); the size is at least `acked` and at most `written` (for a file
sized up front, exactly that size); no file is missing.  With `crashed`
(after SIGKILL of the daemon) the size may also lie anywhere in
[acked, written].  Exit status 0 when all hold.
"""
import errno
import hashlib
import json
import mmap
import os
import random
import sys

FULL = (errno.ENOSPC, errno.EDQUOT)
METHODS = ["write", "writev", "append", "trunc", "mmap"]
MAXFILES = 64


def stream(name, off, n):
    """n bytes of name's stream from off (64-byte blocks of sha512)."""
    out = bytearray()
    blk = off // 64
    skip = off % 64
    while len(out) < n + skip:
        out += hashlib.sha512(b"%s:%d" % (name.encode(), blk)).digest()
        blk += 1
    return bytes(out[skip:skip + n])


def full_call(fn, *args):
    """fn(*args): None when it succeeds, "sync" when the file system is full."""
    try:
        fn(*args)
        return None
    except OSError as e:
        if e.errno not in FULL:
            raise
        return "sync"


def full_open(path, flags):
    """os.open, or None when the file system is full."""
    try:
        return os.open(path, flags, 0o644)
    except OSError as e:
        if e.errno in FULL:
            return None
        raise


class Writer:
    def __init__(self, root, method, seed):
        self.root = root
        self.method = method
        self.rnd = random.Random(seed)
        self.files = []
        self.failed = None      # the first error that is not "full"

    def record(self, name, acked, written, where, size=None):
        self.files.append({"name": name, "acked": acked, "written": written,
                           "where": where, "size": size})

    def one(self, k):
        name = "%s-%03d" % (self.method, k)
        path = os.path.join(self.root, name)
        target = self.rnd.choice([64 << 10, 1 << 20, 4 << 20, 24 << 20])
        target = self.rnd.randrange(target // 2, target + 1)
        if self.method == "mmap":
            return self.one_mmap(name, path, target)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        if self.method == "append":
            flags |= os.O_APPEND
        fd = full_open(path, flags)
        if fd is None:
            return False
        acked = written = 0
        where = None
        size = None
        try:
            if self.method == "trunc":
                os.ftruncate(fd, target)
                size = target
            n = 0
            while written < target:
                chunk = min(self.rnd.choice([4096, 65536, 1 << 20, 3 << 20, 777]),
                            target - written)
                data = stream(name, written, chunk)
                try:
                    if self.method == "writev":
                        h = chunk // 2
                        got = os.writev(fd, [data[:h], data[h:]])
                    elif self.method == "trunc":
                        got = os.pwrite(fd, data, written)
                    else:
                        got = os.write(fd, data)
                except OSError as e:
                    if e.errno not in FULL:
                        raise
                    where = "write"
                    break
                written += got
                if got < chunk:
                    continue        # the next write says why
                n += 1
                if n % 8 == 0:
                    where = full_call(os.fsync, fd)
                    if where:
                        break
                    acked = written
            if where != "sync":
                bad = full_call(os.fsync, fd)
                where = where or bad
                if not bad:
                    acked = written
        finally:
            where = where or full_call(os.close, fd)
        self.record(name, acked, written, where, size)
        return where is None

    def one_mmap(self, name, path, target):
        fd = full_open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC)
        if fd is None:
            return False
        acked = written = 0
        where = None
        try:
            os.ftruncate(fd, target)
            m = mmap.mmap(fd, target)
            try:
                while written < target:
                    chunk = min(self.rnd.choice([4096, 65536, 1 << 20]), target - written)
                    m[written:written + chunk] = stream(name, written, chunk)
                    written += chunk
                    where = full_call(m.flush)
                    if where:
                        break
                    acked = written
            finally:
                m.close()
        finally:
            where = where or full_call(os.close, fd)
        self.record(name, acked, written, where, target)
        return where is None

    def run(self):
        for k in range(MAXFILES):
            try:
                if not self.one(k):
                    break
            except OSError as e:
                self.failed = "%s: %s" % (self.method, e)
                break


def fill(root, manifest, seed, nwriters):
    pids = []
    for i in range(nwriters):
        method = METHODS[i % len(METHODS)]
        pid = os.fork()
        if pid == 0:
            w = Writer(root, method, seed * 100 + i)
            w.run()
            with open("%s.%d" % (manifest, i), "w") as f:
                json.dump({"files": w.files, "failed": w.failed}, f)
            os._exit(0)
        pids.append(pid)
    for p in pids:
        os.waitpid(p, 0)
    files, bad, late = [], [], 0
    for i in range(nwriters):
        part = "%s.%d" % (manifest, i)
        with open(part) as f:
            d = json.load(f)
        os.unlink(part)
        files += d["files"]
        if d["failed"]:
            bad.append(d["failed"])
    with open(manifest, "w") as f:
        json.dump(files, f)
    for fl in files:
        if fl["where"] == "sync" and not fl["name"].startswith("mmap"):
            late += 1
    nbytes = sum(fl["acked"] for fl in files)
    print("fill: %d files, %d MiB acknowledged, %d full at write(2), %d only at "
          "fsync/close (non-mmap), errors: %s" % (
              len(files), nbytes >> 20, sum(fl["where"] == "write" for fl in files),
              late, bad or "none"))
    return 0 if not bad else 1


def unsure(data, want, lo, hi):
    """The first byte of data[lo:hi] that is neither want's nor zero, or None."""
    zero = bytes(4096)
    for b in range(lo, hi, 4096):
        e = min(b + 4096, hi)
        if data[b:e] == want[b:e] or data[b:e] == zero[:e - b]:
            continue
        for i in range(b, e):
            if data[i] != 0 and (i >= len(want) or data[i] != want[i]):
                return i
    return None


def check(root, manifest, crashed):
    with open(manifest) as f:
        files = json.load(f)
    bad = 0
    for fl in files:
        path = os.path.join(root, fl["name"])
        name, acked, written = fl["name"], fl["acked"], fl["written"]
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            print("%s: %s" % (name, e))
            bad += 1
            continue
        size = len(data)
        if fl["size"] is not None and not crashed:
            lo = hi = fl["size"]
        else:
            lo, hi = acked, max(written, fl["size"] or 0)
        if not lo <= size <= hi:
            print("%s: size %d, expected %d..%d (acked %d, written %d)" % (
                name, size, lo, hi, acked, written))
            bad += 1
            continue
        want = stream(name, 0, min(size, max(written, acked)))
        if data[:acked] != want[:acked]:
            first = next(i for i in range(acked) if data[i] != want[i])
            print("%s: acknowledged byte %d differs" % (name, first))
            bad += 1
            continue
        at = unsure(data, want, acked, size)
        if at is not None:
            print("%s: byte %d past the acknowledged %d is neither its data nor "
                  "zero" % (name, at, acked))
            bad += 1
    print("check: %d files, %d bad" % (len(files), bad))
    return 0 if bad == 0 else 1


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "fill":
        n = int(sys.argv[5]) if len(sys.argv) > 5 else 5
        return fill(sys.argv[2], sys.argv[3], int(sys.argv[4]), n)
    if len(sys.argv) >= 4 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3], len(sys.argv) > 4)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
