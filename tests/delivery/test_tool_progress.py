"""``on_tool_progress``: a client that shows tool progress hears each call start and end; others cost nothing."""

from __future__ import annotations

from types import SimpleNamespace

from hermes_gateway._core.delivery.tool_progress import tell_tool_progress
from hermes_gateway._core.events import ToolCallFinished, ToolCallStarted
from hermes_gateway._core.platform import Platform, Stream

STREAM = Stream(Platform("p"), "c1")


def session_with(client: object) -> SimpleNamespace:
    return SimpleNamespace(hooks=SimpleNamespace(running_client=lambda: client), stream=STREAM)


class Shows:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    async def on_tool_progress(self, stream, name, *, done, ok=True, summary=""):
        self.calls.append((stream.chat_id, name, done, ok, summary))


async def test_a_client_hears_the_start_and_the_end_with_its_summary():
    client = Shows()
    await tell_tool_progress(session_with(client), ToolCallStarted("call1", "qr_code"))
    await tell_tool_progress(session_with(client), ToolCallFinished("call1", "qr_code", "{}", "saved qr.png", ok=False))
    assert client.calls == [("c1", "qr_code", False, True, ""), ("c1", "qr_code", True, False, "saved qr.png")]


async def test_no_client_or_a_failing_one_costs_nothing():
    class Fails:
        async def on_tool_progress(self, *a, **kw):
            raise RuntimeError("the screen is gone")

    for client in (None, object(), Fails()):
        await tell_tool_progress(session_with(client), ToolCallStarted("call1", "qr_code"))  # no exception
