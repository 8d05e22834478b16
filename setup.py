"""Builds libscaleplan.so with make and puts it in the package (see
pyproject.toml); everything else is declared there."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithLibrary(build_py):
    def run(self):
        subprocess.run(["make", "-C", HERE, "lib"], check=True)
        shutil.copy(os.path.join(HERE, "bin", "libscaleplan.so"),
                    os.path.join(HERE, "python", "scaleplan", "libscaleplan.so"))
        super().run()


setup(cmdclass={"build_py": BuildWithLibrary})
