"""The interactive chat in a real terminal (a pty drawn by pyte), answered by the real agent's demo model."""

from __future__ import annotations

import time

from cli_helpers import terminal_rows, write_config

PROMPT = "›"
LONG_WORDS = " ".join(f"w{i:03d}" for i in range(200))


def squash(text: str) -> str:
    """Text without whitespace: soft-wrapped lines on the screen compare equal to the reply."""
    return "".join(text.split())


def rejoin(lines: list[str]) -> str:
    """A paragraph put back together: the box wraps between words, so each row break was one space."""
    return " ".join(lines)


def nonblank(screen: str) -> list[str]:
    return [line for line in screen.splitlines() if line.strip()]


def last_box(screen: str) -> tuple[list[str], bool] | None:
    """The body lines of the newest reply box and whether its bottom border is drawn yet."""
    lines = screen.splitlines()
    tops = [i for i, line in enumerate(lines) if line.startswith("╭─")]
    if not tops:
        return None
    body: list[str] = []
    for line in lines[tops[-1] + 1:]:
        if line.startswith("╰"):
            return body, True
        body.append(line)
    while body and not body[-1].strip():
        body.pop()
    return body, False


def at_prompt(screen: str) -> bool:
    lines = nonblank(screen)
    return bool(lines) and lines[-1].strip() == PROMPT


def start_chat(terminal, tmp_path, *, tokens_per_second: float, streaming: bool | None, extra=()):
    config = write_config(tmp_path, tokens_per_second=tokens_per_second, streaming=streaming)
    term = terminal("chat", "--config", str(config), *extra)
    term.wait_for(at_prompt)
    return term


def test_a_new_user_is_greeted_with_the_model_and_help(terminal, tmp_path):
    term = start_chat(terminal, tmp_path, tokens_per_second=0, streaming=True)
    banner = nonblank(term.text())[0]
    assert "demo model — set model.base_url in config.yaml for a real one" in banner
    assert "/help" in banner
    term.enter("/help")
    screen = term.wait_for(lambda s: "Model:" in s and at_prompt(s))
    for expected in ("/new", "/help", "Ctrl-C", "Replies stream as they are written"):
        assert expected in screen
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_a_reply_grows_inside_the_box_while_it_is_generated(terminal, tmp_path):
    words = " ".join(f"grow{i:02d}" for i in range(40))  # about 2 s at 20 tokens/s
    term = start_chat(terminal, tmp_path, tokens_per_second=20, streaming=True)
    term.enter(f"echo: {words}")

    def growing_box(screen: str) -> bool:
        box = last_box(screen)
        return box is not None and not box[1] and len(squash("".join(box[0]))) > 0

    first = last_box(term.wait_for(growing_box))[0]
    shown_first = squash("".join(first))
    second = last_box(term.wait_for(
        lambda s: growing_box(s) and len(squash("".join(last_box(s)[0]))) > len(shown_first)))[0]
    shown_second = squash("".join(second))
    # Two mid-reply screens: each a proper beginning of the reply, the later one longer.
    assert squash(words).startswith(shown_first) and squash(words).startswith(shown_second)
    assert len(shown_first) < len(shown_second) < len(squash(words))

    done = term.wait_for(lambda s: last_box(s) is not None and last_box(s)[1] and at_prompt(s))
    body = last_box(done)[0]
    assert rejoin(body) == words
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_ctrl_c_stops_a_reply_keeps_what_was_shown_and_returns_to_the_prompt(terminal, tmp_path):
    term = start_chat(terminal, tmp_path, tokens_per_second=10, streaming=True)  # 200 words: about 20 s
    term.enter(f"echo: {LONG_WORDS}")
    term.wait_for(lambda s: last_box(s) is not None and "w005" in "".join(last_box(s)[0]))
    pressed = time.monotonic()
    term.ctrl("c")
    screen = term.wait_for(lambda s: last_box(s) is not None and last_box(s)[1] and at_prompt(s))
    stopped_after = time.monotonic() - pressed
    body = last_box(screen)[0]
    assert any("interrupted" in line for line in body)
    shown = squash("".join(line for line in body if "interrupted" not in line))
    assert shown.startswith(squash("w000 w001 w002 w003 w004 w005"))
    assert squash(LONG_WORDS).startswith(shown) and len(shown) < len(squash(LONG_WORDS))
    assert stopped_after < 10, "the reply ran on instead of stopping"

    # Nothing more of the interrupted reply arrives later.
    settle = time.monotonic() + 1.0
    while time.monotonic() < settle:
        term.pump(0.1)
    assert term.text() == screen

    # The chat goes on: the next message gets its own complete reply.
    term.enter("echo: still here")
    after = term.wait_for(lambda s: last_box(s) is not None and last_box(s)[1] and "still here" in
                          "".join(last_box(s)[0]) and at_prompt(s))
    assert last_box(after)[0] == ["still here"]
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_with_streaming_off_the_reply_appears_whole_and_once(terminal, tmp_path):
    words = " ".join(f"whole{i:02d}" for i in range(20))  # about 1 s at 20 tokens/s
    term = start_chat(terminal, tmp_path, tokens_per_second=20, streaming=False)
    term.enter(f"echo: {words}")
    term.wait_for("thinking")  # the spinner says something is happening
    partial_screens: list[str] = []

    def finished(screen: str) -> bool:
        box = last_box(screen)
        if box is not None:
            shown = squash("".join(box[0]))
            if shown and shown != squash(words):
                partial_screens.append(screen)
        return box is not None and box[1] and at_prompt(screen)

    screen = term.wait_for(finished)
    assert partial_screens == [], f"part of the reply was shown before it was complete:\n{partial_screens[0]}"
    assert rejoin(last_box(screen)[0]) == words
    reply_rows = [line for line in screen.splitlines() if "whole00" in line and not line.startswith(PROMPT)]
    assert len(reply_rows) == 1
    assert "thinking" not in screen
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_ctrl_c_clears_typed_text_and_at_an_empty_prompt_leaves(terminal, tmp_path):
    term = start_chat(terminal, tmp_path, tokens_per_second=0, streaming=True)
    term.type("half a thought")
    term.wait_for("half a thought")
    term.ctrl("c")
    term.wait_for(lambda s: "half a thought" not in s and at_prompt(s))
    term.ctrl("c")
    assert term.wait_exit() == 0


