#!/opt/hermes-gateway/bin/python
"""The image's HEALTHCHECK: exit 0 when the gateway's ``GET /health`` answers 200, else 1 with one line.

Python itself, not curl: the image has no curl and needs none. ``/health`` needs no key and answers 503 while the
gateway stops. ``HERMES_HEALTH_URL`` names another address (a config with another ``api_server.port``). Proxy
variables are ignored: the gateway is on this container's loopback.
"""

import os
import sys
import urllib.request

URL = os.environ.get("HERMES_HEALTH_URL") or "http://127.0.0.1:8642/health"


def main() -> int:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(URL, timeout=4) as response:
            response.read(4096)
    except Exception as exc:  # refused, 503 (stopping), a timeout: unhealthy, said in one line
        print(f"hermes-healthcheck: {URL}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
