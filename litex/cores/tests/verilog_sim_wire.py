"""Length-prefixed pickles over a stream socket: the wire between `verilog_sim` and its cocotb server."""

import pickle
import struct

_LENGTH = struct.Struct("<I")


def send(sock, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(_LENGTH.pack(len(data)) + data)


def _exactly(sock, n):
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def receive(sock):
    """The next object, or None when the other side closed the connection."""
    head = _exactly(sock, _LENGTH.size)
    if head is None:
        return None
    body = _exactly(sock, _LENGTH.unpack(head)[0])
    return None if body is None else pickle.loads(body)
