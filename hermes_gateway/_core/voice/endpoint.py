"""An ``AsyncOpenAI`` client for one ``voice.*`` endpoint: the SDK's audio API, with the endpoint's key and timeout."""

from __future__ import annotations

from typing import Any

from ..config import VoiceEndpoint


def client_for(endpoint: VoiceEndpoint) -> Any:
    """A client for ``endpoint`` (a local server without a key gets a placeholder: the SDK insists on one)."""
    from openai import AsyncOpenAI

    return AsyncOpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key or "not-needed",
                       timeout=endpoint.timeout, max_retries=1)


def failure(exc: BaseException) -> str:
    """One line for the log about a failed call: the status and type, never the request (it may carry the key)."""
    status = getattr(exc, "status_code", None)
    return f"{type(exc).__name__}" + (f" (HTTP {status})" if status else "")
