"""Turn the agent's raw text deltas into what goes on the wire, piece by piece.

Three jobs, all incremental so each delta still leaves the moment it arrives:

* ``<think>…</think>`` blocks are split out (tags may be cut across deltas);
  Chat Completions sends them as ``reasoning_content``, Responses drops them.
* Leading blank lines, the whitespace after a closed think block, and
  trailing whitespace are held back, so the streamed text joins to exactly
  the reply a non-streaming call returns (``thinking.postprocess_reply``).
  Whitespace inside the reply waits only for the next visible character.
* :class:`~hermes_gateway.events.StreamReset` (the agent retried after
  partial output) cannot be undone on an SSE wire: nothing already sent can
  be taken back. So after a reset the new text is compared with what was
  already sent: while it repeats it, nothing is sent; once it goes further,
  only the new part is sent. If it *differs* from what the client already
  has, :class:`Diverged` is raised and the writer ends the stream with an
  error — the client would otherwise hold a reply nobody generated.
"""

from __future__ import annotations

OPEN_TAGS = ("<think>", "<thinking>", "<reasoning>")  # the tags hermes_gateway.thinking strips
CLOSE_TAGS = ("</think>", "</thinking>", "</reasoning>")


class Diverged(Exception):
    """After a stream reset, the retried reply contradicts text the client already received."""


class ThinkSplitter:
    """Split a stream of text into (reasoning, visible) pieces, tags removed."""

    def __init__(self) -> None:
        self.inside = False
        self.pending = ""
        self.after_block = False  # whitespace right after a closed block is dropped, as the final reply does

    def feed(self, text: str) -> tuple[str, str]:
        text = self.pending + text
        self.pending = ""
        if "<" not in text and not self.after_block:  # the hot path: nearly every delta
            return (text, "") if self.inside else ("", text)
        if self.after_block and not self.inside:
            text = text.lstrip()
            if not text:
                return "", ""
            self.after_block = False
        reasoning: list[str] = []
        visible: list[str] = []
        while text:
            tags = CLOSE_TAGS if self.inside else OPEN_TAGS
            out = reasoning if self.inside else visible
            pos = text.find("<")
            if pos < 0:
                out.append(text)
                break
            out.append(text[:pos])
            rest = text[pos:]
            tag = next((t for t in tags if rest.startswith(t)), None)
            if tag is not None:
                self.inside = not self.inside
                text = rest[len(tag):]
                if not self.inside:
                    text = text.lstrip()
                    self.after_block = not text
                continue
            if any(t.startswith(rest) for t in tags):  # a tag cut at the end of this delta
                self.pending = rest
                break
            out.append("<")
            text = rest[1:]
        return "".join(reasoning), "".join(visible)

    def finish(self) -> tuple[str, str]:
        """Flush a dangling partial tag as ordinary text."""
        rest, self.pending = self.pending, ""
        return (rest, "") if self.inside else ("", rest)


class ReplyText:
    """The visible reply and reasoning as they may be sent, given raw deltas and resets."""

    def __init__(self) -> None:
        self.splitter = ThinkSplitter()
        self.sent = ""            # visible text the client already has
        self.reasoning_sent = ""  # reasoning text the client already has
        self._held = ""           # whitespace waiting for a visible character
        self._started = False     # any visible non-whitespace yet (leading whitespace is dropped)
        self._replay: str | None = None          # after a reset: the new attempt's visible text
        self._reasoning_replay: str | None = None

    def feed(self, raw: str) -> tuple[str, str]:
        """Return (reasoning, visible) to send now for this raw delta."""
        reasoning, visible = self.splitter.feed(raw)
        return self._reasoning(reasoning), self._visible(visible, final=False)

    def finish(self) -> tuple[str, str]:
        """End of turn: flush partial tags, drop trailing whitespace, check a replay is complete."""
        reasoning, visible = self.splitter.finish()
        reasoning_out, visible_out = self._reasoning(reasoning), self._visible(visible, final=True)
        if self._replay is not None and self._replay != self.sent:
            raise Diverged("the retried reply is shorter than the text already sent")
        return reasoning_out, visible_out

    def reset(self) -> None:
        """The agent discarded this turn's output so far; its next text starts the reply over."""
        self.splitter = ThinkSplitter()
        self._held = ""
        self._started = False
        self._replay = ""
        self._reasoning_replay = "" if self.reasoning_sent else None

    def _visible(self, text: str, *, final: bool) -> str:
        if not self._started:
            text = text.lstrip("\r\n")
            if not text:
                return ""
            self._started = True
        text = self._held + text
        body = text.rstrip()
        self._held = "" if final else text[len(body):]  # at the end, trailing whitespace is dropped
        text = body
        if not text:
            return ""
        if self._replay is not None:
            return self._reconcile(text)
        self.sent += text
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
        self.sent = replay
        return new

    def _reasoning(self, text: str) -> str:
        if not text:
            return ""
        if self._reasoning_replay is None:
            self.reasoning_sent += text
            return text
        # After a reset, repeated reasoning is skipped; reasoning that differs is dropped
        # (it is auxiliary: not worth failing the reply over).
        self._reasoning_replay += text
        seen = self.reasoning_sent
        if len(self._reasoning_replay) > len(seen) and self._reasoning_replay.startswith(seen):
            new = self._reasoning_replay[len(seen):]
            self.reasoning_sent = self._reasoning_replay
            self._reasoning_replay = None
            return new
        return ""
