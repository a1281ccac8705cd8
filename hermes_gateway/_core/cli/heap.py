"""Keep the garbage collector off the start-up heap of a long-running server.

Once ``hermes-gateway run`` has started, about 100,000 objects (modules,
plugins, the SDKs' classes, the config) live as long as the process. A full
collection of CPython's cyclic garbage collector walks every tracked object:
~55-75 ms on the benchmark machine, during which the event loop stands
still. A burst of 200 streamed requests allocates enough to trigger one, so
every one of those streams waited that long for its first token
(bench/README.md, issue 13). ``gc.freeze()`` moves the objects alive at that
moment into a permanent generation that collections skip; everything
created later is collected exactly as before.

Young collections are made rarer too (:data:`YOUNG_THRESHOLD`): CPython
starts one every 700 net allocations of tracked objects, and each walks the
objects of every request in flight (with 20 streams open, 3.5 % of the
server's instructions per request, bench/README.md issue 28). Almost all of
a request's objects are freed by reference counting long before a
collection could matter, so collecting 14x less often frees the same
cycles, a few milliseconds later.
"""

from __future__ import annotations

import gc

#: Net allocations of tracked objects between two young collections (CPython's default: 700).
YOUNG_THRESHOLD = 10_000


def settle_heap() -> int:
    """Collect what start-up left behind, then exempt the survivors from later collections.

    Young collections then start every :data:`YOUNG_THRESHOLD` allocations.
    Returns how many objects are now exempt (``gc.get_freeze_count()``). Called
    once, after start-up, by ``hermes-gateway run``; not by the library, whose
    users own their process's collector.
    """
    gc.collect()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    gc.freeze()
    return gc.get_freeze_count()
