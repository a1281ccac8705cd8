"""``soak.py --diagnose FILE``: a sampler inside the gateway process, started by Python at start-up.

``soak.py`` puts this directory on the gateway's ``PYTHONPATH`` and names the output in
``HERMES_SOAK_DIAGNOSE``; every ``HERMES_SOAK_DIAGNOSE_EVERY`` seconds (60) a daemon thread appends one JSON
line: where the resident memory is (``/proc/self/smaps``: the brk heap, anonymous mappings, files), glibc's
``mallinfo2()`` (arena bytes vs in use vs free: fragmentation shows as ``free`` growing), SQLite's own
memory (``sqlite3_status64``), pymalloc's arenas and bytes in use (``sys._debugmallocstats`` read in a forked
child), ``tracemalloc``'s total when ``HERMES_SOAK_TRACEMALLOC=1``, the threads, the most numerous object
types, the futures and tasks by kind, and the bot budget queue's heap. ``HERMES_SOAK_COLLECT_AT=S``: at the
first sample after S seconds, one full collection with ``gc.DEBUG_SAVEALL``, its garbage listed by type
(the cycles the process leaves). The full sampler walks every object and forks: it disturbs the allocator
(glibc's arenas grew to 55 MB free in a 4-minute run); ``HERMES_SOAK_LIGHT=1`` samples only the memory's
make-up (smaps, mallinfo2, each glibc arena's size and free bytes from ``malloc_info``). Without
``HERMES_SOAK_DIAGNOSE`` it does nothing.
"""

from __future__ import annotations

import os

