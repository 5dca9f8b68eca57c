#!/usr/bin/env python3
"""send_feed.py — feed a stream file to stdout, damaged or slowly, for the
receive tests (tests/e2e/fs_send_corrupt.sh, fs_recv_kill.sh).

  send_feed.py [options] FILE

  --flip POS          XOR the byte at POS with 0xff (repeatable)
  --patch POS:HEX     overwrite the bytes at POS with HEX (repeatable)
  --truncate N        stop after the first N bytes
  --random N          N random bytes (FILE is then not read; give "-")
  --chunk N           write N bytes at a time (default 1 MiB)
  --delay S           sleep S seconds after each chunk
  --pause-at N        after N bytes: create the file given by --signal,
                      then wait (up to 120 s) until the file given by
                      --wait exists, then go on
  --signal FILE / --wait FILE

A closed pipe (the receiver gone) ends it quietly with status 3.
"""

import os
import sys
import time


def parse(argv):
    o = {"flip": [], "patch": [], "truncate": None, "random": None,
         "chunk": 1 << 20, "delay": 0.0, "pause_at": None, "signal": None,
         "wait": None, "file": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--flip":
            o["flip"].append(int(argv[i + 1], 0))
        elif a == "--patch":
            pos, hx = argv[i + 1].split(":", 1)
            o["patch"].append((int(pos, 0), bytes.fromhex(hx)))
        elif a in ("--truncate", "--random", "--chunk", "--pause-at"):
            o[a[2:].replace("-", "_")] = int(argv[i + 1], 0)
        elif a == "--delay":
            o["delay"] = float(argv[i + 1])
        elif a in ("--signal", "--wait"):
            o[a[2:]] = argv[i + 1]
        else:
            o["file"] = a
            i += 1
            continue
        i += 2
    return o


def chunks(o):
    """The stream's bytes, in pieces, with the damage done."""
    if o["random"] is not None:
        left = o["random"]
        while left > 0:
            n = min(left, o["chunk"])
            yield os.urandom(n)
            left -= n
        return
    limit = o["truncate"]
    pos = 0
    with open(o["file"], "rb") as f:
        while limit is None or pos < limit:
            n = o["chunk"] if limit is None else min(o["chunk"], limit - pos)
            b = f.read(n)
            if not b:
                break
            b = bytearray(b)
            for p in o["flip"]:
                if pos <= p < pos + len(b):
                    b[p - pos] ^= 0xFF
            for p, hx in o["patch"]:
                for k, v in enumerate(hx):
                    if pos <= p + k < pos + len(b):
                        b[p + k - pos] = v
            yield bytes(b)
            pos += len(b)


def main():
    o = parse(sys.argv[1:])
    out = sys.stdout.fileno()
    done = 0
    paused = False
    try:
        for b in chunks(o):
            view = memoryview(b)
            while view:
                if o["pause_at"] is not None and not paused:
                    if done >= o["pause_at"]:
                        pause(o)
                        paused = True
                    elif done + len(view) > o["pause_at"]:
                        k = os.write(out, view[:o["pause_at"] - done])
                        done += k
                        view = view[k:]
                        continue
                k = os.write(out, view)
                done += k
                view = view[k:]
            if o["delay"]:
                time.sleep(o["delay"])
        if o["pause_at"] is not None and not paused:
            pause(o)
    except BrokenPipeError:
        sys.exit(3)


def pause(o):
    if o["signal"]:
        with open(o["signal"], "w") as f:
            f.write("paused\n")
    if o["wait"]:
        end = time.time() + 120
        while not os.path.exists(o["wait"]) and time.time() < end:
            time.sleep(0.05)


if __name__ == "__main__":
    main()
