"""One root for every exception the gateway defines: ``except HermesError`` catches what it raises on purpose."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import hermes_gateway
from hermes_gateway import ConfigError, DeliveryError, HermesError, RateLimited, StartError


def every_module() -> list[str]:
    """Every module of the package, except ``__main__`` (importing it runs the command line)."""
    return [info.name for info in pkgutil.walk_packages(hermes_gateway.__path__, "hermes_gateway.")
            if not info.name.endswith("__main__")]


def exceptions_defined_in(module_name: str) -> list[type[BaseException]]:
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:  # an optional dependency (uvloop, psycopg) is missing here: nothing to inspect
        pytest.skip(f"{module_name}: {exc}")
    return [value for value in vars(module).values()
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module_name]


def test_every_exception_class_of_the_gateway_derives_from_hermes_error():
    found = {f"{cls.__module__}.{cls.__qualname__}": cls for name in every_module()
             for cls in exceptions_defined_in(name)}
    assert len(found) >= 20, sorted(found)  # the walk reached the agent, store, API server, CLI and kit
    strays = sorted(name for name, cls in found.items() if not issubclass(cls, HermesError))
    assert strays == [], f"not under HermesError: {strays}"


def test_the_public_errors_share_the_root_and_keep_their_own_bases():
    assert all(issubclass(cls, HermesError) for cls in (ConfigError, DeliveryError, RateLimited, StartError))
    assert issubclass(RateLimited, DeliveryError)
    from hermes_gateway._core.builtin.tools import CalculationError
    from hermes_gateway._core.platform_settings import SettingsError

    assert issubclass(CalculationError, ValueError) and issubclass(SettingsError, ValueError)


def test_start_error_is_public_and_lives_with_the_other_errors():
    from hermes_gateway._core import errors

    assert "HermesError" in hermes_gateway.__all__ and "StartError" in hermes_gateway.__all__
    assert StartError is errors.StartError
