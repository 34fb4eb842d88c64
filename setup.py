"""Maps the repository's top-level parts into the one `muninn` import namespace.

The root shows the data flow (export → guards → plugins → evals, nightly); the build puts
each folder under `muninn.` so nothing generic like `export` lands in site-packages.
"""

from setuptools import find_packages, setup

PARTS = ("export", "guards", "plugins", "evals", "nightly")

package_dir = {"muninn": "muninn"}
packages = ["muninn", *(f"muninn.{p}" for p in find_packages("muninn"))]
for part in PARTS:
    package_dir[f"muninn.{part}"] = part
    packages += [f"muninn.{part}", *(f"muninn.{part}.{p}" for p in find_packages(part))]

setup(package_dir=package_dir, packages=packages, include_package_data=True)
