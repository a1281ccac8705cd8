"""``hermes-gateway run --workers 2`` with Telegram: worker 0 polls and answers, and webhook mode is refused
in one line (only worker 0 would have the route) unless the workers are replicas (``coordination.url``): then
every worker serves the webhook and each message is still answered once."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys

import yaml

from telegram_test_support import TOKEN, eventually


def write_config(tmp_path, base_url, **telegram):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "model": {"demo": {"tokens_per_second": 0}},
        "api_server": {"port": 0},
        "store": {"path": str(tmp_path / "state.db")},
        "conversation": {"shutdown_grace": 1},
        "streaming": {"telegram": True},
        "platforms": {"telegram": {"enabled": True, "token": "${TELEGRAM_TOKEN}", "base_url": base_url,
                                   "poll_timeout": 2, **telegram}},
    }))
    return path


async def start(path):
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN}
    env.pop("HERMES_CONFIG", None)
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_gateway", "run", "--workers", "2", "--config", str(path), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def test_two_workers_answer_telegram_once(api, tmp_path):
    process = await start(write_config(tmp_path, api.base_url))
    try:
        banner = await asyncio.wait_for(process.stdout.readline(), 60)
        assert b"2 workers" in banner and b"platforms: telegram" in banner, banner
        await api.push_message(42, "echo: one poller")
        await eventually(lambda: api.screen(42) == ["one poller"], lambda: api.chat(42).messages)
        await asyncio.sleep(1)  # a second poller would have answered again by now
        assert api.screen(42) == ["one poller"]
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err
    assert b"stopped" in out


async def test_webhook_mode_with_two_workers_is_refused_in_one_line(api, tmp_path):
    path = write_config(tmp_path, api.base_url, mode="webhook", webhook_url="https://bot.example.com/webhooks/telegram",
                        webhook_secret="s3cret-0123456789")
    process = await start(path)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 1
    assert err.decode().strip().splitlines() == [
        "hermes-gateway: cannot start: api_server.workers is 2, but platform telegram receives by webhook, which "
        "only worker 0 serves: set coordination.url (every worker then runs as a replica), use the platform's "
        "polling/socket mode, or api_server.workers: 1"]


SECRET = "workers-Webhook_secret-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_as_replicas_every_worker_takes_the_webhook_and_each_message_is_answered_once(api, tmp_path):
    """With coordination.url the workers are replicas: whichever worker the kernel hands a webhook serves it
    (no 404 to retry), dedupe and leases are shared, and each message is answered exactly once."""
    from hermes_gateway.testing.redis import RedisServer

    redis_server = RedisServer().start()
    port = free_port()  # the webhook URL names the port before the gateway starts (as the replica tests do)
    path = write_config(tmp_path, api.base_url, mode="webhook", webhook_url=f"http://127.0.0.1:{port}/webhooks/telegram",
                        webhook_secret=SECRET)
    data = yaml.safe_load(path.read_text())
    data["api_server"]["port"] = port
    data["coordination"] = {"url": redis_server.url}
    path.write_text(yaml.safe_dump(data))
    process = await start(path)
    try:
        banner = await asyncio.wait_for(process.stdout.readline(), 60)
        assert b"2 workers" in banner and b"platforms: telegram" in banner, (banner, await process.stderr.read(3000))
        chats = range(100, 110)
        for chat in chats:  # each delivery is a new connection: the kernel spreads them over both workers
            await api.push_message(chat, f"echo: hello {chat}")
        await eventually(lambda: all(api.screen(chat) == [f"hello {chat}"] for chat in chats),
                         lambda: {chat: api.screen(chat) for chat in chats})
        await asyncio.sleep(1)  # a second answer would have come by now
        assert all(api.screen(chat) == [f"hello {chat}"] for chat in chats)
        assert [status for _, status in api.webhook_deliveries] == [200] * len(chats)  # none refused, none retried
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        redis_server.stop()
    assert process.returncode == 0, err
