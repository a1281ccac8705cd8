"""Keep the access token, the app secret and the verify token out of error messages.

The token travels only in the ``Authorization`` header and the secret only
feeds the HMAC, so neither should ever be printed; but a Graph API error
text, a proxy's error page or a webhook's query string (the verify token
arrives in one) can echo them. The core registers the settings' secret
fields with its log scrubber; :func:`scrub` cleans the text of the
exceptions this plugin raises the same way.
"""

from __future__ import annotations

from hermes_gateway import scrub_secrets as scrub

__all__ = ["scrub"]
