"""Shared fixtures of the Python package's tests: the built `warden` and `warden-fixture`
(WARDEN_BIN, WARDEN_FIXTURE; ctest sets them) and model folders the fixture tool generates."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Callable, Dict

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = ROOT / "tests" / "data" / "goldens"


def _binary(env: str, name: str) -> str:
    path = os.environ.get(env) or str(ROOT / "build" / "release" / "bin" / name)
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is not built (set {env})")
    return path


@pytest.fixture(scope="session")
def warden_bin() -> str:
    return _binary("WARDEN_BIN", "warden")


@pytest.fixture(scope="session")
def fixture_bin() -> str:
    return _binary("WARDEN_FIXTURE", "warden-fixture")


@pytest.fixture(scope="session")
def make_model(tmp_path_factory: pytest.TempPathFactory, fixture_bin: str) -> Callable[[str], str]:
    """A model folder from warden-fixture's arguments (as a golden's 'command' writes them), made once."""
    made: Dict[str, str] = {}

    def make(args: str) -> str:
        if args not in made:
            out = tmp_path_factory.mktemp("model")
            argv = [a for a in shlex.split(args) if a not in ("warden-fixture",)]
            argv = [str(out) if a == "DIR" else a for a in argv]
            if "--out" not in argv:
                argv += ["--out", str(out)]
            subprocess.run([fixture_bin, *argv], check=True, capture_output=True)
            made[args] = str(out)
        return made[args]

    return make


@pytest.fixture(scope="session")
def use_lite_dir() -> str:
    """USE-lite converted (ctest's use_lite_convert fixture, via WARDEN_USE_LITE_DIR)."""
    d = os.environ.get("WARDEN_USE_LITE_DIR")
    if not d or not (Path(d) / "config.json").is_file():
        pytest.fail("USE-lite is not converted: run the use_lite_convert test first (WARDEN_USE_LITE_DIR)")
    return d