def test_slash_commands(terminal, tmp_path):
    term = start_chat(terminal, tmp_path, tokens_per_second=0, streaming=True)
    term.enter("/nope")
    term.wait_for("unknown command /nope")
    term.enter("/new")
    term.wait_for("new conversation")
    term.enter("/quit")
    assert term.wait_exit() == 0


def test_an_upstream_error_is_one_line_in_the_chat(terminal, tmp_path):
    config = tmp_path / "broken.yaml"
    config.write_text("model:\n  base_url: http://127.0.0.1:9/v1\n  name: some-model\n  api_key: sk-secret-value\n"
                      "  timeouts:\n    connect: 2\nstreaming:\n  cli: true\n", encoding="utf-8")
    term = terminal("chat", "--config", str(config))
    term.wait_for(at_prompt)
    term.enter("hello")
    screen = term.wait_for(lambda s: "✗" in s and at_prompt(s))
    errors = [line for line in screen.splitlines() if "✗" in line]
    assert len(errors) == 1
    assert "Traceback" not in screen and "sk-secret-value" not in screen
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_ctrl_c_cancels_the_upstream_request(terminal, tmp_path, demo_upstream):
    upstream = demo_upstream(tokens_per_second=10)  # 200 words: about 20 s if nothing stops it
    config = tmp_path / "http.yaml"
    config.write_text(f"model:\n  base_url: {upstream.base_url}\n  name: demo\n  api_key: test-key\n"
                      "streaming:\n  cli: true\n", encoding="utf-8")
    term = terminal("chat", "--config", str(config))
    term.wait_for(at_prompt)
    term.enter(f"echo: {LONG_WORDS}")
    term.wait_for(lambda s: last_box(s) is not None and "w005" in "".join(last_box(s)[0]))
    assert [r["outcome"] for r in upstream.requests] == ["running"]
    pressed = time.monotonic()
    term.ctrl("c")
    term.wait_for(lambda s: last_box(s) is not None and last_box(s)[1] and at_prompt(s))
    while upstream.requests[0]["outcome"] == "running" and time.monotonic() - pressed < 10:
        term.pump(0.1)
    assert upstream.requests[0]["outcome"] == "client went away"
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_a_tool_call_is_announced_before_the_reply_box(terminal, tmp_path):
    term = start_chat(terminal, tmp_path, tokens_per_second=20, streaming=True)
    term.enter('tool: calculate {"expression": "6 * 7"}')
    screen = term.wait_for(lambda s: last_box(s) is not None and last_box(s)[1] and at_prompt(s))
    lines = screen.splitlines()
    calling = [i for i, line in enumerate(lines) if line.startswith("🔧 calling calculate")]
    top = next(i for i, line in enumerate(lines) if line.startswith("╭─"))
    assert len(calling) == 1 and calling[0] < top
    assert any("✓ calculate: 42" in line for line in lines[calling[0]:top])
    assert last_box(screen)[0] == ["The tool calculate returned: 42"]
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_think_blocks_are_never_on_screen(terminal, tmp_path):
    term = start_chat(terminal, tmp_path, tokens_per_second=40, streaming=True)
    term.enter("think: the part you may see")
    seen_think: list[str] = []

    def done(screen: str) -> bool:
        box = last_box(screen)
        if any(leak in screen for leak in ("<think", "think>", "reasoning", "canned")):
            seen_think.append(screen)
        return box is not None and box[1] and at_prompt(screen)

    screen = term.wait_for(done)
    assert seen_think == []
    assert last_box(screen)[0] == ["the part you may see"]
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_the_prompt_history_survives_a_restart(terminal, tmp_path):
    term = start_chat(terminal, tmp_path, tokens_per_second=0, streaming=True)
    term.enter("echo: remember me")
    term.wait_for(lambda s: last_box(s) is not None and last_box(s)[1] and at_prompt(s))
    term.ctrl("d")
    assert term.wait_exit() == 0

    again = start_chat(terminal, tmp_path, tokens_per_second=0, streaming=True)
    again.type("\x1b[A")  # the Up arrow
    again.wait_for(lambda s: nonblank(s)[-1] == f"{PROMPT} echo: remember me")
    again.ctrl("c")
    again.ctrl("d")
    assert again.wait_exit() == 0


