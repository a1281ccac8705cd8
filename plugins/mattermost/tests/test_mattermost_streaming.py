"""A reply streams into one post by edits, within the server's rate limit, and ends complete.

What a person sees on the emulator: one post of the bot's that grows
(``PUT /posts/{id}/patch``) and ends as the whole reply; the server's
limiter (GCRA, as ``RateLimitSettings``) never answered 429 when the bot
keeps to its budget, and when the server's 429s do come the reply still
ends complete, once, with no call made before a 429's wait was over.
"""

from __future__ import annotations

from hermes_gateway import RateBudget
from hermes_mattermost.emulator import ALICE_ID, BOT_ID, MattermostEmulator
from mattermost_test_support import eventually, gateway

WORDS = " ".join(f"word{i}" + ("." if i % 12 == 11 else "") for i in range(400))


def patches(mm: MattermostEmulator, post_id: str) -> int:
    return sum(1 for c in mm.calls if c.method == "PUT" and c.path == f"/api/v4/posts/{post_id}/patch"
               and c.status == 200)


async def streamed(mm: MattermostEmulator, channel: str, **kw) -> str:
    mm.channel(channel, "D")
    async with gateway(mm, **kw):
        await eventually(lambda: mm.connected() == 1, lambda: mm.calls[-3:])
        await mm.post_as(ALICE_ID, channel, "echo: " + WORDS)
        await eventually(lambda: mm.screen(channel) == [WORDS], lambda: mm.screen(channel), timeout=60)
    [post] = mm.bot_posts(channel)
    return post.id


async def test_a_400_word_reply_streams_by_edits_with_no_429_at_a_servers_tight_limit():
    """The operator sets the bot's budget under the server's limit (``rate_limits``): not one 429."""
    async with MattermostEmulator(per_sec=4, max_burst=2) as mm:  # 4 calls a second, 3 at once
        limits = {"budgets": {"default": RateBudget(rate=3, burst=2)}, "bot_budget": RateBudget(rate=3, burst=2),
                  "edit_interval": 0.05}
        # 400 words at 200 tokens a second: about 2.5 s of edits at 3 a second (at 800 a loaded machine saw only 2)
        post = await streamed(mm, "dmtight0000000000000000000", limits=limits, tokens_per_second=200)
        assert patches(mm, post) >= 3, "the reply grew by edits"
        assert mm.count(429) == 0 and not mm.violations, [c for c in mm.calls if c.status == 429]


async def test_the_declared_budgets_keep_under_mattermosts_default_limit():
    """The platform's own limits (no override) against Mattermost's default limiter (10/s, burst 100)."""
    async with MattermostEmulator() as mm:
        post = await streamed(mm, "dmdefault00000000000000000", limits=None, tokens_per_second=1000)
        assert patches(mm, post) >= 1
        assert mm.count(429) == 0 and not mm.violations


async def test_the_servers_429s_are_waited_out_and_the_reply_ends_complete_once():
    """Another replica on the same token uses up the server's limit while the reply streams: the 429s it
    earns the bot are honoured (never a call before ``Retry-After`` passed) and the reply ends whole, in one post."""
    async with MattermostEmulator(per_sec=5, max_burst=2) as mm:
        channel = "dmshared000000000000000000"
        mm.channel(channel, "D")

        async with gateway(mm, tokens_per_second=300):
            await eventually(lambda: mm.connected() == 1, lambda: mm.calls[-3:])
            mm.busy_elsewhere.add(BOT_ID)  # another replica spends the limit before each of the bot's calls
            await mm.post_as(ALICE_ID, channel, "echo: " + WORDS)
            await eventually(lambda: mm.count(429) >= 2, lambda: mm.calls[-3:], timeout=60)
            mm.busy_elsewhere.clear()
            await eventually(lambda: mm.screen(channel) == [WORDS], lambda: mm.screen(channel), timeout=60)
        assert len(mm.bot_posts(channel)) == 1
        assert not mm.violations, mm.violations
