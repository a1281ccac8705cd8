"""A platform's own small values (a sync position, a cursor), kept beside the conversations.

A platform plugin sometimes has state of its own that must survive a restart and be shared by replicas:
Matrix's sync position, an IMAP mailbox's last seen UID. Rather than each plugin bringing a file or a database,
the core keeps a few small JSON values per platform instance in its store (memory, SQLite or PostgreSQL),
reached through :meth:`~hermes_gateway.PlatformContext.get_value` and its kin. Values are stored as JSON text;
the context's bounds (a short key, a value and a platform's total of a few KiB to 1 MiB) keep it small: this is
no database for a plugin's messages.

:class:`PlatformValueRecords` is the seam; the memory backend is here, :mod:`.platform_values_sqlite` and
:mod:`.platform_values_postgres` the others, and one contract test module runs against all three.
"""

from __future__ import annotations

from ..platform_context import LocalValues


class PlatformValueRecords:
    """Get, set and delete one platform's small JSON values (as text); every write is one transaction."""

    async def platform_value(self, platform: str, key: str) -> str | None:
        """The JSON text stored under ``key`` for ``platform``, or None."""
        return None

    async def set_platform_value(self, platform: str, key: str, value: str, max_total: int) -> bool:
        """Store ``value`` (JSON text) under ``key``; False, storing nothing, when the platform's values would
        then hold more than ``max_total`` bytes. Of replicas writing at once, the total is still kept."""
        from .base import StoreError

        raise StoreError(f"{getattr(self, 'location', '(store)')}: this store does not keep platform values")

    async def delete_platform_value(self, platform: str, key: str) -> bool:
        """Remove ``key``; True when it was there."""
        return False


class MemoryPlatformValueRecords(PlatformValueRecords):
    """The values in this process's memory (the :class:`~.memory.MemoryStore`'s; kept across ``close()`` like it)."""

    def _values(self) -> LocalValues:
        values: LocalValues | None = self.__dict__.get("_platform_values")
        if values is None:
            values = self.__dict__["_platform_values"] = LocalValues()
        return values

    async def platform_value(self, platform: str, key: str) -> str | None:
        return await self._values().platform_value(platform, key)

    async def set_platform_value(self, platform: str, key: str, value: str, max_total: int) -> bool:
        return await self._values().set_platform_value(platform, key, value, max_total)

    async def delete_platform_value(self, platform: str, key: str) -> bool:
        return await self._values().delete_platform_value(platform, key)
