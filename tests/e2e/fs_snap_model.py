#!/usr/bin/env python3
"""fs_snap_model.py — random file operations and snapshots, checked against a model.

  fs_snap_model.py MNT FS TARN [NSTEPS]

In the mounted file system MNT (dataset FS, `TARN fs ...` its zfs
command), runs NSTEPS (default 400, or $TARN_STEPS) random steps: file
operations (create, overwrite, append, truncate, unlink, rename, mkdir,
rmdir, chmod, symlink) and, now and then, snapshots (`zfs snapshot`, or
mkdir in .zfs/snapshot), destroys of a random snapshot (`zfs destroy`, or
rmdir in .zfs/snapshot) and renames of one.  The model keeps the tree and,
for each snapshot, a frozen copy of the tree as it was when the snapshot
was taken.  After every step the live tree must equal the model and every
snapshot under MNT/.zfs/snapshot/NAME must equal its copy (names, types,
modes, sizes, contents, link targets), and writes there must fail with
EROFS.  The seed is printed; TARN_SEED=S replays.  Exit 0 when every
check passed, 1 at the first mismatch (after printing the seed, the step
and the last steps).
"""
import copy
import errno
import os
import random
import stat
import subprocess
import sys


class Mismatch(Exception):
    pass


def read_tree(root):
    """{relative path: ('f', mode, bytes) | ('d', mode) | ('l', target)}"""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not (dirpath == root and d == ".zfs")]
        rel = os.path.relpath(dirpath, root)
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            r = os.path.normpath(os.path.join(rel, name))
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[r] = ("l", os.readlink(p))
                if name in dirnames:
                    dirnames.remove(name)
            elif stat.S_ISDIR(st.st_mode):
                out[r] = ("d", stat.S_IMODE(st.st_mode))
            else:
                with open(p, "rb") as f:
                    out[r] = ("f", stat.S_IMODE(st.st_mode), f.read())
    return out


def diff(want, got, where):
    if want == got:
        return
    for k in sorted(set(want) | set(got)):
        if want.get(k) != got.get(k):
            w, g = want.get(k), got.get(k)
            short = lambda v: v if v is None or v[0] != "f" else ("f", oct(v[1]), len(v[2]))
            raise Mismatch("%s: %s: want %s, got %s" % (where, k, short(w), short(g)))


