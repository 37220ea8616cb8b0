"""The version the package reports is the CHANGELOG's newest released version, and the pages that
name a wheel file name that version's wheel: one number, told the same everywhere."""

import re
from pathlib import Path

import nlgscore
from nlgscore.version import __version__

ROOT = Path(__file__).resolve().parents[2]
HEADING = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", re.MULTILINE)


def released() -> list:
    """The CHANGELOG's released versions, newest first ("Unreleased" is not one)."""
    return HEADING.findall((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))


def test_the_version_is_the_changelogs_newest_release():
    versions = released()
    assert versions, "no '## [X.Y.Z] - YYYY-MM-DD' heading in CHANGELOG.md"
    assert versions == sorted(versions, key=lambda v: tuple(map(int, v.split("."))), reverse=True)
    assert __version__ == nlgscore.__version__ == versions[0]


def test_every_wheel_file_name_in_the_docs_is_this_versions():
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "scripts" / "push_to_hub.py"]
    pages += sorted((ROOT / "docs").rglob("*.md"))
    named = {
        (str(page.relative_to(ROOT)), version)
        for page in pages
        for version in re.findall(r"nlgscore-(\d+\.\d+\.\d+)-py3-none-any\.whl", page.read_text(encoding="utf-8"))
    }
    assert named, "no page names the wheel: the check would pass vacuously"
    assert {(page, version) for page, version in named if version != __version__} == set()
