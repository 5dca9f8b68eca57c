#!/usr/bin/env python3
"""fs_exerciser.py — a seeded random-operation exerciser for a file system.

  fs_exerciser.py DIR [NOPS]

Runs NOPS (default 100000, or $TARN_OPS) random operations on a few files
in DIR (which must exist and be empty) and checks every read against an
in-memory model of what the files must hold, byte for byte.  Operations:
write (random offsets and lengths, also far past EOF, leaving holes),
read, truncate up and down (ftruncate and truncate by path), hole punching
(fallocate PUNCH_HOLE|KEEP_SIZE), zeroing (ZERO_RANGE, with and without
KEEP_SIZE), fallocate (mode 0 and KEEP_SIZE), mmap
writes and reads, rename (to a free name, or over another file whose open
descriptor then lives on unlinked), close and reopen by name, fsync and
fdatasync, and every few thousand operations a full compare of every file
(size, contents through the descriptor and through a fresh open by name,
and the directory listing).

The seed is printed first; TARN_SEED=S replays the same run.  The same
seed run on two file systems leaves the same files, so a run on the host's
own file system (a self-check of the model) can be compared with a run on
Tarn with cmp.  Exit status 0 when every check passed; 1 on the first
mismatch or unexpected error, after printing the seed, the failing
operation and the last operations before it.
"""
import collections
import ctypes
import mmap
import os
import random
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, FALLOC_FL_ZERO_RANGE = 1, 2, 0x10

NFILES = 8
NNAMES = 16
MAXSIZE = 1 << 20
PAGE = mmap.PAGESIZE
COMPARE_EVERY = 5000


class Mismatch(Exception):
    pass


def fallocate(fd, mode, off, length):
    if libc.fallocate(fd, mode, off, length) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