class Run:
    def __init__(self, mnt, fs, tarn, seed):
        self.mnt, self.fs, self.tarn = mnt, fs, tarn
        self.r = random.Random(seed)
        self.model = {}
        self.snaps = {}         # name -> frozen tree
        self.nsnap = 0
        self.log = []
        self.snapdir = os.path.join(mnt, ".zfs", "snapshot")
        self.where = "setup"

    def zfs(self, *args):
        p = subprocess.run([self.tarn, "fs"] + list(args), capture_output=True, text=True)
        if p.returncode != 0:
            raise Mismatch("tarn fs %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                          p.stderr.strip()))

    def dirs(self):
        return [""] + [k for k, v in self.model.items() if v[0] == "d"]

    def files(self):
        return [k for k, v in self.model.items() if v[0] == "f"]

    def path(self, rel):
        return os.path.join(self.mnt, rel)

    def newname(self):
        d = self.r.choice(self.dirs())
        return os.path.normpath(os.path.join(d, "n%d" % self.r.randrange(40)))

    def step_file(self):
        r = self.r
        op = r.choice(["create", "create", "overwrite", "append", "truncate", "unlink",
                       "rename", "mkdir", "rmdir", "chmod", "symlink"])
        files = self.files()
        if op in ("overwrite", "append", "truncate", "unlink", "chmod") and not files:
            op = "create"
        if op == "create":
            n = self.newname()
            if n in self.model:
                return "skip"
            data = os.urandom(r.choice([0, 10, 4096, 70000, r.randrange(200000)]))
            with open(self.path(n), "wb") as f:
                f.write(data)
            self.model[n] = ("f", 0o644, data)
        elif op == "overwrite":
            n = r.choice(files)
            old = self.model[n][2]
            off = r.randrange(len(old) + 1)
            data = os.urandom(r.randrange(1, 50000))
            with open(self.path(n), "r+b") as f:
                f.seek(off)
                f.write(data)
            new = old[:off] + data + old[off + len(data):]
            self.model[n] = ("f", self.model[n][1], new)
        elif op == "append":
            n = r.choice(files)
            data = os.urandom(r.randrange(1, 9000))
            with open(self.path(n), "ab") as f:
                f.write(data)
            self.model[n] = ("f", self.model[n][1], self.model[n][2] + data)
        elif op == "truncate":
            n = r.choice(files)
            size = r.randrange(len(self.model[n][2]) + 100)
            os.truncate(self.path(n), size)
            old = self.model[n][2]
            self.model[n] = ("f", self.model[n][1], (old + bytes(size))[:size])
        elif op == "unlink":
            n = r.choice(files)
            os.unlink(self.path(n))
            del self.model[n]
        elif op == "chmod":
            n = r.choice(files)
            mode = r.choice([0o600, 0o644, 0o755, 0o400])
            os.chmod(self.path(n), mode)
            self.model[n] = ("f", mode, self.model[n][2])
        elif op == "symlink":
            n = self.newname()
            if n in self.model:
                return "skip"
            t = "target-%d" % r.randrange(100)
            os.symlink(t, self.path(n))
            self.model[n] = ("l", t)
        elif op == "mkdir":
            n = self.newname()
            if n in self.model:
                return "skip"
            os.mkdir(self.path(n), 0o755)
            self.model[n] = ("d", 0o755)
        elif op == "rmdir":
            empty = [d for d in self.dirs() if d and
                     not any(k.startswith(d + "/") for k in self.model)]
            if not empty:
                return "skip"
            n = r.choice(empty)
            os.rmdir(self.path(n))
            del self.model[n]
        elif op == "rename":
            src = r.choice(files + [k for k, v in self.model.items() if v[0] == "l"] or [None])
            if src is None:
                return "skip"
            dst = self.newname()
            if dst in self.model or dst == src:
                return "skip"
            os.rename(self.path(src), self.path(dst))
            self.model[dst] = self.model.pop(src)
            op += " %s" % src
            n = dst
        return "%s %s" % (op, n)

    def step_snap(self):
        r = self.r
        op = r.choice(["snap", "snap", "snap", "mkdir", "destroy", "rmdir", "rename"])
        if op in ("destroy", "rmdir", "rename") and not self.snaps:
            op = "snap"
        if op in ("snap", "mkdir"):
            name = "s%d" % self.nsnap
            self.nsnap += 1
            if op == "snap":
                self.zfs("snapshot", "%s@%s" % (self.fs, name))
            else:
                os.mkdir(os.path.join(self.snapdir, name))
            self.snaps[name] = copy.deepcopy(self.model)
            return "%s %s" % (op, name)
        name = r.choice(sorted(self.snaps))
        if op == "destroy":
            self.zfs("destroy", "%s@%s" % (self.fs, name))
            del self.snaps[name]
        elif op == "rmdir":
            os.rmdir(os.path.join(self.snapdir, name))
            del self.snaps[name]
        else:
            new = "r%d" % self.nsnap
            self.nsnap += 1
            self.zfs("rename", "%s@%s" % (self.fs, name), "%s@%s" % (self.fs, new))
            self.snaps[new] = self.snaps.pop(name)
            name += " -> " + new
        return "%s %s" % (op, name)

    def check(self, full):
        diff(self.model, read_tree(self.mnt), "live")
        names = sorted(os.listdir(self.snapdir))
        if names != sorted(self.snaps):
            raise Mismatch(".zfs/snapshot lists %s, want %s" % (names, sorted(self.snaps)))
        for name in (sorted(self.snaps) if full else sorted(self.snaps)[-2:]):
            root = os.path.join(self.snapdir, name)
            diff(self.snaps[name], read_tree(root), "@" + name)
            try:
                with open(os.path.join(root, "written-here"), "wb") as f:
                    f.write(b"x")
                raise Mismatch("@%s: a write under .zfs/snapshot succeeded" % name)
            except OSError as e:
                if e.errno != errno.EROFS:
                    raise Mismatch("@%s: write gave %s, want EROFS" % (name, e))

    def run(self, nsteps):
        for i in range(nsteps):
            self.where = "step %d" % i
            what = self.step_snap() if self.r.random() < 0.15 else self.step_file()
            self.log.append("%d: %s" % (i, what))
            self.where = "the check after step %d" % i
            self.check(full=(i % 10 == 9 or i == nsteps - 1))


def main():
    mnt, fs, tarn = sys.argv[1], sys.argv[2], sys.argv[3]
    nsteps = int(sys.argv[4]) if len(sys.argv) > 4 else int(os.environ.get("TARN_STEPS", 400))
    seed = int(os.environ.get("TARN_SEED") or random.randrange(1, 1 << 30))
    print("seed %d (replay with TARN_SEED=%d), %d steps" % (seed, seed, nsteps))
    run = Run(mnt, fs, tarn, seed)
    try:
        run.run(nsteps)
    except (Mismatch, OSError) as e:
        # a step that failed is not in the log yet: say which one it was
        print("FAIL (seed %d) in %s: %s" % (seed, run.where, e))
        print("last steps:\n  " + "\n  ".join(run.log[-12:]))
        return 1
    print("ok: %d steps, %d snapshots taken, %d left" % (nsteps, run.nsnap, len(run.snaps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
