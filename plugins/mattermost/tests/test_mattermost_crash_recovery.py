"""A gateway killed mid-reply (SIGKILL), then started again: the cut post is finished once, nothing answered twice.

At the restart the post shows no cursor and ends with the core's note; the
catch-up (which fetches the channel's posts since the newest one seen) does
not answer the person's message again; the next message is answered.
"""

from __future__ import annotations

import signal

from hermes_gateway.testing import eventually
from hermes_gateway.testing.process import GatewayProcess
from hermes_mattermost.emulator import ALICE_ID, BOT_TOKEN

CURSOR = " ▌"
CRASH_NOTE = "— interrupted; please send your message again"
WORDS = " ".join(f"word{i}" for i in range(80))
DM = "dmcrash0000000000000000000"


def config(mm, tmp_path):
    return {
        "model": {"demo": {"tokens_per_second": 8}},
        "api_server": {"enabled": False},
        "streaming": {"mattermost": True, "min_tokens": 2},
        "store": {"path": str(tmp_path / "state.db")},
        "conversation": {"after_crash": "note"},
        "platforms": {"mattermost": {"enabled": True, "url": mm.base_url, "token": BOT_TOKEN,
                                     "reconnect_delay": 0.1}},
    }


async def test_a_reply_cut_by_sigkill_ends_with_the_note_at_restart(mm, tmp_path):
    mm.channel(DM, "D")
    env = {"HERMES_LOAD_PLUGINS": "mattermost"}
    async with GatewayProcess(config(mm, tmp_path), tmp_path, env=env) as gateway:
        await gateway.started()
        await eventually(lambda: mm.connected() == 1, lambda: mm.calls[-3:], timeout=30)
        await mm.post_as(ALICE_ID, DM, "echo: " + WORDS)
        await eventually(lambda: any(t.endswith(CURSOR) and "word5" in t for t in mm.screen(DM)),
                         lambda: mm.screen(DM), timeout=30)
        await gateway.stop(sig=signal.SIGKILL)
    cut = mm.screen(DM)[-1]
    assert cut.endswith(CURSOR)
    async with GatewayProcess(config(mm, tmp_path), tmp_path, env=env) as gateway:
        await gateway.started()
        await eventually(lambda: mm.screen(DM)[-1].endswith(CRASH_NOTE), lambda: mm.screen(DM), timeout=10)
        assert mm.screen(DM) == [f"{cut[: -len(CURSOR)].rstrip()}\n\n{CRASH_NOTE}"]
        await eventually(lambda: mm.connected() == 1, lambda: mm.calls[-3:], timeout=30)
        await mm.post_as(ALICE_ID, DM, "echo: still there?")
        await eventually(lambda: mm.screen(DM)[-1:] == ["still there?"], lambda: mm.screen(DM), timeout=20)
        stopped = await gateway.stop()
    assert stopped.returncode == 0
    assert len(mm.screen(DM)) == 2, mm.screen(DM)
