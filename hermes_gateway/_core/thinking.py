"""Removing reasoning from a finished reply: kept as an import path; the rules live in :mod:`hermes_gateway._core.reasoning`.

The final post-processing and every streaming consumer run the same
:class:`~hermes_gateway._core.reasoning.ReasoningFilter`, so they cannot disagree.
"""

from __future__ import annotations

from .reasoning import THINK_TAGS, postprocess_reply, split_reasoning, strip_thinking

__all__ = ["THINK_TAGS", "postprocess_reply", "split_reasoning", "strip_thinking"]