def test_sigterm_during_a_reply_leaves_the_terminal_as_it_was(terminal, tmp_path):
    import signal
    import termios

    term = start_chat(terminal, tmp_path, tokens_per_second=10, streaming=True)
    term.enter(f"echo: {LONG_WORDS}")
    term.wait_for(lambda s: last_box(s) is not None and "w003" in "".join(last_box(s)[0]))
    mid_reply = termios.tcgetattr(term.child.child_fd)[3]
    assert not mid_reply & termios.ICANON and mid_reply & termios.ISIG  # keys wait quietly, Ctrl-C works
    term.child.kill(signal.SIGTERM)
    term.wait_output_end()
    after = termios.tcgetattr(term.child.child_fd)[3]
    assert after & termios.ICANON and after & termios.ISIG  # the line discipline is back
    assert term.wait_exit() == 128 + signal.SIGTERM


def test_the_conversation_is_remembered_until_new(terminal, tmp_path, demo_upstream):
    upstream = demo_upstream(tokens_per_second=0)
    config = tmp_path / "http.yaml"
    config.write_text(f"model:\n  base_url: {upstream.base_url}\n  name: demo\n  api_key: test-key\n"
                      "streaming:\n  cli: true\n", encoding="utf-8")
    term = terminal("chat", "--config", str(config))
    term.wait_for(at_prompt)

    def ask(message: str, reply: str) -> list[dict]:
        count = len(upstream.requests)
        term.enter(message)
        term.wait_for(lambda s: last_box(s) is not None and last_box(s)[0] == [reply] and at_prompt(s))
        assert len(upstream.requests) == count + 1
        return [{"role": m["role"], "content": m["content"]} for m in upstream.requests[-1]["body"]["messages"]]

    assert ask("echo: first", "first") == [{"role": "user", "content": "echo: first"}]
    assert ask("echo: second", "second") == [
        {"role": "user", "content": "echo: first"}, {"role": "assistant", "content": "first"},
        {"role": "user", "content": "echo: second"}]
    term.enter("/new")
    term.wait_for("new conversation")
    assert ask("echo: third", "third") == [{"role": "user", "content": "echo: third"}]
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_keys_typed_during_a_reply_wait_for_the_next_prompt(terminal, tmp_path):
    words = " ".join(f"ahead{i:02d}" for i in range(40))  # about 2 s at 20 tokens/s
    term = start_chat(terminal, tmp_path, tokens_per_second=20, streaming=True)
    term.enter(f"echo: {words}")
    typing_at = term.wait_for(lambda s: last_box(s) is not None and "ahead02" in "".join(last_box(s)[0]))
    term.type("next question")
    assert not last_box(typing_at)[1]
    screen = term.wait_for(lambda s: last_box(s) is not None and last_box(s)[1])
    assert rejoin(last_box(screen)[0]) == words  # nothing typed was drawn into the reply
    term.wait_for(lambda s: nonblank(s)[-1] == f"{PROMPT} next question")
    term.ctrl("c")
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_a_stream_that_breaks_part_way_is_replaced_in_plain_sight(terminal, tmp_path, demo_upstream):
    words = " ".join(f"redo{i:02d}" for i in range(30))
    upstream = demo_upstream(tokens_per_second=20, drop_first_stream_after=8)
    config = tmp_path / "http.yaml"
    config.write_text(f"model:\n  base_url: {upstream.base_url}\n  name: demo\n  api_key: test-key\n"
                      "streaming:\n  cli: true\n", encoding="utf-8")
    term = terminal("chat", "--config", str(config))
    term.wait_for(at_prompt)
    term.enter(f"echo: {words}")
    screen = term.wait_for(lambda s: last_box(s) is not None and last_box(s)[1] and at_prompt(s))
    body = last_box(screen)[0]
    seams = [i for i, line in enumerate(body) if line.startswith("↻")]
    assert len(seams) == 1, "\n".join(body)
    before, after = body[:seams[0]], body[seams[0] + 1:]
    assert before and words.startswith(rejoin(before)) and rejoin(before) != words  # the broken part
    assert rejoin(after) == words  # then the whole reply, once
    assert [r["outcome"] for r in upstream.requests][-1] == "completed"
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_a_tools_image_is_listed_by_its_path_after_the_reply_box(terminal, tmp_path):
    term = start_chat(terminal, tmp_path, tokens_per_second=40, streaming=True)
    term.enter('tool: qr_code {"text": "hello"}')
    screen = term.wait_for(lambda s: last_box(s) is not None and last_box(s)[1] and at_prompt(s))
    lines = screen.splitlines()
    assert rejoin(last_box(screen)[0]) == \
        "The tool qr_code returned: A QR code for 5 characters of text. [image: qr.png attached]"
    bottom = max(i for i, line in enumerate(lines) if line.startswith("╰"))
    after = [line for line in lines[bottom + 1:] if line.strip() not in ("", PROMPT)]
    media = tmp_path / "home" / ".hermes" / "media"
    (png,) = media.iterdir()
    assert after == terminal_rows(f"📎 image: {png} — hello")  # a long path wraps, maybe right at a space
    assert png.read_bytes().startswith(b"\x89PNG")
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_attach_sends_a_photo_and_a_pdf_with_the_next_message(terminal, tmp_path):
    """The demo model says what it was given: the photo's size after downscaling, the PDF's first words."""
    from files_helpers import image_bytes, pdf_bytes

    (tmp_path / "wide.png").write_bytes(image_bytes(3136, 1000))
    (tmp_path / "memo.pdf").write_bytes(pdf_bytes("Lunch moved to Thursday"))
    term = start_chat(terminal, tmp_path, tokens_per_second=0, streaming=False)
    term.enter(f"/attach {tmp_path / 'wide.png'}")
    term.wait_for("wide.png (image,")
    term.enter(f"/attach {tmp_path / 'memo.pdf'}")
    term.wait_for("memo.pdf (document,")
    term.enter(f"/attach {tmp_path / 'missing.png'}")
    term.wait_for("cannot attach")
    term.enter("describe: these")
    screen = term.wait_for(lambda s: (box := last_box(s)) is not None and box[1] and at_prompt(s))
    said = rejoin(last_box(screen)[0])
    assert said == ('I see a JPEG image of 1568x500 pixels; a document memo.pdf (PDF, 1 page) that begins "Lunch '
                    'moved to Thursday".')
    term.enter("describe: again")  # the files went with one message only
    screen = term.wait_for(lambda s: "no image at all" in s and at_prompt(s))
    term.ctrl("d")
    assert term.wait_exit() == 0
