"""The media directory: the one place files a reply attaches may come from.

A tool's output is not trusted to name a file: a model can talk a tool
into returning ``../../etc/passwd`` or a symlink to a key. So every
:class:`~hermes_gateway._core.media.Media` goes through :meth:`MediaDirectory.admit`
before anyone reads it: bytes are written into the directory under a
fresh, unguessable name; a path must resolve (``..`` and symlinks
followed) to a regular file inside the directory, or the item is refused
(one log line; the person gets its fallback line, the model a stand-in
saying so). URLs pass as they are: the gateway never fetches them.

Default directory: ``$HERMES_HOME/media`` (``~/.hermes/media``); config
``media.directory``. Created on first write, readable by its owner only.
Files the gateway wrote (``<16 hex>-name``) older than ``media.keep_days``
(7) are removed, at most once an hour, when a new one is written; files a
tool put there itself are never touched.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import time
from dataclasses import replace
from pathlib import Path

from .media import Media

log = logging.getLogger(__name__)

#: Why an item was refused, shown in its fallback line and the model's stand-in.
OUTSIDE = "outside the media directory"
MISSING = "file not found"

_OURS = re.compile(r"^[0-9a-f]{16}-")   # the names _write gives
PRUNE_EVERY = 3600.0                    # seconds between two sweeps of one directory
_last_prune: dict[str, float] = {}      # directory -> when it was last swept (per process)


class MediaDirectory:
    """Admits media into one directory; nothing outside it is ever read."""

    def __init__(self, directory: str | os.PathLike[str], *, keep: float | None = None) -> None:
        self.directory = Path(directory).expanduser()
        self.keep = keep  # seconds a written file is kept (None or 0: forever)

    @property
    def root(self) -> Path:
        """The directory, symlinks resolved (it may not exist yet)."""
        return Path(os.path.realpath(self.directory))

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path``, with ``..`` and every symlink resolved, is a file inside the directory."""
        real = Path(os.path.realpath(path))
        root = self.root
        return real != root and root in real.parents and real.is_file()

    def admit(self, media: Media) -> Media:
        """The item ready to send: bytes written here, a path checked, ``size`` set; or ``refused``.

        Blocking file I/O: call it in a thread (``asyncio.to_thread``).
        A relative path is taken relative to the directory.
        """
        if media.refused:
            return media
        if media.url is not None:
            return media
        if media.data is not None:
            return self._write(media)
        assert media.path is not None
        path = Path(media.path).expanduser()
        if not path.is_absolute():
            path = self.directory / path
        if not self.contains(path):
            why = MISSING if self._inside_but_missing(path) else OUTSIDE
            log.warning("media %r refused: %s (media.directory is %s)", media.filename, why, self.directory)
            return replace(media, path=None, refused=why)
        real = Path(os.path.realpath(path))
        return replace(media, path=str(real), size=real.stat().st_size)

    def _inside_but_missing(self, path: Path) -> bool:
        real = Path(os.path.realpath(path))
        return self.root in real.parents and not real.exists()

    def _write(self, media: Media) -> Media:
        """Write an item's bytes to a new file named ``<random>-<filename>`` (never overwrites)."""
        assert media.data is not None
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        name = f"{secrets.token_hex(8)}-{media.filename}"
        target = self.root / name
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(media.data)
        self.prune_if_due()
        return replace(media, data=None, path=str(target), size=len(media.data))

    def prune_if_due(self) -> None:
        """Sweep out files older than ``keep``, at most once per :data:`PRUNE_EVERY` (after each new file)."""
        now = time.time()
        if self.keep and now - _last_prune.get(str(self.root), float("-inf")) >= PRUNE_EVERY:
            _last_prune[str(self.root)] = now
            self.prune(now - self.keep)

    def prune(self, older_than: float) -> int:
        """Remove the files this gateway wrote that were last changed before ``older_than`` (epoch seconds)."""
        removed = 0
        try:
            entries = list(os.scandir(self.root))
        except OSError:
            return 0
        for entry in entries:
            try:
                if _OURS.match(entry.name) and entry.is_file(follow_symlinks=False) \
                        and entry.stat(follow_symlinks=False).st_mtime < older_than:
                    os.unlink(entry.path)
                    removed += 1
            except OSError:
                continue  # gone already, or not ours to remove
        if removed:
            log.info("removed %d media file(s) older than media.keep_days from %s", removed, self.directory)
        return removed
