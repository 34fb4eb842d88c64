"""Maps the repository's top-level parts into the one `muninn` import namespace.

The root shows the data flow (export → guards → plugins → evals, nightly); the build puts
each folder under `muninn.` so nothing generic like `export` lands in site-packages.

evals/lab (benchmarks, probes, the corpora harness) is left out of the wheel: an editable install
maps muninn.evals to the evals folder, so a checkout imports muninn.evals.lab all the same.
"""

from setuptools import find_packages, setup

PARTS = ("export", "guards", "plugins", "evals", "nightly")
NOT_SHIPPED = {"evals": ("lab", "lab.*")}

package_dir = {"muninn": "muninn"}
packages = ["muninn", *(f"muninn.{p}" for p in find_packages("muninn"))]
for part in PARTS:
    package_dir[f"muninn.{part}"] = part
    found = find_packages(part, exclude=NOT_SHIPPED.get(part, ()))
    packages += [f"muninn.{part}", *(f"muninn.{part}.{p}" for p in found)]

# Data the commands read: the question sets of `muninn eval --set NAME`, the skills of `muninn skills install`.
package_data = {"muninn.evals": ["questions/*.yaml"], "muninn.plugins.search": ["skills/*/*.md"]}

setup(package_dir=package_dir, packages=packages, package_data=package_data, include_package_data=True)
