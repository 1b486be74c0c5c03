#!/usr/bin/env python3
"""Raw LMDB key/value load through liblmdb (ctypes, stdlib only): the floor of an
LMDB append at pushtrail's commit policy.

    lmdb_floor.py NDJSON DIR [--batch N]

key = 8-byte big-endian seq (1, 2, 3 ...), value = the line without its "\\n",
put with MDB_APPEND into the main database; one write transaction per N lines
(default 12,288, pushtrail's ingest batch), default durability (fsync on commit).
Nothing is parsed, validated, hashed or indexed.
"""
import ctypes
import ctypes.util
import os
import sys


class MDBVal(ctypes.Structure):
    _fields_ = [("mv_size", ctypes.c_size_t), ("mv_data", ctypes.c_void_p)]


def main(argv):
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, dst = argv[1], argv[2]
    batch = 12288
    if len(argv) == 5 and argv[3] == "--batch":
        batch = int(argv[4])
    try:
        lib = ctypes.CDLL("liblmdb.so.0")   # Debian's name; find_library runs ldconfig/gcc
    except OSError:
        lib = ctypes.CDLL(ctypes.util.find_library("lmdb") or "liblmdb.so")
    vp = ctypes.c_void_p
    lib.mdb_strerror.restype = ctypes.c_char_p
    lib.mdb_env_create.argtypes = [ctypes.POINTER(vp)]
    lib.mdb_env_set_mapsize.argtypes = [vp, ctypes.c_size_t]
    lib.mdb_env_open.argtypes = [vp, ctypes.c_char_p, ctypes.c_uint, ctypes.c_int]
    lib.mdb_env_close.argtypes = [vp]
    lib.mdb_txn_begin.argtypes = [vp, vp, ctypes.c_uint, ctypes.POINTER(vp)]
    lib.mdb_txn_commit.argtypes = [vp]
    lib.mdb_dbi_open.argtypes = [vp, ctypes.c_char_p, ctypes.c_uint, ctypes.POINTER(ctypes.c_uint)]
    lib.mdb_put.argtypes = [vp, ctypes.c_uint, ctypes.POINTER(MDBVal), ctypes.POINTER(MDBVal), ctypes.c_uint]

    def check(rc, what):
        if rc != 0:
            raise SystemExit("lmdb_floor: %s: %s" % (what, lib.mdb_strerror(rc).decode()))

    MDB_APPEND = 0x20000
    MDB_CREATE = 0x40000
    os.makedirs(dst, exist_ok=True)
    env = vp()
    check(lib.mdb_env_create(ctypes.byref(env)), "mdb_env_create")
    size = max(1 << 28, os.path.getsize(src) * 3)
    check(lib.mdb_env_set_mapsize(env, size), "mdb_env_set_mapsize")
    check(lib.mdb_env_open(env, dst.encode(), 0, 0o600), "mdb_env_open")
    dbi = ctypes.c_uint()
    key, val = MDBVal(), MDBVal()
    kref, vref = ctypes.byref(key), ctypes.byref(val)
    put, commit, begin = lib.mdb_put, lib.mdb_txn_commit, lib.mdb_txn_begin
    txn = vp()
    seq = 0
    n = 0
    kbuf = ctypes.create_string_buffer(8)
    key.mv_size = 8
    key.mv_data = ctypes.addressof(kbuf)
    check(begin(env, None, 0, ctypes.byref(txn)), "mdb_txn_begin")
    check(lib.mdb_dbi_open(txn, None, MDB_CREATE, ctypes.byref(dbi)), "mdb_dbi_open")
    d = dbi.value
    # The file is read in large chunks into one ctypes buffer; each value points
    # into it, so no per-line object is built.
    chunk = 64 << 20
    buf = ctypes.create_string_buffer(chunk + (1 << 20))
    base = ctypes.addressof(buf)
    mv = memoryview(buf).cast("B")
    keep = 0
    with open(src, "rb", buffering=0) as f:
        while True:
            got = f.readinto(mv[keep:keep + chunk])
            end = keep + got
            data = bytes(mv[:end]) if got else bytes(mv[:keep])
            find = data.find
            start = 0
            last = len(data) if not got else data.rfind(b"\n") + 1
            while start < last:
                nl = find(b"\n", start, last)
                stop = nl if nl >= 0 else last
                if stop > start:
                    seq += 1
                    kbuf.raw = seq.to_bytes(8, "big")
                    val.mv_size = stop - start
                    val.mv_data = base + start
                    check(put(txn, d, kref, vref, MDB_APPEND), "mdb_put")
                    n += 1
                    if n == batch:
                        check(commit(txn), "mdb_txn_commit")
                        check(begin(env, None, 0, ctypes.byref(txn)), "mdb_txn_begin")
                        n = 0
                start = stop + 1
            if not got:
                break
            keep = end - last
            if keep > (1 << 20):
                raise SystemExit("lmdb_floor: a line over 1 MiB")
            mv[:keep] = data[last:end]
    check(commit(txn), "mdb_txn_commit")
    lib.mdb_env_close(env)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
