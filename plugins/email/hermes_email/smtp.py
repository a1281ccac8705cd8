"""Sending one mail through the configured SMTP server (aiosmtplib), its failures in the core's two errors.

``smtps://`` is TLS from the first byte (465); ``smtp://`` upgrades with
STARTTLS whenever the server offers it (587, 25). A server's temporary
refusal that names a rate (``421``/``450``/``451``/``452`` with "rate",
"too many" or a 4.7.x code) is :class:`~hermes_gateway.RateLimited`, with
the wait the server names ("try again in N seconds") or a minute; other
4xx and lost connections are retryable; 5xx is for good; a timeout once
the message was handed over may have delivered it and is never repeated.
"""

from __future__ import annotations

import re
from email.message import EmailMessage

from hermes_gateway import DeliveryError, RateLimited, scrub_secrets

from .settings import EmailSettings

RATE_WORDS = re.compile(r"\brate\b|too many|\b4\.7\.\d+|try again in", re.I)
WAIT = re.compile(r"(?:in|after)\s+(\d{1,5})\s*(s\b|sec|second|m\b|min|minute)", re.I)
#: What a rate refusal that names no wait waits.
DEFAULT_WAIT = 60.0


async def send(settings: EmailSettings, message: EmailMessage, recipient: str) -> None:
    import aiosmtplib

    where = settings.smtp
    handed_over = False
    try:
        smtp = aiosmtplib.SMTP(hostname=where.host, port=where.port, use_tls=where.tls,
                               start_tls=False if where.tls else None, validate_certs=settings.tls_verify,
                               timeout=settings.timeout)
        async with smtp:
            if smtp.supports_extension("auth"):  # a port-25 relay may take mail without a login
                await smtp.login(settings.username, settings.password)
            handed_over = True  # from here a timeout may come after the server took the message
            await smtp.send_message(message, sender=settings.address, recipients=[recipient])
    except aiosmtplib.SMTPAuthenticationError as exc:
        raise DeliveryError(f"email: the SMTP server refused the login ({exc.code})", retryable=False) from None
    except aiosmtplib.SMTPRecipientsRefused as exc:
        first = exc.recipients[0] if exc.recipients else None
        code = getattr(first, "code", 550)
        raise _refusal(code, getattr(first, "message", "recipient refused")) from None
    except aiosmtplib.SMTPResponseException as exc:
        raise _refusal(exc.code, exc.message) from None
    except (aiosmtplib.SMTPConnectError, aiosmtplib.SMTPServerDisconnected, ConnectionError) as exc:
        raise DeliveryError(f"email: SMTP connection failed: {_clean(exc)}", retryable=True) from None
    except (aiosmtplib.SMTPTimeoutError, TimeoutError) as exc:
        raise DeliveryError(f"email: the SMTP server did not answer in time: {_clean(exc)}", retryable=True,
                            maybe_delivered=handed_over) from None
    except aiosmtplib.SMTPException as exc:
        raise DeliveryError(f"email: SMTP failed: {_clean(exc)}", retryable=True) from None


def _refusal(code: int, text: str) -> Exception:
    text = _clean(text)
    if 400 <= code < 500 and (code == 421 or RATE_WORDS.search(text)):
        match = WAIT.search(text)
        wait = DEFAULT_WAIT
        if match:
            wait = float(match.group(1)) * (60 if match.group(2).lower().startswith("m") else 1)
        return RateLimited(max(wait, 1.0), scope="bot")
    return DeliveryError(f"email: the SMTP server answered {code} {text}", retryable=400 <= code < 500)


def _clean(value: object) -> str:
    return scrub_secrets(" ".join(str(value).split()))[:200]
