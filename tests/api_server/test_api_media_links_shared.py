"""Media links with several workers: a link one worker made is served by another; nothing else passes."""

from __future__ import annotations

import base64
import json

import pytest

from hermes_gateway import Media
from hermes_gateway._core.api_server.media import MediaLinks
from hermes_gateway._core.config import MediaConfig

KEY = bytes(range(32))


def worker(tmp_path, now, key=KEY) -> MediaLinks:
    links = MediaLinks(MediaConfig(directory=str(tmp_path / "media"), url_ttl=10), clock=lambda: now[0])
    links.share(key)
    return links


def item(tmp_path, name="chart.png") -> Media:
    (tmp_path / "media").mkdir(exist_ok=True)
    (tmp_path / "media" / name).write_bytes(b"\x89PNG")
    return Media(path=str(tmp_path / "media" / name))


def test_a_link_made_by_one_worker_is_served_by_another_until_it_expires(tmp_path):
    now = [100.0]
    one, two = worker(tmp_path, now), worker(tmp_path, now)
    token = one.add(item(tmp_path))
    link = two.get(token)
    assert link is not None and link.filename == "chart.png" and link.mime == "image/png"
    assert link.path == str((tmp_path / "media" / "chart.png").resolve())
    assert str(tmp_path) not in base64.urlsafe_b64decode(token.split(".")[0] + "==").decode()  # relative only
    now[0] = 109.9
    assert two.get(token) is not None
    now[0] = 110.0
    assert two.get(token) is None


def test_another_key_a_changed_token_or_a_malformed_one_is_unknown(tmp_path):
    now = [0.0]
    token = worker(tmp_path, now).add(item(tmp_path))
    assert worker(tmp_path, now, key=bytes(32)).get(token) is None
    body, mac = token.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload[0] = "../../etc/passwd"  # a path of the client's choosing, with the old seal
    forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode() + "." + mac
    shared = worker(tmp_path, now)
    for bad in (forged, body + "." + mac[:-2] + "AA", body, "", "a.b", "../x.y", token + "x", "é.é"):
        assert shared.get(bad) is None, bad


def test_a_short_key_is_refused(tmp_path):
    with pytest.raises(ValueError):
        MediaLinks(MediaConfig(directory=str(tmp_path))).share(b"short")
