"""hermes-email: email as a platform for hermes-gateway (IMAP in, SMTP out).

Enable it in config.yaml::

    platforms:
      email:
        imap_url: "imaps://mail.example.org:993"
        smtp_url: "smtps://mail.example.org:465"
        username: bot@example.org
        password: "${EMAIL_PASSWORD}"
        address: bot@example.org

The entry point (group ``hermes_gateway``) registers :data:`plugin`.
"""

from .plugin import NAME, PLATFORM, EmailClient, EmailPlugin
from .settings import EmailSettings

#: The object the ``hermes_gateway`` entry point registers.
plugin = EmailPlugin()

__all__ = ["NAME", "PLATFORM", "EmailClient", "EmailPlugin", "EmailSettings", "plugin"]
