#!/usr/bin/env python3
"""daemon_ops.py SOCKET CASE: speak tarnd's wire protocol (host/host_wire.h)
directly, as a client other than `tarn` would, and print what came back:
one line per frame, "TYPE LENGTH", then the text of stderr/result/part
frames and the exit status.  CASE picks the request (see CASES)."""
import json
import socket
import struct
import sys

MAGIC_CTL = 0x314e5254   # "TRN1"
MAGIC_OP = 0x6f4e5254    # "TRNo"
FRAMES = {1: 'OUT', 2: 'ERR', 3: 'EXIT', 4: 'RESULT', 5: 'PART'}


def strings(words):
    b = struct.pack('=I', len(words))
    for w in words:
        e = w.encode()
        b += struct.pack('=I', len(e)) + e
    return b


def request(magic, words, env=()):
    return struct.pack('=I', magic) + strings(words) + strings(list(env))


CASES = {
    'names': request(MAGIC_OP, ['pool.names', json.dumps({'verb': 'list'})]),
    'unknown': request(MAGIC_OP, ['no.such', '{}']),
    'badjson': request(MAGIC_OP, ['pool.sync', '{"names": [']),
    'notobject': request(MAGIC_OP, ['pool.sync', '[1, 2]']),
    'nosuchpool': request(MAGIC_OP, ['pool.sync', json.dumps({'names': ['nosuch']})]),
    'control': request(MAGIC_CTL, ['tarn', 'pool', 'list']),
    'status': request(MAGIC_CTL, ['tarn', 'daemon', 'status']),
    'badmagic': struct.pack('=I', 0x12345678) + strings(['x']),
    'truncated': struct.pack('=I', MAGIC_OP) + struct.pack('=I', 2) + struct.pack('=I', 100) + b'pool',
    'toomany': struct.pack('=I', MAGIC_OP) + struct.pack('=I', 1 << 30),
}


def read_full(s, n):
    b = b''
    while len(b) < n:
        try:
            c = s.recv(n - len(b))
        except ConnectionResetError:
            return None
        if not c:
            return None
        b += c
    return b


def main():
    sock, case = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    s.connect(sock)
    try:
        s.sendall(CASES[case])
        if case in ('truncated', 'badmagic', 'toomany'):
            s.shutdown(socket.SHUT_WR)
    except (BrokenPipeError, ConnectionResetError):
        pass                    # the daemon may hang up before all is sent
    while True:
        hdr = read_full(s, 8)
        if hdr is None:
            print('CLOSED')
            return
        t, n = struct.unpack('=II', hdr)
        body = read_full(s, n) if n else b''
        name = FRAMES.get(t, 'T%d' % t)
        if name == 'EXIT':
            print('EXIT %d' % struct.unpack('=i', body)[0])
            return
        print('%s %s' % (name, body.decode(errors='replace').rstrip('\n')))


main()