if os.environ.get("HERMES_SOAK_DIAGNOSE"):
    import ctypes
    import ctypes.util
    import gc
    import json
    import re
    import sys
    import threading
    import time
    import tracemalloc
    from collections import Counter

    if os.environ.get("HERMES_SOAK_TRACEMALLOC") == "1":
        tracemalloc.start(1)

    class _MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                     "keepcost")]

    _libc = ctypes.CDLL(None)
    _libc.mallinfo2.restype = _MallInfo2
    _libc.fdopen.restype = ctypes.c_void_p
    _libc.fdopen.argtypes = [ctypes.c_int, ctypes.c_char_p]
    _libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    _libc.fclose.argtypes = [ctypes.c_void_p]

    def _sqlite_status() -> dict[str, int]:
        try:
            lib = ctypes.CDLL("libsqlite3.so.0")
        except OSError:
            return {}
        out = {}
        for name, op in (("memory_used", 0), ("pagecache_overflow", 2), ("malloc_count", 9)):
            cur, high = ctypes.c_int64(), ctypes.c_int64()
            if lib.sqlite3_status64(op, ctypes.byref(cur), ctypes.byref(high), 0) == 0:
                out[name], out[name + "_high"] = cur.value, high.value
        return out

    def _smaps() -> dict[str, int]:
        """Rss kB by mapping: ``[heap]``, ``[stack]``, ``anon`` (by size class), and each file's basename."""
        sizes: Counter[str] = Counter()
        name = ""
        with open("/proc/self/smaps") as f:
            for line in f:
                first = line.split(None, 1)[0]
                if "-" in first and not first.endswith(":"):
                    parts = line.split()
                    lo, hi = (int(x, 16) for x in parts[0].split("-"))
                    if len(parts) >= 6:
                        name = os.path.basename(parts[5]) if parts[5].startswith("/") else parts[5]
                    else:
                        span = (hi - lo) >> 10
                        name = "anon>=1M" if span >= 1024 else "anon<1M"
                elif first == "Rss:":
                    sizes[name] += int(line.split()[1])
        return dict(sizes.most_common(12))

    def _pymalloc() -> dict[str, int]:
        """``sys._debugmallocstats()``'s totals (it writes to C's stderr): read in a forked child, whose stderr is a
        pipe, so the gateway's own stderr (its log) is never touched; the child's heap is the parent's copy."""
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.dup2(write, 2)
                sys._debugmallocstats()
            finally:
                os._exit(0)
        os.close(write)
        with os.fdopen(read) as f:
            text = f.read()
        os.waitpid(pid, 0)
        out = {}
        for line in text.splitlines():
            for key, name in (("# arenas allocated current", "arenas"), ("# bytes in allocated blocks", "used"),
                              ("# bytes in available blocks", "free_blocks"),
                              ("# bytes lost to pool headers", "pool_headers"),
                              ("# bytes lost to quantization", "quantization"),
                              ("# arenas highwater mark", "arenas_high")):
                if line.startswith(key):
                    out[name] = int(line.rsplit("=", 1)[1].replace(",", "").strip())
            if " unused pools * " in line:
                out["unused_pools_bytes"] = int(line.rsplit("=", 1)[1].replace(",", "").strip())
        return out

    def _arenas() -> list[list[int]]:
        """glibc's ``malloc_info()``: each arena's [system bytes, free bytes] in kB (the first is the main one)."""
        import tempfile

        with tempfile.TemporaryFile() as f:
            stream = _libc.fdopen(os.dup(f.fileno()), b"w")
            _libc.malloc_info(0, stream)
            _libc.fclose(stream)
            f.seek(0)
            xml = f.read().decode()
        heaps = []
        for heap in re.findall(r'<heap nr="\d+">(.*?)</heap>', xml, re.S):
            system = re.search(r'<system type="current" size="(\d+)"', heap)
            free = sum(int(x) for x in re.findall(r'<total type="(?:fast|rest)" count="\d+" size="(\d+)"', heap))
            heaps.append([int(system.group(1)) >> 10 if system else 0, free >> 10])
        return heaps

    def _light(started: float, out: str) -> None:
        """Without walking the objects or forking: what the memory is made of, per glibc arena."""
        info = _libc.mallinfo2()
        status = open("/proc/self/status").read()
        rss = next(int(l.split()[1]) for l in status.splitlines() if l.startswith("VmRSS:"))
        row = {"t": round(time.monotonic() - started), "rss_kb": rss, "smaps_kb": _smaps(),
               "mallinfo_kb": {k: getattr(info, k) >> 10 for k in ("arena", "hblkhd", "uordblks", "fordblks")},
               "arenas_kb": _arenas(), "sqlite": _sqlite_status(), "allocated_blocks": sys.getallocatedblocks(),
               "threads": [(t.name, t.native_id) for t in threading.enumerate()]}
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")

    def _sample(started: float, out: str) -> None:
        if os.environ.get("HERMES_SOAK_LIGHT") == "1":
            return _light(started, out)
        info = _libc.mallinfo2()
        status = open("/proc/self/status").read()
        rss = next(int(l.split()[1]) for l in status.splitlines() if l.startswith("VmRSS:"))
        if os.environ.get("HERMES_SOAK_COLLECT_EVERY") == "1":  # count the live objects only, not the garbage
            gc.collect()
        objects = gc.get_objects()
        types = Counter(type(o).__name__ for o in objects)
        futures = [o for o in objects if type(o).__name__ == "Future"]
        queues = sorted(((len(q._heap), sum(t.done() for _, _, t in q._heap)) for q in objects
                         if type(q).__name__ == "BudgetQueue"), reverse=True)[:5]
        tasks = Counter(f"{t.get_name().split(':')[0]} {t.get_coro().__qualname__} "
                        f"{'done' if t.done() else 'pending'}" for t in objects if type(t).__name__ == "Task")
        journals = [o for o in objects if type(o).__name__ == "InFlightJournal"][:: 200]
        journal_holders = Counter(",".join(sorted({type(u).__name__ for u in gc.get_referrers(r)}))
                                  + " <- " + type(r).__name__ + ":" + re.sub(r"0x[0-9a-f]+", "", repr(r))[:60]
                                  for j in journals for r in gc.get_referrers(j) if r is not journals)
        del objects, journals
        # what the futures are (state and callbacks, addresses dropped) and, for a few, what holds them
        kinds = Counter(f"{type(f).__module__}: " + re.sub(r" at 0x[0-9a-f]+|0x[0-9a-f]+", "", repr(f))[:160]
                        for f in futures)
        holders: Counter[str] = Counter()
        for f in futures[:: max(1, len(futures) // 20)]:
            for r in gc.get_referrers(f):
                if type(r) is not list or len(r) < 100:
                    up = ",".join(sorted({type(u).__name__ for u in gc.get_referrers(r)}))
                    holders[type(r).__name__ + ":" + re.sub(r"0x[0-9a-f]+", "", repr(r))[:80] + " <- " + up] += 1
        del futures
        row = {
            "t": round(time.monotonic() - started), "rss_kb": rss, "smaps_kb": _smaps(),
            "mallinfo_kb": {k: getattr(info, k) >> 10 for k in ("arena", "hblkhd", "uordblks", "fordblks", "keepcost")},
            "mallinfo_ordblks": info.ordblks,
            "pymalloc": _pymalloc(), "allocated_blocks": sys.getallocatedblocks(), "sqlite": _sqlite_status(),
            "traced_kb": tracemalloc.get_traced_memory()[0] >> 10 if tracemalloc.is_tracing() else None,
            "threads": [t.name for t in threading.enumerate()], "gc_objects": sum(types.values()),
            "gc_top": types.most_common(70),
            "futures": kinds.most_common(8), "budget_queues_heap_done": queues,
            "tasks": tasks.most_common(12), "gc_stats": gc.get_stats(), "gc_count": gc.get_count(),
            "gc_threshold": gc.get_threshold(), "journal_holders": journal_holders.most_common(10), "future_holders": holders.most_common(8), "fds": len(os.listdir("/proc/self/fd")),
        }
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")

    def _loop() -> None:
        started = time.monotonic()
        every = float(os.environ.get("HERMES_SOAK_DIAGNOSE_EVERY", "60"))
        out = os.environ["HERMES_SOAK_DIAGNOSE"]
        collect_at = float(os.environ.get("HERMES_SOAK_COLLECT_AT", "inf"))  # one full collection, then a sample
        while True:
            time.sleep(every)
            try:
                _sample(started, out)
                if time.monotonic() - started >= collect_at:
                    collect_at = float("inf")
                    gc.set_debug(gc.DEBUG_SAVEALL)  # what a full collection finds, by type: the cycles left
                    found = gc.collect()
                    garbage = Counter(type(o).__qualname__ for o in gc.garbage).most_common(60)
                    gc.garbage.clear()
                    gc.set_debug(0)
                    gc.collect()
                    with open(out, "a") as f:
                        f.write(json.dumps({"collected": found, "garbage": garbage}) + "\n")
                    _sample(started, out)
            except Exception as exc:  # a sampler must not take the gateway down
                print(f"soak_probe: {exc!r}", file=sys.stderr)

    threading.Thread(target=_loop, name="soak-probe", daemon=True).start()
