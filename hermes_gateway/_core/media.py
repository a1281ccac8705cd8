"""Media in replies: what a tool returns besides text, and what a platform can send.

A tool returns :class:`Media` items (a file, a URL or bytes) inside a
:class:`~hermes_gateway._core.tools.ToolResult`. The model only ever sees a
one-line stand-in (:meth:`Media.stand_in`); the person gets the real
thing, sent by the platform plugin's ``on_media`` hook as a native
attachment. A platform says what it can send with :class:`MediaLimits`;
whatever it cannot send (no ``MediaLimits``, a kind it does not take, a
file over its limit, a URL it cannot pass on) becomes one line of text
(:meth:`Media.fallback_line`), never nothing.

These are plain values with no I/O except :meth:`Media.read`: keeping files
inside the configured media directory is :mod:`hermes_gateway._core.media_dir`'s job.
"""

from __future__ import annotations

import mimetypes
import posixpath
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Mapping
from urllib.parse import urlsplit

MediaKind = Literal["image", "video", "audio", "document"]
MEDIA_KINDS: tuple[MediaKind, ...] = ("image", "video", "audio", "document")

#: The mime type of an item whose type cannot be told from its name.
DEFAULT_MIME = "application/octet-stream"


def kind_of(mime: str) -> MediaKind:
    """``image`` / ``video`` / ``audio`` from the mime type's major part; anything else is a ``document``."""
    major = mime.split("/", 1)[0].strip().lower()
    return major if major in ("image", "video", "audio") else "document"  # type: ignore[return-value]


@dataclass(frozen=True)
class Media:
    """One attachment: exactly one of ``path``, ``url`` or ``data`` (bytes).

    ``mime`` defaults to a guess from the file name (``filename``, else the
    path's or URL's last part), else ``application/octet-stream``;
    ``filename`` defaults to the path's or URL's last part (``file`` plus an
    extension for bytes). ``kind`` defaults to what the mime type says
    (:func:`kind_of`); a tool may set ``kind="document"`` to send an image as
    a file. ``caption`` is shown with the attachment (cut to the platform's
    ``caption_length``).

    ``voice``: an ``audio/ogg`` (OGG/Opus) item meant as a voice note — a
    spoken reply — which a platform sends as one where it has them
    (Telegram ``sendVoice``, WhatsApp audio); elsewhere an audio file.

    Set by the core, not by tools: ``size`` (bytes, once the file is in the
    media directory) and ``refused`` (why the item cannot be sent at all,
    e.g. a path outside the media directory; such an item has no source and
    is only ever shown as its fallback line).
    """

    path: str | None = None
    url: str | None = None
    data: bytes | None = field(default=None, repr=False)
    mime: str = ""
    filename: str = ""
    caption: str = ""
    kind: MediaKind | None = None  # type: ignore[assignment]
    size: int | None = None
    refused: str | None = None
    voice: bool = False

    def __post_init__(self) -> None:
        sources = [s for s in (self.path, self.url, self.data) if s is not None]
        if self.refused is None and len(sources) != 1:
            raise ValueError("Media takes exactly one of path, url or data (bytes)")
        if self.path is not None and not isinstance(self.path, (str, Path)):
            raise TypeError(f"Media.path must be a str or Path, got {type(self.path).__name__}")
        if isinstance(self.path, Path):
            object.__setattr__(self, "path", str(self.path))
        if self.url is not None:
            if not isinstance(self.url, str):
                raise TypeError(f"Media.url must be a str, got {type(self.url).__name__}")
            scheme = urlsplit(self.url).scheme.lower()
            if scheme not in ("http", "https"):
                raise ValueError(f"Media.url must be an http(s) URL, got scheme {scheme or 'none'!r}")
        if self.data is not None and not isinstance(self.data, (bytes, bytearray, memoryview)):
            raise TypeError(f"Media.data must be bytes, got {type(self.data).__name__}")
        if self.data is not None and not isinstance(self.data, bytes):
            object.__setattr__(self, "data", bytes(self.data))
        filename = self.filename or _last_part(self.path, self.url)
        mime = (self.mime or "").strip().lower()
        if not mime:
            guessed = mimetypes.guess_type(filename or "x")[0] if filename else None
            mime = guessed or DEFAULT_MIME
        if not filename:
            filename = "file" + (mimetypes.guess_extension(mime) or ".bin") if mime != DEFAULT_MIME else "file.bin"
        object.__setattr__(self, "mime", mime)
        object.__setattr__(self, "filename", _safe_filename(filename))
        kind = self.kind or kind_of(mime)
        if kind not in MEDIA_KINDS:
            raise ValueError(f"Media.kind must be one of {', '.join(MEDIA_KINDS)}, got {kind!r}")
        object.__setattr__(self, "kind", kind)
        if not isinstance(self.caption, str):
            raise TypeError("Media.caption must be a str")

    def stand_in(self) -> str:
        """What the model reads instead of the item: ``[image: qr.png attached]``."""
        if self.refused:
            return f"[{self.kind}: {self.filename} could not be attached: {self.refused}]"
        if self.url is not None and self.path is None:
            return f"[{self.kind}: {self.url} attached]"
        return f"[{self.kind}: {self.filename} attached]"

    def fallback_line(self, why: str = "") -> str:
        """The one line a person sees when this item cannot be sent as an attachment.

        A URL is shown as the link; a file by its name (and caption). ``why``
        (e.g. "too large for Telegram") is added in parentheses.
        """
        label = self.caption.strip().splitlines()[0] if self.caption.strip() else ""
        reason = why or self.refused or ""
        if self.url is not None and self.path is None:
            line = f"🔗 {label}: {self.url}" if label else f"🔗 {self.url}"
        else:
            line = f"📎 {self.filename}" + (f" — {label}" if label else "")
        return line + (f" ({reason})" if reason else "")

    def read(self) -> bytes:
        """The item's bytes (``data``, or the file at ``path``). Blocking: call it in a thread for big files."""
        if self.data is not None:
            return self.data
        if self.path is not None:
            return Path(self.path).read_bytes()
        raise ValueError("a URL item has no bytes here; send the URL, or fetch it yourself")

    def with_caption(self, caption: str) -> "Media":
        return replace(self, caption=caption)


