"""Map the top-level folders onto the subpackages of the namespace package ``mlx26``.

pyproject.toml holds the metadata; this file only computes the package list, because
setuptools' ``packages.find`` cannot add the ``mlx26.`` prefix to discovered subpackages.
"""

from setuptools import find_packages, setup

ROOTS = ("cli", "core", "kernels", "fpga")

packages: list[str] = []
package_dir: dict[str, str] = {}
for root in ROOTS:
    packages.append(f"mlx26.{root}")
    package_dir[f"mlx26.{root}"] = root
    packages += [f"mlx26.{root}.{sub}" for sub in find_packages(root)]

setup(packages=packages, package_dir=package_dir)
