"""Sentinel's version, in a module of its own: every part of the package may read it without importing the
package's facade (whose `check` loads the API)."""

__version__ = "0.2.0.dev0"  # PEP 440; a release drops ".dev0" and is tagged v<version> (CHANGELOG.md)
