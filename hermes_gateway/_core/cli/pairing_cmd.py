"""``hermes-gateway pairing list | approve CODE | revoke USER``: who waits to be let in, and letting them.

Works on the store the config names, while the gateway runs: an approval is
one transaction, and every replica reads approvals from the store for each
message, so the person's next message is answered. Codes are shown in full
here (this is the operator's own terminal), never in the gateway's log.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from ..config import load_config
from ..operator.pairing import shown
from ..operator.store_ops import approve_code, parse_user
from ..store import MEMORY, open_store, store_location


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("list", "approve", "revoke"), help="list pending codes and approved "
                        "users; approve CODE; revoke platform:user_id")
    parser.add_argument("target", nargs="?", metavar="CODE|USER", help="the code to approve, or the user to revoke")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $HERMES_CONFIG, ./config.yaml, "
                                                        "~/.hermes/config.yaml)")


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if store_location(config) == MEMORY:
        print("hermes-gateway: the store is in memory (store.path: \":memory:\"): pairing needs a kept store",
              file=sys.stderr)
        return 1
    if args.action != "list" and not args.target:
        what = "CODE" if args.action == "approve" else "USER (platform:user_id)"
        print(f"hermes-gateway: pairing {args.action} needs {what}", file=sys.stderr)
        return 2
    return asyncio.run(_run(config, args))


async def _run(config, args: argparse.Namespace) -> int:
    store = open_store(config)
    try:
        now = time.time()
        if args.action == "approve":
            approved = await approve_code(store, args.target, "operator (hermes-gateway pairing)", now)
            if approved is None:
                print("hermes-gateway: that code is not valid (wrong, used or expired); nobody was approved",
                      file=sys.stderr)
                return 1
            print(f"approved {approved.platform}:{approved.user_id}")
            return 0
        if args.action == "revoke":
            user = parse_user(args.target)
            if user is None:
                print("hermes-gateway: pairing revoke needs platform:user_id (as pairing list shows it)",
                      file=sys.stderr)
                return 2
            if not await store.revoke_user(*user):
                print(f"{user[0]}:{user[1]} was not approved")
                return 1
            print(f"revoked {user[0]}:{user[1]}")
            return 0
        pending, approved_users = await store.pairings(now), await store.approvals()
        lines = ["PENDING CODES"]
        lines += [f"  {shown(p.code)}  {p.platform}:{p.user_id}  expires in {max(0, round((p.expires - now) / 60))} min"
                  for p in pending] or ["  (none)"]
        lines.append("APPROVED USERS")
        lines += [f"  {a.platform}:{a.user_id}  since {time.strftime('%Y-%m-%d %H:%M', time.localtime(a.approved_at))}"
                  f"  by {a.approved_by}" for a in approved_users] or ["  (none)"]
        print("\n".join(lines))
        return 0
    finally:
        await store.close()
