"""``hermes-gateway doctor`` for email: the IMAP login and folder work, and the SMTP server takes the login."""

from __future__ import annotations

from hermes_gateway import scrub_secrets

from .imap import Mailbox
from .settings import EmailSettings


async def doctor(settings: EmailSettings) -> list[tuple[bool, str]]:
    import aiosmtplib

    lines: list[tuple[bool, str]] = []
    try:
        box = await Mailbox.open(settings)
    except Exception as exc:
        lines.append((False, f"imap_url/username/password: {scrub_secrets(str(exc))[:200]}"))
    else:
        await box.close()
        how = "IDLE" if box.idle else f"polling every {settings.poll_interval:g} s (no IDLE)"
        lines.append((True, f"IMAP: logged in, folder {settings.folder} selected, new mail by {how}"))
    where = settings.smtp
    try:
        smtp = aiosmtplib.SMTP(hostname=where.host, port=where.port, use_tls=where.tls,
                               start_tls=False if where.tls else None, validate_certs=settings.tls_verify,
                               timeout=settings.timeout)
        async with smtp:
            await smtp.login(settings.username, settings.password)
    except Exception as exc:
        lines.append((False, f"smtp_url/username/password: {scrub_secrets(str(exc))[:200]}"))
    else:
        lines.append((True, f"SMTP: {where.host}:{where.port} took the login"))
    return lines
