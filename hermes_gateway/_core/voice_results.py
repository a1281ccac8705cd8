"""What the voice functions hand back: a transcript, or one line for the person about what went wrong.

Plain values beneath every layer that reads them (the voice package, the
API server's audio parts, the demo model that finds a transcript by its
label), so none of those imports the voice package for them.
"""

from __future__ import annotations

from dataclasses import dataclass

#: How a transcript is marked in the text the model reads: the person's words, and that they were spoken.
TRANSCRIPT_LABEL = "[voice note, transcribed]"


@dataclass(frozen=True, slots=True)
class Transcript:
    """What was heard in one audio file. ``text`` is the person's words; ``seconds`` the audio's length."""

    text: str
    seconds: float = 0.0

    def for_model(self) -> str:
        """The line the model reads: the label, then the words (the demo model finds it by the label)."""
        return f"{TRANSCRIPT_LABEL} {self.text}"

    def quoted(self) -> str:
        """The transcript as the chat shows it with ``voice.show_transcript`` (a quote, before the reply)."""
        return "\n".join("> " + line for line in ("🎤 " + self.text).splitlines())


@dataclass(frozen=True, slots=True)
class VoiceProblem:
    """Why a file could not be heard (or spoken): ``line`` is what the person reads, one line."""

    line: str
