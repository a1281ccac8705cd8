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
"""

from __future__ import annotations

import gc


def settle_heap() -> int:
    """Collect what start-up left behind, then exempt the survivors from later collections.

    Returns how many objects are now exempt (``gc.get_freeze_count()``). Called
    once, after start-up, by ``hermes-gateway run``; not by the library, whose
    users own their process's collector.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
