"""The gateway's one HTTP listener, shared by the API server and every platform's webhooks.

Below both: :mod:`.listener` (idle timeouts, the connection cap, parse
errors and accept floods answered in JSON), :mod:`.guards` (Host and Origin
checks, JSON 404/405), :mod:`.cors`, :mod:`.errors` (OpenAI's error shape,
which every refusal on the listener uses) and :mod:`.disconnect` (which
handlers a client's hang-up cancels). The gateway serves its app with
them; the API server (a plugin) mounts its routes behind the same guards.
"""
