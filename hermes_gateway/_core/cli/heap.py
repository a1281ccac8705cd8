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

The youngest generation is collected every :data:`YOUNG_THRESHOLD` net new
objects instead of CPython's 700. With 1,000 replies streaming at once each
young collection cost ~1.5 ms of CPU whatever its size, 600 of them and the
older generations' collections they trigger ~1.8 s of a 20 s run, with pauses
up to 170 ms (``bench/scale.py``'s collector figures, issue 39); at 10,000:
~0.24 s, pauses up to 45 ms, peak memory the same. Cycles are still found,
later: every 10,000 objects instead of every 700.
"""

from __future__ import annotations

import gc

#: Net new objects between two collections of the youngest generation (CPython's default: 700).
YOUNG_THRESHOLD = 10_000


def settle_heap() -> int:
    """Collect what start-up left behind, exempt the survivors from later collections, collect the young less often.

    Returns how many objects are now exempt (``gc.get_freeze_count()``). Called
    once, after start-up, by ``hermes-gateway run``; not by the library, whose
    users own their process's collector.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    return gc.get_freeze_count()
