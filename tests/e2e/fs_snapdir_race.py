#!/usr/bin/env python3
"""fs_snapdir_race.py — lookups under .zfs/snapshot racing snapshot changes.

  fs_snapdir_race.py MNT FS TARN [SECONDS]

Snapshots k0..k3 of FS (mounted at MNT, snapdir=visible) exist for the
whole run and never change: reader threads walk, stat and read them
without pause and with pauses around the daemon's idle time (so that
their slots are closed and opened again under them), and every error
there is a failure.  Meanwhile a changer takes, renames and destroys
other snapshots (`zfs snapshot/rename/destroy` and mkdir/mv/rmdir in
.zfs/snapshot), lists .zfs/snapshot (which closes slots of snapshots gone
behind the mount's back) and walks each snapshot it just made: a
snapshot that exists must always be found.  Exit 0 when no read of an
existing snapshot failed, 1 otherwise (the first errors are printed).
"""
import os
import random
import subprocess
import sys
import threading
import time

STABLE = ["k0", "k1", "k2", "k3"]


class Race:
    def __init__(self, mnt, fs, tarn, seconds):
        self.mnt, self.fs, self.tarn = mnt, fs, tarn
        self.sd = os.path.join(mnt, ".zfs", "snapshot")
        self.stop = time.monotonic() + seconds
        self.errors = []
        self.lock = threading.Lock()
        self.reads = 0
        self.changes = 0

    def err(self, what):
        with self.lock:
            self.errors.append(what)
            if len(self.errors) <= 20:
                print("ERROR: " + what, flush=True)

    def zfs(self, *args):
        p = subprocess.run([self.tarn, "fs"] + list(args), capture_output=True, text=True)
        if p.returncode != 0:
            self.err("tarn fs %s: %s" % (" ".join(args), p.stderr.strip()))
        return p.returncode == 0

    def walk(self, name, want_file):
        """Read snapshot name whole; an error there is a failure."""
        root = os.path.join(self.sd, name)

        def onerror(e):
            raise e
        try:
            st = os.stat(root)
            if st.st_ino == 0:
                raise OSError("inode 0")
            seen = set()
            for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
                for f in filenames:
                    p = os.path.join(dirpath, f)
                    seen.add(os.path.relpath(p, root))
                    with open(p, "rb") as fh:
                        fh.read()
            if want_file not in seen:
                raise OSError("%s missing (saw %d files)" % (want_file, len(seen)))
        except OSError as e:
            self.err("@%s: %s" % (name, e))
        with self.lock:
            self.reads += 1

    def reader(self, seed, pause_ms):
        r = random.Random(seed)
        while time.monotonic() < self.stop:
            name = r.choice(STABLE)
            self.walk(name, "f-" + name)
            if r.random() < 0.5:
                time.sleep(r.uniform(0, pause_ms) / 1000.0)

    def changer(self, seed):
        r = random.Random(seed)
        live = []
        n = 0
        while time.monotonic() < self.stop:
            op = r.choice(["snap", "snap", "mkdir", "rename", "mv", "destroy", "rmdir",
                           "list"])
            if op in ("rename", "mv", "destroy", "rmdir") and not live:
                op = "snap"
            old = r.choice(live) if live else None
            if op in ("rename", "mv", "destroy", "rmdir") and r.random() < 0.7:
                # read it, then change it at once: its releases may still be in flight
                self.walk(old, "f-k0")
            if op in ("snap", "mkdir"):
                name = "c%d" % n
                n += 1
                if op == "snap":
                    ok = self.zfs("snapshot", "%s@%s" % (self.fs, name))
                else:
                    try:
                        os.mkdir(os.path.join(self.sd, name))
                        ok = True
                    except OSError as e:
                        self.err("mkdir %s: %s" % (name, e))
                        ok = False
                if ok:
                    live.append(name)
                    self.walk(name, "f-k0")
            elif op in ("rename", "mv"):
                new = "c%d" % n
                n += 1
                if op == "rename":
                    ok = self.zfs("rename", "%s@%s" % (self.fs, old), "%s@%s" % (self.fs, new))
                else:
                    try:
                        os.rename(os.path.join(self.sd, old), os.path.join(self.sd, new))
                        ok = True
                    except OSError as e:
                        self.err("mv %s %s: %s" % (old, new, e))
                        ok = False
                if ok:
                    live.remove(old)
                    live.append(new)
                    self.walk(new, "f-k0")
            elif op in ("destroy", "rmdir"):
                if op == "destroy":
                    ok = self.zfs("destroy", "%s@%s" % (self.fs, old))
                else:
                    try:
                        os.rmdir(os.path.join(self.sd, old))
                        ok = True
                    except OSError as e:
                        self.err("rmdir %s: %s" % (old, e))
                        ok = False
                if ok:
                    live.remove(old)
            else:
                try:
                    names = set(os.listdir(self.sd))
                    if not set(STABLE + live) <= names:
                        self.err("listing lacks %s" % sorted(set(STABLE + live) - names))
                except OSError as e:
                    self.err(".zfs/snapshot: %s" % e)
            with self.lock:
                self.changes += 1
            if len(live) > 12:
                old = live.pop(0)
                self.zfs("destroy", "%s@%s" % (self.fs, old))


def main():
    mnt, fs, tarn = sys.argv[1], sys.argv[2], sys.argv[3]
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 20
    idle = int(os.environ.get("TARN_SNAPDIR_IDLE_MS", "50"))
    seed = int(os.environ.get("TARN_SEED") or random.randrange(1, 1 << 30))
    print("seed %d, %g s, idle %d ms" % (seed, seconds, idle), flush=True)
    race = Race(mnt, fs, tarn, seconds)
    threads = [threading.Thread(target=race.changer, args=(seed,))]
    for i in range(3):
        threads.append(threading.Thread(target=race.reader,
                                        args=(seed + 1 + i, [0, idle, 3 * idle][i])))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("%d reads, %d changes, %d errors" % (race.reads, race.changes, len(race.errors)))
    return 1 if race.errors else 0


if __name__ == "__main__":
    sys.exit(main())
