"""Markdown → text + entities: our markdown-it-py converter against telegramify-markdown, by hand.

    .venv/bin/pip install telegramify-markdown   # only for this comparison; the plugin does not need it
    .venv/bin/python plugins/telegram/bench/bench_telegram_formatting.py [--runs 200]

Two questions decide the converter (issue 9, point 1):

* correctness on half-written Markdown: every prefix of a realistic reply,
  as a preview would show it, converted; counted are conversions that
  fail, entities Telegram would refuse (outside the text, splitting an
  emoji), and texts longer than their Markdown (the core splits on the
  Markdown, so a longer text could pass 4096 units and be refused);
  plus a few probes of markup that has not closed yet;
* cost: µs per conversion of a 4,000-character preview (median), cold;
  and as the plugin pays it while a message grows (``convert_blocks``:
  the blocks before the last come from a cache).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

from hermes_telegram.emulator import ApiError, _checked_entities
from hermes_telegram.formatting import convert_blocks, to_entities, utf16_units

SECTION = ("## Step {i}\n\nThe **build** for *step {i}* is ~~red~~ green now; run `make test-{i}` "
           "and read [the notes](https://example.org/{i}) 🎉.\n\n"
           "- first point of {i}\n- second point with **bold**\n  - nested detail\n\n"
           "1. one\n2. two\n\n> a quoted line {i}\n\n```python\nfor n in range({i}):\n    print(n)\n```\n\n")
REPLY = "".join(SECTION.format(i=i) for i in range(40))

PROBES = {  # half-written markup: what a person should see in the preview
    "Some **bold and": "Some **bold and",
    "Run `make": "Run `make",
    "See [the notes](https://exa": "See [the notes](https://exa",
    "~~gone": "~~gone",
    "# Title": "Title",
}


def ours(markdown: str) -> tuple[str, list[dict[str, Any]]]:
    text, entities = to_entities(markdown)
    return text, [e.to_dict() for e in entities]


def telegramify(markdown: str) -> tuple[str, list[dict[str, Any]]]:
    import telegramify_markdown

    text, entities = telegramify_markdown.convert(markdown)
    return text, [{k: v for k, v in (("type", e.type), ("offset", e.offset), ("length", e.length),
                                     ("url", e.url), ("language", e.language)) if v is not None} for e in entities]


def correctness(convert: Callable[[str], tuple[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    failed = refused = longer = 0
    prefixes = list(range(1, len(REPLY), 7))
    for end in prefixes:
        markdown = REPLY[:end]
        try:
            text, entities = convert(markdown)
        except Exception:
            failed += 1
            continue
        try:
            if text.strip():
                _checked_entities(text, entities)
        except ApiError:
            refused += 1
        if utf16_units(text) > utf16_units(markdown):
            longer += 1
    probes = sum(1 for markdown, want in PROBES.items() if _safe(convert, markdown) == want)
    return {"prefixes": len(prefixes), "failed": failed, "refused": refused, "longer": longer,
            "probes": f"{probes}/{len(PROBES)}"}


def _safe(convert: Callable[[str], tuple[str, list[dict[str, Any]]]], markdown: str) -> str | None:
    try:
        return convert(markdown)[0]
    except Exception:
        return None


def growing_cost(runs: int) -> float:
    """What the plugin pays per preview while a message grows: earlier blocks come from the cache."""
    times = []
    for run in range(runs):
        convert_blocks(REPLY[:3950 - run % 7])  # the preview a second earlier
        started = time.perf_counter()
        convert_blocks(REPLY[:4000])
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def cost(convert: Callable[[str], Any], runs: int) -> float:
    preview = REPLY[:4000]
    assert len(preview) == 4000
    convert(preview)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        convert(preview)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def main(runs: int) -> None:
    converters: dict[str, Callable[[str], Any]] = {"markdown-it-py (ours)": ours}
    try:
        import telegramify_markdown  # noqa: F401

        converters["telegramify-markdown"] = telegramify
    except ImportError:
        print("telegramify-markdown is not installed: pip install telegramify-markdown to compare")
    print(f"reply: {len(REPLY)} characters; previews: every 7th prefix; cost: a 4,000-character preview")
    print(f"{'converter':24s} {'prefixes':>8s} {'failed':>6s} {'refused':>7s} {'longer':>6s} {'probes':>6s}"
          f" {'µs/preview':>11s}")
    for name, convert in converters.items():
        c = correctness(convert)
        print(f"{name:24s} {c['prefixes']:8d} {c['failed']:6d} {c['refused']:7d} {c['longer']:6d} "
              f"{c['probes']:>6s} {cost(convert, runs):11.0f}")
    c = correctness(lambda markdown: (lambda t: (t[0], [e.to_dict() for e in t[1]]))(convert_blocks(markdown)))
    print(f"{'ours, block cache':24s} {c['prefixes']:8d} {c['failed']:6d} {c['refused']:7d} {c['longer']:6d} "
          f"{c['probes']:>6s} {growing_cost(runs):11.0f}   (a growing preview: what the plugin pays)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    main(parser.parse_args().runs)
