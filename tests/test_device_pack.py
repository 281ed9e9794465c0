"""What a lent GPU machine is given (tests/device/pack_site.sh) covers what the book imports there.

pack_site.sh installs the wheels of tests/device/missing.txt with ``--no-deps`` beside the image's
own packages (tests/device/image.txt), so a requirement in neither list is missing there: the
book's site build once failed on the GPU for that (importlib_metadata 10 needs lazy_importer). The
pins are this environment's versions (at packing time), whose metadata (Requires-Dist) is read
here, evaluated for the image's Python 3.12 on Linux; a package installed here at another version
is skipped, since its metadata is not the packed one's.
"""

import importlib.metadata as md
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

DEVICE = Path(__file__).resolve().parent / "device"
IMAGE_ENV = {
    **default_environment(),
    "python_version": "3.12",
    "python_full_version": "3.12.3",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "extra": "",
}


def _lines(name: str) -> list[str]:
    text = (DEVICE / name).read_text().splitlines()
    return [s.strip() for s in text if s.strip() and not s.lstrip().startswith("#")]


PINS = {canonicalize_name(n): v for n, v in (s.split("==") for s in _lines("missing.txt"))}
THERE = set(PINS) | {canonicalize_name(n) for n in _lines("image.txt")}


@pytest.mark.parametrize("name", sorted(PINS))
def test_every_requirement_of_a_packed_package_is_packed_or_in_the_image(name):
    try:
        installed = md.version(name)
    except md.PackageNotFoundError:
        installed = "nothing"
    if installed != PINS[name]:  # only torch is pinned for installs: PyPI may have moved on
        pytest.skip(f"{name} {installed} is installed here, {PINS[name]} is packed")
    unmet = []
    for spec in md.requires(name) or []:
        req = Requirement(spec)
        if req.marker is None or req.marker.evaluate(IMAGE_ENV):
            if canonicalize_name(req.name) not in THERE:
                unmet.append(str(req))
    assert not unmet, f"{name} needs {unmet}: add them to tests/device/missing.txt and re-pack"
