"""The core's voice tests' helpers: a gateway on the reference platform, a person sending it a voice note.

The audio API server and the audio itself come from the public test kit
(:mod:`hermes_gateway.testing.audio`), the one implementation the plugins'
voice tests use too.
"""

from __future__ import annotations

from typing import Any

from hermes_gateway import Attachment, Incoming, MediaLimits
from hermes_gateway.testing import ReferencePlatform
from hermes_gateway.testing.audio import AudioApiServer


def gateway_on(ref: Any, media_dir: Any, **sections: Any) -> Any:
    """A gateway on the reference platform with the demo model (fast), plus ``sections``.

    Hermetic: its media directory and its conversation store are in ``media_dir`` (a test's tmp_path).
    """
    from hermes_gateway._core.config import parse_config
    from hermes_gateway._core.gateway import Gateway
    from hermes_gateway._core.plugins import make_plugins

    data: dict[str, Any] = {"model": {"demo": {"tokens_per_second": 0}},
                            "platforms": {"reference": {"enabled": True}},
                            "media": {"directory": str(media_dir)}, "store": {"path": f"{media_dir}/state.db"}}
    data.update(sections)
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref])
    return Gateway(parse_config(data, env={}), plugins)


class Served:
    """An attachment's bytes as the platform would stream them, counting downloads (to assert none happened)."""

    def __init__(self, data: bytes, chunk: int = 4096) -> None:
        self.data = data
        self.chunk = chunk
        self.downloads = 0

    async def fetch(self):
        self.downloads += 1
        for i in range(0, len(self.data), self.chunk):
            yield self.data[i:i + self.chunk]


# -- a person in chat 1 of the reference platform ----------------------------------------------------------

def shown(ref: Any) -> str:
    """The chat's text, top to bottom, as the person reads it."""
    return "\n\n".join(ref.chat("1").screen)


def reference() -> ReferencePlatform:
    """The reference platform, taking attachments of every kind (a voice note is an audio attachment)."""
    return ReferencePlatform("reference", media=MediaLimits())


def said(gateway: Any, *attachments: Any, text: str = "", update: str = "u1", sender: str = "person-1"):
    """Person-1 writes into chat 1; returns the future of the reply (not awaited: like a webhook)."""
    return gateway.receive(Incoming("reference", "1", text, update_id=update, message_id=update, sender_id=sender,
                                    attachments=attachments))


def voice(served: Served, **kw: Any) -> Attachment:
    """A voice note the platform streams from ``served``."""
    kw.setdefault("size", len(served.data))
    return Attachment("voice", served.fetch, mime="audio/ogg", filename="file_7.oga", **kw)


def transcription(server: AudioApiServer, **more: Any) -> dict:
    """The ``voice`` section: transcription by ``server``, plus ``more`` keys."""
    return {"transcription": {"base_url": server.base_url, "model": "whisper-1"}, **more}
