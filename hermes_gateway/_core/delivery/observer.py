"""What one reply tells whoever watches delivery (``/metrics``): its start, each platform call, its end.

A :class:`~.session.StreamSession` reports to a :class:`ReplyObserver`
handed in by ``Delivery``; the session itself knows nothing of Prometheus,
so it stays testable (and cheap) without any. :data:`NO_OBSERVER` is the
default and does nothing. The hot path, ``feed``, reports nothing: the
observer hears only of platform calls, which are few.

Every platform call of a reply goes through :meth:`ReplyObserver.call`
(it wraps the awaitable of the hook call and sees how it ended), so the
outcome is classified in one place:

* ``ok`` — the hook returned (an edit that changed nothing is ``ok`` too);
* ``rate_limited`` — it raised :class:`~hermes_gateway._core.errors.RateLimited`
  (a 429, with its scope and ``retry_after``);
* ``maybe_delivered`` — it failed but may have taken effect (a timeout after
  sending; a call cancelled while in flight);
* ``failed`` — any other failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Protocol

if TYPE_CHECKING:
    from .session import DeliveryReport


class ReplyObserver(Protocol):
    """Told about one reply. Methods must be cheap and must not raise."""

    def started(self) -> None:
        """The reply's worker started (it is now in flight)."""

    async def call(self, method: str, text: str, call: Awaitable[Any]) -> Any:
        """Await ``call`` (the hook ``method``, showing ``text``), note how it ended, return or re-raise."""

    def finishing(self) -> None:
        """The model's reply ended (``finish``): from now on only the final text is delivered."""

    def ended(self, report: "DeliveryReport") -> None:
        """The reply's worker ended, as ``report`` says."""


class DeliveryObserver(Protocol):
    """Makes one :class:`ReplyObserver` per reply (``Delivery`` asks it in ``session``)."""

    def reply(self, platform: str) -> ReplyObserver: ...


class _NoObserver:
    """Observes nothing (the default)."""

    __slots__ = ()

    def started(self) -> None:
        pass

    async def call(self, method: str, text: str, call: Awaitable[Any]) -> Any:
        return await call

    def finishing(self) -> None:
        pass

    def ended(self, report: "DeliveryReport") -> None:
        pass


NO_OBSERVER: ReplyObserver = _NoObserver()
