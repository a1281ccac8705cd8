from hermes_gateway.config import parse_config


def test_defaults_use_the_demo_model_and_streaming_off():
    config = parse_config({}, env={})
    assert config.model.is_demo
    assert config.streaming_for("telegram").enabled is False