class Exerciser:
    def __init__(self, root, seed):
        self.root = root
        self.rng = random.Random(seed)
        # random data: slices of a fixed buffer (cheap, reproducible)
        self.pool = random.Random(seed ^ 0x5A5A).randbytes(2 * MAXSIZE)
        self.model = {}         # name -> bytearray (file contents)
        self.fds = {}           # name -> open descriptor
        self.history = collections.deque(maxlen=25)
        self.counts = collections.Counter()
        for i in range(NFILES):
            self.create("n%02d" % i)

    def path(self, name):
        return os.path.join(self.root, name)

    def create(self, name):
        self.fds[name] = os.open(self.path(name), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        self.model[name] = bytearray()

    def data(self, n):
        o = self.rng.randrange(0, len(self.pool) - n + 1)
        return self.pool[o:o + n]

    def length(self):
        r = self.rng.random()
        if r < 0.5:
            return self.rng.randint(1, 512)
        if r < 0.85:
            return self.rng.randint(1, 16384)
        return self.rng.randint(1, 262144)

    def offset(self, size, n):
        """An offset: mostly near or inside the file, sometimes far past EOF."""
        r = self.rng.random()
        if r < 0.15 or size == 0:
            off = self.rng.randrange(0, MAXSIZE)          # anywhere: holes
        elif r < 0.3:
            off = size                                     # append
        else:
            off = self.rng.randrange(0, size)
        return max(0, min(off, MAXSIZE - n))

    def expect(self, what, got, want, off):
        if got == want:
            return
        i = next((k for k in range(min(len(got), len(want))) if got[k] != want[k]),
                 min(len(got), len(want)))
        raise Mismatch("%s: %d bytes read, %d expected; first difference at "
                       "file offset %d (got %r, want %r)" %
                       (what, len(got), len(want), off + i,
                        got[i:i + 8], bytes(want[i:i + 8])))

    # ---- operations; each returns a short description
    def op_write(self, name):
        m = self.model[name]
        n = self.length()
        off = self.offset(len(m), n)
        d = self.data(n)
        w = os.pwrite(self.fds[name], d, off)
        if w != n:
            raise Mismatch("short write: %d of %d" % (w, n))
        if off > len(m):
            m.extend(bytes(off - len(m)))
        m[off:off + n] = d
        return "write %s off=%d len=%d" % (name, off, n)

    def op_read(self, name):
        m = self.model[name]
        n = self.length()
        off = self.offset(len(m), n)
        if self.rng.random() < 0.1:
            off = self.rng.randrange(0, MAXSIZE)   # also reads past EOF
        got = os.pread(self.fds[name], n, off)
        self.expect("read %s off=%d len=%d" % (name, off, n), got, m[off:off + n], off)
        return "read %s off=%d len=%d" % (name, off, n)

    def op_truncate(self, name):
        m = self.model[name]
        r = self.rng.random()
        if r < 0.45 and len(m) > 0:
            size = self.rng.randrange(0, len(m))
        elif r < 0.55:
            size = len(m)
        else:
            size = self.rng.randrange(len(m), MAXSIZE + 1)
        if self.rng.random() < 0.5:
            os.ftruncate(self.fds[name], size)
        else:
            os.truncate(self.path(name), size)
        if size < len(m):
            del m[size:]
        else:
            m.extend(bytes(size - len(m)))
        return "truncate %s %d" % (name, size)

    def op_punch(self, name):
        m = self.model[name]
        n = self.length()
        off = self.offset(len(m), n)
        fallocate(self.fds[name], FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, n)
        end = min(off + n, len(m))
        if off < end:
            m[off:end] = bytes(end - off)
        return "punch %s off=%d len=%d" % (name, off, n)

    def op_zero(self, name):
        m = self.model[name]
        n = self.length()
        off = self.offset(len(m), n)
        mode = FALLOC_FL_ZERO_RANGE
        if self.rng.random() < 0.5:
            mode |= FALLOC_FL_KEEP_SIZE
        fallocate(self.fds[name], mode, off, n)
        end = min(off + n, len(m))
        if off < end:
            m[off:end] = bytes(end - off)
        if not mode & FALLOC_FL_KEEP_SIZE and off + n > len(m):
            m.extend(bytes(off + n - len(m)))
        return "zero %s mode=%d off=%d len=%d" % (name, mode, off, n)

    def op_fallocate(self, name):
        m = self.model[name]
        n = self.length()
        off = self.offset(len(m), n)
        mode = FALLOC_FL_KEEP_SIZE if self.rng.random() < 0.5 else 0
        fallocate(self.fds[name], mode, off, n)
        if mode == 0 and off + n > len(m):
            m.extend(bytes(off + n - len(m)))
        return "fallocate %s mode=%d off=%d len=%d" % (name, mode, off, n)

    def op_mmap(self, name):
        m = self.model[name]
        if len(m) == 0:
            return self.op_write(name)
        start = self.rng.randrange(0, len(m)) // PAGE * PAGE
        maplen = min(len(m) - start, self.rng.randint(1, 16) * PAGE)
        mp = mmap.mmap(self.fds[name], maplen, offset=start)
        try:
            n = self.rng.randint(1, maplen)
            o = self.rng.randrange(0, maplen - n + 1)
            if self.rng.random() < 0.6:
                d = self.data(n)
                mp[o:o + n] = d
                m[start + o:start + o + n] = d
                if self.rng.random() < 0.3:
                    mp.flush()
                what = "mmap-write"
            else:
                self.expect("mmap-read %s off=%d len=%d" % (name, start + o, n),
                            mp[o:o + n], m[start + o:start + o + n], start + o)
                what = "mmap-read"
        finally:
            mp.close()
        return "%s %s off=%d len=%d" % (what, name, start + o, n)

    def op_rename(self, name):
        free = sorted(set("n%02d" % i for i in range(NNAMES)) - set(self.model))
        if self.rng.random() < 0.2:
            # over another file: that one lives on unlinked while its fd is open
            others = sorted(set(self.model) - {name})
            victim = self.rng.choice(others)
            os.rename(self.path(name), self.path(victim))
            vfd = self.fds.pop(victim)
            vm = self.model.pop(victim)
            got = os.pread(vfd, len(vm) + 1, 0)
            self.expect("read of unlinked %s" % victim, got, vm, 0)
            os.close(vfd)
            self.fds[victim] = self.fds.pop(name)
            self.model[victim] = self.model.pop(name)
            new = self.rng.choice(free)
            self.create(new)
            return "rename %s over %s, create %s" % (name, victim, new)
        to = self.rng.choice(free)
        os.rename(self.path(name), self.path(to))
        self.fds[to] = self.fds.pop(name)
        self.model[to] = self.model.pop(name)
        return "rename %s %s" % (name, to)

    def op_reopen(self, name):
        os.close(self.fds[name])
        self.fds[name] = os.open(self.path(name), os.O_RDWR)
        return "reopen %s" % name

    def op_fsync(self, name):
        if self.rng.random() < 0.5:
            os.fsync(self.fds[name])
            return "fsync %s" % name
        os.fdatasync(self.fds[name])
        return "fdatasync %s" % name

    def op_stat(self, name):
        st = os.fstat(self.fds[name])
        if st.st_size != len(self.model[name]):
            raise Mismatch("fstat %s: size %d, expected %d" %
                           (name, st.st_size, len(self.model[name])))
        return "stat %s" % name

    OPS = [("write", 30), ("read", 30), ("truncate", 5), ("punch", 6),
           ("zero", 3), ("fallocate", 5), ("mmap", 6), ("rename", 2), ("reopen", 2),
           ("fsync", 1), ("stat", 5)]

    def compare_all(self):
        names = sorted(os.listdir(self.root))
        if names != sorted(self.model):
            raise Mismatch("directory lists %s, expected %s" % (names, sorted(self.model)))
        for name, m in sorted(self.model.items()):
            self.op_stat(name)
            got = os.pread(self.fds[name], MAXSIZE + 1, 0)
            self.expect("full compare of %s (fd)" % name, got, m, 0)
            with open(self.path(name), "rb") as f:
                got = f.read()
            self.expect("full compare of %s (by name)" % name, got, m, 0)
        self.counts["compare"] += 1

    def run(self, nops):
        kinds = [k for k, _ in self.OPS]
        weights = [w for _, w in self.OPS]
        for i in range(nops):
            kind = self.rng.choices(kinds, weights)[0]
            name = self.rng.choice(sorted(self.model))
            self.history.append("#%d %s %s" % (i, kind, name))
            desc = getattr(self, "op_" + kind)(name)
            self.history[-1] = "#%d %s" % (i, desc)
            self.counts[kind] += 1
            if (i + 1) % COMPARE_EVERY == 0:
                self.compare_all()
        self.compare_all()
        for fd in self.fds.values():
            os.fsync(fd)
            os.close(fd)


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    root = sys.argv[1]
    nops = int(sys.argv[2]) if len(sys.argv) > 2 else int(os.environ.get("TARN_OPS", "100000"))
    seed = int(os.environ.get("TARN_SEED", "0")) or random.SystemRandom().randrange(1, 1 << 31)
    print("# seed %d (replay with TARN_SEED=%d), %d operations in %s" % (seed, seed, nops, root))
    sys.stdout.flush()
    t0 = time.monotonic()
    ex = Exerciser(root, seed)
    try:
        ex.run(nops)
    except (Mismatch, OSError) as e:
        print("FAIL (seed %d): %s: %s" % (seed, type(e).__name__, e))
        print("last operations (the last one failed):")
        for h in ex.history:
            print("  " + h)
        return 1
    dt = time.monotonic() - t0
    print("# %d operations in %.1f s (%s)" %
          (nops, dt, ", ".join("%s %d" % kv for kv in sorted(ex.counts.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
