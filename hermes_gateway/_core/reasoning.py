"""Reasoning never reaches a person: the one filter every surface uses.

Reasoning models wrap their chain of thought in ``<think>``, ``<thinking>``
or ``<reasoning>`` tags. Chat previews (:mod:`hermes_gateway._core.delivery`),
the terminal (:mod:`hermes_gateway._core.cli.render`), the API's SSE writers
(:mod:`hermes_gateway._core.api_server.reply_text`) and the final
post-processing (:func:`postprocess_reply`, which makes ``TurnEnd.reply``)
all run this one state machine, so they cannot disagree: the final text
*is* the filter fed the whole reply at once, and the filter gives the same
text however the reply is cut into chunks.

The rules:

* **Tags.** ``<think>``, ``<thinking>``, ``<reasoning>`` in any case,
  attributes allowed on the opening tag (``<think type="x">``, at most
  :data:`MAX_ATTRIBUTES` characters), cut across chunks at any point. A
  block opened with one spelling is closed by the same spelling (the
  others are reasoning text inside it); ``<think/>`` is an empty block.
  ``< think>``, ``<thinker>`` or ``<think-x>`` are ordinary text.
* **A reply that opens inside reasoning** (chat templates that put
  ``<think>`` in the prompt, common with Qwen and DeepSeek models): with
  ``starts_open`` (``model.reasoning_starts_open``) everything before the
  first closing tag of any spelling is reasoning, from the first chunk on.
  Without it, a closing tag that comes before any opening tag still makes
  everything before it reasoning in the final text; a streaming consumer
  has by then shown that text, so the filter tells it (``on_retract``)
  and each surface does what it can (see :class:`ReasoningFilter`).
* A closing tag with no block open (a stray one) is dropped like an
  empty block; an opening tag never closed hides the rest of the reply
  (the model was cut off while thinking).
* **Whitespace.** The reply starts at its first non-whitespace character;
  whitespace right after a block goes with the block; trailing whitespace
  is dropped. While streaming, whitespace waits for the next visible
  character, so what was emitted is always a prefix of the final text.
"""

from __future__ import annotations

import logging
import types
import weakref
from typing import Callable

log = logging.getLogger(__name__)

#: The tag names recognised, in any case.
THINK_TAGS: tuple[str, ...] = ("think", "thinking", "reasoning")
#: The longest attribute text an opening tag may carry (``<think type="x">``); longer, it is text.
MAX_ATTRIBUTES = 200

#: ``_inside`` while in a block opened implicitly (``starts_open``): any closing tag ends it.
_ANY = "*"

_MATCH, _PARTIAL, _NONE = 1, 2, 3
_OPEN, _CLOSE, _EMPTY = "open", "close", "empty"


def _scan(text: str, at: int, closing_only: bool) -> tuple[int, str, str, int]:
    """Read a tag at ``text[at] == "<"``: (status, kind, name, end).

    ``_PARTIAL`` means the text ends before it is known whether this is a
    tag (hold it back); ``_NONE`` that it is not one (it is text).
    """
    n = len(text)
    j = at + 1
    if j >= n:
        return _PARTIAL, "", "", 0
    closing = text[j] == "/"
    if closing:
        j += 1
    elif closing_only:
        return _NONE, "", "", 0
    partial = False
    for name in THINK_TAGS:
        k = j + len(name)
        if k > n:  # the text ends inside the name: partial if it is a prefix of it
            if name.startswith(text[j:].lower()):
                partial = True
            continue
        if text[j:k].lower() != name:
            continue
        if k == n:
            partial = True
            continue
        c = text[k]
        if c == ">":
            return _MATCH, _CLOSE if closing else _OPEN, name, k + 1
        if closing:
            if c.isspace():  # "</think >": whitespace before ">", as much as attributes may take
                cap = min(n, k + MAX_ATTRIBUTES + 1)
                m = k
                while m < cap and text[m].isspace():
                    m += 1
                if m == n and n < k + MAX_ATTRIBUTES + 1:
                    partial = True
                elif m < cap and text[m] == ">":
                    return _MATCH, _CLOSE, name, m + 1
            continue
        if c == "/":
            if k + 1 == n:
                partial = True
            elif text[k + 1] == ">":
                return _MATCH, _EMPTY, name, k + 2
            continue
        if c.isspace():  # attributes: up to the next ">", with no "<" before it
            limit = k + 1 + MAX_ATTRIBUTES
            gt = text.find(">", k, limit + 1)
            lt = text.find("<", k, limit + 1)
            if gt >= 0 and (lt < 0 or lt > gt):
                return _MATCH, _EMPTY if text[gt - 1] == "/" else _OPEN, name, gt + 1
            if lt < 0 and n <= limit:
                partial = True
    return (_PARTIAL if partial else _NONE), "", "", 0


