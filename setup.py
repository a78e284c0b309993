"""Builds warden._warden with CMake (the src/python target) for `pip install .` (pyproject.toml).

The tree is WARDEN_BUILD_DIR (default build/python, a Release tree without the tests); a tree
that already built the module (build/release) is reused as it is.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        tree = Path(os.environ.get("WARDEN_BUILD_DIR", ROOT / "build" / "python")).resolve()
        if not (tree / "CMakeCache.txt").exists():
            subprocess.check_call(
                ["cmake", "-S", str(ROOT), "-B", str(tree), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                 "-DWARDEN_TESTS=OFF", f"-DWARDEN_PACKAGE_PYTHON={sys.executable}"]
            )
        subprocess.check_call(
            ["cmake", "--build", str(tree), "--target", "warden_python", "--parallel", str(os.cpu_count() or 2)]
        )
        built = tree / "python" / "warden"
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built / target.name, target)
        (target.parent / "data").mkdir(exist_ok=True)
        shutil.copyfile(built / "data" / "guard_bank.jsonl", target.parent / "data" / "guard_bank.jsonl")


setup(
    package_dir={"": "python"},
    packages=["warden"],
    package_data={"warden": ["py.typed"]},
    ext_modules=[Extension("warden._warden", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build/setuptools"}, "egg_info": {"egg_base": "build"}},
    zip_safe=False,
)
