"""One worker of experiments/real-mode/soak.sh: runs for DURATION seconds in directory DIR of the
mount and prints a JSON line {"role", "ops", "errors", "first_error"} at the end.

    reader  : random 4-64 KiB preads of the shared files, whole-file reads now and then
    writer  : writes 4-64 KiB chunks to its own file, fsync every 8 writes, reads back and
              checks what it wrote
    meta    : create / write / rename / hard link / xattr / chmod / utime / stat / readdir /
              unlink / mkdir / rmdir, and the create-unlink-use temporary file pattern
"""

import hashlib
import json
import os
import random
import sys
import time

role, top, duration, seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
end = time.monotonic() + duration
ops = errors = 0
first_error = None


def check(cond, what):
    global errors, first_error
    if not cond:
        errors += 1
        if first_error is None:
            first_error = what


def reader():
    global ops
    files = [os.path.join(top, "shared", n) for n in sorted(os.listdir(os.path.join(top, "shared")))]
    sizes = {f: os.path.getsize(f) for f in files}
    while time.monotonic() < end:
        f = rng.choice(files)
        fd = os.open(f, os.O_RDONLY)
        try:
            for _ in range(rng.randint(1, 64)):
                n = rng.choice((4096, 16384, 65536))
                off = rng.randrange(0, max(1, sizes[f] - n)) // 4096 * 4096
                data = os.pread(fd, n, off)
                check(len(data) == min(n, sizes[f] - off), f"short read {f} at {off}")
                ops += 1
        finally:
            os.close(fd)
        if rng.random() < 0.02:
            with open(f, "rb") as h:
                check(len(h.read()) == sizes[f], f"whole read of {f}")
            ops += 1


def writer():
    global ops
    path = os.path.join(top, f"w{seed}", "data")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    want = {}
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        writes = 0
        while time.monotonic() < end:
            n = rng.choice((4096, 16384, 65536))
            off = rng.randrange(0, 256) * 65536
            data = rng.randbytes(n)
            check(os.pwrite(fd, data, off) == n, "short write")
            # Later writes at the same offset may be shorter: compare what was written last.
            want[off] = (n, hashlib.blake2b(data).digest())
            writes += 1
            ops += 1
            if writes % 8 == 0:
                os.fsync(fd)
                ops += 1
                for o in rng.sample(sorted(want), min(4, len(want))):
                    ln, h = want[o]
                    check(hashlib.blake2b(os.pread(fd, ln, o)).digest() == h, f"read back at {o}")
                    ops += 1
            if writes % 2048 == 0:
                os.ftruncate(fd, 0)  # keep the file (and the backing disk) small
                want.clear()
                ops += 1
    finally:
        os.close(fd)


def meta():
    global ops
    d = os.path.join(top, f"m{seed}")
    os.makedirs(d, exist_ok=True)
    i = 0
    while time.monotonic() < end:
        i += 1
        a, b, c = (os.path.join(d, f"{x}{i}") for x in "abc")
        with open(a, "wb") as h:
            h.write(b"x" * rng.randint(0, 10000))
        os.rename(a, b)
        os.link(b, c)
        check(os.stat(b).st_ino == os.stat(c).st_ino and os.stat(c).st_nlink == 2, "hard link")
        os.setxattr(c, "user.soak", str(i).encode())
        check(os.getxattr(b, "user.soak") == str(i).encode(), "xattr")
        os.chmod(b, 0o600)
        os.utime(c, (-86400 * 365, 1_000_000_000))
        check(os.stat(b).st_mtime == 1_000_000_000, "utime")
        sub = os.path.join(d, f"dir{i}")
        os.mkdir(sub)
        check(len(os.listdir(d)) >= 3, "readdir")
        os.rmdir(sub)
        os.unlink(b)
        # The temporary file pattern: create, unlink, then use the descriptor.
        fd = os.open(c, os.O_RDWR)
        os.unlink(c)
        os.ftruncate(fd, 100)
        os.fchmod(fd, 0o644)
        check(os.fstat(fd).st_size == 100 and os.fstat(fd).st_nlink == 0, "unlinked open file")
        os.close(fd)
        ops += 16


try:
    {"reader": reader, "writer": writer, "meta": meta}[role]()
except Exception as e:  # an exception is an error of the run, reported, not a crash of the soak
    check(False, f"{type(e).__name__}: {e}")
print(json.dumps({"role": role, "seed": seed, "ops": ops, "errors": errors, "first_error": first_error}))
