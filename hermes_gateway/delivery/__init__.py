"""See the package docstring of hermes_gateway."""
