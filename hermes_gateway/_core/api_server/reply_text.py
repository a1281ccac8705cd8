"""Turn the agent's raw text deltas into what goes on the wire, piece by piece.

Two jobs, both incremental so each delta still leaves the moment it arrives:

* Reasoning is split out by :class:`~hermes_gateway._core.reasoning.ReasoningFilter`,
  the filter chat previews, the terminal and the final post-processing use
  (tags cut across deltas, any case, attributes, ``model.reasoning_starts_open``).
  Chat Completions sends it as ``reasoning_content``, Responses drops it.
  The filter also holds back whitespace (leading, after a block, trailing),
  so the streamed text joins to exactly the reply a non-streaming call
  returns (``TurnEnd.reply``).
* :class:`~hermes_gateway._core.events.StreamReset` (the agent retried after
  partial output) cannot be undone on an SSE wire: nothing already sent can
  be taken back. So after a reset the new text is compared with what was
  already sent: while it repeats it, nothing is sent; once it goes further,
  only the new part is sent. If it *differs* from what the client already
  has, :class:`Diverged` is raised and the writer ends the stream with an
  error — the client would otherwise hold a reply nobody generated.

The one case where the wire and the final text differ: without
``reasoning_starts_open``, a reply that opens inside reasoning is only
recognised at its lone ``</think>``, when the text before it was already
sent as content. It stays (bytes cannot be taken back), and the reply
follows it after a blank line; the gateway logs once how to avoid it.
"""

from __future__ import annotations

from ..errors import HermesError
from ..reasoning import ReasoningFilter

#: Between content already sent that turned out to be reasoning and the reply after it.
RETRACTED_GAP = "\n\n"


class Diverged(HermesError):
    """After a stream reset, the retried reply contradicts text the client already received."""


class _Sent:
    """Text already on the wire: appended per delta, joined only when read (``+=`` would be quadratic)."""

    __slots__ = ("_pieces", "_text")

    def __init__(self, text: str = "") -> None:
        self._pieces: list[str] = []
        self._text = text

    def add(self, piece: str) -> None:
        self._pieces.append(piece)

    def __bool__(self) -> bool:
        return bool(self._pieces or self._text)

    @property
    def text(self) -> str:
        if self._pieces:
            self._text += "".join(self._pieces)
            self._pieces.clear()
        return self._text


class _Verbatim:
    """A filter that passes everything through: a structured-output reply (JSON) goes out as the model wrote it."""

    @staticmethod
    def split(raw: str) -> tuple[str, str]:
        return "", raw

    @staticmethod
    def finish() -> tuple[str, str]:
        return "", ""


class ReplyText:
    """The visible reply and reasoning as they may be sent, given raw deltas and resets.

    ``verbatim``: no reasoning filter (the client asked for JSON: the reply is the model's text unaltered).
    """

    def __init__(self, *, starts_open: bool = False, verbatim: bool = False) -> None:
        self.starts_open = starts_open
        self.verbatim = verbatim
        self.filter = self._new_filter()
        self._sent = _Sent()            # visible text the client already has
        self._reasoning_sent = _Sent()  # reasoning text the client already has
        self._gap = False         # sent content turned out to be reasoning: the reply follows a blank line
        self._replay: str | None = None          # after a reset: the new attempt's visible text
        self._reasoning_replay: str | None = None

    @property
    def sent(self) -> str:
        """The visible text the client already has."""
        return self._sent.text

    @property
    def reasoning_sent(self) -> str:
        """The reasoning text the client already has."""
        return self._reasoning_sent.text

    def _new_filter(self) -> ReasoningFilter | _Verbatim:
        if self.verbatim:
            return _Verbatim()
        return ReasoningFilter(starts_open=self.starts_open, on_retract=self._retracted)

    def _retracted(self) -> None:
        self._gap = True

    def feed(self, raw: str) -> tuple[str, str]:
        """Return (reasoning, visible) to send now for this raw delta."""
        reasoning, visible = self.filter.split(raw)
        if reasoning:
            reasoning = self._reasoning(reasoning)
        if visible:
            if self._gap or self._replay is not None:
                visible = self._visible(visible)
            else:  # the common case of _visible(), inlined: it runs once per delta
                self._sent._pieces.append(visible)
        return reasoning, visible

    def finish(self) -> tuple[str, str]:
        """End of turn: flush held-back text, check a replay is complete."""
        reasoning, visible = self.filter.finish()
        reasoning_out, visible_out = self._reasoning(reasoning), self._visible(visible)
        if self._replay is not None and self._replay != self.sent:
            raise Diverged("the retried reply is shorter than the text already sent")
        return reasoning_out, visible_out

    def reset(self) -> None:
        """The agent discarded this turn's output so far; its next text starts the reply over."""
        self.filter = self._new_filter()
        self._gap = False
        self._replay = ""
        self._reasoning_replay = "" if self.reasoning_sent else None

    def _visible(self, text: str) -> str:
        if not text:
            return ""
        if self._gap:
            self._gap = False
            if self._replay if self._replay is not None else self._sent:
                text = RETRACTED_GAP + text
        if self._replay is not None:
            return self._reconcile(text)
        self._sent.add(text)
        return text

    def _reconcile(self, text: str) -> str:
        assert self._replay is not None
        self._replay += text
        replay, sent = self._replay, self.sent
        if len(replay) <= len(sent):
            if not sent.startswith(replay):
                raise Diverged("the retried reply differs from the text already sent")
            return ""
        if not replay.startswith(sent):
            raise Diverged("the retried reply differs from the text already sent")
        self._replay = None
        new = replay[len(sent):]
        self._sent = _Sent(replay)
        return new

    def _reasoning(self, text: str) -> str:
        if not text:
            return ""
        if self._reasoning_replay is None:
            self._reasoning_sent.add(text)
            return text
        # After a reset, repeated reasoning is skipped; reasoning that differs is dropped
        # (it is auxiliary: not worth failing the reply over).
        self._reasoning_replay += text
        seen = self.reasoning_sent
        if len(self._reasoning_replay) > len(seen) and self._reasoning_replay.startswith(seen):
            new = self._reasoning_replay[len(seen):]
            self._reasoning_sent = _Sent(self._reasoning_replay)
            self._reasoning_replay = None
            return new
        return ""
