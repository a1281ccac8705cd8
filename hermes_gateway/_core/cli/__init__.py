"""Command-line entry points; each subcommand lives in its own module."""
