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
  --records          print the stream's records instead: "OFFSET TYPE LENGTH"
                      a line (docs/FORMAT.md "Send streams": a 96-byte header
                      and its payload)
  --set-version V     the stream with the version of its BEGIN and PACKAGE
                      records set to V, every record's checksum and running
                      checksum computed again (XXH3 through libxxhash): a
                      sound stream of another format version
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
         "wait": None, "file": None, "records": False, "set_version": None}
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
        elif a == "--records":
            o["records"] = True
            i += 1
            continue
        elif a == "--set-version":
            o["set_version"] = int(argv[i + 1], 0)
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


HDR = 96
HDR_FMT = "<IHHIIQ7QQQ"     # magic type flags plen pad seq u[7] running cksum
TYPES = {1: "BEGIN", 2: "OBJECT", 3: "FREEOBJECTS", 4: "WRITE", 5: "FREE",
         6: "END", 7: "PACKAGE", 8: "PACKAGE_END"}


def records(path):
    """(offset, type, payload length) of each record of the stream at path."""
    import struct
    out = []
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        off = 0
        while off + HDR <= size:
            f.seek(off)
            h = struct.unpack(HDR_FMT, f.read(HDR))
            out.append((off, TYPES.get(h[1], str(h[1])), h[3]))
            off += HDR + h[3]
    return out


def xxh3():
    import ctypes
    lib = ctypes.CDLL("libxxhash.so.0")
    f = lib.XXH3_64bits_withSeed
    f.restype = ctypes.c_uint64
    f.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
    return lambda b, seed: f(b, len(b), seed)


def reseal(path, version):
    """The stream at path with its version set and its checksums made again."""
    import struct
    h3 = xxh3()
    with open(path, "rb") as f:
        b = f.read()
    out = bytearray()
    off = 0
    running = 0
    while off + HDR <= len(b):
        h = list(struct.unpack(HDR_FMT, b[off:off + HDR]))
        payload = b[off + HDR:off + HDR + h[3]]
        if h[1] in (1, 7):
            h[6] = version                  # drr_u[0]
        h[13] = running                     # drr_running
        h[14] = 0
        h[14] = h3(struct.pack(HDR_FMT, *h), h3(payload, 0))
        running = h3(struct.pack("<Q", h[14]), running)
        out += struct.pack(HDR_FMT, *h) + payload
        off += HDR + h[3]
    return bytes(out)


def main():
    o = parse(sys.argv[1:])
    if o["records"]:
        for off, t, n in records(o["file"]):
            print(off, t, n)
        return
    if o["set_version"] is not None:
        sys.stdout.buffer.write(reseal(o["file"], o["set_version"]))
        return
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
