"""Everything behind the public surface: private, and free to change.

Plugins and embedders import only :mod:`hermes_gateway` (the names in its
``__all__``) and :mod:`hermes_gateway.testing`; a test fails when a plugin,
an example or the scaffold's output imports anything from here.
"""
