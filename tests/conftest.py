"""Suite-wide settings. ``--hypothesis-profile=deep`` runs the property tests much longer."""

from hypothesis import settings

settings.register_profile("ci", max_examples=150)
settings.register_profile("deep", max_examples=3000)
settings.load_profile("ci")
