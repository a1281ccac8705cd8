"""The fast transport's headers are the installed openai SDK's own, computed without importing it.

The SDK is the oracle here: its ``AsyncOpenAI`` client's ``auth_headers`` and ``default_headers``, and its
platform functions under the platforms this machine is not (patched ``platform`` answers), so an SDK release
that changes what it sends fails this file rather than drifting from what the fast transport sends.
"""

from __future__ import annotations

import asyncio
import platform
import ssl
from typing import Any

import openai
import pytest
from openai import _base_client

from hermes_gateway._core.agent import sdk_headers as ours


def sdk_sent(**client: Any) -> dict[str, str]:
    """What the SDK's own client sends (omitted headers dropped), read on a running asyncio loop."""
    async def read() -> dict[str, str]:
        made = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", **client)
        merged = {**made.auth_headers, **made.default_headers}
        await made.close()
        return {name: value for name, value in merged.items() if isinstance(value, str)}
    return asyncio.run(read())


def test_the_headers_are_the_sdks_with_and_without_organization_and_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_ORG_ID", raising=False)
    monkeypatch.delenv("OPENAI_PROJECT_ID", raising=False)
    assert ours.sdk_headers("sk-one") == sdk_sent(api_key="sk-one")
    assert ours.sdk_headers("sk-one")["User-Agent"] == f"AsyncOpenAI/Python {openai.__version__}"
    monkeypatch.setenv("OPENAI_ORG_ID", "org-42")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_7")
    assert ours.sdk_headers("sk-two") == sdk_sent(api_key="sk-two")
    assert ours.sdk_headers("sk-two")["OpenAI-Organization"] == "org-42"


PLATFORMS = [  # (platform.system(), platform.platform(), platform.machine())
    ("Linux", "Linux-6.1.0-x86_64-with-glibc2.36", "x86_64"),
    ("Darwin", "macOS-14.2-arm64-arm-64bit", "arm64"),
    ("Darwin", "Darwin-21.6.0-iPhone12,1-64bit", "iPhone12,1"),
    ("Windows", "Windows-10-10.0.19041-SP0", "AMD64"),
    ("Linux", "Linux-5.10.81-android12-9-00001-aarch64-with-libc", "aarch64"),
    ("FreeBSD", "FreeBSD-13.2-RELEASE-amd64-64bit-ELF", "amd64"),
    ("OpenBSD", "OpenBSD-7.4-amd64-64bit-ELF", "arm"),
    ("SunOS", "SunOS-5.11-i86pc-i386-64bit-ELF", "i86pc"),
    ("", "", ""),
]


@pytest.mark.parametrize("system,name,machine", PLATFORMS)
def test_os_and_architecture_are_named_as_the_sdk_names_them(monkeypatch: pytest.MonkeyPatch, system: str,
                                                           name: str, machine: str) -> None:
    monkeypatch.setattr(platform, "system", lambda: system)
    monkeypatch.setattr(platform, "platform", lambda *args, **kwargs: name)
    monkeypatch.setattr(platform, "machine", lambda: machine)
    assert ours._os_name() == str(_base_client.get_platform())
    assert ours._arch() == str(_base_client.get_architecture())


def test_a_platform_lookup_that_fails_is_unknown_as_in_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> str:
        raise OSError("no uname here")

    monkeypatch.setattr(platform, "system", broken)
    monkeypatch.setattr(platform, "machine", broken)
    assert (ours._os_name(), ours._arch()) == (str(_base_client.get_platform()),
                                              str(_base_client.get_architecture())) == ("Unknown", "unknown")


def test_the_tls_context_verifies_as_the_sdks_client_does() -> None:
    context = ours.sdk_ssl_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    client = openai.DefaultAsyncHttpxClient()
    try:
        sdks = client._transport._pool._ssl_context  # the SDK's default client (a test may look inside it)
    except AttributeError:
        pytest.skip("this SDK's HTTP client keeps its TLS context elsewhere")
    finally:
        asyncio.run(client.aclose())
    assert context.cert_store_stats() == sdks.cert_store_stats()