@dataclass(frozen=True)
class MediaLimits:
    """What a platform's ``on_media`` hook can send, declared in ``Platform(media=...)``.

    ``kinds``: the kinds it sends natively. ``max_bytes``: per kind (a
    ``"default"`` entry covers kinds not listed; no entry = no limit). An
    image over the image limit but within the document limit is handed to
    ``on_media`` with ``kind="document"`` (sent as a file). ``caption_length``:
    captions are cut to this (in the platform's ``length_unit``, ending in
    ``…``); 0 = the platform takes no captions (they are dropped).
    ``urls``: ``on_media`` accepts URL items (the platform fetches them, like
    Telegram's ``sendPhoto(photo=url)``); otherwise a URL item is shown as
    its link. Anything it cannot send becomes :meth:`Media.fallback_line`.
    """

    kinds: frozenset[str] = frozenset(MEDIA_KINDS)
    max_bytes: Mapping[str, int] = field(default_factory=dict)
    caption_length: int = 1024
    urls: bool = False

    def __post_init__(self) -> None:
        kinds = frozenset(self.kinds)
        unknown = sorted(kinds - set(MEDIA_KINDS))
        if unknown:
            raise ValueError(f"MediaLimits.kinds: unknown kind(s) {', '.join(unknown)}; "
                             f"known: {', '.join(MEDIA_KINDS)}")
        object.__setattr__(self, "kinds", kinds)
        for key, value in self.max_bytes.items():
            if key not in MEDIA_KINDS and key != "default":
                raise ValueError(f"MediaLimits.max_bytes: unknown kind {key!r}")
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"MediaLimits.max_bytes[{key!r}] must be a positive number of bytes")
        if self.caption_length < 0:
            raise ValueError("MediaLimits.caption_length must be >= 0")

    def limit_for(self, kind: str) -> int | None:
        """The largest item of ``kind`` the platform takes, in bytes (None: no limit declared)."""
        return self.max_bytes.get(kind, self.max_bytes.get("default"))


def _last_part(path: str | None, url: str | None) -> str:
    if path is not None:
        return Path(str(path)).name
    if url is not None:
        return posixpath.basename(urlsplit(url).path)
    return ""


def _safe_filename(name: str) -> str:
    """A file name with no directory part and no control characters (it is shown, and used on disk)."""
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable()).strip().lstrip(".")
    return name[:120] or "file"
