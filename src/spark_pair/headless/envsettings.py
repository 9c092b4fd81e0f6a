"""Settings from the environment and flags alone, used only when spark_pair.config is missing
(a partial install). The full loader (files, sources, warnings) lives in spark_pair.config."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError


@dataclass
class EnvSettings:
    values: dict[str, str]
    warnings: list[str] = field(default_factory=list)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    api_key: str | None = None

    def client_options(self, task: str = "edit") -> Any:
        from ..protocol.client import ClientOptions

        base_url = self.values.get("model.base_url")
        if not base_url:
            raise ConfigError("no base URL configured",
                              hint="set SPARK_PAIR_BASE_URL or pass --base-url")
        return ClientOptions(base_url=base_url, api_key=self.api_key,
                             model=self.values.get("model.name", "gpt-5.3-codex-spark"),
                             transport=self.values.get("session.transport", "auto"), task=task)


def load_env_settings(cwd: Path | None = None, env: Mapping[str, str] | None = None,
                      overrides: dict[str, str] | None = None) -> EnvSettings:
    env = os.environ if env is None else env
    values = {k: v for k, v in {"model.base_url": env.get("SPARK_PAIR_BASE_URL", ""),
                                "model.name": env.get("SPARK_PAIR_MODEL", ""),
                                "session.transport": env.get("SPARK_PAIR_TRANSPORT", "")}.items()
              if v}
    values.update(overrides or {})
    key_env = env.get("SPARK_PAIR_API_KEY_ENV") or "SPARK_PAIR_API_KEY"
    key = (env.get(key_env) or "").strip() or None
    return EnvSettings(values, api_key=key)
