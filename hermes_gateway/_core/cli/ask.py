"""``hermes-gateway ask``: one turn, streamed into one chat through one platform plugin.

Handy to see a platform's pacing with your own eyes, and to script a
message into a chat. With the built-in ``reference`` platform the chat's
final screen is printed; ``--show-calls`` prints every platform call as it
happens, on every platform: the reference platform's own log (how it
answered each call, throttled ones too), any other platform's calls as the
core makes them (the hook, when, and how the plugin answered: ok, a 429, an
error).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from ..errors import RateLimited

from ..conversation import reply_in_chat
from ..gateway import Gateway
from .loading import load_checked, warn
from .target import platform_problem, reference_platform


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--platform", required=True, help="platform name (see `hermes-gateway plugins`)")
    parser.add_argument("--chat", required=True, help="chat id to answer in")
    parser.add_argument("--chat-kind", default=None, help="kind of chat for the rate budget (private, group, ...)")
    parser.add_argument("--thread", default=None, help="thread id, where the platform has threads")
    parser.add_argument("--config", help="config file (default: $HERMES_CONFIG, ./config.yaml, ~/.hermes/config.yaml)")
    parser.add_argument("--show-calls", action="store_true", help="print each platform call to stderr")
    parser.add_argument("message", nargs="+", help="the message to answer")


def run(args: argparse.Namespace) -> int:
    config, plugins = load_checked(args.config)
    problem = platform_problem(config, plugins, args.platform)
    if problem is not None:
        print(f"hermes-gateway: {problem}", file=sys.stderr)
        return 2
    reference = reference_platform(plugins, args.platform)
    warn(config, plugins, [args.platform])
    if reference is not None and args.show_calls:
        reference.on_call = lambda chat, call: print(
            f"[{call.kind} {call.outcome}] {call.text!r}", file=sys.stderr, flush=True)
    message = " ".join(args.message)

    async def turn():
        # the plugins' startup hooks run (a platform plugin reads its token there); nothing listens or polls
        async with Gateway(config, plugins, serve=False) as gateway:
            if reference is None and args.show_calls:
                show_calls(gateway.delivery.hooks(args.platform))
            return await reply_in_chat(config, gateway.delivery, args.platform, args.chat, message,
                                       thread_id=args.thread, chat_kind=args.chat_kind, agent=gateway.agent)

    report, end = asyncio.run(turn())
    if reference is not None:
        screen = reference.chat(args.chat).screen
        print("\n".join(screen) if len(screen) < 2 else "\n---\n".join(screen))
    if end is not None and end.error:
        print(f"hermes-gateway: the model failed: {end.error}", file=sys.stderr)
        return 1
    if not report.delivered:
        print(f"hermes-gateway: delivery to {args.platform} chat {args.chat} failed: {report.error}", file=sys.stderr)
        if reference is None and report.text:
            print(report.text)  # the reply is never lost: it goes to stdout instead
        return 1
    return 0



def show_calls(hooks: Any) -> None:
    """Print each call the core makes through ``hooks`` (a platform's ``PlatformHooks``) to stderr, as it ends:
    ``[+0.52s on_delta ok] 'text'``, ``[+1.10s on_stream_end 429 retry after 3s] ...``. Any platform's
    plugin is reached this way, so a third party's prints as much as a built-in one."""
    call = hooks.call
    loop = asyncio.get_running_loop()
    started = loop.time()

    def shown(kwargs: dict[str, Any]) -> str:
        if "text" in kwargs:
            return repr(kwargs["text"])
        media = kwargs.get("media")
        return repr(getattr(media, "filename", None) or getattr(media, "path", None) or "") if media else ""

    async def printed(name: str, **kwargs: Any) -> Any:
        try:
            result = await call(name, **kwargs)
        except RateLimited as exc:
            outcome = f"429 retry after {exc.retry_after:g}s"
            raise
        except Exception as exc:
            outcome = f"failed: {type(exc).__name__}: {exc}"
            raise
        else:
            outcome = "ok"
            return result
        finally:
            target = getattr(kwargs.get("message"), "message_id", None)
            where = f" message {target}" if target else ""
            print(f"[+{loop.time() - started:.2f}s {name}{where} {outcome}] {shown(kwargs)}".rstrip(),
                  file=sys.stderr, flush=True)

    hooks.call = printed
