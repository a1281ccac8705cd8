"""The link registry behind /v1/media/{token}: unguessable tokens, expiry, and a bounded size."""

from __future__ import annotations

from hermes_gateway import Media
from hermes_gateway._core.api_server.media import MediaLinks
from hermes_gateway._core.config import MediaConfig


def links(tmp_path, **kw):
    now = [0.0]
    registry = MediaLinks(MediaConfig(directory=str(tmp_path), url_ttl=10), clock=lambda: now[0], **kw)
    return registry, now


def item(tmp_path, name="a.png") -> Media:
    (tmp_path / name).write_bytes(b"x")
    return Media(path=str(tmp_path / name))


def test_tokens_are_long_random_and_expire(tmp_path):
    registry, now = links(tmp_path)
    tokens = {registry.add(item(tmp_path)) for _ in range(100)}
    assert len(tokens) == 100 and all(len(t) == 43 for t in tokens)  # 256 bits each
    token = next(iter(tokens))
    assert registry.get(token).filename == "a.png"
    now[0] = 9.99
    assert registry.get(token) is not None
    now[0] = 10.0
    assert registry.get(token) is None and registry.get(token) is None


def test_malformed_tokens_are_not_looked_up(tmp_path):
    registry, _ = links(tmp_path)
    registry.add(item(tmp_path))
    for token in ("", "short", "../../etc/passwd", "A" * 44, "A" * 42 + "/"):
        assert registry.get(token) is None


def test_the_registry_keeps_at_most_max_links_dropping_the_oldest(tmp_path):
    registry, now = links(tmp_path, max_links=3)
    first = registry.add(item(tmp_path))
    later = [registry.add(item(tmp_path)) for _ in range(3)]
    assert registry.get(first) is None and all(registry.get(t) is not None for t in later)
    now[0] = 11
    registry.add(item(tmp_path))  # expired links are swept on the way
    assert len(registry._links) == 1
