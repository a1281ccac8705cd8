"""An installed plugin distribution, as far as ``importlib.metadata`` can tell, without installing anything.

A module and its ``NAME-1.0.dist-info`` folder (METADATA, entry_points.txt)
written into a folder that is then put on ``sys.path`` (of this process, or
of a subprocess through ``PYTHONPATH``): entry points are found there as
they are in site-packages.
"""

from __future__ import annotations

import textwrap
from pathlib import Path


def install_dist(site: Path, name: str, module_source: str, entry: str) -> Path:
    """Write distribution ``name`` (module ``name``) into ``site``; ``entry`` is one ``[hermes_gateway]`` line."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{name}.py").write_text(textwrap.dedent(module_source))
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[hermes_gateway]\n{entry}\n")
    return site
