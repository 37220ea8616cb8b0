"""The package list, found on disk (the metadata and everything else is in setup.cfg).

Every folder of ``nlgscore/`` is a package, and so is every folder of the two trees shipped inside
it under other names (setup.cfg's ``package_dir``): ``baselines/`` as ``nlgscore.baselines`` and
``metrics/`` (the evaluate modules) as ``nlgscore.evaluate_modules``. Listing them all keeps
setuptools from warning about data folders that look like undeclared packages, and a new metric,
module or baseline language needs no line here. ``setup.cfg`` cannot say this itself: its
``packages = find:`` searches one folder and names packages after their path.
"""

from setuptools import find_namespace_packages, setup

# package -> the folder it is read from (setup.cfg's package_dir maps the last two)
FOLDERS = {"nlgscore": "nlgscore", "nlgscore.baselines": "baselines", "nlgscore.evaluate_modules": "metrics"}


def _importable(name: str) -> bool:
    # "en-sci" or "__pycache__" are data or build folders, not packages
    return all(part.isidentifier() and part != "__pycache__" for part in name.split("."))


packages = []
for package, folder in FOLDERS.items():
    packages += [package] + [f"{package}.{sub}" for sub in find_namespace_packages(where=folder) if _importable(sub)]

setup(packages=sorted(packages))
