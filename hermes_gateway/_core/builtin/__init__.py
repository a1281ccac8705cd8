"""Built-in plugins: registered from ``plugins.BUILTIN_PLUGINS`` like any third-party plugin."""
