"""Which model and system prompt a chat's turn runs with, and where each came from."""

from __future__ import annotations

from hermes_gateway._core.config import parse_config
from hermes_gateway._core.operator.profile import available_models, find_model, resolve

CONFIG = parse_config({
    "model": {"base_url": "http://127.0.0.1:9/v1", "name": "small-model", "system_prompt": "Default.",
              "fallback": [{"base_url": "http://127.0.0.1:9/v2", "name": "backup-model"}]},
    "models": {"big": {"base_url": "http://127.0.0.1:9/v1", "name": "big-model", "system_prompt": "Big."},
               "plain": {"base_url": "http://127.0.0.1:9/v1", "name": "plain-model"}},
    "personas": {"pirate": {"system_prompt": "Arr."}, "poet": {"system_prompt": "Verse.", "model": "big"}},
}, source="cfg.yaml", env={})


def test_models_list_the_default_its_fallbacks_and_the_named_ones():
    models = available_models(CONFIG)
    assert list(models) == ["small-model", "backup-model", "big", "plain"]
    assert models["backup-model"].endpoint.name == "backup-model" and models["backup-model"].fallback == ()
    assert find_model(CONFIG, "big-model")[0] == "big"  # the requested name works as an alias
    assert find_model(CONFIG, "nope") is None


def test_nothing_chosen_is_the_config_itself():
    profile = resolve(CONFIG, {})
    assert profile.model == CONFIG.model and profile.model_name == "small-model" and profile.persona is None
    assert profile.origins["model"] == "cfg.yaml (model)"


def test_a_chosen_model_wins_over_the_personas_model_and_keeps_its_own_prompt():
    profile = resolve(CONFIG, {"model": "big"})
    assert (profile.model.endpoint.name, profile.system_prompt) == ("big-model", "Big.")
    assert profile.origins == {"model": "this chat's /model", "system_prompt": "cfg.yaml (models.big.system_prompt)"}
    both = resolve(CONFIG, {"model": "plain", "persona": "poet"})
    assert (both.model.endpoint.name, both.system_prompt) == ("plain-model", "Verse.")


def test_a_model_without_a_prompt_keeps_the_default_prompt_and_a_persona_replaces_it():
    assert resolve(CONFIG, {"model": "plain"}).system_prompt == "Default."
    poet = resolve(CONFIG, {"persona": "poet"})
    assert (poet.model.endpoint.name, poet.system_prompt, poet.persona) == ("big-model", "Verse.", "poet")
    assert poet.origins["model"] == "cfg.yaml (personas.poet.model)"
    assert poet.origins["system_prompt"] == "cfg.yaml (personas.poet)"


def test_a_choice_the_config_no_longer_has_is_passed_over():
    profile = resolve(CONFIG, {"model": "removed", "persona": "gone"})
    assert profile.model == CONFIG.model and profile.persona is None
