"""Word error rate of the offline speech-to-text engines a pip install can bring, on sentences espeak-ng speaks.

Issue 22: an embedded engine may be ``voice.transcription``'s default only
if it installs from the package index with its model inside the wheel and
hears at most 30% of words wrong. Each sentence is spoken by Debian's
``espeak-ng`` (``apt-get install -y espeak-ng``), encoded as an OGG/Opus
voice note and decoded again by the gateway's own converter
(:mod:`hermes_gateway._core.voice.audio`), exactly as a Telegram voice note
would reach the engine.

    python bench/bench_voice_wer.py            # every engine that is installed
    pip install pocketsphinx                   # the engines measured (see bench/README.md)

Engines whose wheel carries no model (vosk, moonshine-voice,
useful-moonshine-onnx: their wheels were opened and hold no weights) cannot
run here without a download at run time and are reported as such.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_gateway._core.voice import audio  # noqa: E402

SENTENCES = [
    "the quick brown fox jumps over the lazy dog",
    "please remind me to call my mother tomorrow morning",
    "what is the weather going to be like this weekend",
    "send the report to the team before five o'clock",
    "i would like to book a table for two at seven",
    "how many kilometers is it from paris to berlin",
    "turn off the lights in the living room",
    "can you summarize the last three messages for me",
    "the meeting has been moved to thursday afternoon",
    "add milk eggs and bread to my shopping list",
    "tell me a short story about a brave little mouse",
    "what time does the train to london leave",
]


def word_errors(reference: str, hypothesis: str) -> int:
    """Substitutions + deletions + insertions between the two word sequences (Levenshtein on words)."""
    ref, hyp = reference.split(), hypothesis.split()
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, other in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (word != other))
    return row[-1]


def normalize(text: str) -> str:
    return " ".join("".join(ch for ch in text.lower() if ch.isalnum() or ch in " '").split())


def voice_note(sentence: str, folder: Path, index: int) -> bytes:
    """The sentence spoken by espeak-ng, as an OGG/Opus voice note."""
    wav = folder / f"s{index}.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(wav), sentence], check=True)
    return audio.encode_ogg_opus(audio.decode_pcm(wav, rate=16000), 16000)


def pocketsphinx_engine() -> Callable[[bytes], str]:
    from pocketsphinx import Decoder  # 5.x: the default config is the bundled en-us model

    decoder = Decoder(loglevel="FATAL")

    def hear(pcm: bytes) -> str:
        decoder.start_utt()
        decoder.process_raw(pcm, full_utt=True)
        decoder.end_utt()
        hyp = decoder.hyp()
        return hyp.hypstr if hyp is not None else ""
    return hear


ENGINES: dict[str, Callable[[], Callable[[bytes], str]]] = {"pocketsphinx": pocketsphinx_engine}
#: Wheels opened and found without model weights (vosk: the library only; moonshine-voice: a tokenizer only).
NO_MODEL_IN_WHEEL = ("vosk", "moonshine-voice", "useful-moonshine-onnx")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", action="store_true", help="print each sentence and what was heard")
    args = parser.parse_args()
    if shutil.which("espeak-ng") is None:
        print("espeak-ng is not installed (apt-get install -y espeak-ng)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        notes = [voice_note(s, Path(tmp), i) for i, s in enumerate(SENTENCES)]
        pcms = [audio.decode_pcm(note, rate=16000) for note in notes]
    words = sum(len(s.split()) for s in SENTENCES)
    print(f"{len(SENTENCES)} sentences, {words} words, spoken by espeak-ng (en-us), via OGG/Opus voice notes")
    for name, make in ENGINES.items():
        try:
            hear = make()
        except ImportError:
            print(f"{name:24} not installed (pip install {name})")
            continue
        errors, started = 0, time.perf_counter()
        for sentence, pcm in zip(SENTENCES, pcms):
            heard = normalize(hear(pcm))
            errors += word_errors(sentence, heard)
            if args.verbose:
                print(f"  said:  {sentence}\n  heard: {heard}")
        seconds = time.perf_counter() - started
        print(f"{name:24} WER {errors / words:6.1%} ({errors}/{words} words wrong), {seconds:.1f} s")
    for name in NO_MODEL_IN_WHEEL:
        print(f"{name:24} not measured: its wheel carries no model (a run-time download is not allowed)")
    builtin_voice()
    return 0


def builtin_voice() -> None:
    """The gateway's built-in reply voice (eSpeak NG from the espeakng-loader wheel), heard by pocketsphinx.

    Not a choice of engine: a check that the voice notes the gateway speaks
    carry the words (as intelligible as Debian's espeak-ng above)."""
    try:
        hear = pocketsphinx_engine()
    except ImportError:
        return
    from hermes_gateway._core.voice import espeak

    errors = words = 0
    for sentence in SENTENCES:
        pcm, rate = espeak.synthesize(sentence)
        note = audio.encode_ogg_opus(pcm, rate)
        errors += word_errors(sentence, normalize(hear(audio.decode_pcm(note, rate=16000))))
        words += len(sentence.split())
    print(f"{'built-in reply voice':24} WER {errors / words:6.1%} heard by pocketsphinx "
          f"(the gateway's own voice notes, espeakng-loader)")


if __name__ == "__main__":
    raise SystemExit(main())
