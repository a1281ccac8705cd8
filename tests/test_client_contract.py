"""One platform contract: a client's stream methods are the stream hooks, checked against their specs at start;
the old hook style still loads, with a DeprecationWarning naming the move."""

from __future__ import annotations

import warnings

import pytest

from hermes_gateway import MessageRef, Platform, PlatformClient, RateBudget, StartError, hookimpl
from hermes_gateway._core.config import parse_config
from hermes_gateway._core.gateway import Gateway
from hermes_gateway._core.plugins import make_plugins
from hermes_gateway.testing import ReferencePlatform

FAST = {"default": RateBudget(rate=50.0, burst=10)}


class Page:
    """What a person sees in one chat of the test platforms below."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def write(self, message: MessageRef | None, text: str, chat_id: str) -> MessageRef:
        if message is None:
            self.messages.append(text)
            return MessageRef(chat_id, str(len(self.messages) - 1))
        self.messages[int(message.message_id)] = text
        return message


def client_style(page: Page, *, misspelt: bool = False):
    """A third-party plugin written in the client style (today's surface)."""

    class Client(PlatformClient):
        def supports_edit(self, stream):
            return True

        async def on_delta(self, stream, message, text):
            return page.write(message, text, stream.chat_id)

        if misspelt:
            async def on_stream_end(self, stream, msg, text):  # `msg`: the spec says `message`
                return page.write(msg, text, stream.chat_id)
        else:
            async def on_stream_end(self, stream, message, text):
                return page.write(message, text, stream.chat_id)

    class Plugin:
        __name__ = "pages"

        @hookimpl
        def register_platforms(self, register):
            register(Platform(name="pages", budgets=FAST, client=Client))

    return Plugin()


def hook_style(page: Page):
    """A third-party plugin written in the hook style (stream hooks on the plugin object)."""

    class Plugin:
        __name__ = "hooked"

        @hookimpl
        def register_platforms(self, register):
            register(Platform(name="hooked", budgets=FAST))

        @hookimpl
        def supports_edit(self, stream):
            return True

        @hookimpl
        async def on_delta(self, stream, message, text):
            return page.write(message, text, stream.chat_id)

        @hookimpl
        async def on_stream_end(self, stream, message, text):
            return page.write(message, text, stream.chat_id)

    return Plugin()


def demo_config(platform: str):
    return parse_config({"model": {"demo": {"tokens_per_second": 0}}, "platforms": {platform: {}},
                         "streaming": {"enabled": True}, "api_server": {"enabled": False}}, env={})


async def test_a_client_style_plugin_answers_and_loads_without_a_warning():
    page = Page()
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        plugins = make_plugins(builtins=(), load_entry_points=False, extra=[client_style(page)])
    async with Gateway(demo_config("pages"), plugins) as gateway:
        await gateway.handle_incoming("pages", "1", "echo: hello there")
    assert page.messages == ["hello there"]


async def test_a_hook_style_plugin_still_answers_with_a_deprecation_warning():
    page = Page()
    with pytest.warns(DeprecationWarning, match=r"plugin hooked implements on_delta, on_stream_end, supports_edit as pluggy hooks: write "
                                                r"them as methods of its platform's client"):
        plugins = make_plugins(builtins=(), load_entry_points=False, extra=[hook_style(page)])
    async with Gateway(demo_config("hooked"), plugins) as gateway:
        await gateway.handle_incoming("hooked", "1", "echo: still here")
    assert page.messages == ["still here"]


async def test_a_client_method_with_a_misspelt_argument_stops_the_start_in_one_line():
    plugins = make_plugins(builtins=(), load_entry_points=False, extra=[client_style(Page(), misspelt=True)])
    with pytest.raises(StartError) as caught:
        async with Gateway(demo_config("pages"), plugins):
            pass
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("platform pages (plugin pages): its client's stream method does not match the hook "
                              "spec")
    assert "on_stream_end" in message and "{'msg'}" in message


async def test_the_reference_platform_is_written_in_the_client_style():
    ref = ReferencePlatform(budgets=FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        plugins = make_plugins(builtins=(), load_entry_points=False, extra=[ref])
    async with Gateway(demo_config("reference"), plugins):
        await ref.say("7", "echo: by the client")
    assert ref.chat("7").screen == ["by the client"]
    assert not [name for name in ("on_delta", "on_stream_end", "on_media", "supports_edit", "on_stream_start")
                if hasattr(getattr(ref, name), "hermes_gateway_impl")], "no stream method is a pluggy hook"
