"""The seam itself: both transports offer the one interface, and no production code reaches into the SDK's privates."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import hermes_gateway
from hermes_gateway._core.agent.transport import TRANSPORTS, ChunkStream, UpstreamTransport
from hermes_gateway._core.agent.transport_fast import FastTransport
from hermes_gateway._core.agent.transport_sdk import SdkChunks, SdkTransport
from hermes_gateway._core.agent.sse import SSEPayloads

PACKAGE = Path(hermes_gateway.__file__).parent
#: The SDK's private methods the fast path used to call; a module calling any of them is reaching inside.
SDK_PRIVATE_METHODS = {"_should_retry", "_make_status_error_from_response", "_make_status_error",
                       "_calculate_retry_timeout", "_parse_retry_after_header", "_build_headers", "_auth_headers",
                       "_process_response_data", "_make_sse_decoder"}


def private_sdk_uses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "openai":
            found += [f"from {node.module} import" for part in node.module.split(".")[1:] if part.startswith("_")]
            found += [f"from {node.module} import {a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names
                      if a.name.split(".")[0] == "openai" and any(p.startswith("_") for p in a.name.split(".")[1:])]
        elif isinstance(node, ast.Attribute):
            if node.attr in SDK_PRIVATE_METHODS:
                found.append(f".{node.attr}")
            elif isinstance(node.value, ast.Name) and node.value.id == "openai" and node.attr.startswith("_"):
                found.append(f"openai.{node.attr}")
    return [f"{path}: {use}" for use in found]


def test_no_production_module_uses_a_private_name_of_the_openai_sdk() -> None:
    uses = [use for path in sorted(PACKAGE.rglob("*.py")) for use in private_sdk_uses(path)]
    assert uses == []


def test_the_check_sees_what_it_looks_for(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import openai\nfrom openai._constants import RAW_RESPONSE_HEADER\n"
                      "import openai._vendor.httpx_aiohttp\nclient._should_retry(r)\nopenai._base_client\n")
    assert len(private_sdk_uses(sample)) == 4


@pytest.mark.parametrize("transport,stream", [(FastTransport, SSEPayloads), (SdkTransport, SdkChunks)])
def test_each_transport_offers_the_interface(transport: type, stream: type) -> None:
    assert transport.kind in TRANSPORTS
    for name in ("open_stream", "call", "aclose"):
        wanted = inspect.signature(getattr(UpstreamTransport, name))
        offered = inspect.signature(getattr(transport, name))
        assert list(offered.parameters) == list(wanted.parameters), name
        assert inspect.iscoroutinefunction(getattr(transport, name)), name
    for name in ("next", "aclose"):
        assert inspect.iscoroutinefunction(getattr(stream, name)), name
    assert "content_type" in dir(stream) or "content_type" in getattr(stream, "__slots__", ())
    assert hasattr(ChunkStream, "content_type")
