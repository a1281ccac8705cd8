"""A platform's ``platforms.<name>`` section, parsed by the core into the plugin's own settings dataclass.

A platform declares ``Platform(settings=MySettings, ...)`` where
``MySettings`` is a dataclass: each field is a key, its annotation the
expected type, its default the default (no default = required), and
:func:`secret` marks a field whose value must never be shown. The core
checks the types (``str``, ``int``, ``float``, ``bool``, ``X | None``,
``Literal[...]``, ``list[str]``, ``dict``), names unknown keys with a
did-you-mean, and turns every mistake into one line naming the file and
the key. ``${ENV}`` placeholders were already replaced when the file was
read. A field check the types cannot express goes in the dataclass's
``__post_init__``, raising :class:`SettingsError` with the key and what
was expected.

Why the core and not the plugin: four plugins each wrote their own parser
for this, and a hand-kept list of secret key names let new secrets print
in clear in ``hermes-gateway config``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Literal, Mapping, TypeVar, Union

from .config import did_you_mean
from .errors import ConfigError, HermesError
from .platform import CORE_KEYS
from .settings.numbers import NumberError, describe_range, parse_number

S = TypeVar("S")


_SECRET = "hermes_secret"
_HINT = "hermes_hint"
_RANGE = "hermes_range"


class SettingsError(HermesError, ValueError):
    """Raised by a settings dataclass's ``__post_init__``: ``key`` has a value the types allowed but the platform does not.

    The core reports it as one line: ``config.yaml: platforms.<name>.<key>: expected <expected>``.
    """

    def __init__(self, key: str, expected: str) -> None:
        super().__init__(f"{key}: expected {expected}")
        self.key = key
        self.expected = expected


def secret(default: Any = dataclasses.MISSING, *, hint: str | None = None) -> Any:
    """A settings field whose value is a secret: masked in ``hermes-gateway config``, scrubbed from logs, never in a repr.

    ``token: str = secret()`` (required) or ``webhook_secret: str | None = secret(None)``.
    ``hint``: what to write when the key is missing, e.g. ``'the bot token from @BotFather, e.g. token:
    "${TELEGRAM_TOKEN}"'`` (the one-line error then says it instead of the expected type).
    """
    metadata: dict[str, Any] = {_SECRET: True}
    if hint:
        metadata[_HINT] = hint
    return dataclasses.field(default=default, repr=False, metadata=metadata)


def setting(default: Any = dataclasses.MISSING, *, hint: str | None = None, minimum: float | None = None,
            maximum: float | None = None) -> Any:
    """A settings field with a ``hint`` for the one-line error when it is missing or has the wrong type, and,
    for an ``int`` or ``float`` field, its range: ``poll_timeout: int = setting(30, minimum=0, maximum=300)``.

    Every number of a platform's section should declare its range (a test walks them all): nan and the
    infinities are refused always, a number outside ``[minimum, maximum]`` in one line naming the range.
    """
    metadata: dict[str, Any] = {_RANGE: (minimum, maximum)}
    if hint:
        metadata[_HINT] = hint
    return dataclasses.field(default=default, metadata=metadata)


def number_fields(settings_type: type) -> dict[str, tuple[type, float | None, float | None]]:
    """Each ``int``/``float`` field of ``settings_type`` (``X | None`` too): its type and declared range.
    A field that also takes a string (``str | int``: an id YAML may read as a number) is no number."""
    hints = typing.get_type_hints(settings_type)
    out: dict[str, tuple[type, float | None, float | None]] = {}
    for f in dataclasses.fields(settings_type):
        options = typing.get_args(hints[f.name]) or (hints[f.name],)
        kinds = [h for h in options if h in (int, float)]
        if kinds and str not in options:
            minimum, maximum = f.metadata.get(_RANGE, (None, None))
            out[f.name] = (kinds[0], minimum, maximum)
    return out


def secret_fields(settings_type: type) -> tuple[str, ...]:
    """The names of the fields of ``settings_type`` marked with :func:`secret`."""
    return tuple(f.name for f in dataclasses.fields(settings_type) if f.metadata.get(_SECRET))


def secret_values(settings: Any) -> tuple[str, ...]:
    """The secret values of a parsed settings object (for the log scrubber)."""
    if settings is None or not dataclasses.is_dataclass(settings):
        return ()
    values = (getattr(settings, name) for name in secret_fields(type(settings)))
    return tuple(v for v in values if isinstance(v, str) and v)


def parse_settings(settings_type: type[S], section: Mapping[str, Any] | None, *, platform: str,
                   source: str = "(config)") -> S:
    """``platforms.<platform>`` as a ``settings_type`` instance; a mistake is one :class:`ConfigError` line.

    The core's own keys (:data:`CORE_KEYS`) are allowed beside the plugin's and left out of the result.
    A secret's value never appears in an error.
    """
    prefix = f"platforms.{platform}"
    section = dict(section or {})
    fields = {f.name: f for f in dataclasses.fields(settings_type)}  # type: ignore[arg-type]
    hints = typing.get_type_hints(settings_type)
    known = [*fields, *CORE_KEYS]
    for key in section:
        if key not in fields and key not in CORE_KEYS:
            raise ConfigError(source, f"{prefix}.{key}",
                              f"unknown key{did_you_mean(str(key), known)}; the keys are {', '.join(known)}")
    values: dict[str, Any] = {}
    for name, f in fields.items():  # the keys given first: a wrong value is named before a missing key
        if f.init and name in section:
            values[name] = _coerce(section[name], hints[name], source, f"{prefix}.{name}",
                                   hide=bool(f.metadata.get(_SECRET)), hint=f.metadata.get(_HINT),
                                   limits=f.metadata.get(_RANGE))
    for name, f in fields.items():
        if f.init and name not in section \
                and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            hint = f.metadata.get(_HINT)
            raise ConfigError(source, f"{prefix}.{name}", hint or f"{_describe(hints[name])} (required)")
    try:
        return settings_type(**values)
    except SettingsError as exc:
        raise ConfigError(source, f"{prefix}.{exc.key}", exc.expected) from None


def _coerce(value: Any, annotation: Any, source: str, key: str, *, hide: bool, hint: str | None = None,
            limits: tuple[float | None, float | None] | None = None) -> Any:
    """``value`` checked against ``annotation`` (ints are accepted where floats are expected) and, for a number,
    against the field's range (:func:`setting`), by the config's one number parser."""
    ok, result = _matches(value, annotation)
    if ok:
        if limits is not None and isinstance(result, (int, float)) and not isinstance(result, bool):
            try:
                return parse_number(result, whole=isinstance(result, int), minimum=limits[0], maximum=limits[1])
            except NumberError as exc:
                raise ConfigError(source, key, exc.expected) from None
        return result
    if limits is not None and not hide and isinstance(value, float):  # nan, an infinity: say the range
        whole = int in typing.get_args(annotation) or annotation is int
        raise ConfigError(source, key, f"{describe_range(whole=whole, minimum=limits[0], maximum=limits[1])} "
                                       f"(finite), got {value!r}")
    shown = "(not shown: it is a secret)" if hide else f"got {_show(value)}"
    raise ConfigError(source, key, f"{hint or _describe(annotation)}, {shown}")


def _matches(value: Any, hint: Any) -> tuple[bool, Any]:
    origin = typing.get_origin(hint)
    if hint is Any:
        return True, value
    if origin in (Union, types.UnionType):
        for option in typing.get_args(hint):
            ok, result = _matches(value, option)
            if ok:
                return True, result
        return False, None
    if hint is type(None):
        return value is None, None
    if origin is Literal:
        return value in typing.get_args(hint), value
    if hint is bool:
        return isinstance(value, bool), value
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                return True, parse_number(value)  # finite: nan and the infinities are no setting's value
            except NumberError:
                return False, None
        return False, None
    if hint is str:
        return isinstance(value, str), value
    if origin in (list, tuple) or hint in (list, tuple):
        args = typing.get_args(hint)
        if not isinstance(value, list):
            return False, None
        if args:
            items = [_matches(v, args[0]) for v in value]
            if not all(ok for ok, _ in items):
                return False, None
            value = [v for _, v in items]
        return True, (tuple(value) if (origin or hint) is tuple else value)
    if origin is dict or hint is dict or origin is Mapping:
        return isinstance(value, dict), value
    return isinstance(value, hint) if isinstance(hint, type) else True, value


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        text = " or ".join(_describe(a) for a in options)
        return f"{text} (or null)" if len(options) < len(typing.get_args(hint)) else text
    if origin is Literal:
        return "one of " + ", ".join(repr(a) if not isinstance(a, str) else a for a in typing.get_args(hint))
    if origin in (list, tuple):
        args = typing.get_args(hint)
        return f"a list of {_describe(args[0])}s" if args else "a list"
    names = {bool: "true or false", int: "a whole number", float: "a number", str: "a string", dict: "a mapping"}
    return names.get(hint, getattr(hint, "__name__", str(hint)))


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
