"""Bearer keys and the refusal to serve a public address without them."""

import pytest

from hermes_gateway._core.api_server.auth import check_authorization, check_bind_safety, key_matches
from hermes_gateway._core.config import ApiServerConfig
from hermes_gateway._core.errors import ConfigError
from hermes_gateway._core.http.errors import ApiError
from hermes_gateway._core.http.guards import is_loopback

KEYS = (b"sk-first", b"sk-second")


def test_any_configured_key_matches_and_nothing_else():
    assert key_matches("sk-second", KEYS)
    assert not key_matches("sk-secon", KEYS)
    assert not key_matches("", KEYS)


@pytest.mark.parametrize("header", [None, "", "sk-first", "Basic sk-first", "Bearer ", "Bearer sk-wrong"])
def test_missing_malformed_or_wrong_keys_get_401_without_echoing_the_key(header):
    with pytest.raises(ApiError) as info:
        check_authorization(header, KEYS)
    assert info.value.status == 401
    assert info.value.code == "invalid_api_key"
    assert "sk-" not in info.value.message


def test_right_key_passes_and_no_keys_means_open():
    check_authorization("Bearer sk-first", KEYS)
    check_authorization("bearer sk-second", KEYS)
    check_authorization(None, ())


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                            ("127.5.0.1", True), ("0.0.0.0", False), ("::", False),
                                            ("", False), ("example.org", False), ("192.168.1.4", False)])
def test_loopback_detection(host, loopback):
    assert is_loopback(host) is loopback


def test_public_host_without_keys_is_refused_with_a_one_line_reason():
    with pytest.raises(ConfigError) as info:
        check_bind_safety(ApiServerConfig(host="0.0.0.0"), "config.yaml")
    assert "api_server.api_keys" in str(info.value) and "allow_unauthenticated" in str(info.value)
    assert "\n" not in str(info.value)


def test_public_host_is_allowed_with_keys_or_explicit_opt_out():
    check_bind_safety(ApiServerConfig(host="0.0.0.0", api_keys=("k",)), "c")
    check_bind_safety(ApiServerConfig(host="0.0.0.0", allow_unauthenticated=True), "c")
    check_bind_safety(ApiServerConfig(host="127.0.0.1"), "c")
