"""The headers and TLS context of the openai SDK's ``AsyncOpenAI``, without importing the SDK.

Why a copy of what the SDK computes: the fast transport (:mod:`.stream_request`) sends exactly the request
the SDK would, headers included, and used to make an SDK client just to read them. Importing the SDK is
the biggest thing a gateway would load: ~47 MB resident and ~1 s of CPU (its ~1,000 pydantic models), in
every process that talks to a real model, and an API server imported it before serving so that /health did
not stall (issue 39: idle memory ≤ 100 MB with the four platforms and the API server on was 112 MB with it).
What the SDK sends is small and stable: ``Authorization: Bearer``, ``Accept``, ``Content-Type``,
``User-Agent: AsyncOpenAI/Python <version>``, its platform headers (``X-Stainless-Lang``, ``-Package-Version``,
``-OS``, ``-Arch``, ``-Runtime``, ``-Runtime-Version``, written out below from ``openai._base_client``),
``X-Stainless-Async`` and the organization and project from ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID``.
``tests/agent/test_agent_sdk_headers.py`` compares every one with the installed SDK's own client, with and
without those variables, so an SDK release that changes them fails the suite instead of drifting.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
from functools import lru_cache
from typing import Any, Callable

#: The class the fast transport stands in for (its name is the SDK's ``User-Agent``).
SDK_CLIENT = "AsyncOpenAI"


@lru_cache(maxsize=None)
def sdk_version() -> str:
    """The installed ``openai`` distribution's version (read from its metadata: the package is not imported)."""
    try:
        return importlib.metadata.version("openai")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


#: The BSDs the SDK names, by ``platform.system()`` (or os-release ``ID``) in lower case.
_BSDS = {"freebsd": "FreeBSD", "openbsd": "OpenBSD"}


def _os_name() -> str:
    """``openai._base_client.get_platform``."""
    try:
        system = platform.system().lower()
        name = platform.platform().lower()
    except Exception:
        return "Unknown"
    if "iphone" in name or "ipad" in name:
        return "iOS"
    named = {"darwin": "MacOS", "windows": "Windows"}
    if system in named:
        return named[system]
    if "android" in name:
        return "Android"
    if system in _BSDS:
        return _BSDS[system]
    if system == "linux":
        try:
            distro = platform.freedesktop_os_release().get("ID", "").lower()
        except OSError:
            distro = ""
        return _BSDS.get(distro, "Linux")
    return f"Other:{name}" if name else "Unknown"


def _arch() -> str:
    """``openai._base_client.get_architecture``."""
    try:
        machine = platform.machine().lower()
    except Exception:
        return "unknown"
    if machine in ("arm64", "aarch64"):
        return "arm64"
    if machine == "arm":
        return "arm"
    if machine == "x86_64":
        return "x64"
    if sys.maxsize <= 2**32:
        return "x32"
    return f"other:{machine}" if machine else "unknown"


def _runtime(read: Callable[[], str]) -> str:
    try:
        return read()
    except Exception:
        return "unknown"


@lru_cache(maxsize=None)
def platform_headers() -> dict[str, str]:
    """``X-Stainless-*`` (the SDK caches them too: ``platform.platform()`` reads files; call it off the loop)."""
    return {
        "X-Stainless-Lang": "python",
        "X-Stainless-Package-Version": sdk_version(),
        "X-Stainless-OS": _os_name(),
        "X-Stainless-Arch": _arch(),
        "X-Stainless-Runtime": _runtime(platform.python_implementation),
        "X-Stainless-Runtime-Version": _runtime(platform.python_version),
    }


def sdk_headers(api_key: str) -> dict[str, str]:
    """What ``AsyncOpenAI(api_key=api_key, base_url=...)`` sends on every request, on an asyncio loop."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    headers.update({"Accept": "application/json", "Content-Type": "application/json",
                    "User-Agent": f"{SDK_CLIENT}/Python {sdk_version()}", **platform_headers(),
                    "X-Stainless-Async": "async:asyncio"})
    organization, project = os.environ.get("OPENAI_ORG_ID"), os.environ.get("OPENAI_PROJECT_ID")
    if organization is not None:
        headers["OpenAI-Organization"] = organization
    if project is not None:
        headers["OpenAI-Project"] = project
    return headers


def sdk_ssl_context() -> Any:
    """The TLS context the SDK's HTTP client verifies with (``httpx2.create_ssl_context()`` is
    ``httpcore2.default_ssl_context()``: ``SSL_CERT_FILE``/``SSL_CERT_DIR``, else the system's CAs), without
    importing the SDK or httpx2. Made for ``https`` endpoints only."""
    try:
        import httpcore2
    except ImportError:  # pragma: no cover - an SDK < 3 (on httpx)
        import httpx

        return httpx.create_ssl_context()
    return httpcore2.default_ssl_context()
