"""``hermes-gateway plugins``: what a maintainer sees when checking an installation."""

from __future__ import annotations

import os
import subprocess
import sys


def test_lists_plugins_platforms_limits_and_problems(tmp_path):
    site = tmp_path / "site"
    info = site / "hg_half_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hg_half_plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[hermes_gateway]\nhalf = hg_half_plugin_missing\n")
    cfg = tmp_path / "config.yaml"
    cfg.write_text("streaming:\n  reference: true\nplatforms:\n  reference: {enabled: true}\n")
    result = subprocess.run([sys.executable, "-m", "hermes_gateway", "plugins", "--config", str(cfg)],
                            capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(site), "HERMES_LOAD_PLUGINS": "half"})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "hermes_gateway._core.builtin.reference  (built-in)" in out
    assert "reference  [enabled, streaming on]  from hermes_gateway._core.builtin.reference (built-in)" in out
    assert "max 4096 utf16 per message" in out and "group 20/min burst 3" in out
    assert "media: image ≤10 MB, video ≤50 MB, audio ≤50 MB, document ≤50 MB; captions 1024" in out
    assert "plugin 'half' skipped: failed to import hg_half_plugin_missing (ModuleNotFoundError" in out


def test_a_platform_is_disabled_until_the_config_enables_it(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("{}\n")
    result = subprocess.run([sys.executable, "-m", "hermes_gateway", "plugins", "--config", str(cfg)],
                            capture_output=True, text=True, timeout=60)
    assert "reference  [disabled, streaming off]" in result.stdout


def test_version_and_help_list_every_command():
    version = subprocess.run([sys.executable, "-m", "hermes_gateway", "--version"], capture_output=True, text=True,
                             timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("hermes-gateway ")
    help_text = subprocess.run([sys.executable, "-m", "hermes_gateway", "--help"], capture_output=True, text=True,
                               timeout=60).stdout
    for command in ("chat", "ask", "run", "plugins", "config", "demo-llm"):
        assert f"    {command} " in help_text


def test_binary_limits_show_in_mib_and_decimal_ones_in_mb():
    """Discord states 10 MiB, Telegram 10 MB, Slack 1 GiB: each shown as stated, never "10.4858 MB"."""
    from hermes_gateway import MediaLimits
    from hermes_gateway._core.cli.plugins_cmd import describe_media, size

    assert [size(n) for n in (10 * 2**20, 10_000_000, 2**30, 5 * 10**9, 512 * 2**10, 1_500_000, 12_345)] == \
        ["10 MiB", "10 MB", "1 GiB", "5 GB", "512 KiB", "1500 kB", "12,345 bytes"]
    limits = MediaLimits(kinds={"image", "document"}, max_bytes={"image": 10 * 2**20, "document": 50_000_000})
    assert describe_media(limits).startswith("image ≤10 MiB, document ≤50 MB; ")