_warned = False


def _warn_once() -> None:
    global _warned
    if not _warned:
        _warned = True
        log.warning("a reply opened inside reasoning (a closing </think> with no opening tag) and part of it was "
                    "already shown; if the model's chat template opens the tag in the prompt, set "
                    "model.reasoning_starts_open: true so previews, the terminal and the API stream hide it too")


class ReasoningFilter:
    """Split a stream of raw chunks into (reasoning, visible) pieces, tags removed.

    ``feed(chunk)`` returns the newly visible text (the fast path: plain
    text with no ``<`` costs one check); ``split(chunk)`` returns
    ``(reasoning, visible)``; ``finish()`` ends the stream. Joined, the
    visible pieces equal :func:`postprocess_reply` of the joined chunks,
    for every way of cutting them — with one exception, the retraction:

    Without ``starts_open``, a closing tag before any opening tag means the
    text before it was reasoning. The filter cannot know that earlier, so
    that text was already emitted as visible. At the closing tag it calls
    ``on_retract()`` (once per filter, and only if visible text
    had been emitted by an earlier call), then carries on as if the reply
    started after the tag. The visible pieces after the retraction join to
    the final text. What each surface does with it:

    * chat previews drop the retracted text at once; the message ends as
      the final text (the delivery core edits it into place);
    * the terminal cannot unprint: it shows a note under the retracted
      text and then the reply, which is the final text;
    * the SSE writers cannot take bytes back: the client keeps what it
      got, and the rest of the reply follows it after a blank line.

    With ``starts_open`` there is no retraction: every surface shows
    exactly the final text.
    """

    __slots__ = ("_inside", "_prefix", "_pending", "_held", "_started", "_after_block", "_plain", "_lead",
                 "_on_retract")

    def __init__(self, *, starts_open: bool = False,
                 on_retract: Callable[[], None] | None = None) -> None:
        self._inside: str | None = _ANY if starts_open else None  # the closing tag awaited, by name
        self._prefix = not starts_open   # no tag yet: a closing tag here ends implicit reasoning
        self._pending = ""               # a possible tag cut at the end of the last chunk
        self._held = ""                  # visible whitespace waiting for a visible character
        self._started = False            # visible text emitted (before it, whitespace is dropped)
        self._after_block = False        # whitespace right after a block goes with the block
        self._plain = False              # none of the above applies: the fast path is safe
        self._lead = ""                  # leading whitespace not shown: reasoning too, if a lone tag follows
        # A bound method is held through a weak reference: its object owns this filter (a draft, a reply's text,
        # the terminal's renderer), and a strong one made a cycle that kept every reply's objects until a full
        # collection (~2,500 replies, 18 MB, in the 200-chat soak: bench/README.md, "3c. Soak").
        self._on_retract: Callable[[], None] | weakref.WeakMethod[Callable[[], None]] | None = (
            weakref.WeakMethod(on_retract) if isinstance(on_retract, types.MethodType) else on_retract)

    @property
    def holding_space(self) -> bool:
        """Whitespace follows the text emitted so far (held until a visible character): its last word is whole."""
        return bool(self._held)

    @property
    def inside(self) -> bool:
        """Inside a reasoning block right now (what arrives next is hidden, unless it closes it)."""
        return self._inside is not None

    def feed(self, chunk: str) -> str:
        """The visible text ``chunk`` adds (reasoning is dropped)."""
        if self._plain and "<" not in chunk:  # the hot path: visible text with no tag in sight
            if chunk[-1:].isspace():
                body = chunk.rstrip()
                if not body:
                    self._held += chunk
                    return ""
                out, self._held = self._held + body, chunk[len(body):]
                return out
            if self._held and chunk:
                out, self._held = self._held + chunk, ""
                return out
            return chunk
        if self._inside is not None and not self._pending and "<" not in chunk:
            return ""  # reasoning, which can be long: no tag that could end it
        return self.split(chunk)[1]

    def split(self, chunk: str) -> tuple[str, str]:
        """(reasoning, visible) that ``chunk`` adds, tags removed."""
        if "<" not in chunk and not self._pending:  # the hot path, as in ``feed``
            if self._plain:
                if not chunk[-1:].isspace() and not self._held:
                    return "", chunk
                return "", self.feed(chunk)
            if self._inside is not None:
                return chunk, ""
        text = self._pending + chunk if self._pending else chunk
        self._pending = ""
        reasoning: list[str] = []
        visible: list[str] = []
        started_before = self._started
        raw_prefix: list[str] = []  # raw text of this call before the first tag, for a retraction
        pos, n = 0, len(text)
        while pos < n:
            inside = self._inside
            lt = text.find("<", pos)
            if lt < 0:
                self._text(text[pos:], reasoning, visible, raw_prefix)
                break
            if lt > pos:
                self._text(text[pos:lt], reasoning, visible, raw_prefix)
            status, kind, name, end = _scan(text, lt, closing_only=inside is not None)
            if status == _PARTIAL:
                self._pending = text[lt:]
                break
            if status == _NONE or (inside is not None and inside != _ANY and name != inside):
                self._text("<", reasoning, visible, raw_prefix)
                pos = lt + 1
                continue
            pos = end
            if inside is not None:  # the block ends
                self._inside = None
                self._after_block = True
            elif kind == _OPEN:
                self._prefix = False
                self._inside = name
            elif kind == _CLOSE and self._prefix:  # before any opening tag: everything so far was reasoning
                self._prefix = False
                self._retract(reasoning, visible, raw_prefix, started_before)
            else:  # a stray closing tag or an empty block: dropped, like an empty block
                self._after_block = True
            self._prefix = False
        if self._prefix and not self._started and raw_prefix:
            self._lead += "".join(raw_prefix)
        self._plain = self._inside is None and not self._pending and not self._after_block and self._started
        return "".join(reasoning), "".join(visible)

    def finish(self) -> tuple[str, str]:
        """End of the stream: (reasoning, visible) still held back. Trailing whitespace is dropped."""
        pending, self._pending = self._pending, ""
        reasoning: list[str] = []
        visible: list[str] = []
        if pending:  # a tag that was never completed is text (or reasoning, inside a block)
            self._text(pending, reasoning, visible, [])
        self._held = ""
        self._plain = False
        return "".join(reasoning), "".join(visible)

    # -- helpers -------------------------------------------------------------------------------

    def _text(self, text: str, reasoning: list[str], visible: list[str], raw_prefix: list[str]) -> None:
        if self._inside is not None:
            reasoning.append(text)
            return
        if self._prefix:
            raw_prefix.append(text)
        if self._after_block or not self._started:
            text = text.lstrip()
            if not text:
                return
            self._after_block = False
            self._started = True
        body = text.rstrip()
        if not body:
            self._held += text
            return
        visible.append(self._held + body if self._held else body)
        self._held = text[len(body):]

    def _retract(self, reasoning: list[str], visible: list[str], raw_prefix: list[str],
                 started_before: bool) -> None:
        """A closing tag before any opening one: this call's visible text becomes reasoning."""
        visible.clear()
        if not started_before:
            reasoning.append(self._lead)
        reasoning.extend(raw_prefix)
        self._lead = ""
        self._held = ""
        self._started = False
        self._after_block = True
        if started_before:
            _warn_once()
            callback = self._on_retract
            if isinstance(callback, weakref.WeakMethod):
                callback = callback()
            if callback is not None:
                callback()


def split_reasoning(raw: str, *, starts_open: bool = False) -> tuple[str, str]:
    """(reasoning, reply) of a complete reply; the reply is :func:`postprocess_reply`'s."""
    f = ReasoningFilter(starts_open=starts_open)
    reasoning, visible = f.split(raw)
    tail_reasoning, tail = f.finish()
    return reasoning + tail_reasoning, visible + tail


def postprocess_reply(raw: str, *, starts_open: bool = False) -> str:
    """The reply a person sees: reasoning removed, whitespace trimmed as the streamed text is.

    Defined by the same :class:`ReasoningFilter` the streaming consumers
    run, fed the whole text at once, so the final text and the streamed
    one cannot disagree.
    """
    if not starts_open and "<" not in raw:  # no tag: the filter would only trim whitespace (most replies)
        return raw.strip()
    f = ReasoningFilter(starts_open=starts_open)
    return f.split(raw)[1] + f.finish()[1]


#: The same, under the name the agent has used for assistant history entries.
strip_thinking = postprocess_reply
