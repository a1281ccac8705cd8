"""config.yaml's feature sections, each parsed by its own module, beneath ``config`` (which calls them).

``mcp`` (``mcp_servers:``), ``reactions`` (``reactions:``), ``outbound``
(``send:``, ``schedules:``, ``reminders:``), ``operator`` (``models:``,
``personas:``, ``access:``, ``commands:``, ``overrides:``, ``usage:``,
``pricing:``). They sit here rather than in their features' packages so that
``config`` imports nothing above itself; the features import their settings
from here.
"""
